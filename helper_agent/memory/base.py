"""The memory plugin protocol, the records at its edges, and the shared plumbing.

Every memory is a `MemoryPlugin`: `add(records)`, `retrieve(query, k) -> list[Hit]`, `list()`,
`delete(ids)`, `export_jsonl(path)`, `import_jsonl(path)`, `count()`. Records are pydantic models
(`MemoryRecord` subclasses) and dicts are validated into them. `BaseMemory` implements the common
parts over a `VectorStore` and an `Embedder`: validation with errors that name the record and
field, the size limits of `MemorySettings`, and JSON Lines export/import.

JSON Lines files start with a header line `{"_format": "helper-agent-memory", "memory": KIND,
"schema_version": 1}` followed by one record per line; import also accepts files without the
header (the seed files under `helper_agent/prompts/examples/`). An import validates the whole file
before it writes anything, so a bad line loses nothing and adds nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from helper_agent.memory.embeddings import Embedder, get_embedder
from helper_agent.memory.errors import ImportFormatError, InvalidRecordError, MemoryStoreError
from helper_agent.memory.settings import SCHEMA_VERSION, MemorySettings, get_memory_settings
from helper_agent.memory.store import EMBEDDING_CACHE_FILE, VectorCollection, VectorStore, open_store

JSONL_FORMAT = "helper-agent-memory"


def new_id() -> str:
    return uuid.uuid4().hex


class MemoryRecord(BaseModel):
    """Base of every record; unknown fields are refused so typos fail loudly."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=new_id, min_length=1)


R = TypeVar("R")


class Hit(BaseModel, Generic[R]):
    """One retrieved record with its score (cosine similarity unless the memory says otherwise)."""

    id: str
    score: float
    record: R
    details: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class MemoryPlugin(Protocol):
    """What every memory offers; third-party plugins implement it (see `registry`)."""

    kind: ClassVar[str]

    def add(self, records: Iterable[Any]) -> list[str]: ...

    def retrieve(self, query: Any, k: int | None = None) -> list[Hit[Any]]: ...

    def list(self) -> list[Any]: ...

    def delete(self, ids: Iterable[str]) -> int: ...

    def export_jsonl(self, path: str | Path) -> int: ...

    def import_jsonl(self, path: str | Path) -> int: ...

    def count(self) -> int: ...


