"""One episode with a known program: set up the scene, run the executor, check the TEACh task.

Shared by the gold-program benchmark generator (reference trajectories), the executor's family
tests and the `--planner gold` evaluation (an oracle ceiling for the world and executor).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.benchmark.families import FAMILIES, FamilyInstance, rooms_for
from helper_agent.program import compile_program
from helper_agent.teach import TaskProgress, check_task, default_registry
from helper_agent.tools.executor import ExecutionResult, Executor, ExecutorConfig
from helper_agent.world.generator import generate_scene
from helper_agent.world.metadata import export_objects
from helper_agent.world.state import WorldState


@dataclass
class SceneTask:
    """A generated scene prepared for one family instance (dishes dirtied as the task needs)."""

    seed: int
    room_type: str
    state: WorldState
    instance: FamilyInstance


def prepare(family: str, seed: int, room_type: str | None = None, task_seed: int | None = None) -> SceneTask | None:
    """A scene for `family` from `seed`, or None when the seeded scene cannot host it.

    `task_seed` seeds the task's parameters (defaults to the scene seed), so one layout can host
    different tasks.
    """
    rooms = rooms_for(family)
    room = room_type or rooms[seed % len(rooms)]
    state = generate_scene(seed, room)
    types = Counter(o.object_type for o in state.objects.values())
    instance = FAMILIES[family](types, random.Random(seed if task_seed is None else task_seed))
    if instance is None:
        return None
    for obj in state.objects.values():
        if obj.object_type in instance.make_dirty:
            obj.is_dirty = True
    # A task that is already done in the initial state measures nothing: skip the scene.
    task = default_registry().instantiate(instance.task_name, instance.params)
    if check_task(task, export_objects(state)).success:
        return None
    return SceneTask(seed, room, state, instance)


def prepared_scenes(family: str, count: int, max_seed: int = 500) -> list[SceneTask]:
    """The first `count` seeded scenes (seeds 1, 2, ...) that can host `family`; fewer when seeds
    up to `max_seed` do not give that many."""
    scenes, seed = [], 0
    while len(scenes) < count and seed < max_seed:
        seed += 1
        prepared = prepare(family, seed)
        if prepared is not None:
            scenes.append(prepared)
    return scenes


@dataclass
class ProgramEpisode:
    initial: TaskProgress
    final: TaskProgress
    execution: ExecutionResult
    actions: list[tuple[str, str | None, bool]]
    final_objects: list[dict[str, Any]]

    @property
    def success(self) -> bool:
        return self.final.success


def run_program(
    state: WorldState,
    program: str,
    task_name: str,
    params: tuple[str, ...] = (),
    config: ExecutorConfig | None = None,
    **executor_kwargs: Any,
) -> ProgramEpisode:
    """Run a program from a state and check the TEACh task before and after."""
    task = default_registry().instantiate(task_name, params)
    env = SymbolicEnv()
    env.reset(state)
    initial = check_task(task, env.objects_metadata())
    executor = Executor(env, config=config, **executor_kwargs)
    execution = executor.run(compile_program(program).subgoals)
    final_objects = env.objects_metadata()
    final = check_task(task, final_objects)
    return ProgramEpisode(initial, final, execution, list(env.history), final_objects)
