"""HELPER's and LLM-Planner's example memory for EAI: cross-task gold sequences, by MiniLM similarity.

The key is a task's goal text (node, edge and action goals as EAI's prompt states them: what the
agent is given); the value is that task's recorded program. The pool is the tasks outside the
evaluation set (tasks 101-342 in EAI's order), and a task's examples never share its goal text or
its task name (`pool.py` says why: the first version, leave-one-out over all 342 tasks, retrieved
the test set's own answer to the same goal). The memory enforces it: a pool holding an evaluation
task is refused when the memory is built, examples that share the task's goal or name are skipped,
and what it returns is checked again (`pool.check_examples`) before it leaves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from helper_agent.evals.studies.eai.grammar import Step
from helper_agent.evals.studies.eai.pool import check_examples, check_pool, pool_tasks, shares_goal_or_name
from helper_agent.evals.studies.eai.tasks import EaiTask, gold_steps
from helper_agent.graphs.registry import ActionExample
from helper_agent.memory.embeddings import get_embedder, normalize_rows


@dataclass(frozen=True)
class Example:
    task: EaiTask
    steps: list[Step]
    score: float


class GoldMemory:
    """An in-memory cosine index over the pool's goal texts (the packaged embeddings by default).

    `pool` defaults to `pool.pool_tasks()` (tasks 101-342); any other pool is checked and refused
    (`LeakyPoolError`) if it holds one of the first 100 tasks."""

    def __init__(self, pool: list[EaiTask] | None = None, embedder: object | None = None) -> None:
        self.pool = list(pool if pool is not None else pool_tasks())
        check_pool(self.pool)
        self.embedder = embedder or get_embedder()
        self._normalize = normalize_rows
        self._matrix = normalize_rows(np.asarray(self.embedder.embed([t.goal_text for t in self.pool]), dtype=np.float32))
        self._steps: dict[str, list[Step]] = {}

    def retrieve(self, task: EaiTask, k: int = 3) -> list[Example]:
        """The `k` most similar pool tasks that share neither `task`'s goal nor its task name, with
        their gold sequences (never `task`'s own)."""
        if k <= 0:
            return []
        query = self._normalize(np.asarray(self.embedder.embed([task.goal_text]), dtype=np.float32))[0]
        scores = self._matrix @ query
        hits = []
        for index in np.argsort(-scores, kind="stable"):
            other = self.pool[int(index)]
            if shares_goal_or_name(task, other):
                continue  # cross-task only
            steps = self._steps.setdefault(other.identifier, gold_steps(other.identifier))
            if steps:
                hits.append(Example(other, steps, float(scores[index])))
            if len(hits) == k:
                break
        check_examples(task, [h.task for h in hits])
        return hits


class GoldExamples:
    """The pool as the registry's methods ask for it (`graphs/registry.ExampleSource`): a method
    names its episode and k, and gets that task's cross-task examples from `GoldMemory`, checked once
    more against the evaluated task (`pool.check_examples`) whatever memory was handed in. The
    memory is built on the first request (a method that asks for none, or k = 0, never builds it),
    and `given` keeps, per task, the ids handed out: the record's `examples` is the benchmark's
    account, and the table counts rule breaks from it (`pool.shared_examples`)."""

    def __init__(self, tasks: Iterable[EaiTask], memory: GoldMemory | None = None) -> None:
        self.tasks = {t.identifier: t for t in tasks}
        self._memory = memory
        self.given: dict[str, list[str]] = {}

    def memory(self) -> GoldMemory:
        if self._memory is None:
            self._memory = GoldMemory()
        return self._memory

    def __call__(self, instance_id: str, request: str, k: int) -> list[ActionExample]:
        task = self.tasks[instance_id]
        hits = self.memory().retrieve(task, k) if k > 0 else []
        check_examples(task, [h.task for h in hits])
        self.given[instance_id] = [h.task.identifier for h in hits]
        return [ActionExample(h.task.identifier, h.task.goal_text, tuple((a, tuple(args)) for a, args in h.steps),
                              h.task.arguments) for h in hits]
