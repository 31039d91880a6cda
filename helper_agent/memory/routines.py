"""Personal routines (HELPER's personalization): named procedures a user taught, per user, versioned.

"Do the Mary cleaning" recalls the program stored under the name "the Mary cleaning" together with
the request that taught it. A routine is registered directly (`teach`) or after a confirmed success
(`register_success`). Every user's routines are separate: each user has a
Chroma collection of their own, so one user never sees another's. Re-teaching a name adds a new version and keeps the history
(`versions`); `latest` and recall return the newest version. Recall works by name or paraphrase
("Mary's cleaning routine please") with a cosine-similarity score and a minimum score
(`HELPER_ROUTINE_MIN_SCORE`).

Each version is one store entry with id `<user>/<name key>/v<version>`, so a write is atomic.
Version numbers are assigned under the store's write lock (across processes for the embedded
store). Importing a file adds the versions it holds; a version that exists already with the same
content is skipped, one that exists with other content is appended as a new version, so an
import never overwrites history. A record without a version (a file written by hand) is keyed by
its content: if that name already holds the same program and request, it is skipped, so importing
such a file twice, or again after a kill, adds nothing twice (1,000 routines once became 1,200).

Recall compares the request with every stored version of the user's routines (exact cosine
similarity) while the user holds at most `HELPER_ROUTINE_EXACT_MAX` versions (default 50,000), and
goes through Chroma's approximate HNSW index beyond: with the index, one routine in 4 of 15
memories of 5,000 could not be found even by its own teaching request.

Layout: one collection per user
--------------------------------
`<collection>__u_<sha256(user)[:32]>` holds one user's versions; its metadata names the user. A
query a person waits on (recall, show, list) then searches only that person's entries. A single
collection with a `where` filter on the user was the first layout: local Chroma has no index on
metadata, so every filtered query scanned the metadata of every user (about 200 ms at 100,000
entries, against a few ms for a query without a filter); Chroma's cookbook lists a collection per
user as one of its multi-tenancy strategies. A store written with the first layout (everything in
`<collection>`) is moved into per-user collections the first time it is opened (ids, vectors and
metadata unchanged; the old collection is dropped only after every user's copy is written).

Imports validate the whole file first, then commit in batches of `HELPER_ROUTINE_IMPORT_BATCH`
versions: a process killed mid-import (`kill -9`) loses at most the batch in flight, and importing
the same file again adds exactly what is missing (versions already stored are skipped). A full disk
is the same: one line (`store.disk_full`), whether the disk was full before the import or another
process filled it during a batch; the batches committed stay, and the same command completes once
space is freed.

CLI: `helper routines add|list|show|remove|export|import --user NAME`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from helper_agent.memory.base import BaseMemory, Hit, MemoryRecord, read_jsonl, write_jsonl
from helper_agent.memory.errors import InvalidRecordError
from helper_agent.memory.store import Entry, VectorCollection, where_all
from helper_agent.program import compile_program
from helper_agent.program.errors import ProgramError
from helper_agent.program.parser import parse_program

USER_KEY = "helper:user"
"""Collection metadata key that names the user a per-user collection belongs to."""

Progress = Callable[[int, int], None]
"""Called as `progress(done, total)` after each committed batch of an import."""


def _now_precise() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


_TEXT_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


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


def one_line_reason(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def check_routine_language(program: str) -> None:
    """Raise `ProgramError` for a program outside the action language (`import os`, attribute reads,
    function definitions, ...). Every routine write passes here, whoever writes: the web app's import
    once stored `import os` programs that `helper routines import` refused, because only the CLI
    handed the memory a check. Only the language is checked here, not the object catalog: the graph
    stores programs it compiled with its own (embedding) class mapper, which the catalog's lexical
    mapper may not follow. Imports (`check_imported`) and `helper routines add` (`program_check`)
    check the catalog too."""
    parse_program(program)


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

    def __init__(
        self, *, user: str | None = None, program_check: Callable[[str], None] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.user = user
        # Raises (any exception, its message the reason) for a program the agent could not run; the
        # CLI passes the compiler's check, so `routines add|import` store only what `program check`
        # accepts. It comes on top of the language check every write passes (`check_routine_language`).
        self.program_check = program_check
        self._migrated = False
        self._migrate_lock = threading.Lock()

    # ------------------------------------------------------------------------------------ helpers
    def _user(self, user: str | None) -> str:
        user = user if user is not None else self.user
        if user is None or not str(user).strip():
            raise ValueError("routines belong to a user: pass user=... (or RoutineMemory(user=...))")
        return str(user)

    @property
    def _user_prefix(self) -> str:
        return f"{self.collection_name}__u_"

    def _user_collection_name(self, user: str) -> str:
        return self._user_prefix + hashlib.sha256(user.encode("utf-8")).hexdigest()[:32]

    def _user_col(self, user: str, *, create: bool) -> VectorCollection | None:
        """`user`'s collection; with `create=False`, None when the user has no routines yet."""
        self._migrate()
        return self._open_user_col(user, create=create)

    def _open_user_col(self, user: str, *, create: bool) -> VectorCollection | None:
        name = self._user_collection_name(user)
        col = self._collections.get(name)
        if col is not None:
            return col
        if create:
            col = self.store.collection(
                name, embedder_name=self.embedder.name, dim=self.embedder.dim, metadata={USER_KEY: user}
            )
        else:
            col = self.store.find_collection(name, embedder_name=self.embedder.name, dim=self.embedder.dim)
        if col is not None:
            self._collections[name] = col
        return col

    def _user_cols(self) -> dict[str, VectorCollection]:
        """Every user's collection, by user."""
        self._migrate()
        out: dict[str, VectorCollection] = {}
        for meta in self.store.collection_names(self._user_prefix).values():
            user = meta.get(USER_KEY)
            if isinstance(user, str):
                col = self._open_user_col(user, create=False)
                if col is not None:
                    out[user] = col
        return out

    def _migrate(self) -> None:
        """Move a store of the first layout (every user in one collection) into per-user collections.

        Each user's entries are written (same ids, vectors and metadata) before the old collection
        is dropped, so a crash in between leaves both copies, and the next open finishes the move.
        """
        if self._migrated:
            return
        with self._migrate_lock:
            if self._migrated:
                return
            legacy = self.store.find_collection(
                self.collection_name, embedder_name=self.embedder.name, dim=self.embedder.dim
            )
            if legacy is not None:
                with self.store.write_lock():
                    by_user: dict[str, list[Entry]] = {}
                    for entry in legacy.get(include_embeddings=True):
                        by_user.setdefault(str(entry.metadata.get("user")), []).append(entry)
                    for user, rows in by_user.items():
                        col = self._open_user_col(user, create=True)
                        assert col is not None
                        col.upsert(rows)
                    self.store.drop_collection(self.collection_name)
            self._migrated = True

    @staticmethod
    def key_text(record: Routine) -> str:
        text = record.name.strip()
        if record.request.strip():
            text += f": {record.request.strip()}"
        return text

    def check_record(self, record: Any, where: str) -> None:
        super().check_record(record, where)
        if not record.program.strip():
            raise InvalidRecordError(f"{where}: field 'program' is empty")
        if len(record.name) > 200:
            raise InvalidRecordError(
                f"{where}: field 'name' has {len(record.name)} characters; the limit is 200"
            )
        try:
            check_routine_language(record.program)
        except ProgramError as exc:
            raise InvalidRecordError(f"{where}: field 'program': {one_line_reason(exc)}") from None
        if self.program_check is not None:
            try:
                self.program_check(record.program)
            except Exception as exc:  # noqa: BLE001 - the checker's reason, whatever its type
                raise InvalidRecordError(f"{where}: field 'program': {one_line_reason(exc)}") from None

    def check_imported(self, record: Any, where: str) -> None:
        """A routine from a file is checked as `helper program check` checks a program (the language
        and the object catalog), whoever imports it: `helper routines import` and the app's import
        refuse the same files."""
        self.check_record(record, where)
        try:
            compile_program(record.program)
        except ProgramError as exc:
            raise InvalidRecordError(f"{where}: field 'program': {one_line_reason(exc)}") from None

    def _owner_cols(self, ids: list[str]) -> list[tuple[VectorCollection, list[str]]]:
        """The collections that may hold `ids` (`<user>/<name key>/v<n>`; a user name may hold '/')."""
        wanted: dict[str, list[str]] = {}
        for rid in ids:
            parts = rid.split("/")
            for cut in range(1, max(1, len(parts) - 1)):
                wanted.setdefault("/".join(parts[:cut]), []).append(rid)
        out = []
        for user, user_ids in wanted.items():
            col = self._user_col(user, create=False)
            if col is not None:
                out.append((col, user_ids))
        return out

    # -------------------------------------------------------------------------------------- writes
    def add(self, records: Iterable[Any], *, skip_same_content: bool = False) -> list[str]:
        """Store routine versions; version 0 means the next one. Returns the stored ids.

        With `skip_same_content`, a record without a version whose content (user, name, program,
        request) is already stored under that name is skipped: what an import of a file without
        versions needs to be idempotent (run twice, or again after a kill, it adds nothing new)."""
        records = self.coerce(records)
        by_user: dict[str, list[Routine]] = {}
        for record in records:
            by_user.setdefault(record.user, []).append(record)
        stored: list[str] = []
        for user, user_records in by_user.items():
            stored.extend(self._add_user(user, user_records, skip_same_content=skip_same_content))
        return stored

    def _add_user(self, user: str, records: list[Routine], *, skip_same_content: bool = False) -> list[str]:
        col = self._user_col(user, create=True)
        assert col is not None
        out: list[Routine] = []
        # Embedded before the write lock is taken: the model's seconds would otherwise hold every
        # other writer (a `routines add` during a 5,000-routine import) waiting.
        self._embed([self.key_text(r) for r in records])
        with self.store.write_lock():
            keys = sorted({r.key for r in records})
            rows = col.get(where=where_all(name_key=keys), include_documents=False)
            latest: dict[str, int] = dict.fromkeys(keys, 0)
            existing: dict[str, str] = {}
            contents: set[str] = set()
            for e in rows:
                key = str(e.metadata.get("name_key"))
                latest[key] = max(latest.get(key, 0), int(e.metadata.get("version", 0)))
                existing[e.id] = str(e.metadata.get("digest", ""))
                contents.add(existing[e.id])
            for record in sorted(records, key=lambda r: (r.version == 0, r.version)):
                stored_before = _digest(record) in contents
                if skip_same_content and record.version == 0 and stored_before:
                    continue  # this content is stored under this name already
                contents.add(_digest(record))
                version = record.version
                if version > 0:
                    rid = f"{user}/{record.key}/v{version}"
                    if rid in existing:
                        if existing[rid] == _digest(record):
                            continue  # the same version again: nothing to do
                        if skip_same_content and stored_before:
                            continue  # stored under another number already (an import run again)
                        version = 0  # another content under a taken number: append
                if version == 0:
                    version = latest[record.key] + 1
                latest[record.key] = max(latest[record.key], version)
                new = record.model_copy(update={"version": version, "id": f"{user}/{record.key}/v{version}"})
                existing[new.id] = _digest(new)
                out.append(new)
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
        user = self._user(user)
        record = Routine(user=user, name=name, program=program, request=request, source=source)
        ids = self.add([record])
        return self._record_by_id(ids[0], self._user_col(user, create=False))  # type: ignore[return-value]

    def register_success(
        self, name: str, program: str, request: str = "", *, user: str | None = None
    ) -> Routine:
        """Store a program the user confirmed as a success under `name`."""
        return self.teach(name, program, request, user=user, source="confirmed_success")

    def remove(self, name: str, *, user: str | None = None, version: int | None = None) -> int:
        """Delete every version of `name` for `user` (or only `version`); returns how many were removed.

        Looked up in the user's own collection, never by record id: ids are `<user>/<name key>/v<n>`
        and both user names and routine names may hold '/', so user `a` with routine `b/x` and user
        `a/b` with routine `x` share the id `a/b/x/v1`, and deleting by id removed both."""
        col = self._user_col(self._user(user), create=False)
        if col is None:
            return 0
        rows = col.get(where=where_all(name_key=routine_key(name)), include_documents=False)
        if version is not None:
            rows = [e for e in rows if int(e.metadata.get("version", 0)) == version]
        if rows:
            col.delete(ids=[e.id for e in rows])
        return len(rows)

    def delete(self, ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(ids))
        removed = 0
        for col, candidates in self._owner_cols(ids):
            found = [e.id for e in col.get(ids=candidates, include_documents=False, include_metadata=False)]
            if found:
                col.delete(ids=found)
                removed += len(found)
        return removed

    # --------------------------------------------------------------------------------------- reads
    def get(self, record_id: str) -> Routine | None:
        """The version stored under `record_id` (`<user>/<name key>/v<n>`), or None."""
        for col, _ in self._owner_cols([record_id]):
            record = self._record_by_id(record_id, col)
            if record is not None:
                return record
        return None

    def versions(self, name: str, *, user: str | None = None) -> list[Routine]:
        """Every version of `name` for `user`, oldest first."""
        col = self._user_col(self._user(user), create=False)
        if col is None:
            return []
        rows = col.get(where=where_all(name_key=routine_key(name)))
        return sorted((self._record(e) for e in rows), key=lambda r: (r.version, r.created_at))

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

    def named_in(self, text: str, *, user: str | None = None) -> list[Routine]:
        """`user`'s routines (latest versions) whose name, without its article, the text says word
        for word ("Thanks for yesterday! Could you do the Yuki tidy again?" names the Yuki tidy).
        The similarity `recall` missed that request on the extended calibration suite: the words
        around the name weighed more than the name."""
        said = f" {' '.join(_TEXT_WORD.findall(text.casefold()))} "
        out = []
        for routine in self.routines(user=user):
            words = _TEXT_WORD.findall(routine.key)
            if words and words[0] == "the" and len(words) > 1:
                words = words[1:]
            if words and f" {' '.join(words)} " in said:
                out.append(routine)
        return out

    def users(self) -> list[str]:
        return sorted(user for user, col in self._user_cols().items() if col.count() > 0)

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
        col = self._user_col(user, create=False)
        if col is None:
            return []
        vector = self._embed([query])
        if col.count() <= self.settings.routine_exact_max:
            rows = col.exact_query(vector[0], max(16, 4 * k))  # every routine findable (see exact_query)
        else:
            rows = col.query(vector, max(16, 4 * k))[0]
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
        user = user if user is not None else self.user
        if user is not None:
            col = self._user_col(user, create=False)
            cols = [col] if col is not None else []
        else:
            cols = list(self._user_cols().values())
        records = [self._record(e) for col in cols for e in col.get()]
        return sorted(records, key=lambda r: (r.user, r.key, r.version))

    def count(self, *, user: str | None = None) -> int:
        user = user if user is not None else self.user
        if user is not None:
            col = self._user_col(user, create=False)
            return col.count() if col is not None else 0
        return sum(col.count() for col in self._user_cols().values())

    # ---------------------------------------------------------------------------------- transfer
    def export_jsonl(self, path: str | Path, *, user: str | None = None) -> int:
        """Write `user`'s routines, every version (everyone's when no user is given)."""
        return write_jsonl(path, self.kind, self.list(user=user))

    def import_jsonl(
        self,
        path: str | Path,
        *,
        user: str | None = None,
        batch_size: int | None = None,
        progress: Progress | None = None,
    ) -> int:
        """Add the versions in `path` (as `user`'s when given); returns how many were stored.

        The whole file is validated before anything is written; then every `batch_size` versions
        (default `HELPER_ROUTINE_IMPORT_BATCH`) are committed together, and `progress(done, total)`
        is called after each batch. Versions already stored with the same content are skipped, so
        an import that was killed completes when it is run again.
        """
        records = read_jsonl(path, self)
        if user is not None:
            records = [r.model_copy(update={"user": user, "id": ""}) for r in records]
        size = int(batch_size or self.settings.routine_import_batch)
        if size < 1:
            raise ValueError(f"import batch size must be at least 1, not {size}")
        stored = 0
        if progress is not None:
            progress(0, len(records))
        for start in range(0, len(records), size):
            batch = records[start : start + size]
            stored += len(self.add(batch, skip_same_content=True))
            if progress is not None:
                progress(start + len(batch), len(records))
        return stored
