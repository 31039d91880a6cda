"""The example pool rule for EAI: cross-task examples only, from tasks outside the reported ones.

Why: the first version retrieved other tasks' gold sequences from all 342 tasks, leaving out only
the task itself. VirtualHome's task set holds many tasks with the same goal text as another (89 of
the first 100 have such a twin, and the twin was always the top example), and every retrieved
example shared the task's name (its category, "Wash clothes"). The `k3` rows built that way copied
the test set's own gold answer to the same goal; they are not comparable with the 15 published LLMs.

The split (EAI's order, `tasks.load_tasks`, the order `--limit`/`--skip` cut):

- **Evaluation set**: the first `EVALUATION_TASKS` (100) tasks, the rows every table reports
  (`helper eval eai --limit 100` runs exactly these). No example is ever drawn from them.
- **Pool and design set**: the other 242 (tasks 101-342, 1-based), the only source of examples and
  the tasks on which switches and thresholds are chosen (`--skip 100`).
- **Cross-task**: within the pool, a task's examples never share its goal text (compared case- and
  whitespace-insensitively) or its task name, nor are they the task itself. This holds for a task of
  the design set as well (`--skip 100`), which is itself in the pool.

`check_pool` refuses a pool holding an evaluation task, `check_examples` refuses an example set that
breaks the rule; `memory.GoldMemory` calls the first when it is built and the second on every
retrieval, and the methods call `check_examples` again on whatever memory they were handed, so no
caller can put a same-goal or evaluation-set example in a prompt. `shared_examples` is the scorer's
side: it counts, from a run's records and the task data (not from anything the agent reports about
itself), the retrieved examples that share the task's goal or name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from helper_agent.evals.studies.eai.tasks import EaiTask, load_tasks

EVALUATION_TASKS = 100


class LeakyPoolError(ValueError):
    """An example pool that holds a task of the evaluation set (the first 100)."""


class LeakedExampleError(RuntimeError):
    """A retrieved example shares the evaluated task's goal or name, or is an evaluation task."""


def normalise(text: str) -> str:
    """Case and whitespace do not make two goals (or two task names) different."""
    return " ".join(text.lower().split())


def shares_goal_or_name(task: EaiTask, other: EaiTask) -> bool:
    """Whether `other` may not be an example for `task`: the same task, the same goal text, or the
    same task name (an empty name is no name, and matches nothing)."""
    if other.identifier == task.identifier or normalise(other.goal_text) == normalise(task.goal_text):
        return True
    name = normalise(task.task_name)
    return bool(name) and normalise(other.task_name) == name


@lru_cache(maxsize=1)
def evaluation_ids() -> frozenset[str]:
    """The ids of the first `EVALUATION_TASKS` tasks in EAI's order: never an example."""
    return frozenset(t.identifier for t in load_tasks()[:EVALUATION_TASKS])


def pool_tasks() -> tuple[EaiTask, ...]:
    """The tasks examples come from: every task after the first `EVALUATION_TASKS`."""
    return load_tasks()[EVALUATION_TASKS:]


def check_pool(pool: Iterable[EaiTask]) -> None:
    """Raise `LeakyPoolError` if `pool` holds a task of the evaluation set."""
    leaked = [t.identifier for t in pool if t.identifier in evaluation_ids()]
    if leaked:
        raise LeakyPoolError(f"an example pool may not hold the first {EVALUATION_TASKS} tasks (the evaluation set); "
                             f"this one holds {len(leaked)}: {', '.join(leaked[:5])}{' ...' if len(leaked) > 5 else ''}")


def check_examples(task: EaiTask, examples: Sequence[EaiTask]) -> None:
    """Raise `LeakedExampleError` if an example for `task` breaks the pool rule."""
    for other in examples:
        if shares_goal_or_name(task, other):
            raise LeakedExampleError(f"example {other.identifier} shares task {task.identifier}'s goal or task name "
                                     f"({other.task_name!r}): examples must be cross-task")
        if other.identifier in evaluation_ids():
            raise LeakedExampleError(f"example {other.identifier} for task {task.identifier} is one of the first "
                                     f"{EVALUATION_TASKS} tasks (the evaluation set)")


def example_task_id(example_id: str) -> str:
    """The task an example id stands for: a gold example's id is the task id (`27_2`); a P-RAG
    experience record's is `r<iteration>:<task id>`."""
    return example_id.rsplit(":", 1)[-1]


def shared_examples(records: Iterable[dict[str, Any]], tasks: Sequence[EaiTask] | None = None) -> int:
    """How many retrieved examples in `records` (their `examples` ids) share their task's goal or
    task name, judged from the task data. An id that names no EAI task is not counted."""
    by_id = {t.identifier: t for t in (tasks if tasks is not None else load_tasks())}
    count = 0
    for record in records:
        task = by_id.get(str(record.get("identifier")))
        if task is None:
            continue
        for example_id in record.get("examples") or []:
            other = by_id.get(example_task_id(str(example_id)))
            count += other is not None and shares_goal_or_name(task, other)
    return count
