"""Memories that store one entry per record: a key text embedded, the record kept whole.

The language–program examples, the correction examples and the LLM-Planner few-shot pool are all
this shape. A record occupies exactly one Chroma entry, so every add is atomic per record.
`SeededMemory` adds seed data shipped as JSON Lines in `helper_agent/prompts/examples/`: the
memory keeps the store in step with the files (new and changed seed records are written, records
that left the files are removed; records added by users are never touched).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from helper_agent.memory.base import BaseMemory, Hit, read_jsonl
from helper_agent.memory.store import Entry, and_where, where_all

SOURCE_SEED = "seed"
SOURCE_USER = "user"


def seed_file(name: str) -> Path:
    """Path of a seed data file shipped in `helper_agent/prompts/examples/`."""
    return Path(str(resources.files("helper_agent.prompts").joinpath("examples", name)))


class KeyedMemory(BaseMemory):
    """One entry per record; subclasses define `key_text` and the `k` setting."""

    k_setting: ClassVar[str] = "examples_k"
    filter_fields: ClassVar[tuple[str, ...]] = ()  # record fields copied to metadata for `where`

    def key_text(self, record: Any) -> str:
        raise NotImplementedError

    def query_text(self, query: Any) -> str:
        if isinstance(query, str):
            return query
        raise TypeError(f"{type(self).__name__}.retrieve expects a text query, got {type(query).__name__}")

    def embed_keys(self, records: list[Any], keys: list[str]) -> Any:
        """The vectors stored for `records` (default: the embedded key texts)."""
        return self._embed(keys)

    def embed_query(self, query: Any, text: str) -> Any:
        """The (1, dim) query vector (default: the embedded query text)."""
        return self._embed([text])

    def _metadata(self, record: Any, source: str) -> dict[str, Any]:
        data = record.model_dump(mode="json")
        meta: dict[str, Any] = {"record": json.dumps(data, ensure_ascii=False), "source": source}
        meta["digest"] = hashlib.sha256(meta["record"].encode("utf-8")).hexdigest()[:16]
        for field in self.filter_fields:
            value = data.get(field)
            if isinstance(value, str | int | float | bool):
                meta[field] = value
        return meta

    def _write(self, records: list[Any], source: str) -> list[str]:
        if not records:
            return []
        keys = [self.key_text(r) for r in records]
        vectors = self.embed_keys(records, keys)
        entries = [
            Entry(id=r.id, document=key, metadata=self._metadata(r, source), embedding=v)
            for r, key, v in zip(records, keys, vectors, strict=True)
        ]
        self._col().upsert(entries)
        return [r.id for r in records]

    # ---------------------------------------------------------------------------------- protocol
    def add(self, records: Iterable[Any]) -> list[str]:
        """Insert or replace records (by id); returns their ids once they are stored."""
        return self._write(self.coerce(records), SOURCE_USER)

    def retrieve(
        self,
        query: Any,
        k: int | None = None,
        *,
        where: Mapping[str, Any] | None = None,
        exclude_ids: Iterable[str] = (),
        **filters: Any,
    ) -> list[Hit[Any]]:
        """The `k` records whose key is most similar to the query (score = cosine similarity).

        `filters` are equality filters on `filter_fields` (e.g. `task_family="coffee"`).
        """
        self._before_read()
        k = int(k if k is not None else getattr(self.settings, self.k_setting))
        exclude = set(exclude_ids)
        text = self.query_text(query)
        if not text.strip():
            raise ValueError(f"{type(self).__name__}.retrieve: the query is empty")
        vector = self.embed_query(query, text)
        flt = and_where(where, where_all(**filters))
        rows = self._col().query(vector, k + len(exclude), flt)[0]
        hits = [
            Hit(id=e.id, score=e.score, record=self._record(e), details={"key": e.document})
            for e in rows
            if e.id not in exclude
        ]
        return hits[:k]

    def get(self, record_id: str) -> Any | None:
        self._before_read()
        return self._record_by_id(record_id)

    def list(self, **filters: Any) -> list[Any]:
        self._before_read()
        rows = self._col().get(where=where_all(**filters))
        return sorted((self._record(e) for e in rows), key=lambda r: r.id)

    def delete(self, ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        found = [e.id for e in self._col().get(ids=ids, include_documents=False, include_metadata=False)]
        if found:
            self._col().delete(ids=found)
        return len(found)

    def count(self) -> int:
        self._before_read()
        return self._col().count()

    def _before_read(self) -> None:
        """Hook run before reads (seeding)."""


class SeededMemory(KeyedMemory):
    """A keyed memory that also holds the project's seed records (see the module docstring)."""

    seed_files: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self, *, seed: bool = True, seed_paths: Iterable[str | Path] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.seed = seed
        self.seed_paths = [Path(p) for p in seed_paths] if seed_paths is not None else None
        self._seeded = False
        self._seed_lock = threading.Lock()

    def seed_records(self) -> list[Any]:
        """The records of the seed files, validated (errors name file and line)."""
        paths = self.seed_paths if self.seed_paths is not None else [seed_file(n) for n in self.seed_files]
        records: list[Any] = []
        for path in paths:
            records.extend(read_jsonl(path, self))
        return records

    def sync_seed(self) -> int:
        """Write new or changed seed records, drop seed records no longer shipped; returns writes."""
        records = self.seed_records()
        col = self._col()
        stored = {
            e.id: e.metadata.get("digest") for e in col.get(where={"source": "seed"}, include_documents=False)
        }
        wanted = {r.id: r for r in records}
        changed = [r for r in records if stored.get(r.id) != self._metadata(r, SOURCE_SEED)["digest"]]
        self._write(changed, SOURCE_SEED)
        obsolete = [rid for rid in stored if rid not in wanted]
        if obsolete:
            col.delete(ids=obsolete)
        return len(changed) + len(obsolete)

    def _before_read(self) -> None:
        if not self.seed or self._seeded:
            return
        with self._seed_lock:
            if not self._seeded:
                self.sync_seed()
                self._seeded = True
