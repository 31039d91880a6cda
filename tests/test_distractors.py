"""Distractors grow a home deterministically without changing its episodes or what their goals check."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import run_eval
from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.world.catalog import load_catalog
from helper_agent.world.distractors import DISTRACTOR_CLASSES, add_distractors, distractor_classes, stateless
from helper_agent.world.generator import generate_scene


@pytest.fixture(autouse=True)
def fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash")


def test_same_seed_same_distractors_and_smaller_sets_are_prefixes() -> None:
    a, b, c = generate_scene(11), generate_scene(11), generate_scene(11)
    ids_a = add_distractors(a, 300, "s")
    ids_b = add_distractors(b, 300, "s")
    ids_c = add_distractors(c, 100, "s")
    assert ids_a == ids_b and len(set(ids_a)) == 300
    assert ids_c == ids_a[:100]
    assert [a.objects[i].object_type for i in ids_a] == [b.objects[i].object_type for i in ids_b]
    other = generate_scene(11)
    assert add_distractors(other, 300, "t") != ids_a


def test_distractors_lie_on_free_floor_and_block_nothing() -> None:
    state = generate_scene(5)
    blocked = state.blocked.copy()
    before = {oid: (o.parent_id, tuple(o.contents)) for oid, o in state.objects.items()}
    ids = add_distractors(state, 200, 1)
    assert np.array_equal(state.blocked, blocked)
    assert {oid: (o.parent_id, tuple(o.contents)) for oid, o in state.objects.items() if oid in before} == before
    for oid in ids:
        obj = state.objects[oid]
        assert obj.parent_id is None and not obj.cells and not obj.contents
        assert state.walkable(state.cell_of(obj.position[0], obj.position[2]))
    assert state.check_invariants() == []


def test_distractor_classes_have_no_checked_state_and_respect_exclusions() -> None:
    catalog = load_catalog()
    assert all(stateless(t, catalog) for t in DISTRACTOR_CLASSES)
    assert "Knife" not in DISTRACTOR_CLASSES and "ButterKnife" not in DISTRACTOR_CLASSES
    assert "RemoteControl" not in distractor_classes({"RemoteControl"})
    state = generate_scene(3)
    ids = add_distractors(state, 150, 0, exclude={"RemoteControl", "Watch"})
    assert not {state.objects[i].object_type for i in ids} & {"RemoteControl", "Watch"}
    with pytest.raises(ValueError):
        add_distractors(generate_scene(3), 5, 0, exclude=DISTRACTOR_CLASSES)


def _split_files(root: Path, sub: str) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in sorted((root / sub / "valid_unseen").glob("*.json"))}


def test_the_benchmark_keeps_its_episodes_and_goals(tmp_path: Path) -> None:
    plain, grown = tmp_path / "plain", tmp_path / "grown"
    generate_benchmark(plain, seed=4, sizes={"valid_unseen": 8})
    generate_benchmark(grown, seed=4, sizes={"valid_unseen": 8}, distractors=120)
    a, b = _split_files(plain, "tfd_instances"), _split_files(grown, "tfd_instances")
    assert list(a) == list(b)
    for name in a:
        assert a[name]["dialog_history"] == b[name]["dialog_history"]
        assert a[name]["helper_agent"] == b[name]["helper_agent"]
    games_a, games_b = _split_files(plain, "games"), _split_files(grown, "games")
    for name in games_a:
        objects_a = games_a[name]["tasks"][0]["episodes"][0]["initial_state"]["objects"]
        objects_b = games_b[name]["tasks"][0]["episodes"][0]["initial_state"]["objects"]
        assert len(objects_b) == len(objects_a) + 120
        task_params = set(games_b[name]["tasks"][0]["task_params"])
        added = {o["objectType"] for o in objects_b} - {o["objectType"] for o in objects_a}
        assert not added & task_params
    assert json.loads((grown / "manifest.json").read_text())["distractors"] == 120
    # The same TEACh goals check the grown episodes: the gold programs still reach them all.
    metrics = run_eval(EvalSpec(mode="tfd", data=str(grown), split="valid_unseen", planner="gold", out=str(tmp_path / "gold")))
    assert metrics["overall"]["SR"] == 100.0 and metrics["episodes"] == 8


def test_cli_generates_with_distractors(tmp_path: Path) -> None:
    from helper_agent.cli import app

    result = CliRunner().invoke(app, ["bench", "generate", "--out", str(tmp_path / "b"), "--train", "0", "--valid-seen", "0",
                                      "--valid-unseen", "2", "--distractors", "7"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["distractors"] == 7
    bad = CliRunner().invoke(app, ["bench", "generate", "--out", str(tmp_path / "c"), "--distractors", "-1"])
    assert bad.exit_code != 0
