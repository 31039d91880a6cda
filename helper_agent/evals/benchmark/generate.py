"""The built-in benchmark, written in TEACh's formats (game, EDH and TfD JSON).

For each episode: a seeded scene, a task from one of the families (with parameters), the family's
gold program run by the executor to get the reference trajectory, and a commander-driver dialogue.
EDH instances are cut from each session at dialogue boundaries, with the state reached so far.

Splits and seeds (all derived from `--seed`, documented in docs/guides/evaluate-builtin.md):
- train: scene seeds `seed * 1_000_000 + n`; for memory seeding.
- valid_seen: the train scenes' layouts (the same scene seeds), with new tasks and dialogues.
- valid_unseen: scene seeds `seed * 1_000_000 + 500_000 + n` (layouts never seen in train) and the
  unseen phrasing pool (wording never seen in train).
Generation is deterministic from the seed.

`distractors=N` (`helper bench generate --distractors N`) adds N distractor objects to every scene
(`world/distractors.py`) after its task is chosen, from their own random stream: the episodes, tasks
and dialogues are those of the same seed without distractors, and the same TEACh goals check them.
"""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helper_agent.config import get_settings
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.benchmark.dialogue import instruction_text, write_dialogue
from helper_agent.evals.benchmark.episodes import SceneTask, prepare, run_program
from helper_agent.evals.benchmark.families import FAMILIES
from helper_agent.program import compile_program
from helper_agent.teach import check_task, default_registry
from helper_agent.teach.actions import COMMANDER_ID, DRIVER_ID, action_by_name, default_definitions
from helper_agent.teach.checker import EDH_CHECKED_PROPERTIES, task_from_state_changes
from helper_agent.teach.formats import (
    DriverAction,
    EdhInstance,
    Episode,
    EpisodeState,
    Game,
    GameTask,
    Interaction,
    TfdInstance,
    write_record,
)
from helper_agent.teach.instances import initial_state as state_from_game  # noqa: F401 - re-exported
from helper_agent.world.distractors import add_distractors
from helper_agent.world.metadata import export_state

SPLIT_SIZES = {"train": 500, "valid_seen": 200, "valid_unseen": 200}
UNSEEN_OFFSET = 500_000
MAX_EDH_PER_GAME = 3
# Properties compared for EDH state changes: the ones TEACh's EDH check reads.
CHANGE_KEYS = tuple(sorted(EDH_CHECKED_PROPERTIES - {"objectType"}))


@dataclass
class SplitSummary:
    tfd: int = 0
    edh: int = 0
    families: Counter[str] = field(default_factory=Counter)
    gold_failures: list[str] = field(default_factory=list)
    mean_reference_length: float = 0.0


def _scene_seed(split: str, seed: int, n: int) -> int:
    base = seed * 1_000_000
    return base + UNSEEN_OFFSET + n if split == "valid_unseen" else base + n


def _locations(scene: SceneTask) -> dict[str, str]:
    """Where the program's objects start: object type -> receptacle type (first instance)."""
    state = scene.state
    wanted = {ref.object_class for sg in compile_program(scene.instance.program).subgoals for ref in (sg.target, sg.receptacle) if ref}
    out: dict[str, str] = {}
    for obj in state.objects.values():
        if obj.object_type in wanted and obj.object_type not in out and obj.parent_id is not None:
            out[obj.object_type] = state.objects[obj.parent_id].object_type
    return out


def _driver_action(name: str, oid: str | None, t: float) -> DriverAction:
    action = action_by_name(name)
    return DriverAction(
        action_id=action.action_id,
        action_idx=action.action_idx,
        obj_interaction_action=1 if oid else 0,
        action_name=name,
        time_start=t,
        oid=oid,
    )


def _diff(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, Any]:
    """TEACh-style state changes: for each object, the checked properties whose value changed.

    Objects that appear (slices) report their type and every checked property that is set.
    """
    old = {o["objectId"]: o for o in before}
    changes: dict[str, dict[str, Any]] = {}
    for obj in after:
        prev = old.get(obj["objectId"])
        if prev is None:
            entry = {"objectType": obj["objectType"]}
            entry.update({k: obj[k] for k in CHANGE_KEYS if obj.get(k)})
            changes[obj["objectId"]] = entry
            continue
        entry = {k: obj[k] for k in CHANGE_KEYS if obj.get(k) != prev.get(k)}
        if entry:
            changes[obj["objectId"]] = entry
    return {"objects": changes}


def _timeline(turns: list[tuple[str, str]], n_actions: int, rng: random.Random) -> list[int]:
    """For each turn, the number of driver actions taken before it is said.

    The opening exchange (up to the first commander turn, and the one after it half the time)
    comes before any action; later turns are spread over the trajectory in order.
    """
    first = next((i for i, (who, _) in enumerate(turns) if who == "Commander"), 0)
    opening = min(len(turns), first + 1 + (1 if rng.random() < 0.5 else 0))
    rest = len(turns) - opening
    positions = [0] * opening
    for k in range(rest):
        positions.append(round(n_actions * (k + 1) / (rest + 1)))
    return positions