def utf8_size(text: str, where: str, field: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidRecordError(
            f"{where}: field {field!r} is not valid Unicode text ({exc.reason})"
        ) from None


class BaseMemory(ABC):
    """Common plumbing of the built-in memories.

    Subclasses set `kind`, `record_type` (a model or a union of models), `default_collection`,
    `key_fields` (text that is embedded: must be non-empty, at most `max_key_chars`) and
    `value_fields` (stored text: at most `max_value_bytes` UTF-8 bytes each).
    """

    kind: ClassVar[str] = "memory"
    record_type: ClassVar[Any] = MemoryRecord
    default_collection: ClassVar[str] = "helper_memory"
    key_fields: ClassVar[tuple[str, ...]] = ()
    value_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        *,
        store: VectorStore | None = None,
        embedder: Embedder | None = None,
        settings: MemorySettings | None = None,
        collection: str | None = None,
        path: str | Path | None = None,
    ) -> None:
        self.settings = settings or get_memory_settings()
        if store is None:
            store = open_store(path) if path is not None else open_store(settings=self.settings)
        self.store = store
        if embedder is None:
            cache = None
            if self.settings.embedding_cache and store.path is not None:
                cache = store.path / EMBEDDING_CACHE_FILE
            embedder = get_embedder(self.settings.embeddings, cache_path=cache, settings=self.settings)
        self.embedder = embedder
        self.collection_name = collection or self.default_collection
        self._adapter: TypeAdapter[Any] = TypeAdapter(self.record_type)
        self._collections: dict[str, VectorCollection] = {}

    # ----------------------------------------------------------------------------------- plumbing
    def _col(self, suffix: str = "") -> VectorCollection:
        col = self._collections.get(suffix)
        if col is None:
            col = self.store.collection(
                f"{self.collection_name}{suffix}", embedder_name=self.embedder.name, dim=self.embedder.dim
            )
            self._collections[suffix] = col
        return col

    def _record(self, entry: Any) -> Any:
        """The record an entry holds whole in its `record` metadata (JSON), validated."""
        return self._adapter.validate_python(json.loads(entry.metadata["record"]))

    def _record_by_id(self, record_id: str, col: VectorCollection | None = None) -> Any | None:
        """The record stored under `record_id` (in `col`, default the main collection), or None."""
        rows = (col or self._col()).get(ids=[record_id])
        return self._record(rows[0]) if rows else None

    def _embed(self, texts: Sequence[str]) -> Any:
        return self.embedder.embed(list(texts))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.store!r}, collection={self.collection_name!r})"

    # --------------------------------------------------------------------------------- validation
    def coerce(self, records: Iterable[Any], *, source: str = "records") -> list[Any]:
        """Validate dicts/models into records; raises `InvalidRecordError` naming record and field."""
        if isinstance(records, BaseModel | Mapping):
            records = [records]
        out: list[Any] = []
        for index, raw in enumerate(records):
            where = f"{source}[{index}]"
            if isinstance(raw, BaseModel):
                raw = raw.model_dump()
            if isinstance(raw, Mapping) and raw.get("id"):
                where += f" (id={raw.get('id')!r})"
            try:
                record = self._adapter.validate_python(raw)
            except ValidationError as exc:
                raise InvalidRecordError(f"{where}: {describe_validation_error(exc)}") from None
            self.check_record(record, where)
            out.append(record)
        seen: set[str] = set()
        for record in out:
            rid = getattr(record, "id", None)
            if rid and rid in seen:
                raise InvalidRecordError(f"{source}: id {rid!r} appears twice")
            if rid:
                seen.add(rid)
        return out

    def check_imported(self, record: Any, where: str) -> None:
        """The checks of a record read from a file (`read_jsonl`): those of every write by default;
        a memory may ask more of what a person brings in than of what its agent writes."""
        self.check_record(record, where)

    def check_record(self, record: Any, where: str) -> None:
        """Size and emptiness checks; override to check nested values."""
        for field in self.key_fields:
            self.check_key(getattr(record, field), where, field)
        for field in self.value_fields:
            value = getattr(record, field)
            if isinstance(value, str):
                self.check_value(value, where, field)
            elif value is not None:
                self.check_value(json.dumps(value, ensure_ascii=False), where, field)

    def check_key(self, value: Any, where: str, field: str) -> None:
        if not isinstance(value, str) or not value.strip():
            raise InvalidRecordError(f"{where}: field {field!r} is empty; a key text is required")
        if len(value) > self.settings.max_key_chars:
            raise InvalidRecordError(
                f"{where}: field {field!r} has {len(value)} characters; the limit is "
                f"{self.settings.max_key_chars} (HELPER_MAX_KEY_CHARS)"
            )
        utf8_size(value, where, field)

    def check_value(self, value: str, where: str, field: str) -> None:
        size = utf8_size(value, where, field)
        if size > self.settings.max_value_bytes:
            raise InvalidRecordError(
                f"{where}: field {field!r} is {size} bytes; the limit is {self.settings.max_value_bytes} "
                "bytes (HELPER_MAX_VALUE_BYTES)"
            )

    # ---------------------------------------------------------------------------------- protocol
    @abstractmethod
    def add(self, records: Iterable[Any]) -> list[str]: ...

    @abstractmethod
    def retrieve(self, query: Any, k: int | None = None) -> list[Hit[Any]]: ...

    @abstractmethod
    def list(self) -> list[Any]: ...

    @abstractmethod
    def delete(self, ids: Iterable[str]) -> int: ...

    @abstractmethod
    def count(self) -> int: ...

    def export_records(self) -> list[Any]:
        """What `export_jsonl` writes (default: `list()`)."""
        return self.list()

    def export_jsonl(self, path: str | Path) -> int:
        """Write a header line and every record; the file appears complete or not at all."""
        records = self.export_records()
        return write_jsonl(path, self.kind, records)

    def import_jsonl(self, path: str | Path) -> int:
        """Validate every line of `path`, then add the records; returns how many were added."""
        records = read_jsonl(path, self)
        if records:
            self.add(records)
        return len(records)


