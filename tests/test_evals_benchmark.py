"""`helper bench generate`: TEACh-format files that the readers accept, lossless round trips,
determinism, disjoint phrasing and layouts for valid_unseen, and episodes that start from games."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.benchmark import generate_benchmark, state_from_game
from helper_agent.teach import check_task, default_registry
from helper_agent.teach.formats import (
    TeachDataset,
    read_edh_instance,
    read_game,
    read_tfd_instance,
    write_record,
)

SIZES = {"train": 12, "valid_seen": 6, "valid_unseen": 6}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    summaries = generate_benchmark(out, seed=3, sizes=SIZES)
    assert all(not s.gold_failures for s in summaries.values())
    return out


def test_layout_and_sizes(bench: Path) -> None:
    dataset = TeachDataset(bench)
    for split, size in SIZES.items():
        assert len(dataset.game_paths(split)) == size
        assert len(dataset.tfd_paths(split)) == size
        assert len(dataset.edh_paths(split)) >= size  # at least one cut per session on average
    manifest = json.loads((bench / "manifest.json").read_text())
    assert manifest["splits"]["train"]["tfd"] == 12


@pytest.mark.parametrize("kind", ["games", "tfd_instances", "edh_instances"])
def test_every_file_reads_and_round_trips_losslessly(bench: Path, tmp_path: Path, kind: str) -> None:
    reader = {"games": read_game, "tfd_instances": read_tfd_instance, "edh_instances": read_edh_instance}[kind]
    for path in sorted((bench / kind).glob("*/*.json")):
        record = reader(path)
        copy = tmp_path / path.name
        write_record(record, copy)
        assert json.loads(copy.read_text()) == json.loads(path.read_text()), path.name


def test_generation_is_deterministic(bench: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    generate_benchmark(again, seed=3, sizes=SIZES)
    for path in sorted(bench.glob("*/*/*.json")):
        twin = again / path.relative_to(bench)
        assert twin.read_bytes() == path.read_bytes(), path.name


def test_valid_unseen_has_new_layouts_and_phrasings(bench: Path) -> None:
    dataset = TeachDataset(bench)

    def seeds(split: str) -> set[int]:
        return {g.model_extra["helper_agent"]["scene_seed"] for g in dataset.games(split)}

    def commander_lines(split: str) -> set[str]:
        return {text for t in dataset.tfd_instances(split) for who, text in t.dialog() if who == "Commander"}

    assert seeds("valid_seen") <= seeds("train")
    assert not seeds("valid_unseen") & seeds("train")
    requests_unseen = commander_lines("valid_unseen")
    assert requests_unseen and not requests_unseen & commander_lines("train")


def test_an_episode_starts_from_its_games_initial_state(bench: Path) -> None:
    dataset = TeachDataset(bench)
    for tfd in dataset.tfd_instances("valid_unseen"):
        game = dataset.game_for(tfd, "valid_unseen")
        env = SymbolicEnv()
        env.reset(state_from_game(game))
        assert env.objects_metadata() == game.episode.initial_state.objects
        task = default_registry().task_from_game_task(game.task)
        progress = check_task(task, env.objects_metadata())
        assert not progress.success
        assert progress.goal_conditions_total == tfd.expected_init_goal_conditions_total
        # Replaying the reference trajectory reaches the task.
        for action in tfd.driver_actions_future:
            assert env.step(action.action_name, action.oid).result.success
        assert check_task(task, env.objects_metadata()).success


def test_edh_cuts_carry_history_and_remaining_state_changes(bench: Path) -> None:
    dataset = TeachDataset(bench)
    for edh in dataset.edh_instances("valid_seen"):
        assert edh.driver_action_history and edh.driver_actions_future
        assert edh.dialog_history[-1][0] == "Commander"
        assert edh.state_changes["objects"], edh.instance_id
        assert edh.expected_init_goal_conditions_satisfied < edh.expected_init_goal_conditions_total


def test_refuses_to_mix_with_an_existing_split(bench: Path) -> None:
    with pytest.raises(FileExistsError, match="not empty"):
        generate_benchmark(bench, seed=3, sizes={"train": 1})