def build_episode(split: str, index: int, scene: SceneTask, rng: random.Random) -> tuple[Game, TfdInstance, list[EdhInstance]]:
    """Run the gold program and write one session as a TEACh game, its TfD and EDH instances."""
    instance = scene.instance
    task = default_registry().instantiate(instance.task_name, instance.params)
    game_id = f"{split}_{index:04d}"
    initial_export = export_state(scene.state)
    episode = run_program(scene.state, instance.program, instance.task_name, instance.params)
    if not episode.success:
        raise GoldFailure(f"{game_id}: gold program for {instance.family} failed ({episode.execution.status}: {episode.execution.error})")
    actions = [(a, oid) for a, oid, ok in episode.actions if ok]
    turns = write_dialogue(instance, rng, phrasing="unseen" if split == "valid_unseen" else "seen", locations=_locations(scene))
    said_at = _timeline(turns, len(actions), rng)

    # Replay to time-stamp everything and capture the states at EDH cut points.
    env = SymbolicEnv()
    env.reset(scene.state)
    interactions: list[Interaction] = []
    driver_actions: list[DriverAction] = []
    snapshots: dict[int, list[dict[str, Any]]] = {0: env.objects_metadata()}
    t = 0.0
    turn_index = 0
    cut_points: list[int] = []
    for step in range(len(actions) + 1):
        while turn_index < len(turns) and said_at[turn_index] == step:
            who, text = turns[turn_index]
            interactions.append(
                Interaction(agent_id=COMMANDER_ID if who == "Commander" else DRIVER_ID, action_id=100, time_start=round(t, 2),
                            duration=1, success=1, utterance=text, corrected_utterance=text)
            )
            if who == "Commander" and 0 < step < len(actions):
                cut_points.append(step)
                snapshots[step] = env.objects_metadata()
            t += 1.0
            turn_index += 1
        if step == len(actions):
            break
        name, oid = actions[step]
        env.step(name, oid)
        action = action_by_name(name)
        interactions.append(
            Interaction(agent_id=DRIVER_ID, action_id=action.action_id, time_start=round(t, 2), duration=1, success=1, oid=oid)
        )
        driver_actions.append(_driver_action(name, oid, round(t, 2)))
        t += 0.5
    final_objects = env.objects_metadata()
    assert final_objects == episode.final_objects, "replaying the gold trajectory must reach the same state"

    definition = default_registry().get(instance.task_name)
    agents = [
        {"agent_id": COMMANDER_ID, "name": "Commander"},
        {"agent_id": DRIVER_ID, "name": "Driver", **{k: initial_export["agent"][k] for k in ("position", "rotation", "cameraHorizon")}},
    ]
    game = Game(
        version="helper-agent-1",
        task_type="tfd",
        definitions=default_definitions(),
        tasks=[
            GameTask(
                task_id=definition.task_id,
                task_name=instance.task_name,
                task_params=list(instance.params),
                task_nparams=definition.task_nparams,
                task_anchor_object=definition.task_anchor_object,
                desc=task.desc,
                episodes=[
                    Episode(
                        episode_id=f"{game_id}.e0",
                        world=scene.state.scene_name,
                        world_type=scene.room_type,
                        initial_state=EpisodeState(time_start=0, agents=agents, objects=initial_export["objects"]),
                        interactions=interactions,
                        final_state=EpisodeState(time_start=round(t, 2), agents=agents, objects=final_objects),
                    )
                ],
            )
        ],
        helper_agent={
            "split": split,
            "family": instance.family,
            "scene_seed": scene.seed,
            "room_type": scene.room_type,
            "grid": initial_export["grid"],
            "gold_program": instance.program,
        },
    )
    dialog = [[who, text] for who, text in turns]
    init = episode.initial
    tfd = TfdInstance(
        game_id=game_id,
        instance_id=f"{game_id}.tfd",
        pred_start_idx=0,
        dialog_history=dialog,
        dialog_history_cleaned=dialog,
        driver_action_history=[],
        driver_actions_future=driver_actions,
        expected_init_goal_conditions_total=init.goal_conditions_total,
        expected_init_goal_conditions_satisfied=init.goal_conditions_satisfied,
        helper_agent={"task_name": instance.task_name, "task_params": list(instance.params), "family": instance.family,
                      "gold_program": instance.program, "instruction": instruction_text(turns)},
    )
    edhs: list[EdhInstance] = []
    for n, cut in enumerate(cut_points[:MAX_EDH_PER_GAME]):
        before = snapshots[cut]
        changes = _diff(before, final_objects)
        edh_task = task_from_state_changes(changes)
        progress = check_task(edh_task, before)
        if progress.success:
            continue
        said = sum(1 for i, at in enumerate(said_at) if at <= cut)
        history_turns = dialog[:said]
        edhs.append(
            EdhInstance(
                game_id=game_id,
                instance_id=f"{game_id}.edh{n}",
                pred_start_idx=cut,
                dialog_history=history_turns,
                dialog_history_cleaned=history_turns,
                driver_action_history=driver_actions[:cut],
                driver_actions_future=driver_actions[cut:],
                init_state_diff=_diff(snapshots[0], before),
                final_state_diff=_diff(snapshots[0], final_objects),
                state_changes=changes,
                expected_init_goal_conditions_total=progress.goal_conditions_total,
                expected_init_goal_conditions_satisfied=progress.goal_conditions_satisfied,
                helper_agent={"task_name": instance.task_name, "task_params": list(instance.params), "family": instance.family},
            )
        )
    return game, tfd, edhs


