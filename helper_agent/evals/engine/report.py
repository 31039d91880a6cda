"""Evaluation outputs: `metrics.json`, a Markdown report in the layout of HELPER's Table 2, and plots.

Numbers are percentages as the papers print them: SR and GC with the path-length-weighted values
in parentheses. Runs of an oracle planner are labelled ORACLE everywhere.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from helper_agent.evals.engine.plots import figure
from helper_agent.evals.engine.provenance import code_counts, code_note
from helper_agent.evals.engine.runfiles import read_metrics, read_metrics_or_summary, read_progressive_spec
from helper_agent.evals.engine.store import errored, read_records
from helper_agent.files import FileFormatError, atomic_write_json, atomic_write_text, validation_message
from helper_agent.teach.metrics import AggregateMetrics, EpisodeMetrics, aggregate_by_task, aggregate_metrics


def _episode(record: dict[str, Any]) -> EpisodeMetrics:
    """The record's TEACh metrics; a record without them (a hand-edited or foreign line) is one line
    naming the episode and the field, not pydantic's several lines and its web address."""
    try:
        return EpisodeMetrics.model_validate(record)
    except ValidationError as exc:
        raise FileFormatError(validation_message(f"results.jsonl: episode {record.get('instance_id')!r}", exc)) from None


def summarise(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Overall and per-task metrics, termination counts, and LLM use per episode.

    Errored episodes (`store.errored`) are not results: SR, GC and the per-episode figures are over
    the scored episodes (`episodes`); the errored ones are counted in `errors` (and `ended_by.error`)."""
    episodes = [_episode(r) for r in records]
    overall = aggregate_metrics(episodes)
    by_task = aggregate_by_task(episodes)
    scored = [r for r in records if not errored(r)]

    def per_episode(key: str) -> float:
        values = [float(r.get(key, 0) or 0) for r in scored]
        return round(statistics.fmean(values), 3) if values else 0.0

    calls = sum(float(r.get("llm_calls", 0) or 0) for r in scored)
    seconds = sum(float(r.get("llm_seconds", 0) or 0) for r in scored)
    return {
        "episodes": len(scored),
        "errors": len(records) - len(scored),
        # what the errored episodes said, first seen first (at most 3), to fix before the retry
        "error_messages": list(dict.fromkeys(str(r.get("error_message") or "error") for r in records if errored(r)))[:3],
        "overall": _flat(overall),
        "by_task": {name: _flat(m) for name, m in by_task.items()},
        "ended_by": {
            "step_limit": sum(1 for r in records if r.get("ended_by") == "step_limit"),
            "failure_limit": sum(1 for r in records if r.get("ended_by") == "failure_limit"),
            "error": sum(1 for r in records if errored(r)),
            "llm_budget": sum(1 for r in records if r.get("ended_by") == "llm_budget"),
        },
        "per_episode": {
            "llm_calls": per_episode("llm_calls"),
            "replans": per_episode("replans"),  # LLM-Planner's grounded re-plans (0 for the others)
            "prompt_tokens": per_episode("prompt_tokens"),
            "completion_tokens": per_episode("completion_tokens"),
            "llm_seconds": per_episode("llm_seconds"),
            "seconds": per_episode("seconds"),
            "steps": per_episode("traj_len"),
        },
        "seconds_per_llm_call": round(seconds / calls, 3) if calls else 0.0,
        "code": code_counts(records),
    }


def _flat(metrics: AggregateMetrics) -> dict[str, float]:
    return {
        "SR": round(100 * metrics.success_rate, 2),
        "GC": round(100 * metrics.goal_condition_success_rate, 2),
        "PLW_SR": round(100 * metrics.path_length_weighted_success_rate, 2),
        "PLW_GC": round(100 * metrics.path_length_weighted_goal_condition_success_rate, 2),
        "episodes": metrics.num_evals,
        "successes": metrics.num_successes,
        "goal_conditions": f"{metrics.completed_goal_conditions}/{metrics.total_goal_conditions}",
        "teach": metrics.to_teach_dict(),
    }


def write_outputs(out: Path, records: Sequence[dict[str, Any]], spec: Any) -> dict[str, Any]:
    out = Path(out)
    metrics = summarise(records)
    metrics["run"] = asdict(spec) if hasattr(spec, "__dataclass_fields__") else dict(spec)
    metrics["label"] = spec.label() if hasattr(spec, "label") else str(spec)
    atomic_write_json(out / "metrics.json", metrics)
    atomic_write_text(out / "report.md", markdown_report([metrics]))
    plot_by_task(metrics, out / "by_task.png")
    return metrics


def _cell(m: dict[str, float], key: str) -> str:
    return f"{m[key]:.2f} ({m['PLW_' + key]:.2f})"


def markdown_report(runs: Sequence[dict[str, Any]]) -> str:
    """HELPER's Table 2 layout: one row per run, SR and GC with PLW in parentheses; then per task."""
    lines = ["# Evaluation report", "", "SR and GC in %, path-length-weighted values in parentheses.", ""]
    lines += ["| run | mode | split | SR (PLW) | GC (PLW) | episodes | step limit | failure limit | errors | LLM calls/ep | prompt tokens/ep | s/call |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in runs:
        run = m.get("run", {})
        o = m["overall"]
        e = m["ended_by"]
        p = m["per_episode"]
        lines.append(
            f"| {m.get('label', '')} | {str(run.get('mode', '')).upper()} | {run.get('split', '')} | {_cell(o, 'SR')} | {_cell(o, 'GC')} | "
            f"{o['episodes']} | {e['step_limit']} | {e['failure_limit']} | {e['error']} | {p['llm_calls']} | {p['prompt_tokens']} | {m['seconds_per_llm_call']} |"
        )
    for m in runs:
        lines += ["", f"## By task: {m.get('label', '')}", "", "| task | episodes | SR (PLW) | GC (PLW) |", "|---|---|---|---|"]
        for task, t in m["by_task"].items():
            lines.append(f"| {task} | {t['episodes']} | {_cell(t, 'SR')} | {_cell(t, 'GC')} |")
    code = code_note([(str(m.get("label", "")), dict(m.get("code") or {})) for m in runs])
    if code:
        lines += ["", code]
    if any("ORACLE" in str(m.get("label", "")) for m in runs):
        lines += ["", "ORACLE runs use the gold program (or the reference trajectory), not a planner: they measure the "
                  "ceiling of the world and executor, not an agent."]
    return "\n".join(lines) + "\n"


def _bar_chart(labels: Sequence[str], sr: Sequence[float], gc: Sequence[float], title: str, path: Path, rotation: int) -> Path:
    """SR and GC bars per label, as PNG (matplotlib without a display)."""
    with figure(path, (max(6, 0.6 * len(labels) + 2), 4)) as (_, ax):
        xs = range(len(labels))
        ax.bar([x - 0.2 for x in xs], sr, width=0.4, label="SR")
        ax.bar([x + 0.2 for x in xs], gc, width=0.4, label="GC")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, rotation=rotation, ha="right", fontsize=8)
        ax.set_ylim(0, 100)
        ax.set_ylabel("%")
        if title:
            ax.set_title(title)
        ax.legend()
    return path


def plot_by_task(metrics: dict[str, Any], path: Path) -> Path:
    tasks = list(metrics["by_task"])
    return _bar_chart(
        tasks,
        [metrics["by_task"][t]["SR"] for t in tasks],
        [metrics["by_task"][t]["GC"] for t in tasks],
        f"{metrics.get('label', '')}: SR and GC by task",
        path,
        rotation=45,
    )


def load_run(run_dir: str | Path) -> dict[str, Any]:
    """A run's `metrics.json`, with `folder` saying where it was read (its records are beside it)."""
    path = Path(run_dir) / "metrics.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no metrics.json (has the run finished?)")
    return {**read_metrics(path), "folder": str(Path(run_dir))}


