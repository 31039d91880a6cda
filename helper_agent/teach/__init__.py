"""teach layer of helper-agent (see docs/architecture.md).

TEACh task definitions and their loader (`tasks`), the goal-condition checker over simulator
metadata (`checker`), feedback text from unmet conditions (`feedback`), TEACh's metrics
(`metrics`, `evaluation`), game/EDH/TfD JSON readers and writers (`formats`) and TEACh's action
table (`actions`). Depends on nothing else in the project.
"""

from helper_agent.teach.actions import ACTIONS, TeachAction, action_by_id, action_by_name, default_definitions
from helper_agent.teach.checker import (
    ProblemKey,
    Step,
    SubgoalProgress,
    TaskProgress,
    check_task,
    merge_custom_metadata,
    task_from_state_changes,
)
from helper_agent.teach.errors import TaskDefinitionError, TeachError, TeachFormatError
from helper_agent.teach.evaluation import edh_check_task, score_edh_episode, score_tfd_episode, tfd_check_task
from helper_agent.teach.feedback import feedback_from_progress, object_phrase
from helper_agent.teach.formats import (
    DriverAction,
    EdhInstance,
    Episode,
    EpisodeState,
    Game,
    GameTask,
    Interaction,
    TeachDataset,
    TfdInstance,
    read_edh_instance,
    read_game,
    read_tfd_instance,
    write_record,
)
from helper_agent.teach.goal_state import build_goal_state, make_object
from helper_agent.teach.metrics import (
    AggregateMetrics,
    EpisodeMetrics,
    aggregate_by_task,
    aggregate_metrics,
    evaluate_episode,
    failed_episode,
    trajectory_scores,
)
from helper_agent.teach.tasks import (
    AtomicComponent,
    Relation,
    SubtaskComponent,
    Task,
    TaskDefinition,
    TaskRegistry,
    default_registry,
    dirty_types,
    load_task_definitions,
)

__all__ = [
    "ACTIONS",
    "AggregateMetrics",
    "AtomicComponent",
    "DriverAction",
    "EdhInstance",
    "Episode",
    "EpisodeMetrics",
    "EpisodeState",
    "Game",
    "GameTask",
    "Interaction",
    "ProblemKey",
    "Relation",
    "Step",
    "SubgoalProgress",
    "SubtaskComponent",
    "dirty_types",
    "Task",
    "TaskDefinition",
    "TaskDefinitionError",
    "TaskProgress",
    "TaskRegistry",
    "TeachAction",
    "TeachDataset",
    "TeachError",
    "TeachFormatError",
    "TfdInstance",
    "action_by_id",
    "action_by_name",
    "aggregate_by_task",
    "aggregate_metrics",
    "build_goal_state",
    "check_task",
    "default_definitions",
    "default_registry",
    "edh_check_task",
    "evaluate_episode",
    "failed_episode",
    "feedback_from_progress",
    "load_task_definitions",
    "make_object",
    "merge_custom_metadata",
    "object_phrase",
    "read_edh_instance",
    "read_game",
    "read_tfd_instance",
    "score_edh_episode",
    "score_tfd_episode",
    "task_from_state_changes",
    "tfd_check_task",
    "trajectory_scores",
    "write_record",
]
