"""Evaluation throughput: TfD episodes per second through the runner, excluding LLM time.

Runs the full HELPER graph on the built-in benchmark's valid_unseen split with the oracle planner
(`oracle-graph`: a chat-model double that answers with each instance's gold program, so no LLM time
is spent) and 2 worker processes. Target (issue 7): 200 TfD episodes in under 60 s.
Run: `python benchmarks/eval_bench.py [--data DIR] [--episodes 200] [--workers 2] [--json figures.json]`.
Without --data it generates the benchmark first (not timed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import run_eval
from helper_agent.evals.engine.spec import EvalSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=None)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--planner", default="oracle-graph", choices=["oracle-graph", "gold"])
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="eval-bench-"))
    try:
        data = Path(args.data) if args.data else scratch / "bench"
        if not args.data:
            generate_benchmark(data, seed=0, sizes={"valid_unseen": args.episodes})
        spec = EvalSpec(mode="tfd", data=str(data), split="valid_unseen", limit=args.episodes, planner=args.planner,
                        workers=args.workers, feedback=1, out=str(scratch / "run"))
        start = time.perf_counter()
        metrics = run_eval(spec)
        elapsed = time.perf_counter() - start
        figures = {
            "episodes": float(metrics["episodes"]),
            "workers": float(args.workers),
            "seconds": round(elapsed, 2),
            "episodes_per_s": round(metrics["episodes"] / elapsed, 2),
            "success_rate": metrics["overall"]["SR"],
            "llm_calls_per_episode": metrics["per_episode"]["llm_calls"],
        }
        for key, value in figures.items():
            print(f"{key:24s} {value}")
        print(f"target: {args.episodes} episodes in < 60 s ({'met' if elapsed < 60 else 'NOT met'}); planner {args.planner} is an ORACLE")
        if args.json_path:
            Path(args.json_path).write_text(json.dumps(figures, indent=1))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