# ------------------------------------------------------------------------------------ JSON Lines
def describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"field {loc!r}: {err.get('msg')}" if loc else str(err.get("msg")))
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def write_jsonl(path: str | Path, kind: str, records: Sequence[Any]) -> int:
    path = Path(path).expanduser()
    header = {
        "_format": JSONL_FORMAT,
        "memory": kind,
        "schema_version": SCHEMA_VERSION,
        "count": len(records),
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(json.dumps(header, ensure_ascii=False) + "\n")
            for record in records:
                data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
                fh.write(json.dumps(data, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise MemoryStoreError(f"{path}: cannot write ({exc.strerror or exc})") from exc
    return len(records)


def iter_jsonl_objects(path: str | Path, *, max_bytes: int | None = None) -> Iterable[tuple[int, Any]]:
    """(line number, parsed JSON) for each non-blank line; errors name the file and line.

    The file is streamed line by line; with `max_bytes` (an import passes `HELPER_MAX_INPUT_BYTES`)
    a file larger than that is refused before it is read, and the count is kept while reading too
    (a pipe or a file still growing has no size to check first)."""
    path = Path(path).expanduser()
    limit = f"; the limit is {max_bytes} bytes (HELPER_MAX_INPUT_BYTES)"
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    with fh:
        try:
            size = os.fstat(fh.fileno()).st_size
        except OSError:
            size = 0
        if max_bytes is not None and size > max_bytes:
            raise ImportFormatError(f"{path}: {size} bytes{limit}")
        read = 0
        for lineno, raw in enumerate(iter(lambda: fh.readline((max_bytes or 1 << 62) + 1), b""), start=1):
            read += len(raw)
            if max_bytes is not None and read > max_bytes:
                raise ImportFormatError(f"{path}: more than {max_bytes} bytes{limit}")
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            raw = raw.rstrip(b"\n")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ImportFormatError(
                    f"{path}:{lineno}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                    "save the file as UTF-8"
                ) from None
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                # json's own message may end in "at" ("Unterminated string starting at"): one "at" only
                reason = exc.msg.removesuffix(" at")
                raise ImportFormatError(
                    f"{path}:{lineno}: invalid JSON ({reason} at column {exc.colno})"
                ) from None
            except RecursionError:
                raise ImportFormatError(f"{path}:{lineno}: JSON nested too deeply") from None


def read_jsonl(path: str | Path, memory: BaseMemory) -> list[Any]:
    """Every record of a JSON Lines file, validated for `memory`; nothing is written."""
    records: list[Any] = []
    ids: dict[str, int] = {}
    for lineno, obj in iter_jsonl_objects(path, max_bytes=memory.settings.max_input_bytes):
        where = f"{path}:{lineno}"
        if not isinstance(obj, dict):
            raise ImportFormatError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        if "_format" in obj:
            if obj.get("_format") != JSONL_FORMAT:
                raise ImportFormatError(f"{where}: unknown file format {obj.get('_format')!r}")
            if obj.get("memory") != memory.kind:
                raise ImportFormatError(
                    f"{where}: this file holds {obj.get('memory')!r} records, not {memory.kind!r} records"
                )
            version = obj.get("schema_version")
            if not isinstance(version, int) or version > SCHEMA_VERSION:
                raise ImportFormatError(
                    f"{where}: schema_version {version!r} is newer than this helper-agent reads ({SCHEMA_VERSION})"
                )
            continue
        try:
            record = memory._adapter.validate_python(obj)
        except ValidationError as exc:
            raise ImportFormatError(f"{where}: {describe_validation_error(exc)}") from None
        try:
            memory.check_imported(record, where)
        except InvalidRecordError as exc:
            raise ImportFormatError(str(exc)) from None
        rid = getattr(record, "id", None)
        if rid:
            if rid in ids:
                raise ImportFormatError(f"{where}: id {rid!r} already used on line {ids[rid]}")
            ids[rid] = lineno
        records.append(record)
    return records