def plot_comparison(runs: Sequence[dict[str, Any]], path: Path) -> Path:
    """SR and GC of several runs side by side (e.g. HELPER and its ablations)."""
    labels = [str(r.get("label", i)) for i, r in enumerate(runs)]
    return _bar_chart(labels, [r["overall"]["SR"] for r in runs], [r["overall"]["GC"] for r in runs], "", path, rotation=30)


# ------------------------------------------------------------------------------------ methods side by side
LOCATION_OPTIONS = frozenset({"database"})
"""Method options that say where data lives, not how the method behaves (left out of its name)."""


def method_name(run: dict[str, Any]) -> str:
    """The method a run evaluated, with its switches: `embodiedrag[graph=full]`, `helper`. Where a
    run's data lives (P-RAG's `database=PATH`) is not a switch: the row's note names the iteration."""
    spec = run.get("run", {}) or {}
    name = str(run.get("method") or spec.get("planner") or run.get("label", "?"))
    options = {k: v for k, v in (spec.get("agent_options") or {}).items() if k not in LOCATION_OPTIONS}
    if spec.get("ablate"):
        options = {**options, "ablate": spec["ablate"]}
    if options and "[" not in name:
        name += "[" + ",".join(f"{k}={v}" for k, v in sorted(options.items())) + "]"
    if spec.get("planner") in ("gold", "oracle-graph"):
        name += " ORACLE"
    return name


