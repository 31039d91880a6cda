"""HELPER's example memory for EAI: other tasks' gold sequences, retrieved by MiniLM similarity.

The key is a task's goal text (node, edge and action goals as EAI's prompt states them: what the
agent is given); the value is that task's recorded program. Retrieval is leave-one-out: a task
never sees its own gold sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helper_agent.evals.studies.eai.grammar import Step
from helper_agent.evals.studies.eai.tasks import EaiTask, gold_steps, load_tasks
from helper_agent.memory.embeddings import get_embedder, normalize_rows


@dataclass(frozen=True)
class Example:
    task: EaiTask
    steps: list[Step]
    score: float


class GoldMemory:
    """An in-memory cosine index over the tasks' goal texts (the packaged embeddings by default)."""

    def __init__(self, pool: list[EaiTask] | None = None, embedder: object | None = None) -> None:
        self.embedder = embedder or get_embedder()
        self.pool = list(pool if pool is not None else load_tasks())
        self._normalize = normalize_rows
        self._matrix = normalize_rows(np.asarray(self.embedder.embed([t.goal_text for t in self.pool]), dtype=np.float32))
        self._steps: dict[str, list[Step]] = {}

    def retrieve(self, task: EaiTask, k: int = 3) -> list[Example]:
        """The `k` most similar *other* tasks with their gold sequences (never `task`'s own)."""
        if k <= 0:
            return []
        query = self._normalize(np.asarray(self.embedder.embed([task.goal_text]), dtype=np.float32))[0]
        scores = self._matrix @ query
        hits = []
        for index in np.argsort(-scores, kind="stable"):
            other = self.pool[int(index)]
            if other.identifier == task.identifier:
                continue  # leave-one-out
            steps = self._steps.setdefault(other.identifier, gold_steps(other.identifier))
            if steps:
                hits.append(Example(other, steps, float(scores[index])))
            if len(hits) == k:
                break
        return hits
