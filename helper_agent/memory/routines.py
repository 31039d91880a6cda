"""Personal routines (HELPER's personalization): named procedures a user taught, per user, versioned.

"Do the Mary cleaning" recalls the program stored under the name "the Mary cleaning" together with
the request that taught it. A routine is registered directly (`teach`) or after a confirmed success
(`register_success`). Every user's routines are separate: each read filters on the user id, so
one user never sees another's. Re-teaching a name adds a new version and keeps the history
(`versions`); `latest` and recall return the newest version. Recall works by name or paraphrase
("Mary's cleaning routine please") with a cosine-similarity score and a minimum score
(`HELPER_ROUTINE_MIN_SCORE`).

Each version is one store entry with id `<user>/<name key>/v<version>`, so a write is atomic.
Version numbers are assigned under the store's write lock (across processes for the embedded
store). Importing a file adds the versions it holds; a version that exists already with the same
content is skipped, one that exists with other content is appended as a new version, so an
import never overwrites history.

CLI: `helper routines add|list|show|remove|export|import --user NAME`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from helper_agent.memory.base import BaseMemory, Hit, MemoryRecord, read_jsonl, write_jsonl
from helper_agent.memory.errors import InvalidRecordError
from helper_agent.memory.store import Entry, where_all


def _now_precise() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


def routine_key(name: str) -> str:
    """Names compare case- and space-insensitively: "The  Mary cleaning" == "the mary cleaning"."""
    return " ".join(name.casefold().split())


class Routine(MemoryRecord):
    """One version of a user's named routine."""

    id: str = Field(default="", description="Assigned on add: <user>/<name key>/v<version>.")
    user: str = Field(description="Owner; every read filters on it.")
    name: str = Field(description='The routine\'s name, e.g. "the Mary cleaning".')
    program: str = Field(description="The program that performs it.")
    request: str = Field(default="", description="The request (dialogue) that taught it.")
    version: int = Field(default=0, ge=0, description="1, 2, ...; 0 means: assign the next one.")
    source: Literal["taught", "confirmed_success", "imported"] = "taught"
    created_at: str = Field(default_factory=_now_precise)

    @property
    def key(self) -> str:
        return routine_key(self.name)


