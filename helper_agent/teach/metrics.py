"""Episode and aggregate metrics, computed the way TEACh's evaluation (``compute_metrics.py``) does.

Per episode (``evaluate_episode``):

* goal conditions to achieve = initial total - initial satisfied (satisfied clipped to total);
  unsatisfied at the end = final total - final satisfied (clipped likewise);
  ``goal_condition_success = 1 - final_unsatisfied / initial_unsatisfied`` (1 when nothing was left
  to do; it can be negative when the agent undid conditions);
* ``completed_goal_conditions = initial_unsatisfied - final_unsatisfied``;
* path weight ``w = gt_len / max(pred_len, gt_len)``; ``success_spl = success * w``,
  ``goal_condition_spl = goal_condition_success * w``, and their path-length-weighted versions
  multiply by ``gt_len``.

Aggregate (``aggregate_metrics``): SR = successes / episodes; GC = sum completed / sum total goal
conditions (micro-averaged over goal conditions); PLW-SR and PLW-GC = sum of the path-length-weighted
scores / sum of reference path lengths; counts of predicted stops and of episodes ended by the
failed-action limit (``num_api_fails >= max_api_fails``), the step limit (``traj_len >= max_traj_steps``)
and by errors.

One departure from TEACh: an episode that errored (``error=1``: the LLM server unavailable, an
exception in the agent or the environment) is not an agent's failure. It is left out of every rate
and count above and reported only as ``num_fails_by_error`` beside them; its goal conditions (0 of 0)
never reach GC. Counted as failures, a server outage read as "SR 0.00" and 0-of-0 conditions let GC
print 100.00 while half the episodes had errored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_TRAJ_STEPS = 1000
MAX_API_FAILS = 30


class EpisodeMetrics(BaseModel):
    """TEACh's per-trajectory metrics record (same keys), plus ``task_name`` for per-task tables.

    Extra keys (for example LLM calls or prompt tokens) are kept."""

    model_config = ConfigDict(extra="allow")

    instance_id: str
    game_id: str
    task_name: str | None = None
    completed_goal_conditions: int = 0
    total_goal_conditions: int = 0
    goal_condition_success: float = 0.0
    success_spl: float = 0.0
    path_len_weighted_success_spl: float = 0.0
    goal_condition_spl: float = 0.0
    path_len_weighted_goal_condition_spl: float = 0.0
    gt_path_len: int = 0
    reward: float = 0.0
    success: int = 0
    traj_len: int = 0
    predicted_stop: int = 0
    num_api_fails: int = 0
    error: int = 0
    init_success: int = 0
    pred_actions: list[Any] = Field(default_factory=list)

    def to_teach_dict(self) -> dict[str, Any]:
        return self.model_dump(exclude={"task_name"} if self.task_name is None else set())


def trajectory_scores(
    success: bool,
    gt_path_len: int,
    traj_len: int,
    init_gc_total: int,
    init_gc_satisfied: int,
    final_gc_total: int,
    final_gc_satisfied: int,
) -> dict[str, Any]:
    """TEACh's ``evaluate_traj``: goal-condition success and path-weighted scores of one trajectory."""
    init_gc_satisfied = min(init_gc_total, init_gc_satisfied)
    final_gc_satisfied = min(final_gc_total, final_gc_satisfied)
    to_achieve = init_gc_total - init_gc_satisfied
    still_unsatisfied = final_gc_total - final_gc_satisfied
    gc_success = 1.0 - still_unsatisfied / to_achieve if to_achieve != 0 else 1.0
    longest = max(traj_len, gt_path_len)
    weight = min(1.0, gt_path_len / float(longest)) if longest > 0 else 1.0
    s_spl = (1.0 if success else 0.0) * weight
    gc_spl = gc_success * weight
    return {
        "completed_goal_conditions": int(to_achieve) - int(still_unsatisfied),
        "total_goal_conditions": int(to_achieve),
        "goal_condition_success": float(gc_success),
        "success_spl": float(s_spl),
        "path_len_weighted_success_spl": float(s_spl * gt_path_len),
        "goal_condition_spl": float(gc_spl),
        "path_len_weighted_goal_condition_spl": float(gc_spl * gt_path_len),
        "gt_path_len": int(gt_path_len),
        "success": int(bool(success)),
        "traj_len": int(traj_len),
    }


def evaluate_episode(
    *,
    instance_id: str,
    game_id: str,
    success: bool,
    gt_path_len: int,
    traj_len: int,
    init_gc_total: int,
    init_gc_satisfied: int,
    final_gc_total: int,
    final_gc_satisfied: int,
    task_name: str | None = None,
    predicted_stop: bool = False,
    num_api_fails: int = 0,
    error: bool = False,
    init_success: bool = True,
    pred_actions: Iterable[Any] = (),
    **extra: Any,
) -> EpisodeMetrics:
    """Metrics of one EDH/TfD episode from the goal-condition counts before and after it.

    ``gt_path_len`` is the reference trajectory length (``len(driver_actions_future)``) and
    ``traj_len`` the number of actions the agent took."""
    scores = trajectory_scores(
        success, gt_path_len, traj_len, init_gc_total, init_gc_satisfied, final_gc_total, final_gc_satisfied
    )
    return EpisodeMetrics(
        instance_id=instance_id,
        game_id=game_id,
        task_name=task_name,
        predicted_stop=int(bool(predicted_stop)),
        num_api_fails=int(num_api_fails),
        error=int(bool(error)),
        init_success=int(bool(init_success)),
        pred_actions=list(pred_actions),
        **scores,
        **extra,
    )


