"""Speculative decoding by prompt lookup (llama-cpp-python's `LlamaPromptLookupDecoding`) on the calls
whose answers copy their prompt: is it faster, and is the greedy output byte-identical?

Prompt lookup drafts the next tokens by finding the last n-gram written earlier in the prompt and
copying what followed it; the model checks the draft in one batch. The calls where answers copy
their prompt, each built by the agent's own prompt builder and decoded under its own grammar:

- `changes`: a recalled routine's request -> the changes it makes, lines of the request's own words
  (`adaptation.change_messages`, `changes_grammar`), for the packaged adaptation examples;
- `edit`: one change -> one edit line naming the routine's objects (`edit_messages`, `edit_grammar`);
- `replan`: HELPER's replan turn (`replanner_messages`: the program that ran is in the prompt),
  written line by line under the program grammars (`decoding.ProgramDecoder`), for packaged train
  examples with a feedback sentence.

Each prompt is decoded twice per setting: from a cleared context (prompt evaluation included) and
again with the prompt in the KV cache (the writing alone). llama-cpp-python keeps the logits of every
evaluated token when a draft model is set (`logits_all`: the output layer runs for every prompt
token, and the logits buffer is n_ctx x n_vocab floats, 2.5 GB at 4096 x 151,936), so the prompt
costs more with it; the figures show both sides.

    python benchmarks/lookup_bench.py --model 0.5b [--limit 5] [--json runs/lookup.json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from helper_agent.decoding import ProgramDecoder, format_chat
from helper_agent.graphs.helper.adaptation import (
    change_messages,
    changes_grammar,
    edit_messages,
    request_words,
)
from helper_agent.graphs.helper.prompts import load_adaptation_examples, replanner_messages
from helper_agent.llm.gguf import model_cache_dir
from helper_agent.llm.inprocess import chat_messages
from helper_agent.memory.examples import TRAIN_PROGRAMS_FILE
from helper_agent.program.edits.grammar import edit_grammar
from helper_agent.program.edits.tree import program_classes, program_roles
from helper_agent.understanding.grounding import Grounding

MODELS = {"0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "1.5b": "qwen2.5-coder-1.5b-instruct.gguf"}
FEEDBACK = "You did not finish everything I asked for; please do the rest."

Call = Callable[[Any], tuple[str, int]]
"""One LLM call on a `Llama`: its text and completion tokens."""


def _grammar_call(prompt_messages: list[Any], grammar: str, max_tokens: int) -> Call:
    def call(llm: Any) -> tuple[str, int]:
        from llama_cpp import LlamaGrammar  # deferred: the optional `local` extra

        prompt = format_chat(llm, chat_messages(prompt_messages))
        reply = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, seed=0,
                                      grammar=LlamaGrammar.from_string(grammar, verbose=False))
        return reply["choices"][0]["text"], int(reply["usage"]["completion_tokens"])
    return call


def _program_call(prompt_messages: list[Any]) -> Call:
    def call(llm: Any) -> tuple[str, int]:
        result = ProgramDecoder(llm).decode(format_chat(llm, chat_messages(prompt_messages)), temperature=0.0, seed=0)
        return result.text, result.completion_tokens
    return call


def calls(limit: int) -> list[tuple[str, Call]]:
    """The (kind, call) pairs measured, `limit` of each kind."""
    out: list[tuple[str, Call]] = []
    adaptations = list(load_adaptation_examples())
    for a in adaptations[:limit]:
        words = request_words(a.request, a.routine_name)
        out.append(("changes", _grammar_call(change_messages(a.routine_name, a.routine_request, a.request),
                                             changes_grammar(words), 64)))
    for a in [a for a in adaptations if a.changes][:limit]:
        program, change = a.routine_program, a.changes[0]
        movers, doers = program_roles(program)
        grammar = edit_grammar(program_classes(program), grounding=Grounding.of(change, program), movers=movers, doers=doers)
        out.append(("edit", _grammar_call(edit_messages(program, change), grammar, 48)))
    path = resources.files("helper_agent.prompts").joinpath("examples", TRAIN_PROGRAMS_FILE)
    shots = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for shot in shots[3:3 + limit]:
        out.append(("replan", _program_call(replanner_messages(shot["dialogue"], shot["program"], FEEDBACK, shots[:3]))))
    return out


def measure(llm: Any, call: Call) -> dict[str, Any]:
    """One call from a cleared context, then again with its prompt cached."""
    llm.reset()
    started = time.perf_counter()
    text, tokens = call(llm)
    fresh = time.perf_counter() - started
    before = _prompt_tokens_evaluated(llm)
    started = time.perf_counter()
    again, again_tokens = call(llm)
    cached = time.perf_counter() - started
    # What the second call evaluated beyond the tokens it wrote: its prompt's uncached part.
    reevaluated = _prompt_tokens_evaluated(llm) - before - again_tokens
    return {"text": text, "tokens": tokens, "fresh_s": fresh, "cached_s": cached, "stable": again == text,
            "reevaluated": max(reevaluated, 0)}


def _prompt_tokens_evaluated(llm: Any) -> int:
    """The context's running count of tokens it evaluated (prompt and drafts)."""
    import llama_cpp  # deferred: the optional `local` extra

    return int(llama_cpp.llama_perf_context(llm._ctx.ctx).n_p_eval)


