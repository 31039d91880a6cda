"""Scoring with EAI's own evaluator: our outputs and the 15 LLM outputs the package ships.

`evaluate_results` scores every `<name>_outputs.json` in a directory. We give it one model at a
time (a directory holding that model's outputs restricted to the task ids of the run), so a run is
resumable per model and every row, ours and the peers', comes from the same evaluator on the same
task ids in the same run. Scores are cached as `scores/<name>.json` in the run directory.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from helper_agent.evals.studies.eai.tasks import package_root

_OUTPUTS = re.compile(r"^(.*?)_outputs\.json$")


def peer_models() -> list[str]:
    """The models whose action-sequencing outputs the package ships (15 in 0.1.x)."""
    folder = package_root() / "llm_response" / "action_sequence"
    return sorted(m.group(1) for p in folder.iterdir() if (m := _OUTPUTS.match(p.name)))


def peer_outputs(model: str, ids: list[str]) -> list[dict[str, str]]:
    """A packaged model's outputs for `ids`, in the order of `ids` (a missing id is an empty answer)."""
    path = package_root() / "llm_response" / "action_sequence" / f"{model}_outputs.json"
    by_id = {o["identifier"]: o for o in json.loads(path.read_text())}
    return [by_id.get(i, {"identifier": i, "llm_output": ""}) for i in ids]


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    """EAI's evaluator writes its log under ./logs: run it inside the run directory."""
    here = Path.cwd()
    folder.mkdir(parents=True, exist_ok=True)
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)


def score_outputs(name: str, outputs: list[dict[str, str]], run_dir: Path, *, refresh: bool = False) -> dict[str, Any]:
    """EAI's `evaluate_results` on one model's outputs; cached in `run_dir/scores/<name>.json`.

    Returns `{"summary": EAI's summary, "errors": EAI's per-task error info, "ids": [...]}`.
    """
    run_dir = run_dir.resolve()  # the evaluator runs inside its work folder: a relative path would miss
    cache = run_dir / "scores" / f"{name}.json"
    ids = [o["identifier"] for o in outputs]
    work = run_dir / "eai_eval" / name
    if cache.exists() and not refresh:
        cached = json.loads(cache.read_text())
        if cached.get("ids") == ids:
            if cached.get("kept") is None and (kept := _programs_kept(work)) is not None:
                cached["kept"] = kept
                cache.write_text(json.dumps(cached, indent=1))
            return cached
    from virtualhome_eval.agent_eval import agent_evaluation

    responses = work / "llm_response" / "action_sequence"
    responses.mkdir(parents=True, exist_ok=True)
    for stale in responses.glob("*_outputs.json"):
        stale.unlink()
    (responses / f"{name}_outputs.json").write_text(json.dumps(outputs, indent=1))
    with _inside(work), warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            results = agent_evaluation(mode="evaluate_results", eval_type="action_sequence",
                                       llm_response_path=str(work / "llm_response"), output_dir=str(work / "output"))
        except ZeroDivisionError:
            raise ValueError(f"EAI's evaluator cannot score {len(ids)} task(s): its rates divide by the number of "
                             "node, edge and action goals, and these tasks lack one kind (choose more tasks)") from None
    summary, errors = results[name]
    record = {"name": name, "ids": ids, "kept": _programs_kept(work), "summary": summary, "errors": _jsonable(errors)}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(record, indent=1))
    return record


_KEPT = re.compile(r"Program number: (\d+)")


def _programs_kept(work: Path) -> int | None:
    """How many tasks EAI's evaluator kept (its rates' denominator), from its own log: it drops a task
    whose gold final state fails its goal check, and reports the count only there."""
    logs = sorted((work / "logs").glob("action_sequence_eval_*.log"), key=lambda p: p.stat().st_mtime)
    for log in reversed(logs):
        found = _KEPT.findall(log.read_text(errors="replace"))
        if found:
            return int(found[-1])
    return None


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def score_peers(ids: list[str], run_dir: Path, models: list[str] | None = None,
                progress: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """Every packaged model's outputs on `ids`, scored by EAI's evaluator (cached per model)."""
    scores = {}
    for model in models or peer_models():
        scores[model] = score_outputs(model, peer_outputs(model, ids), run_dir)
        if progress:
            progress(model)
    return scores
