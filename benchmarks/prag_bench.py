"""P-RAG figures: SR/GC by iteration and where an episode's time goes.

Two ways to run:
- `--run DIR [--run DIR ...]`: read finished `helper eval progressive` runs (e.g. goal+scene and
  goal-only retrieval) and print SR/GC per iteration and, per run, LLM calls, prompt tokens (all and
  evaluated, i.e. not served from llama.cpp's prefix cache), LLM seconds, retrieval and acting
  seconds per episode, and the LLM's share of an episode's time. Keys: `<name>_sr_iter<i>`, ...
- `--tokens-only [--limit N] [--iterations N]`: no LLM. A scripted walker (it walks to the shown
  objects in turn, `done()` after `--max-steps`) runs a small self-iteration on the built-in benchmark
  and every step's prompt is measured with the local model's tokenizer (llama.cpp, vocabulary only):
  prompt tokens per step, the tokens shared with the previous step's prompt (the prefix llama.cpp
  can reuse), and retrieval seconds per step, for iteration 0 (empty database) and the last one.

`--json PATH` writes the figures as one flat JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


def run_figures(name: str, folder: Path) -> dict[str, float]:
    metrics = json.loads((folder / "metrics.json").read_text())
    out: dict[str, float] = {}
    for row in metrics["iterations"]:
        i = row["iteration"]
        out[f"{name}_sr_iter{i}"] = row["SR"]
        out[f"{name}_gc_iter{i}"] = row["GC"]
        out[f"{name}_db_records_iter{i}"] = row["database_records"]
    evals = [row["eval"] for row in metrics["iterations"]]

    def mean(key: str) -> float:
        return round(statistics.fmean(float(e.get(key, 0)) for e in evals), 3) if evals else 0.0

    for key in ("llm_calls", "prompt_tokens", "prompt_tokens_evaluated", "llm_seconds", "seconds", "retrieve_seconds",
                "act_seconds", "env_steps"):
        out[f"{name}_{key}_per_episode"] = mean(key)
    seconds = mean("seconds")
    out[f"{name}_llm_share"] = round(mean("llm_seconds") / seconds, 3) if seconds else 0.0
    out[f"{name}_seconds_per_llm_call"] = round(mean("llm_seconds") / mean("llm_calls"), 3) if mean("llm_calls") else 0.0
    return out


class TokenMeter(BaseChatModel):
    """A scripted walker whose prompts are measured with a real tokenizer (no generation)."""

    count: Any = None  # text -> token ids
    max_steps: int = 8
    step: int = 0
    sizes: list[int] = []
    shared: list[int] = []
    previous: list[int] = []

    @property
    def _llm_type(self) -> str:
        return "token-meter"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        text = "\n".join(str(m.content) for m in messages)
        ids = self.count(text)
        user = str(messages[1].content)
        if "\nStep 1 of " in user:
            self.step, self.previous = 0, []
        common = 0
        for a, b in zip(ids, self.previous, strict=False):
            if a != b:
                break
            common += 1
        self.sizes.append(len(ids))
        self.shared.append(common)
        self.previous = ids
        graph = user.split("Scene graph:\n", 1)[1].split("\nHolding:", 1)[0]
        shown = re.findall(r"^([A-Za-z]+_\d+)", graph, re.M)
        self.step += 1
        answer = f"Action: goto({shown[self.step % len(shown)]})" if shown and self.step < self.max_steps else "Action: done()"
        message = AIMessage(content=answer, usage_metadata={"input_tokens": len(ids), "output_tokens": 8,
                                                            "total_tokens": len(ids) + 8})
        return ChatResult(generations=[ChatGeneration(message=message)])


def tokens_only(limit: int, iterations: int, max_steps: int, retrieval: str) -> dict[str, float]:
    from llama_cpp import Llama

    from helper_agent.evals.benchmark import generate_benchmark
    from helper_agent.evals.studies.progressive import ProgressiveSpec, run_progressive
    from helper_agent.llm import assemble_local_model

    vocab = Llama(model_path=str(assemble_local_model("0.5b")), vocab_only=True, verbose=False)
    root = Path(tempfile.mkdtemp(prefix="prag-bench-"))
    try:
        generate_benchmark(root / "bench", seed=0, sizes={"valid_unseen": limit})
        meter = TokenMeter(count=lambda t: vocab.tokenize(t.encode("utf-8"), add_bos=False, special=True),
                           max_steps=max_steps, sizes=[], shared=[])
        out: dict[str, float] = {}
        marks = [0]
        spec = ProgressiveSpec(data=str(root / "bench"), out=str(root / "run"), iterations=iterations,
                               train_split="self", limit=limit, llm="token-meter",
                               agent_options={"retrieval": retrieval, "max_steps": str(max_steps)})

        def progress(i: int, phase: str, finished: int, total: int) -> None:
            if phase == "eval" and finished == total and len(marks) == i + 1:
                marks.append(len(meter.sizes))

        metrics = run_progressive(spec, progress, chat_model=meter)
        for i in (0, iterations - 1):
            sizes = meter.sizes[marks[i]: marks[i + 1]]
            shared = meter.shared[marks[i]: marks[i + 1]]
            out[f"iter{i}_prompt_tokens_per_step"] = round(statistics.fmean(sizes), 1) if sizes else 0.0
            out[f"iter{i}_reusable_prefix_share"] = round(sum(shared) / sum(sizes), 3) if sizes else 0.0
            out[f"iter{i}_retrieve_seconds_per_episode"] = metrics["iterations"][i]["eval"]["retrieve_seconds"]
            out[f"iter{i}_database_records"] = metrics["iterations"][i]["database_records"]
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="append", default=[], help="A finished `helper eval progressive` folder (repeatable).")
    parser.add_argument("--tokens-only", action="store_true", help="Measure prompt sizes with a scripted walker (no LLM).")
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--retrieval", default="goal+scene", choices=("goal+scene", "goal"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    figures: dict[str, float] = {}
    for folder in args.run:
        figures.update(run_figures(Path(folder).name.replace("-", "_"), Path(folder)))
    if args.tokens_only:
        figures.update(tokens_only(args.limit, args.iterations, args.max_steps, args.retrieval))
    if not figures:
        parser.error("give --run DIR or --tokens-only")
    for key, value in figures.items():
        print(f"{key:48s} {value}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
