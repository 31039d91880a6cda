"""LLM-Planner's leave-one-out HLP accuracy on a knn_set.json-format pool, beside the paper's figures.

Each example is planned with the other examples as its pool (k in-context examples by kNN over the
instruction embedding, or drawn at random), and scored by exact match (the paper's HLP accuracy)
and by in-order recall (the fraction of gold subgoals predicted in order). The paper reports 40.59
(kNN) and 17.48 (random) with text-davinci-003, k = 9.

Run: `python benchmarks/hlp_bench.py --pool PATH/knn_set.json --llm local
--k 9 --retriever knn --instructions both --out runs/hlp-knn-0.5b [--limit N] [--json figures.json]`.
The run folder makes it resumable (one record per example and instruction mode).

`python benchmarks/hlp_bench.py --tfd runs/llmp-replan runs/llmp-static [--json figures.json]` instead
summarises LLM-Planner TfD runs (`helper eval tfd --agent llm-planner`): SR, GC, PLW-SR, PLW-GC, LLM
calls and re-plans per episode, for the grounded re-planning vs static comparison.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any


def flat(metrics: dict[str, Any]) -> dict[str, float | str]:
    """One flat object: overall and per-task-type figures per instruction mode."""
    out: dict[str, float | str] = {"k": metrics["k"], "retriever": metrics["retriever"], "pool_size": metrics["pool_size"],
                                   "evaluated": metrics["evaluated"], "paper_HLP_accuracy": metrics["paper_HLP_accuracy"] or 0.0}
    for mode in ("goal", "goal+step"):
        if mode not in metrics:
            continue
        tag = mode.replace("+", "_")
        for key, value in metrics[mode]["overall"].items():
            out[f"{tag}_{key}"] = value
        for task_type, figures in metrics[mode]["by_task_type"].items():
            out[f"{tag}_{task_type}_HLP_accuracy"] = figures["HLP_accuracy"]
            out[f"{tag}_{task_type}_in_order"] = figures["in_order"]
            out[f"{tag}_{task_type}_in_order_precision"] = figures["in_order_precision"]
    return out


def tfd_figures(run: Path) -> dict[str, float]:
    """SR, GC, PLW and per-episode LLM calls and re-plans of one `helper eval tfd` run folder."""
    records = [json.loads(line) for line in (run / "results.jsonl").open() if line.strip()]
    overall = json.loads((run / "metrics.json").read_text())["overall"]
    n = len(records) or 1
    return {"episodes": float(len(records)), "SR": overall["SR"], "GC": overall["GC"], "PLW_SR": overall["PLW_SR"],
            "PLW_GC": overall.get("PLW_GC", 0.0),
            "llm_calls_per_episode": round(sum(float(r.get("llm_calls", 0)) for r in records) / n, 3),
            "replans_per_episode": round(sum(float(r.get("replans", 0)) for r in records) / n, 3),
            "errors": float(sum(1 for r in records if r.get("ended_by") == "error"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", help="knn_set.json-format pool (user-provided)")
    parser.add_argument("--tfd", nargs="+", default=None, help="summarise these TfD run folders instead")
    parser.add_argument("--llm", default="local")
    parser.add_argument("--k", type=int, default=9)
    parser.add_argument("--retriever", default="knn", choices=("knn", "random"))
    parser.add_argument("--instructions", default="both", choices=("goal", "goal+step", "both"))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="run folder (default: a scratch folder)")
    parser.add_argument("--json", default=None, help="write the flat figures here")
    args = parser.parse_args()
    if args.tfd:
        flat_tfd: dict[str, float] = {}
        for run in args.tfd:
            figures_tfd = tfd_figures(Path(run))
            print(f"{run}: " + "  ".join(f"{k} {v}" for k, v in figures_tfd.items()))
            flat_tfd.update({f"{Path(run).name}_{k}": v for k, v in figures_tfd.items()})
        if args.json:
            Path(args.json).write_text(json.dumps(flat_tfd, indent=1))
        return
    if not args.pool:
        parser.error("--pool is required (or --tfd RUN...)")

    from helper_agent.evals.studies.hlp import MODES, HLPOptions, run_hlp
    from helper_agent.llm import make_chat_model
    from helper_agent.memory.fewshot import load_knn_set

    pool = load_knn_set(args.pool)
    chat = make_chat_model(args.llm)
    modes = list(MODES) if args.instructions == "both" else [args.instructions]
    out = Path(args.out or tempfile.mkdtemp(prefix="hlp-bench-"))
    started = time.perf_counter()
    metrics = run_hlp(pool, chat, out, HLPOptions(k=args.k, retriever=args.retriever, modes=modes, limit=args.limit, seed=args.seed))
    figures = {"llm": args.llm, **flat(metrics), "wall_seconds": round(time.perf_counter() - started, 1)}
    print(f"LOOCV HLP on {Path(args.pool).name}: {args.retriever}, k={args.k}, {args.llm}  "
          f"(paper, text-davinci-003: {figures['paper_HLP_accuracy']})")
    for mode in modes:
        if mode in metrics:
            o = metrics[mode]["overall"]
            print(f"  {mode:10s} HLP accuracy {o['HLP_accuracy']:6.2f}%  in-order recall {o['in_order']:6.2f}%  "
                  f"precision {o['in_order_precision']:6.2f}%  steps {o['predicted_steps']:.1f} (gold {o['gold_steps']:.1f})  "
                  f"unparsed {o['unparsed']}  ({o['examples']} examples)")
            for task_type, f in metrics[mode]["by_task_type"].items():
                print(f"    {task_type:36s} {f['HLP_accuracy']:6.2f}%  {f['in_order']:6.2f}%  (n={f['examples']})")
    print(f"run folder: {out}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
