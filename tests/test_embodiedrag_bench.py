"""benchmarks/embodiedrag_bench.py: a grid cell adopts episodes already measured, only when they are
the same episodes under the same settings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest
from scripts import load_script

from helper_agent.evals.benchmark import generate_benchmark


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Path, Path]:
    """The bench module, a finished run's folder on a 3-episode seed-0 benchmark, and the grid root."""
    root = tmp_path_factory.mktemp("grid")
    data = root / "seed0"
    generate_benchmark(data, seed=0, sizes={"valid_unseen": 3})
    run = root / "erag"
    run.mkdir()
    (run / "spec.json").write_text(json.dumps({"mode": "tfd", "data": str(data), "planner": "embodiedrag", "llm": "local",
                                               "feedback": 0, "ablate": None, "agent_options": {"graph": "subgraph"}}))
    records = [{"instance_id": f"valid_unseen_000{i}.tfd", "success": i % 2, "react_steps": 30} for i in range(3)]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return load_script("benchmarks/embodiedrag_bench.py"), run, root


def test_the_n0_cell_adopts_the_runs_episodes_it_shares(grid: tuple[ModuleType, Path, Path]) -> None:
    bench_module, run, root = grid
    bench = bench_module.ensure_bench(root, 0, 2)
    out = root / "cells" / "subgraph-N0"
    assert bench_module.reuse_records(run, bench, out, "subgraph", "local", 30, 2) == 2
    kept = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["instance_id"] for r in kept] == ["valid_unseen_0000.tfd", "valid_unseen_0001.tfd"]
    assert json.loads((out / "adopted_from.json").read_text()) == {"source": str(run), "episodes": 2}
    # A cell that has records already is left as it is.
    assert bench_module.reuse_records(run, bench, out, "subgraph", "local", 30, 2) == 0


@pytest.mark.parametrize(("graph", "llm", "max_steps"), [("full", "local", 30), ("subgraph", "local:1.5b", 30),
                                                         ("subgraph", "local", 12)])
def test_other_settings_adopt_nothing(grid: tuple[ModuleType, Path, Path], tmp_path: Path, graph: str, llm: str,
                                      max_steps: int) -> None:
    bench_module, run, root = grid
    bench = bench_module.ensure_bench(root, 0, 2)
    assert bench_module.reuse_records(run, bench, tmp_path / "cell", graph, llm, max_steps, 2) == 0
    assert not (tmp_path / "cell" / "results.jsonl").exists()


def test_other_episodes_adopt_nothing(grid: tuple[ModuleType, Path, Path], tmp_path: Path) -> None:
    bench_module, run, root = grid
    grown = bench_module.ensure_bench(root, 100, 2)  # the same episodes with 100 distractors: other files
    assert bench_module.reuse_records(run, grown, tmp_path / "cell", "subgraph", "local", 30, 2) == 0
    # One episode file differs by a byte: only the other is adopted.
    copy = tmp_path / "copy"
    shutil.copytree(bench_module.ensure_bench(root, 0, 2), copy)
    edited = copy / "tfd_instances" / "valid_unseen" / "valid_unseen_0001.tfd.json"
    edited.write_text(edited.read_text() + " ")
    assert bench_module.reuse_records(run, copy, tmp_path / "cell2", "subgraph", "local", 30, 2) == 1


def test_cold_cells_have_folders_of_their_own(grid: tuple[ModuleType, Path, Path]) -> None:
    bench, _, root = grid
    assert bench.cell_folder(root, "local:1.5b", "full", 100) == root / "local_1.5b" / "full-N100"
    assert bench.cell_folder(root, "local", "full", 100, cold=True) == root / "local" / "full-N100-cold"
    assert bench.cell_folder(root, "local", "subgraph", 0, tokens_only=True) == root / "tokens" / "subgraph-N0"


def test_same_actions_counts_only_episodes_both_runs_have(grid: tuple[ModuleType, Path, Path]) -> None:
    bench = grid[0]
    cached = [{"instance_id": "a", "pred_actions": ["Pickup"]}, {"instance_id": "b", "pred_actions": ["Open"]},
              {"instance_id": "c", "pred_actions": []}]
    cold = [{"instance_id": "a", "pred_actions": ["Pickup"]}, {"instance_id": "b", "pred_actions": ["Close"]},
            {"instance_id": "d", "pred_actions": []}]
    assert bench.same_actions(cold, cached) == (1, 2)


def test_figures_count_the_prompt_tokens_evaluated_per_call(grid: tuple[ModuleType, Path, Path]) -> None:
    bench = grid[0]
    records = [{"react_steps": 30, "react_prompt_tokens": 2600.0, "llm_calls": 30, "prompt_tokens_evaluated": 12000},
               {"react_steps": 10, "react_prompt_tokens": 2200.0, "llm_calls": 10, "prompt_tokens_evaluated": 8000}]
    figures = bench.figures(records)
    assert figures["prompt_tokens_evaluated_per_call"] == 500.0  # 20,000 of 40 calls, not the mean of 400 and 800
    assert figures["prompt_tokens_per_step"] == 2500.0
    assert bench.figures([{"react_steps": 0, "llm_calls": 0}])["prompt_tokens_evaluated_per_call"] == 0.0