def summary(kinds: Sequence[str], plain: Sequence[dict[str, Any]], lookup: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Per kind: calls, completion tokens, seconds fresh and cached per setting, identical outputs."""
    out: dict[str, float] = {}
    for kind in sorted(set(kinds)):
        idx = [i for i, k in enumerate(kinds) if k == kind]
        out[f"{kind}.calls"] = float(len(idx))
        out[f"{kind}.completion_tokens"] = float(sum(plain[i]["tokens"] for i in idx))
        for name, rows in (("plain", plain), ("lookup", lookup)):
            out[f"{kind}.{name}_fresh_s"] = round(sum(rows[i]["fresh_s"] for i in idx), 2)
            out[f"{kind}.{name}_cached_s"] = round(sum(rows[i]["cached_s"] for i in idx), 2)
        out[f"{kind}.identical"] = float(sum(plain[i]["text"] == lookup[i]["text"] for i in idx))
        for name, rows in (("plain", plain), ("lookup", lookup)):
            out[f"{kind}.{name}_cached_reevaluated"] = float(sum(rows[i]["reevaluated"] for i in idx))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="0.5b", choices=sorted(MODELS))
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--ngram", type=int, default=2)
    parser.add_argument("--draft", type=int, default=10, help="tokens drafted per lookup")
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()
    from llama_cpp import Llama  # deferred: the optional `local` extra
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    path = str(model_cache_dir() / MODELS[args.model])
    todo = calls(args.limit)
    kinds = [k for k, _ in todo]
    results: dict[str, list[dict[str, Any]]] = {}
    for name, draft in (("plain", None), ("lookup", LlamaPromptLookupDecoding(max_ngram_size=args.ngram,
                                                                               num_pred_tokens=args.draft))):
        # With a draft model llama-cpp-python 0.3.36 keeps every token's logits but sizes that
        # buffer for all of them only when `logits_all=True` is passed too (otherwise a prompt past
        # n_batch = 512 tokens fails: "could not broadcast input array ... into shape (0,)").
        llm = Llama(model_path=path, n_ctx=4096, seed=0, verbose=False, draft_model=draft,
                    logits_all=draft is not None)
        results[name] = []
        for kind, call in todo:
            results[name].append(measure(llm, call))
            row = results[name][-1]
            print(f"{name} {kind}: {row['tokens']} tokens, {row['fresh_s']:.1f} s fresh, {row['cached_s']:.1f} s cached",
                  flush=True)
        del llm
    out = {"model": args.model, "ngram": float(args.ngram), "draft": float(args.draft),
           **summary(kinds, results["plain"], results["lookup"])}
    for key, value in out.items():
        print(f"{key:32s} {value}")
    for kind, p, q in zip(kinds, results["plain"], results["lookup"], strict=True):
        if p["text"] != q["text"]:
            print(f"--- {kind} differs:\n{p['text']!r}\n{q['text']!r}")
    if args.json_path:
        Path(args.json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_path).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