def failed_episode(
    instance_id: str, game_id: str, task_name: str | None = None, **extra: Any
) -> EpisodeMetrics:
    """The record of an episode that produced no output: an error, left out of SR and GC."""
    return EpisodeMetrics(instance_id=instance_id, game_id=game_id, task_name=task_name, error=1, **extra)


class AggregateMetrics(BaseModel):
    """SR, GC, PLW-SR, PLW-GC and termination counts over a set of episodes."""

    num_successes: int = 0
    num_evals: int = 0
    success_rate: float = 0.0
    completed_goal_conditions: int = 0
    total_goal_conditions: int = 0
    goal_condition_success_rate: float = 0.0
    path_length_weighted_success_rate: float = 0.0
    path_length_weighted_goal_condition_success_rate: float = 0.0
    num_predicted_stops: int = 0
    num_fails_by_api_limit: int = 0
    num_fails_by_traj_len_limit: int = 0
    num_fails_by_error: int = 0

    def to_teach_dict(self) -> dict[str, Any]:
        """The result table in the layout TEACh's ``aggregate_metrics`` returns."""
        return {
            "success": {
                "num_successes": self.num_successes,
                "num_evals": self.num_evals,
                "success_rate": self.success_rate,
            },
            "goal_condition_success": {
                "completed_goal_conditions": self.completed_goal_conditions,
                "total_goal_conditions": self.total_goal_conditions,
                "goal_condition_success_rate": self.goal_condition_success_rate,
            },
            "path_length_weighted_success_rate": self.path_length_weighted_success_rate,
            "path_length_weighted_goal_condition_success_rate": self.path_length_weighted_goal_condition_success_rate,
            "num_predicted_stops": self.num_predicted_stops,
            "num_fails_by_api_limit": self.num_fails_by_api_limit,
            "num_fails_by_traj_len_limit": self.num_fails_by_traj_len_limit,
            "num_fails_by_error": self.num_fails_by_error,
        }


def _episodes(episodes: Iterable[EpisodeMetrics] | Mapping[str, EpisodeMetrics]) -> list[EpisodeMetrics]:
    items = episodes.values() if isinstance(episodes, Mapping) else episodes
    return [e if isinstance(e, EpisodeMetrics) else EpisodeMetrics.model_validate(e) for e in items]


def aggregate_metrics(
    episodes: Iterable[EpisodeMetrics] | Mapping[str, EpisodeMetrics],
    *,
    max_api_fails: int = MAX_API_FAILS,
    max_traj_steps: int = MAX_TRAJ_STEPS,
) -> AggregateMetrics:
    """TEACh's ``aggregate_metrics`` over episode records, errored episodes left out (counted in
    ``num_fails_by_error`` only). Rates whose denominator is zero (no episodes, no goal conditions,
    no reference path length) are reported as 0.0."""
    everything = _episodes(episodes)
    eps = [e for e in everything if not e.error]
    num_evals = len(eps)
    num_successes = sum(1 for e in eps if e.success == 1)
    completed = sum(e.completed_goal_conditions for e in eps)
    total = sum(e.total_goal_conditions for e in eps)
    path_weight = sum(e.gt_path_len for e in eps)
    plw_sr = plw_gc = 0.0
    if path_weight > 0:
        plw_sr = sum(e.path_len_weighted_success_spl for e in eps) / float(path_weight)
        plw_gc = sum(e.path_len_weighted_goal_condition_spl for e in eps) / float(path_weight)
    return AggregateMetrics(
        num_successes=num_successes,
        num_evals=num_evals,
        success_rate=num_successes / num_evals if num_evals else 0.0,
        completed_goal_conditions=completed,
        total_goal_conditions=total,
        goal_condition_success_rate=completed / float(total) if total else 0.0,
        path_length_weighted_success_rate=plw_sr,
        path_length_weighted_goal_condition_success_rate=plw_gc,
        num_predicted_stops=sum(e.predicted_stop for e in eps),
        num_fails_by_api_limit=sum(1 for e in eps if e.num_api_fails >= max_api_fails),
        num_fails_by_traj_len_limit=sum(1 for e in eps if e.traj_len >= max_traj_steps),
        num_fails_by_error=sum(1 for e in everything if e.error),
    )


def aggregate_by_task(
    episodes: Iterable[EpisodeMetrics] | Mapping[str, EpisodeMetrics],
    *,
    max_api_fails: int = MAX_API_FAILS,
    max_traj_steps: int = MAX_TRAJ_STEPS,
) -> dict[str, AggregateMetrics]:
    """`aggregate_metrics` per ``task_name`` (episodes without one are grouped under ``"unknown"``),
    sorted by task name."""
    groups: dict[str, list[EpisodeMetrics]] = {}
    for e in _episodes(episodes):
        groups.setdefault(e.task_name or "unknown", []).append(e)
    return {
        name: aggregate_metrics(groups[name], max_api_fails=max_api_fails, max_traj_steps=max_traj_steps)
        for name in sorted(groups)
    }
