"""Planner figures on the embedded model: valid programs, success, and LLM time per episode.

Runs (or resumes) a TfD evaluation of HELPER with a real chat model and reads its records:

- programs rejected at the first attempt, episodes that ended with no valid program, and programs
  that reached the executor invalid (the executor only receives compiled subgoals, so any such
  episode would show an execution error naming the program);
- SR, GC and PLW-SR;
- per episode: LLM calls, prompt tokens evaluated and reused (KV cache), completion tokens, LLM
  seconds (median and mean).

Run: `python benchmarks/planner_bench.py --data out/bench --limit 50 --llm local --out runs/planner-0.5b
[--train-memory] [--json figures.json]`. Without --data it writes the default benchmark (seed 0)
to a scratch folder first. LLM evaluations are slow on a CPU; the run folder makes it resumable.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any


def figures(records: list[dict[str, Any]], metrics: dict[str, Any]) -> dict[str, float]:
    """The flat figures of one run from its records and metrics."""
    n = len(records) or 1

    def first_rejected(log: list[str]) -> bool:
        for line in log:
            if line.startswith("validate: rejected"):
                return True
            if line.startswith("validate:"):
                return False
        return False

    seconds = [float(r.get("llm_seconds", 0) or 0) for r in records]
    executor_invalid = sum(1 for r in records if any(line.startswith("execute:") and "ProgramError" in line
                                                     for line in r.get("log", [])))
    overall = metrics["overall"]
    return {
        "episodes": float(len(records)),
        "first_attempt_rejected": float(sum(first_rejected(r.get("log", [])) for r in records)),
        "no_valid_program": float(sum(1 for r in records if r.get("outcome") == "invalid_program")),
        "reached_executor_invalid": float(executor_invalid),
        "errors": float(sum(1 for r in records if r.get("ended_by") == "error")),
        "SR": overall["SR"],
        "GC": overall["GC"],
        "PLW_SR": overall["PLW_SR"],
        "llm_calls_per_episode": round(sum(float(r.get("llm_calls", 0)) for r in records) / n, 3),
        "prompt_tokens_evaluated_per_episode": round(sum(float(r.get("prompt_tokens_evaluated", 0)) for r in records) / n, 1),
        "prompt_tokens_reused_per_episode": round(sum(float(r.get("prompt_tokens_cached", 0)) for r in records) / n, 1),
        "completion_tokens_per_episode": round(sum(float(r.get("completion_tokens", 0)) for r in records) / n, 1),
        "llm_seconds_median": round(statistics.median(seconds), 2) if seconds else 0.0,
        "llm_seconds_mean": round(statistics.fmean(seconds), 2) if seconds else 0.0,
    }


def main() -> None:
    from helper_agent.evals.benchmark import generate_benchmark
    from helper_agent.evals.engine.runner import run_eval, seed_examples_from_split
    from helper_agent.evals.engine.spec import EvalSpec
    from helper_agent.evals.engine.store import ResultStore

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--llm", default="local")
    parser.add_argument("--out", required=True, help="run folder (resumable)")
    parser.add_argument("--train-memory", action="store_true")
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()
    data = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="planner-bench-")) / "bench"
    if not (data / "manifest.json").exists():
        generate_benchmark(data, seed=0, sizes={"train": 500 if args.train_memory else 0, "valid_unseen": args.limit})
    spec = EvalSpec(mode="tfd", data=str(data), split="valid_unseen", limit=args.limit, llm=args.llm, workers=1,
                    feedback=1, planner="helper", out=args.out)
    if args.train_memory:
        print(f"example memory: {seed_examples_from_split(spec)} train examples added")
    metrics = run_eval(spec, progress=lambda done, total, record: print(f"{done}/{total} {record.get('instance_id', '')} "
                                                                          f"success={record.get('success', '')}", flush=True))
    records = list(ResultStore(Path(args.out) / "results.jsonl").records().values())
    result = {"llm": args.llm, "train_memory": float(args.train_memory), **figures(records, metrics)}
    for key, value in result.items():
        print(f"{key:38s} {value}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