def _digest(record: Routine) -> str:
    payload = json.dumps([record.user, record.key, record.program, record.request], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


class RoutineMemory(BaseMemory):
    """Per-user, versioned routines; `recall(query, user=...)` finds them by name or paraphrase."""

    kind: ClassVar[str] = "routines"
    record_type: ClassVar[Any] = Routine
    default_collection: ClassVar[str] = "helper_routines"
    key_fields: ClassVar[tuple[str, ...]] = ("user", "name")
    value_fields: ClassVar[tuple[str, ...]] = ("program", "request")

    def __init__(self, *, user: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.user = user

    # ------------------------------------------------------------------------------------ helpers
    def _user(self, user: str | None) -> str:
        user = user if user is not None else self.user
        if user is None or not str(user).strip():
            raise ValueError("routines belong to a user: pass user=... (or RoutineMemory(user=...))")
        return str(user)

    @staticmethod
    def key_text(record: Routine) -> str:
        text = record.name.strip()
        if record.request.strip():
            text += f": {record.request.strip()}"
        return text

    @staticmethod
    def _entry_record(entry: Entry) -> Routine:
        return Routine.model_validate(json.loads(entry.metadata["record"]))

    def check_record(self, record: Any, where: str) -> None:
        super().check_record(record, where)
        if not record.program.strip():
            raise InvalidRecordError(f"{where}: field 'program' is empty")
        if len(record.name) > 200:
            raise InvalidRecordError(
                f"{where}: field 'name' has {len(record.name)} characters; the limit is 200"
            )

    # -------------------------------------------------------------------------------------- writes
    def add(self, records: Iterable[Any]) -> list[str]:
        """Store routine versions; version 0 means the next one. Returns the stored ids."""
        records = self.coerce(records)
        if not records:
            return []
        col = self._col()
        out: list[Routine] = []
        with self.store.write_lock():
            latest: dict[tuple[str, str], int] = {}
            existing: dict[str, str] = {}
            for user, key in {(r.user, r.key) for r in records}:
                rows = col.get(where=where_all(user=user, name_key=key), include_documents=False)
                latest[(user, key)] = max((int(e.metadata.get("version", 0)) for e in rows), default=0)
                existing.update({e.id: str(e.metadata.get("digest", "")) for e in rows})
            for record in sorted(records, key=lambda r: (r.version == 0, r.version)):
                slot = (record.user, record.key)
                version = record.version
                if version > 0:
                    rid = f"{record.user}/{record.key}/v{version}"
                    if rid in existing:
                        if existing[rid] == _digest(record):
                            continue  # the same version again: nothing to do
                        version = 0  # another content under a taken number: append
                if version == 0:
                    version = latest[slot] + 1
                latest[slot] = max(latest[slot], version)
                stored = record.model_copy(
                    update={"version": version, "id": f"{record.user}/{record.key}/v{version}"}
                )
                existing[stored.id] = _digest(stored)
                out.append(stored)
            if out:
                vectors = self._embed([self.key_text(r) for r in out])
                col.upsert(
                    [
                        Entry(
                            id=r.id,
                            document=self.key_text(r),
                            metadata={
                                "user": r.user,
                                "name_key": r.key,
                                "version": r.version,
                                "source": r.source,
                                "digest": _digest(r),
                                "record": r.model_dump_json(),
                            },
                            embedding=v,
                        )
                        for r, v in zip(out, vectors, strict=True)
                    ]
                )
        return [r.id for r in out]

    def teach(
        self,
        name: str,
        program: str,
        request: str = "",
        *,
        user: str | None = None,
        source: Literal["taught", "confirmed_success", "imported"] = "taught",
    ) -> Routine:
        """Register (or re-teach: a new version of) the routine `name` for `user`."""
        record = Routine(user=self._user(user), name=name, program=program, request=request, source=source)
        ids = self.add([record])
        return self._get_id(ids[0])  # type: ignore[return-value]

    def register_success(
        self, name: str, program: str, request: str = "", *, user: str | None = None
    ) -> Routine:
        """Store a program the user confirmed as a success under `name`."""
        return self.teach(name, program, request, user=user, source="confirmed_success")

    def remove(self, name: str, *, user: str | None = None) -> int:
        """Delete every version of `name` for `user`; returns how many versions were removed."""
        user = self._user(user)
        rows = self._col().get(
            where=where_all(user=user, name_key=routine_key(name)), include_documents=False
        )
        if rows:
            self._col().delete(ids=[e.id for e in rows])
        return len(rows)

    def delete(self, ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        found = [e.id for e in self._col().get(ids=ids, include_documents=False, include_metadata=False)]
        if found:
            self._col().delete(ids=found)
        return len(found)

    # --------------------------------------------------------------------------------------- reads
    def _get_id(self, rid: str) -> Routine | None:
        rows = self._col().get(ids=[rid])
        return self._entry_record(rows[0]) if rows else None

    def versions(self, name: str, *, user: str | None = None) -> list[Routine]:
        """Every version of `name` for `user`, oldest first."""
        user = self._user(user)
        rows = self._col().get(where=where_all(user=user, name_key=routine_key(name)))
        return sorted((self._entry_record(e) for e in rows), key=lambda r: (r.version, r.created_at))

    def latest(self, name: str, *, user: str | None = None) -> Routine | None:
        versions = self.versions(name, user=user)
        return versions[-1] if versions else None

    def routines(self, *, user: str | None = None) -> list[Routine]:
        """The latest version of each of `user`'s routines, by name."""
        best: dict[str, Routine] = {}
        for record in self.list(user=self._user(user)):
            if record.key not in best or record.version > best[record.key].version:
                best[record.key] = record
        return sorted(best.values(), key=lambda r: r.key)

    def users(self) -> list[str]:
        return sorted({str(e.metadata.get("user")) for e in self._col().get(include_documents=False)})

    def recall(
        self, query: str, *, user: str | None = None, k: int = 1, min_score: float | None = None
    ) -> list[Hit[Routine]]:
        """`user`'s routines whose name or teaching request best match `query`, latest versions.

        Score: the best cosine similarity over the routine's versions; hits under `min_score`
        (default `HELPER_ROUTINE_MIN_SCORE`) are dropped.
        """
        user = self._user(user)
        if not query.strip():
            raise ValueError("RoutineMemory.recall: the query is empty")
        threshold = self.settings.routine_min_score if min_score is None else float(min_score)
        col = self._col()
        rows = col.query(self._embed([query]), max(16, 4 * k), where_all(user=user))[0]
        best: dict[str, Any] = {}
        for entry in rows:
            key = str(entry.metadata.get("name_key"))
            if key not in best or entry.score > best[key].score:
                best[key] = entry
        ranked = sorted(best.values(), key=lambda e: -e.score)
        hits: list[Hit[Routine]] = []
        for entry in ranked:
            if entry.score < threshold or len(hits) >= k:
                break
            versions = self.versions(str(entry.metadata.get("name_key")), user=user)
            if not versions:
                continue
            hits.append(
                Hit(
                    id=versions[-1].id,
                    score=entry.score,
                    record=versions[-1],
                    details={
                        "matched_version": int(entry.metadata.get("version", 0)),
                        "versions": len(versions),
                    },
                )
            )
        return hits

    def retrieve(
        self, query: Any, k: int | None = None, *, user: str | None = None, **kwargs: Any
    ) -> list[Hit[Any]]:
        return self.recall(str(query), user=user, k=k or 1, **kwargs)

    def list(self, *, user: str | None = None) -> list[Routine]:
        """Every stored version (of `user`, or of everyone when no user is given)."""
        where = where_all(user=user if user is not None else self.user)
        rows = self._col().get(where=where)
        return sorted((self._entry_record(e) for e in rows), key=lambda r: (r.user, r.key, r.version))

    def count(self, *, user: str | None = None) -> int:
        user = user if user is not None else self.user
        return self._col().count(where_all(user=user))

    # ---------------------------------------------------------------------------------- transfer
    def export_jsonl(self, path: str | Path, *, user: str | None = None) -> int:
        """Write `user`'s routines, every version (everyone's when no user is given)."""
        return write_jsonl(path, self.kind, self.list(user=user))

    def import_jsonl(self, path: str | Path, *, user: str | None = None) -> int:
        """Add the versions in `path` (as `user`'s when given); returns how many were stored."""
        records = read_jsonl(path, self)
        if user is not None:
            records = [r.model_copy(update={"user": user, "id": ""}) for r in records]
        return len(self.add(records)) if records else 0
