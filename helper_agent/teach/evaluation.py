"""Scoring EDH and TfD episodes as TEACh does: which task to check, and with which counts.

* EDH: the task is built from the instance's ``state_changes``; the initial goal-condition counts
  are the cached ``expected_init_goal_conditions_total`` / ``_satisfied``.
* TfD: the task is the definition with the game's ``task_id``, filled with the game's
  ``task_params``; the initial counts come from checking it on the initial state.

In both, the reference path length is ``len(driver_actions_future)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from helper_agent.teach.checker import DistanceFn, TaskProgress, check_task, task_from_state_changes
from helper_agent.teach.formats import EdhInstance, Game, TfdInstance
from helper_agent.teach.metrics import EpisodeMetrics, evaluate_episode
from helper_agent.teach.tasks import Task, TaskRegistry, default_registry

ObjectList = Sequence[Mapping[str, Any]]


def edh_check_task(instance: EdhInstance) -> Task:
    """The task an EDH instance is evaluated on."""
    return task_from_state_changes(instance.state_changes or {"objects": {}})


def tfd_check_task(game: Game, registry: TaskRegistry | None = None) -> Task:
    """The task a TfD instance (of ``game``) is evaluated on."""
    return (registry or default_registry()).task_from_game_task(game.task)


def score_edh_episode(
    instance: EdhInstance,
    final_objects: ObjectList,
    traj_len: int,
    *,
    task_name: str | None = None,
    distance_to_agent: DistanceFn | None = None,
    **kwargs: Any,
) -> tuple[EpisodeMetrics, TaskProgress]:
    """Metrics of an EDH episode from the final state's objects; also returns the final check."""
    progress = check_task(edh_check_task(instance), final_objects, distance_to_agent=distance_to_agent)
    init_total = instance.expected_init_goal_conditions_total
    init_sat = instance.expected_init_goal_conditions_satisfied
    if init_total is None or init_sat is None:
        raise ValueError(f"EDH instance {instance.instance_id} has no expected_init_goal_conditions_* values")
    metrics = evaluate_episode(
        instance_id=instance.instance_id,
        game_id=instance.game_id,
        task_name=task_name,
        success=progress.success,
        gt_path_len=instance.reference_path_length,
        traj_len=traj_len,
        init_gc_total=init_total,
        init_gc_satisfied=init_sat,
        final_gc_total=progress.goal_conditions_total,
        final_gc_satisfied=progress.goal_conditions_satisfied,
        **kwargs,
    )
    return metrics, progress


def score_tfd_episode(
    instance: TfdInstance,
    task: Task,
    initial_objects: ObjectList,
    final_objects: ObjectList,
    traj_len: int,
    *,
    distance_to_agent: DistanceFn | None = None,
    pred_actions: Iterable[Any] = (),
    **kwargs: Any,
) -> tuple[EpisodeMetrics, TaskProgress]:
    """Metrics of a TfD episode from the initial and final states' objects."""
    init = check_task(task, initial_objects, distance_to_agent=distance_to_agent)
    final = check_task(task, final_objects, distance_to_agent=distance_to_agent)
    metrics = evaluate_episode(
        instance_id=instance.instance_id or instance.game_id,
        game_id=instance.game_id,
        task_name=kwargs.pop("task_name", task.task_name),
        success=final.success,
        gt_path_len=instance.reference_path_length,
        traj_len=traj_len,
        init_gc_total=init.goal_conditions_total,
        init_gc_satisfied=init.goal_conditions_satisfied,
        final_gc_total=final.goal_conditions_total,
        final_gc_satisfied=final.goal_conditions_satisfied,
        pred_actions=pred_actions,
        **kwargs,
    )
    return metrics, final
