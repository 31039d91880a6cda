"""Speculative decoding on this CPU: the 1.5B writing HELPER's programs with the 0.5B as its draft.

Issue 64 asks whether the 1.5B can answer as fast as the 0.5B. Its generation is bandwidth-bound
(every weight is read for every token); with a draft model OpenVINO GenAI lets the small model
propose `--assistant-tokens` tokens that the large one checks in one pass. An earlier probe measured
19.0 against 14.0 tokens/s for free text and did not try grammars. This measures, for each
(target, draft) pair of weight formats, HELPER's real planner prompt written line by line under the
program grammar (`decoding.ProgramDecoder`, as the agent writes), after another request of the same
kind was answered (its examples' prefix cached, as in a chat):

- seconds from Enter to the first line and to the first subgoal (the first line that acts);
- the whole program's seconds and tokens/s;
- whether the program is the same as the target's alone (greedy decoding should make it so).

Each pair runs in this process, one after another; run it alone on the machine (an LLM job):

    python benchmarks/draft_decoding_bench.py --target 1.5b:int8 --target 1.5b:int4 --draft 0.5b:int8 \\
        --draft 0.5b:int4 --json runs/draft.json

`--json` writes a flat object keyed `TARGET[+DRAFT]:figure`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from helper_agent.decoding import ProgramDecoder
from helper_agent.llm.openvino_chat import OpenVINOContext
from helper_agent.llm.openvino_models import prepare_openvino_model

PLANNER_EXAMPLES = 3


class WithDraft:
    """An `LLMPipeline` whose every generation lets the draft propose `tokens` tokens a step (the
    pipeline was built with the draft; the generation config says how many it may propose)."""

    def __init__(self, pipeline: Any, tokens: int) -> None:
        self.pipeline = pipeline
        self.tokens = tokens

    def get_tokenizer(self) -> Any:
        return self.pipeline.get_tokenizer()

    def generate(self, inputs: Any, config: Any, streamer: Any = None) -> Any:
        config.num_assistant_tokens = self.tokens
        return self.pipeline.generate(inputs, config, streamer)


def context(target: str, draft: str | None, tokens: int, threads: int) -> OpenVINOContext:
    """An `OpenVINOContext` over the target's folder, with the draft's when given (`size:format`)."""
    import openvino_genai  # deferred: the optional `local` extra, loaded only for a run

    folder = prepare_openvino_model(*target.split(":"))
    if draft is None:
        return OpenVINOContext(folder, threads)
    draft_folder = prepare_openvino_model(*draft.split(":"))
    pipeline = openvino_genai.LLMPipeline(str(folder), "CPU", INFERENCE_NUM_THREADS=threads,
                                          draft_model=openvino_genai.draft_model(str(draft_folder), "CPU"))
    return OpenVINOContext(folder, threads, pipeline=WithDraft(pipeline, tokens))


def planner_prompt(ctx: OpenVINOContext, request: int) -> str:
    """HELPER's planner prompt with the packaged examples, as `benchmarks/llm_bench.py` builds it."""
    from llm_bench import _planner_messages  # deferred: the sibling script, on sys.path when run from here

    return ctx.chat_prompt(_planner_messages(PLANNER_EXAMPLES, request=request))


def measure(ctx: OpenVINOContext) -> dict[str, Any]:
    prompt, other = planner_prompt(ctx, PLANNER_EXAMPLES), planner_prompt(ctx, PLANNER_EXAMPLES + 1)
    ProgramDecoder(ctx).decode(prompt, temperature=0.0, seed=0)  # compile the line grammars once
    ctx.forget()
    ctx.create_completion(other, max_tokens=1, temperature=0.0, seed=0)
    result = ProgramDecoder(ctx).decode(prompt, temperature=0.0, seed=0)
    return {"first_line_s": round(result.first_line_seconds or 0.0, 2),
            "first_subgoal_s": round(result.first_action_seconds or 0.0, 2),
            "program_s": round(result.seconds, 2), "tokens": result.completion_tokens,
            "tok_s": round(result.completion_tokens / result.seconds, 1), "text": result.text}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", action="append", default=[], help="size:format, e.g. 1.5b:int8 (repeatable)")
    parser.add_argument("--draft", action="append", default=[], help="size:format of a draft (repeatable)")
    parser.add_argument("--assistant-tokens", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    figures: dict[str, Any] = {"load_1min": round(os.getloadavg()[0], 2), "assistant_tokens": args.assistant_tokens}
    for target in args.target or ["1.5b:int8"]:
        alone: str | None = None
        for draft in [None, *args.draft]:
            name = target if draft is None else f"{target}+{draft}"
            began = time.perf_counter()
            found = measure(context(target, draft, args.assistant_tokens, args.threads))
            text = found.pop("text")
            alone = text if draft is None else alone
            found["same_program"] = text == alone
            for key, value in found.items():
                figures[f"{name}:{key}"] = value
            print(f"{name}: {found} ({time.perf_counter() - began:.0f} s with loading)", flush=True)
    figures["load_1min_end"] = round(os.getloadavg()[0], 2)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