def method_row(run: dict[str, Any]) -> dict[str, Any]:
    """One row of the methods table: SR, GC, PLW, LLM calls, prompt tokens, seconds per episode."""
    o, p = run["overall"], run["per_episode"]
    return {"method": method_name(run), "episodes": o["episodes"], "SR": o["SR"], "GC": o["GC"],
            "PLW_SR": o["PLW_SR"], "PLW_GC": o["PLW_GC"], "llm_calls": p["llm_calls"],
            "prompt_tokens": p["prompt_tokens"], "seconds": p.get("seconds", 0.0),
            "llm_seconds": p.get("llm_seconds", 0.0), "errors": run["ended_by"]["error"],
            "note": run.get("note", "")}


def methods_table(runs: Sequence[dict[str, Any]]) -> str:
    """The four-method comparison as Markdown (one row per run), saying whether the runs scored the
    same episodes with the same model when their records can be read."""
    lines = ["| method | episodes | SR | GC | PLW SR | PLW GC | LLM calls/ep | prompt tokens/ep | s/ep | errors |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for run in runs:
        r = method_row(run)
        lines.append(f"| {r['method']} | {r['episodes']} | {r['SR']:.2f} | {r['GC']:.2f} | {r['PLW_SR']:.2f} | "
                     f"{r['PLW_GC']:.2f} | {r['llm_calls']} | {r['prompt_tokens']:.0f} | {r['seconds']:.1f} | {r['errors']} |")
        if r["note"]:
            notes.append(f"- {r['method']}: {r['note']}")
    header = ["# Methods compared", "", "SR, GC and their path-length-weighted values in %; LLM calls, prompt tokens "
              "and wall-clock seconds are means per episode.", ""]
    if len(runs) > 1 and all(_has_records(r) for r in runs):
        header += [coverage_note(runs), ""]
    code = code_note([(method_name(r), run_code(r)) for r in runs])
    if code:
        header += [code, ""]
    return "\n".join(header + lines + ([""] + notes if notes else [])) + "\n"


def run_code(run: dict[str, Any]) -> dict[str, int]:
    """A loaded run's records per code version: from its metrics, else from its records (metrics
    written before runs kept their code), else none known."""
    if run.get("code"):
        return dict(run["code"])
    return code_counts(run_records(run).values()) if _has_records(run) else {}


def plot_methods(runs: Sequence[dict[str, Any]], path: Path) -> Path:
    """Three panels per method: SR and GC (%), prompt tokens per episode, seconds per episode."""
    rows = [method_row(r) for r in runs]
    labels = [r["method"] for r in rows]
    xs = list(range(len(rows)))
    with figure(path, (max(9, 1.6 * len(rows) + 6), 4), ncols=3) as (_, axes):
        axes[0].bar([x - 0.2 for x in xs], [r["SR"] for r in rows], width=0.4, label="SR")
        axes[0].bar([x + 0.2 for x in xs], [r["GC"] for r in rows], width=0.4, label="GC")
        axes[0].set_ylim(0, 100)
        axes[0].set_ylabel("%")
        axes[0].legend()
        axes[1].bar(xs, [r["prompt_tokens"] for r in rows], color="tab:green")
        axes[1].set_ylabel("prompt tokens / episode")
        axes[2].bar(xs, [r["seconds"] for r in rows], color="tab:red")
        axes[2].set_ylabel("seconds / episode")
        for ax in axes:
            ax.set_xticks(xs)
            ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    return Path(path)


def iteration_metrics(run_dir: str | Path) -> list[Path]:
    """The per-iteration `metrics.json` files of a folder of iterations: `helper eval progressive`'s
    `iter_<i>/eval/` passes, or any `<name>/metrics.json` subfolders (none: not such a folder)."""
    run_dir = Path(run_dir)
    found = sorted(run_dir.glob("iter_*/eval/metrics.json"), key=lambda p: _iteration_number(p.parent.parent))
    return found or sorted(run_dir.glob("*/metrics.json"))


def _iteration_number(folder: Path) -> int:
    suffix = folder.name.removeprefix("iter_")
    return int(suffix) if suffix.isdigit() else 0


def best_iteration(run_dir: str | Path) -> dict[str, Any]:
    """A run folder's metrics; a folder of iterations (P-RAG's progressive rounds, see
    `iteration_metrics`) gives its best iteration by SR, then GC, labelled with which one it is.
    A progressive run's own summary (`<out>/metrics.json`, SR by iteration) is not a candidate."""
    run_dir = Path(run_dir)
    candidates = iteration_metrics(run_dir)
    if not candidates:
        if (run_dir / "metrics.json").exists():
            return load_run(run_dir)
        raise FileNotFoundError(f"{run_dir}: no metrics.json (has the run finished?)")
    loaded = [(read_metrics(p), p) for p in candidates]
    if (run_dir / "metrics.json").exists():
        final = read_metrics_or_summary(run_dir / "metrics.json")
        if "overall" in final:
            loaded.append((final, run_dir / "metrics.json"))
    best, where = max(loaded, key=lambda item: (item[0]["overall"]["SR"], item[0]["overall"]["GC"]))
    best = {**best, "folder": str(where.parent)}
    name = "final" if where.parent == run_dir else where.relative_to(run_dir).parts[0]
    asked = _iterations_asked(run_dir)
    if asked is not None and len(loaded) < asked:
        # A progressive run still under way: its best so far is not its best, and the table says so.
        best = {**best, "note": f"{len(loaded)} of {asked} iterations finished, best so far: {name}"}
    elif len(loaded) > 1:
        best = {**best, "note": f"best of {len(loaded)} iterations: {name}"}
    return best


def _iterations_asked(run_dir: Path) -> int | None:
    """How many iterations a `helper eval progressive` folder was asked for, or None for any other
    folder or a spec that does not say."""
    asked = (read_progressive_spec(run_dir) or {}).get("iterations")
    return asked if isinstance(asked, int) else None


# ------------------------------------------------------------------------------------ same episodes?
def run_records(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The latest record per instance id of a loaded run (`load_run`, `best_iteration`), read only:
    a run still being written is read up to its last complete line, and nothing is repaired."""
    folder = run.get("folder")
    if not folder:
        raise ValueError(f"{run.get('label', '?')}: loaded without its folder, so its episodes are unknown")
    return {str(r["instance_id"]): r for r in read_records(Path(folder) / "results.jsonl")}


def coverage_note(runs: Sequence[dict[str, Any]]) -> str:
    """Whether the runs scored the same episodes with the same model, in one line for the table.

    A table of methods is a comparison only on the same episodes: a method run on 20 of them beside
    one run on 50 compares different tasks. Where the sets differ, `--common` restricts every run to
    the episodes all of them have (`on_common_episodes`)."""
    ids = [_episode_ids(r) for r in runs]
    models = sorted({str((r.get("run") or {}).get("llm", "?")) for r in runs})
    model = f"model {models[0]}" if len(models) == 1 else f"**different models: {', '.join(models)}**"
    if all(i == ids[0] for i in ids):
        return f"All {len(runs)} runs scored the same {len(ids[0])} episodes, {model}."
    common = set.intersection(*ids)
    counts = ", ".join(f"{method_name(r)} {len(i)}" for r, i in zip(runs, ids, strict=True))
    return (f"**Not the same episodes** ({counts}; {len(common)} in common): rows compare different tasks; "
            f"`--common` scores every run on the {len(common)} shared episodes. {model.capitalize()}.")


def _has_records(run: dict[str, Any]) -> bool:
    return bool(run.get("folder")) and (Path(run["folder"]) / "results.jsonl").exists()


def _episode_ids(run: dict[str, Any]) -> set[str]:
    return set(run["episode_ids"]) if "episode_ids" in run else set(run_records(run))


def on_common_episodes(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every run re-scored on the episodes all of them have (their records, not re-run)."""
    records = [run_records(r) for r in runs]
    common = set.intersection(*(set(r) for r in records)) if records else set()
    if not common:
        raise ValueError("the runs have no episode in common")
    out = []
    for run, by_id in zip(runs, records, strict=True):
        kept = [by_id[i] for i in sorted(common)]
        restricted = f"on the {len(common)} common episodes of its {len(by_id)}" if len(by_id) > len(common) else ""
        note = "; ".join(n for n in (run.get("note", ""), restricted) if n)
        out.append({**run, **summarise(kept), "note": note, "episode_ids": sorted(common)})
    return out
