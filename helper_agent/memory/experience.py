"""P-RAG's progressive experience database.

A record holds a goal instruction, the trajectory as steps of (scene graph text, action,
observation), and whether the episode succeeded (`done`). Successes and failures are both kept.
Retrieval for the current goal and scene graph scores every record as

    score = cos(goal_query, goal) + max over the record's steps of cos(scene_graph_query, step_scene_graph)

(the second term is 0 when no scene graph is given or the record has no steps) and returns the top K.

After each iteration the agent's new records are written in one batch, `commit_iteration(records)`,
under the update policy `HELPER_EXPERIENCE_POLICY`: "append" keeps every round, "keep_latest_round"
keeps only the records of the latest iteration.

Layout and atomicity: a record is one head entry (goal embedding) in `<collection>` and one entry
per step (scene-graph embedding) in `<collection>_steps`; a marker in `<collection>_meta` names the
last committed round. Steps are written first and carry the write token of their head; the head is
written last, and readers only use steps whose token matches a head, so a crash mid-write leaves
nothing half-visible. Records of a round above the committed marker are invisible and are removed
by the next commit.

Search (a threshold algorithm): the `candidate_pool` (default 64) heads closest to the goal and the
4 × `candidate_pool` steps closest to the scene graph give the candidates. A candidate whose best
step is among those steps has its exact score at once; the stored steps of the others are fetched
only when they could still reach the top k. When a record outside both lists could still beat the
k-th hit, the pool grows fourfold and the search runs again, so the ranking equals the brute-force
one (up to the recall of Chroma's approximate index); `details["exact"]` records whether it does.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from helper_agent.memory.base import BaseMemory, Hit, MemoryRecord
from helper_agent.memory.errors import InvalidRecordError
from helper_agent.memory.store import MAX_QUERY_K, Entry, and_where, where_all

EMPTY_SCENE = "(empty scene)"
_MARKER_ID = "committed_round"


class ExperienceStep(BaseModel):
    """One step of a trajectory: what the agent saw (scene graph text), did, and observed."""

    model_config = ConfigDict(extra="forbid")

    scene_graph: str = ""
    action: str = ""
    observation: str = ""


class Experience(MemoryRecord):
    """One episode: goal, steps, success flag; `round` is assigned when it is committed."""

    goal: str = Field(description="The goal instruction (the key).")
    steps: list[ExperienceStep] = Field(default_factory=list)
    done: bool = Field(default=False, description="True when the episode reached the goal.")
    round: int = Field(default=0, ge=0, description="The iteration that wrote it (assigned on commit).")
    info: dict[str, Any] = Field(
        default_factory=dict, description="Free-form extras (task id, steps taken, ...)."
    )


class ExperienceMemory(BaseMemory):
    """P-RAG's experience database (see the module docstring)."""

    kind: ClassVar[str] = "experience"
    record_type: ClassVar[Any] = Experience
    default_collection: ClassVar[str] = "helper_experience"
    key_fields: ClassVar[tuple[str, ...]] = ("goal",)
    value_fields: ClassVar[tuple[str, ...]] = ("info",)
    max_steps: ClassVar[int] = 2000

    def __init__(
        self,
        *,
        policy: Literal["append", "keep_latest_round"] | None = None,
        candidate_pool: int = 64,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.policy = policy or self.settings.experience_policy
        if self.policy not in ("append", "keep_latest_round"):
            raise ValueError(f"experience policy {self.policy!r}: expected 'append' or 'keep_latest_round'")
        self.candidate_pool = max(1, int(candidate_pool))

    # ------------------------------------------------------------------------------- validation
    def check_record(self, record: Any, where: str) -> None:
        super().check_record(record, where)
        if len(record.steps) > self.max_steps:
            raise InvalidRecordError(
                f"{where}: field 'steps' has {len(record.steps)} steps; the limit is {self.max_steps}"
            )
        for i, step in enumerate(record.steps):
            self.check_value(step.model_dump_json(), where, f"steps.{i}")

    # ----------------------------------------------------------------------------------- layout
    @property
    def heads(self) -> Any:
        return self._col()

    @property
    def steps(self) -> Any:
        return self._col("_steps")

    @property
    def _meta(self) -> Any:
        return self._col("_meta")

    def committed_round(self) -> int:
        """The last committed iteration (0 before the first)."""
        rows = self._meta.get(ids=[_MARKER_ID])
        return int(rows[0].metadata.get("round", 0)) if rows else 0

    def _set_committed(self, round_: int) -> None:
        marker = np.zeros(self.embedder.dim, dtype=np.float32)
        marker[0] = 1.0
        self._meta.upsert(
            [
                Entry(
                    id=_MARKER_ID,
                    document="committed round",
                    metadata={"round": int(round_)},
                    embedding=marker,
                )
            ]
        )

    def _visible(self, committed: int) -> dict[str, Any]:
        if self.policy == "keep_latest_round":
            return {"round": int(committed)}
        return {"round": {"$lte": int(committed)}}

    # ----------------------------------------------------------------------------------- writes
    def _write(self, records: list[Experience], round_: int) -> list[str]:
        """Steps first, then heads (each head switches its record to the new steps), then cleanup."""
        if not records:
            return []
        tokens = {r.id: uuid.uuid4().hex[:12] for r in records}
        old_tokens = {
            e.id: e.metadata.get("token")
            for e in self.heads.get(ids=[r.id for r in records], include_documents=False)
        }
        step_texts: list[str] = []
        step_entries: list[Entry] = []
        for r in records:
            for i, step in enumerate(r.steps):
                text = step.scene_graph.strip() or EMPTY_SCENE
                step_texts.append(text)
                step_entries.append(
                    Entry(
                        id=f"{r.id}#{tokens[r.id]}#{i}",
                        document=text,
                        metadata={
                            "record_id": r.id,
                            "token": tokens[r.id],
                            "step": i,
                            "round": round_,
                            "action": step.action,
                            "observation": step.observation,
                        },
                    )
                )
        if step_entries:
            for entry, vector in zip(step_entries, self._embed(step_texts), strict=True):
                entry.embedding = vector
            self.steps.upsert(step_entries)
        goals = self._embed([r.goal for r in records])
        heads = []
        for r, vector in zip(records, goals, strict=True):
            stored = r.model_copy(update={"round": round_, "steps": []})
            heads.append(
                Entry(
                    id=r.id,
                    document=r.goal,
                    metadata={
                        "kind": "head",
                        "round": round_,
                        "done": bool(r.done),
                        "n_steps": len(r.steps),
                        "token": tokens[r.id],
                        "record": stored.model_dump_json(),
                    },
                    embedding=vector,
                )
            )
        self.heads.upsert(heads)
        stale = [(rid, tok) for rid, tok in old_tokens.items() if tok]
        for rid, tok in stale:  # steps of the replaced versions
            self.steps.delete(where=where_all(record_id=rid, token=tok))
        return [r.id for r in records]

    def add(self, records: Iterable[Any]) -> list[str]:
        """Add records to the current round (the first add commits round 1)."""
        records = self.coerce(records)
        if not records:
            return []
        with self.store.write_lock():
            committed = self.committed_round()
            if committed == 0:
                self._commit(records)
                return [r.id for r in records]
            return self._write(records, committed)

    def commit_iteration(self, records: Iterable[Any]) -> int:
        """Write one iteration's records as a new round and apply the update policy; returns the round."""
        records = self.coerce(records)
        with self.store.write_lock():
            return self._commit(records)

    def _commit(self, records: list[Experience]) -> int:
        committed = self.committed_round()
        self._drop(where={"round": {"$gt": committed}})  # leftovers of a commit that crashed
        new_round = committed + 1
        self._write(records, new_round)
        self._set_committed(new_round)
        if self.policy == "keep_latest_round":
            self._drop(where={"round": {"$lt": new_round}})
        return new_round

    def _drop(self, where: dict[str, Any]) -> None:
        if self.heads.count(where):
            self.heads.delete(where=where)  # heads first: the records vanish at once
        if self.steps.count(where):
            self.steps.delete(where=where)

    def delete(self, ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        with self.store.write_lock():
            found = [e.id for e in self.heads.get(ids=ids, include_documents=False, include_metadata=False)]
            if found:
                self.heads.delete(ids=found)
                self.steps.delete(where={"record_id": {"$in": found}})
        return len(found)

    def clear(self) -> None:
        with self.store.write_lock():
            self.heads.clear()
            self.steps.clear()
            self._set_committed(0)

    # ------------------------------------------------------------------------------------ reads
    def _steps_of(self, heads: dict[str, Entry], with_embeddings: bool) -> dict[str, list[Entry]]:
        """Steps whose token matches their head, per record, in order."""
        out: dict[str, list[Entry]] = {rid: [] for rid in heads}
        ids = list(heads)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self.steps.get(
                where={"record_id": {"$in": chunk}},
                include_embeddings=with_embeddings,
                include_documents=True,
            )
            for e in rows:
                rid = str(e.metadata.get("record_id"))
                if rid in heads and e.metadata.get("token") == heads[rid].metadata.get("token"):
                    out[rid].append(e)
        for rows in out.values():
            rows.sort(key=lambda e: int(e.metadata.get("step", 0)))
        return out

    @staticmethod
    def _assemble(head: Entry, steps: list[Entry]) -> Experience:
        record = Experience.model_validate(json.loads(head.metadata["record"]))
        record.steps = [
            ExperienceStep(
                scene_graph="" if e.document == EMPTY_SCENE else (e.document or ""),
                action=str(e.metadata.get("action", "")),
                observation=str(e.metadata.get("observation", "")),
            )
            for e in steps
        ]
        return record

    def _rank(
        self,
        goal_vec: np.ndarray,
        scene_vec: np.ndarray | None,
        k: int,
        pool: int,
        head_where: dict[str, Any] | None,
        committed: int,
        done: bool | None,
    ) -> tuple[list[tuple[float, str, float, float, int | None]], dict[str, Entry], bool]:
        """One pass of the threshold search with `pool` candidates: (top k, heads, exact?)."""
        heads: dict[str, Entry] = {}
        goal_scores: dict[str, float] = {}
        head_rows = self.heads.query(goal_vec, pool, head_where)[0]
        for e in head_rows:
            heads[e.id] = e
            goal_scores[e.id] = e.score
        # Goal scores of records outside `head_rows` are at most `goal_floor`.
        goal_floor = min(goal_scores.values()) if len(head_rows) >= pool else -np.inf
        scene: dict[str, tuple[float, int | None]] = {}
        scene_floor = -np.inf
        if scene_vec is not None:
            # Unfiltered (fast) search over all steps; candidates are checked against their heads.
            n = min(pool * 4, MAX_QUERY_K)
            step_rows = self.steps.query(scene_vec, n)[0]
            if len(step_rows) >= n:  # steps outside `step_rows` score at most `scene_floor`
                scene_floor = min(e.score for e in step_rows)
            unknown = {str(e.metadata.get("record_id")) for e in step_rows} - set(heads)
            if unknown:
                for e in self.heads.get(ids=sorted(unknown), include_embeddings=True):
                    if _matches(e.metadata, committed, self.policy, done):
                        heads[e.id] = e
                        goal_scores[e.id] = float(np.dot(goal_vec, e.embedding))
            for e in step_rows:  # a record's best step, when it is among the top steps, is exact
                rid = str(e.metadata.get("record_id"))
                head = heads.get(rid)
                if head is None or e.metadata.get("token") != head.metadata.get("token"):
                    continue
                if rid not in scene or e.score > scene[rid][0]:
                    scene[rid] = (e.score, int(e.metadata.get("step", 0)))
            pending = [rid for rid in heads if rid not in scene]
            if scene_floor == -np.inf:  # every step was seen: the others have no steps
                scene.update({rid: (0.0, None) for rid in pending})
            else:
                known = sorted((goal_scores[rid] + sc for rid, (sc, _) in scene.items()), reverse=True)
                kth = known[k - 1] if len(known) >= k else -np.inf
                need = {rid: heads[rid] for rid in pending if goal_scores[rid] + scene_floor >= kth}
                for rid, rows in self._steps_of(need, with_embeddings=True).items():
                    if rows:
                        sims = np.stack([e.embedding for e in rows]) @ scene_vec
                        best = int(np.argmax(sims))
                        scene[rid] = (float(sims[best]), int(rows[best].metadata.get("step", best)))
                    else:
                        scene[rid] = (0.0, None)
        else:
            scene = {rid: (0.0, None) for rid in heads}
        scored = sorted(
            ((goal_scores[rid] + sc, rid, goal_scores[rid], sc, best) for rid, (sc, best) in scene.items()),
            key=lambda t: (-t[0], t[1]),
        )[:k]
        # Exact unless a record outside both candidate lists could still outscore the k-th hit.
        outside_bound = goal_floor + max(scene_floor, 0.0)
        exact = goal_floor == -np.inf or (len(scored) >= k and scored[-1][0] >= outside_bound)
        return scored, heads, bool(exact)

    def retrieve(
        self,
        query: Any,
        k: int | None = None,
        *,
        scene_graph: str | None = None,
        done: bool | None = None,
    ) -> list[Hit[Experience]]:
        """Top-k records by cos(goal) + max-step cos(scene graph); `done` filters successes/failures.

        `query` is the goal text, or a dict/record with `goal` (and `scene_graph`).
        """
        if isinstance(query, BaseModel):
            query = query.model_dump()
        if isinstance(query, dict):
            scene_graph = scene_graph if scene_graph is not None else query.get("scene_graph")
            query = query.get("goal", "")
        goal = str(query)
        if not goal.strip():
            raise ValueError("ExperienceMemory.retrieve: the goal is empty")
        k = int(k or self.settings.experience_k)
        committed = self.committed_round()
        if committed == 0:
            return []
        visible = self._visible(committed)
        head_where = and_where(visible, where_all(done=done))
        pool = min(max(self.candidate_pool, k), MAX_QUERY_K)
        texts = [goal] + ([scene_graph.strip() or EMPTY_SCENE] if scene_graph is not None else [])
        vectors = self._embed(texts)
        goal_vec = vectors[0]
        scene_vec = vectors[1] if scene_graph is not None else None

        while True:
            scored, heads, exact = self._rank(goal_vec, scene_vec, k, pool, head_where, committed, done)
            if exact or pool >= MAX_QUERY_K:
                break
            pool = min(pool * 4, MAX_QUERY_K)  # widen until no outside record can beat the k-th hit
        top = {rid: heads[rid] for _, rid, *_ in scored}
        steps = self._steps_of(top, with_embeddings=False)
        return [
            Hit(
                id=rid,
                score=total,
                record=self._assemble(heads[rid], steps[rid]),
                details={"goal_score": g, "scene_score": sc, "best_step": best, "exact": bool(exact)},
            )
            for total, rid, g, sc, best in scored
        ]

    def _visible_heads(self, where: dict[str, Any] | None = None) -> dict[str, Entry]:
        committed = self.committed_round()
        if committed == 0:
            return {}
        rows = self.heads.get(where=and_where(self._visible(committed), where))
        return {e.id: e for e in rows}

    def list(self, *, done: bool | None = None) -> list[Experience]:
        heads = self._visible_heads(where_all(done=done))
        steps = self._steps_of(heads, with_embeddings=False)
        records = [self._assemble(h, steps[rid]) for rid, h in heads.items()]
        return sorted(records, key=lambda r: (r.round, r.id))

    def get(self, record_id: str) -> Experience | None:
        heads = {e.id: e for e in self.heads.get(ids=[record_id])}
        committed = self.committed_round()
        heads = {rid: e for rid, e in heads.items() if _matches(e.metadata, committed, self.policy, None)}
        if not heads:
            return None
        return self._assemble(heads[record_id], self._steps_of(heads, False)[record_id])

    def count(self) -> int:
        committed = self.committed_round()
        if committed == 0:
            return 0
        return self.heads.count(self._visible(committed))


def _matches(meta: dict[str, Any], committed: int, policy: str, done: bool | None) -> bool:
    round_ = int(meta.get("round", -1))
    if policy == "keep_latest_round" and round_ != committed:
        return False
    if round_ > committed or round_ < 1:
        return False
    return done is None or bool(meta.get("done")) == done