def task_classes(scene: SceneTask) -> set[str]:
    """Every object class the episode's task parameters or gold program name (kept free of distractors)."""
    names = {str(p) for p in scene.instance.params}
    for sg in compile_program(scene.instance.program).subgoals:
        for ref in (sg.target, sg.receptacle):
            if ref is not None:
                names.add(ref.object_class)
    return names


class GoldFailure(RuntimeError):
    """A gold program failed in its own scene: a bug in the world, executor or generator."""


def generate_benchmark(
    out: str | Path,
    seed: int = 0,
    sizes: dict[str, int] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    overwrite: bool = False,
    distractors: int = 0,
) -> dict[str, SplitSummary]:
    """Write games/, edh_instances/ and tfd_instances/ per split under `out`; returns a summary.

    `distractors`: extra objects per scene (see the module docstring); 0 leaves scenes as they are.
    """
    if distractors < 0:
        raise ValueError("distractors must be >= 0")
    limit = get_settings().max_scene_objects  # what every reader of these games will accept
    if distractors >= limit:
        raise ValueError(f"--distractors {distractors}: a scene would hold more than {limit} objects, "
                         "the limit every reader of its game applies (HELPER_MAX_SCENE_OBJECTS)")
    out = Path(out)
    sizes = dict(SPLIT_SIZES if sizes is None else sizes)
    families = sorted(FAMILIES)
    summaries: dict[str, SplitSummary] = {}
    train_seeds: list[int] = []
    for split, size in sizes.items():
        summary = SplitSummary()
        summaries[split] = summary
        rng = random.Random(f"{seed}:{split}")
        for sub in ("games", "edh_instances", "tfd_instances"):
            folder = out / sub / split
            if folder.is_dir() and any(folder.iterdir()):
                if not overwrite:
                    raise FileExistsError(f"{folder} is not empty; pass overwrite=True (--force) to replace it")
                shutil.rmtree(folder)
            folder.mkdir(parents=True, exist_ok=True)
        n = 0
        attempt = 0
        lengths: list[int] = []
        while n < size:
            family = families[(n + attempt) % len(families)] if split != "train" else families[n % len(families)]
            if split == "valid_seen" and train_seeds:
                scene_seed = rng.choice(train_seeds)
            else:
                scene_seed = _scene_seed(split, seed, attempt)
            attempt += 1
            if attempt > size * 60:
                raise RuntimeError(f"could not build {size} {split} episodes")
            scene = prepare(family, scene_seed, task_seed=rng.randrange(1 << 30))
            if scene is None:
                continue
            if distractors:
                add_distractors(scene.state, distractors, f"{seed}:{split}:{scene_seed}", exclude=task_classes(scene))
                if len(scene.state.objects) > limit:
                    raise ValueError(f"--distractors {distractors}: scene {scene_seed} would hold "
                                     f"{len(scene.state.objects)} objects; the limit is {limit} (HELPER_MAX_SCENE_OBJECTS)")
            try:
                game, tfd, edhs = build_episode(split, n, scene, random.Random(rng.randrange(1 << 30)))
            except GoldFailure as failure:
                summary.gold_failures.append(str(failure))
                continue
            game_id = tfd.game_id
            write_record(game, out / "games" / split / f"{game_id}.game.json")
            write_record(tfd, out / "tfd_instances" / split / f"{game_id}.tfd.json")
            for edh in edhs:
                write_record(edh, out / "edh_instances" / split / f"{edh.instance_id}.json")
            if split == "train":
                train_seeds.append(scene_seed)
            summary.tfd += 1
            summary.edh += len(edhs)
            summary.families[family] += 1
            lengths.append(len(tfd.driver_actions_future))
            n += 1
            if progress is not None:
                progress(split, n, size)
        summary.mean_reference_length = sum(lengths) / max(len(lengths), 1)
    manifest = {
        "generator": "helper-agent",
        "seed": seed,
        "distractors": distractors,
        "splits": {
            s: {"tfd": v.tfd, "edh": v.edh, "families": dict(v.families), "gold_failures": v.gold_failures,
                "mean_reference_length": round(v.mean_reference_length, 2)}
            for s, v in summaries.items()
        },
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return summaries
