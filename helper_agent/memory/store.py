"""The vector-store layer: collections of (id, vector, document, metadata) over Chroma.

Three ways to hold the data, one interface (`VectorStore` → `VectorCollection`):

- **embedded** (default): `chromadb.PersistentClient(path=HELPER_MEMORY_DIR)`, a local folder;
- **server**: `chromadb.HttpClient(host, port)` when `HELPER_CHROMA_HOST` is set. Start a server
  that many agents share with::

      chroma run --path /srv/helper-memory --port 8000
      export HELPER_CHROMA_HOST=localhost HELPER_CHROMA_PORT=8000

  A server that is down (or stops answering mid-run) raises `StoreUnavailableError`, one line naming
  the server and the settings to change, instead of an HTTP library's traceback. The connection is
  tried first with a timeout (`HELPER_CHROMA_CONNECT_TIMEOUT`), because Chroma's client itself waits
  forever on a host that drops packets.

- **ephemeral**: `VectorStore.ephemeral()`, in memory, for tests and throw-away evaluations.

Vectors are always passed in precomputed (see `helper_agent.memory.embeddings`), so Chroma never
loads its own default model. Collections use the cosine space and report `score = 1 - distance`,
the cosine similarity. Each collection records the embedder it was built with; opening it with
another raises `EmbeddingMismatchError`.

Durability and concurrency (embedded store)
-------------------------------------------
Chroma's embedded store commits every write to its SQLite log before `upsert` returns, so a write
that returned survives a crash of the process (`kill -9`). Writes are serialized across processes
with a file lock (`.helper_memory.lock` in the folder) so that two processes never persist the
vector index at the same time. A process's in-memory index does not see another process's writes
until it writes itself, so writers also touch a per-collection stamp in `.helper_memory_generations/`;
before a query a reader that sees a newer stamp for that collection issues a no-op delete, which
makes Chroma catch the index up from the log (tens of ms, so it is paid only when another process
wrote to that very collection: one stamp per collection, not one for the whole folder, because with
a collection per user a write by one user would otherwise slow every other user's next query). A
process that opens a collection records its stamp first: an index loaded afterwards is current. Memories whose logical record spans several entries write its parts first and its head last
and ignore parts without a head, so a crash mid-batch leaves no half record visible.

The folder holds `helper_memory_meta.json` with the layout's schema version; a folder written by an
incompatible version (or a Chroma folder not written by us) is refused with `IncompatibleStoreError`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from helper_agent import __version__
from helper_agent.files import FileWriteError, atomic_write_text
from helper_agent.memory.errors import (
    EmbeddingMismatchError,
    IncompatibleStoreError,
    MemoryStoreError,
    StoreUnavailableError,
)
from helper_agent.memory.settings import SCHEMA_VERSION, MemorySettings, get_memory_settings

log = logging.getLogger(__name__)

META_FILE = "helper_memory_meta.json"
LOCK_FILE = ".helper_memory.lock"
GENERATION_DIR = ".helper_memory_generations"
EMBEDDING_CACHE_FILE = "embedding_cache.sqlite3"
META_COLLECTION = "helper_memory_meta"  # the same information on a Chroma server
_SYNC_ID = "__helper_sync__"
MAX_QUERY_K = 10_000  # Chroma's embedded store fails on far larger result sets (SQLite variable limit)
_FORMAT = "helper-agent-memory"


def _chroma_settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


@dataclass
class Entry:
    """One stored item: `document` is the key text that was embedded, `metadata` holds the rest."""

    id: str
    document: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    embedding: np.ndarray | None = None


@dataclass
class ScoredEntry(Entry):
    """A query result; `score` is the cosine similarity (1 − Chroma's cosine distance)."""

    score: float = 0.0


def _root_reason(exc: BaseException) -> str:
    """The innermost cause's first line ("[Errno 111] Connection refused"), for a one-line message."""
    seen: set[int] = set()
    inner: BaseException = exc
    while id(inner) not in seen:
        seen.add(id(inner))
        nxt = inner.__cause__ or inner.__context__
        if nxt is None:
            break
        inner = nxt
    lines = str(inner).strip().splitlines()
    return lines[0] if lines else ""


def _is_connection_failure(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) is a failed or broken connection, not a refused request."""
    import httpx

    chain: list[BaseException] = []
    inner: BaseException | None = exc
    while inner is not None and inner not in chain:
        chain.append(inner)
        inner = inner.__cause__ or inner.__context__
    for item in chain:
        if isinstance(item, httpx.TransportError | ConnectionError | TimeoutError):
            return True
        if isinstance(item, ValueError) and "Could not connect to a Chroma server" in str(item):
            return True
    return False


def _is_lookup_miss(exc: BaseException) -> bool:
    """Whether `exc` is Chroma's answer that a collection does not exist (older versions raise a
    ValueError saying so): a read that found nothing, whatever the free space."""
    return type(exc).__name__ == "NotFoundError" or (isinstance(exc, ValueError) and "does not exist" in str(exc))


def _out_of_space(path: Path, exc: BaseException) -> bool:
    """Whether `exc` (or its cause) is a full disk: ENOSPC, SQLite's "database or disk is full", or
    an error while the folder's disk has under 1 MiB free. A collection that does not exist is never
    one: with under 1 MiB free every `routines list` once said the disk was full (the first-layout
    check looks up a collection that is not there), so the routines stored could not even be read."""
    seen: BaseException | None = exc
    while seen is not None:
        if getattr(seen, "errno", None) == 28 or "disk is full" in str(seen) or "No space left" in str(seen):
            return True
        if _is_lookup_miss(seen):
            return False
        seen = seen.__cause__ or seen.__context__
    try:
        return shutil.disk_usage(path).free < 1 << 20
    except OSError:
        return False


def disk_full(path: Path, what: str) -> MemoryStoreError:
    """The one-line error for a write the embedded store's disk had no room for: what could not be
    written, where, and that the disk is full; what was committed before stays (see `check_space`)."""
    return MemoryStoreError(
        f"{path}: cannot write {what}: the disk is full (No space left on device); free some space and run "
        "the command again (what was committed is kept, an import resumes)"
    )


def server_unavailable(host: str, port: int, ssl: bool, reason: str) -> StoreUnavailableError:
    """The one-line error for a Chroma server that cannot be reached: the server and what to change."""
    scheme = "https" if ssl else "http"
    return StoreUnavailableError(
        f"Chroma server {scheme}://{host}:{port} is unreachable ({reason}); start it "
        f"(chroma run --path DIR --port {port}) or change HELPER_CHROMA_HOST={host} / "
        f"HELPER_CHROMA_PORT={port} (unset HELPER_CHROMA_HOST to keep memories in the local folder)"
    )


def check_reachable(host: str, port: int, ssl: bool, timeout: float) -> None:
    """Open (and close) a TCP connection to the server within `timeout` seconds, or raise."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except TimeoutError:
        raise server_unavailable(host, port, ssl, f"no answer within {timeout:g} s") from None
    except OSError as exc:
        raise server_unavailable(host, port, ssl, exc.strerror or str(exc) or type(exc).__name__) from None


def where_all(**conditions: Any) -> dict[str, Any] | None:
    """A Chroma `where` filter requiring every condition; lists mean "one of"; None values are skipped."""
    parts: list[dict[str, Any]] = []
    for key, value in conditions.items():
        if value is None:
            continue
        if isinstance(value, list | tuple | set | frozenset):
            parts.append({key: {"$in": list(value)}})
        else:
            parts.append({key: value})
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return {"$and": parts}


def and_where(*filters: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Combine `where` filters with $and, skipping None."""
    parts = [dict(f) for f in filters if f]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return {"$and": parts}


class VectorStore:
    """A Chroma client (embedded, server or ephemeral) plus the write lock and schema check."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        host: str | None = None,
        port: int = 8000,
        ssl: bool = False,
        headers: dict[str, str] | None = None,
        ephemeral: bool = False,
        lock_timeout: float = -1,
        settings: MemorySettings | None = None,
    ) -> None:
        import chromadb

        self.settings = settings or get_memory_settings()
        self._thread_lock = threading.RLock()
        self._file_lock: Any = None
        self._namespace = ""
        self.path: Path | None = None
        self._server: tuple[str, int, bool] | None = None
        if ephemeral:
            self.kind = "ephemeral"
            self.location = "<ephemeral>"
            # Ephemeral clients in one process share one in-memory system: keep ours apart.
            self._namespace = f"e{uuid.uuid4().hex[:10]}-"
            self.client = chromadb.EphemeralClient(settings=_chroma_settings())
        elif host:
            self.kind = "http"
            self.location = f"{'https' if ssl else 'http'}://{host}:{port}"
            self._server = (host, port, ssl)
            check_reachable(host, port, ssl, self.settings.chroma_connect_timeout)
            try:
                self.client = chromadb.HttpClient(
                    host=host, port=port, ssl=ssl, headers=headers, settings=_chroma_settings()
                )
            except Exception as exc:  # noqa: BLE001 - chromadb raises bare Exception/ValueError here
                reason = _root_reason(exc)
                if not _is_connection_failure(exc):
                    reason = f"it answered, but not as a Chroma server: {reason or 'an empty error reply'}"
                raise server_unavailable(host, port, ssl, reason) from exc
            self._check_server_meta()
        else:
            from filelock import FileLock

            self.kind = "persistent"
            self.path = (
                Path(path if path is not None else get_memory_settings().memory_dir).expanduser().resolve()
            )
            self.location = str(self.path)
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise MemoryStoreError(f"{self.path}: cannot create the memory folder ({exc})") from exc
            self._file_lock = FileLock(str(self.path / LOCK_FILE), timeout=lock_timeout, thread_local=False)
            # Under the lock: two processes creating one new store would race on Chroma's migrations.
            with self.write_lock():
                self._check_local_meta()
                try:
                    self.client = chromadb.PersistentClient(path=str(self.path), settings=_chroma_settings())
                except Exception as exc:  # chromadb raises many kinds on a foreign or damaged folder
                    if _out_of_space(self.path, exc):
                        raise disk_full(self.path, "Chroma's database") from exc
                    raise IncompatibleStoreError(
                        f"{self.path}: Chroma cannot open this folder ({exc})"
                    ) from exc
        self._collections: dict[str, VectorCollection] = {}

    # ------------------------------------------------------------------------------ constructors
    @classmethod
    def from_settings(cls, settings: MemorySettings | None = None) -> VectorStore:
        """The shared store of the settings' folder or server (see `open_store`)."""
        return open_store(settings=settings)

    @classmethod
    def ephemeral(cls) -> VectorStore:
        return cls(ephemeral=True)

    def __repr__(self) -> str:
        return f"VectorStore({self.kind}: {self.location})"

    # ---------------------------------------------------------------------------------- metadata
    def _meta(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "schema_version": SCHEMA_VERSION,
            "created_by": f"helper-agent {__version__}",
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }

    @staticmethod
    def _refuse(where: str, found: Any, written_by: Any) -> IncompatibleStoreError:
        return IncompatibleStoreError(
            f"{where}: schema_version {found!r} (written by {written_by or 'an unknown version'}); "
            f"this helper-agent {__version__} reads schema_version {SCHEMA_VERSION}. "
            "Point HELPER_MEMORY_DIR at another folder, or export the memories with the version that "
            "wrote them (`export_jsonl`) and import them here."
        )

    def _check_local_meta(self) -> None:
        assert self.path is not None
        meta_path = self.path / META_FILE
        if meta_path.exists():
            try:
                data = json.loads(meta_path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError, OSError) as exc:
                raise IncompatibleStoreError(f"{meta_path}: unreadable store metadata ({exc})") from exc
            if not isinstance(data, dict) or data.get("format") != _FORMAT:
                raise IncompatibleStoreError(
                    f"{meta_path}: not helper-agent memory metadata (no format {_FORMAT!r})"
                )
            if data.get("schema_version") != SCHEMA_VERSION:
                raise self._refuse(str(meta_path), data.get("schema_version"), data.get("created_by"))
            return
        if (self.path / "chroma.sqlite3").exists():
            raise IncompatibleStoreError(
                f"{self.path}: holds a Chroma database but no {META_FILE}, so it was not written by "
                "helper-agent's memory layer (or by a version before schema 1); use another folder"
            )
        try:
            atomic_write_text(meta_path, json.dumps(self._meta(), indent=2) + "\n")
        except FileWriteError as exc:
            if exc.errno == errno.ENOSPC:
                raise disk_full(meta_path, "the new store's metadata file") from None
            raise MemoryStoreError(f"{meta_path}: cannot create the memory store here ({exc})") from None

    def check_space(self) -> None:
        """Refuse a write to the embedded store while its disk has less than HELPER_MEMORY_MIN_FREE_MB free.

        Chroma that runs out of space in the middle of a write leaves a store it cannot open again
        (every later write fails with "Error in compaction: Failed to apply logs to the metadata
        segment", and no resume helps). So the space is checked first, before each batch, with a margin
        far above what one batch takes (an import commits `HELPER_ROUTINE_IMPORT_BATCH` versions at a
        time): a refused write leaves the store as the last batch left it, and the same command resumes
        once space is freed.

        A disk that another process fills during a batch gets past this check. With chromadb 1.5.9 the
        batch's write then fails whole (SQLite's "database or disk is full", or ENOSPC on the stamp
        written after it), `guard` reports it in one line, the batches before it stay and the same
        command resumes (`tests/test_last_faults.py`, a file growing beside an import on a tmpfs; every
        one of about twenty such runs resumed). The reserve stays all the same: the failure above was
        seen (issue 52), and nothing in Chroma promises that a write cut by a full disk is undone."""
        if self.path is None:
            return
        need = int(self.settings.memory_min_free_mb) << 20
        try:
            free = shutil.disk_usage(self.path).free
        except OSError:
            return
        if free < need:
            raise MemoryStoreError(
                f"{self.path}: only {free / (1 << 20):.1f} MiB free, and a write needs {need >> 20} MiB "
                "(HELPER_MEMORY_MIN_FREE_MB); nothing was written: free some space and run the command again "
                "(what was committed is kept, an import resumes)"
            )

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Turn a lost connection to the Chroma server into `StoreUnavailableError` (server stores), and
        a full disk under the embedded store into one `MemoryStoreError` line (Chroma reports it as
        "Error in compaction: Failed to apply logs to the metadata segment", with a traceback)."""
        if self._server is None:
            try:
                yield
            except MemoryStoreError:
                raise
            except Exception as exc:
                if self.path is not None and _out_of_space(self.path, exc):
                    raise disk_full(self.path, "to the memory store") from exc
                raise
            return
        try:
            yield
        except MemoryStoreError:
            raise
        except Exception as exc:
            if not _is_connection_failure(exc):
                raise
            raise server_unavailable(*self._server, _root_reason(exc) or type(exc).__name__) from exc

    def _check_server_meta(self) -> None:
        try:
            with self.guard():
                col = self.client.get_or_create_collection(
                    META_COLLECTION,
                    embedding_function=None,
                    metadata={"format": _FORMAT, "schema_version": SCHEMA_VERSION},
                )
        except MemoryStoreError:
            raise
        except Exception as exc:
            raise MemoryStoreError(f"{self.location}: the Chroma server refused a request ({exc})") from exc
        meta = col.metadata or {}
        if meta.get("schema_version") != SCHEMA_VERSION:
            raise self._refuse(
                f"{self.location} collection {META_COLLECTION!r}", meta.get("schema_version"), None
            )

    # ------------------------------------------------------------------------------------- locks
    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        """Serializes writes: across threads always, across processes for the embedded store.

        A writer waits its turn however long the holder takes (`lock_timeout=-1`, the default): a
        writer that gave up after 120 s lost its routine (`routines add` during a 5,000-routine
        import; the second of two concurrent imports stored nothing). The lock is the operating
        system's (fcntl), so a holder that dies releases it. Writers hold it only to assign versions
        and commit a batch (embedding happens before), so a waiting writer gets through between
        an import's batches."""
        with self._thread_lock:
            if self._file_lock is None:
                yield
                return
            from filelock import Timeout

            try:
                self._file_lock.acquire()
            except Timeout:
                raise MemoryStoreError(
                    f"{self.path / LOCK_FILE}: another process has held the write lock for "
                    f"{self._file_lock.timeout:.0f} s"
                ) from None
            try:
                yield
            finally:
                self._file_lock.release()

    def _generation(self, name: str) -> tuple[int, int, int] | None:
        """The write stamp of collection `name` (embedded store; None before its first write)."""
        if self.path is None:
            return None
        try:
            st = os.stat(self.path / GENERATION_DIR / self._full_name(name))
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _bump_generation(self, name: str) -> tuple[int, int, int] | None:
        """Called under the write lock after every write to `name` (embedded store only)."""
        if self.path is None:
            return None
        folder = self.path / GENERATION_DIR
        folder.mkdir(exist_ok=True)
        target = folder / self._full_name(name)
        tmp = folder / f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            tmp.write_text(uuid.uuid4().hex, encoding="ascii")
            os.replace(tmp, target)
        except OSError:
            tmp.unlink(missing_ok=True)  # a full disk: no stray stamp file; the caller's guard says why
            raise
        return self._generation(name)

    def _seen(self, name: str) -> tuple[bool, tuple[int, int, int] | None]:
        """(known, stamp) this process's index of `name` is current with (shared by the process's
        clients of one folder, as Chroma shares their index)."""
        key = (self.location, name)
        with _SEEN_LOCK:
            return (key in _SEEN, _SEEN.get(key))

    def _mark_seen(self, name: str, stamp: tuple[int, int, int] | None, *, first: bool = False) -> None:
        key = (self.location, name)
        with _SEEN_LOCK:
            if first and key in _SEEN:
                return
            _SEEN[key] = stamp

    # ------------------------------------------------------------------------------- collections
    def _full_name(self, name: str) -> str:
        return f"{self._namespace}{name}"

    def collection(
        self, name: str, *, embedder_name: str, dim: int, metadata: Mapping[str, Any] | None = None
    ) -> VectorCollection:
        """Open (or create) collection `name` for vectors of `dim` made by `embedder_name`.

        `metadata` (str/int/float/bool values) is stored with a new collection, e.g. its owner.
        """
        with self._thread_lock:
            existing = self._collections.get(name)
            if existing is not None:
                existing._check(embedder_name, dim)
                return existing
            full = self._full_name(name)
            self._stamp_before_open(name)
            meta: dict[str, Any] = dict(metadata or {})
            meta.update({"helper:embedder": embedder_name, "helper:dim": int(dim), "helper:schema": SCHEMA_VERSION})
            hnsw = {
                "space": "cosine",
                "ef_construction": self.settings.hnsw_ef_construction,
                "ef_search": self.settings.hnsw_ef_search,
                "max_neighbors": self.settings.hnsw_max_neighbors,
            }
            try:
                with self.write_lock(), self.guard():
                    raw = self.client.get_or_create_collection(
                        full,
                        embedding_function=None,
                        metadata=meta,
                        configuration={"hnsw": hnsw},
                    )
            except MemoryStoreError:
                raise
            except Exception as exc:
                raise MemoryStoreError(f"{self.location}: cannot open collection {name!r} ({exc})") from exc
            return self._keep(name, raw, embedder_name, dim)

    def _keep(self, name: str, raw: Any, embedder_name: str, dim: int) -> VectorCollection:
        col = VectorCollection(self, name, raw)
        col._check(embedder_name, dim)
        self._collections[name] = col
        return col

    def _stamp_before_open(self, name: str) -> None:
        """Record the collection's stamp before its index can be loaded in this process."""
        if self.kind == "persistent":
            self._mark_seen(name, self._generation(name), first=True)

    def find_collection(self, name: str, *, embedder_name: str, dim: int) -> VectorCollection | None:
        """Collection `name` if it exists, else None (a read never creates a collection)."""
        from chromadb.errors import NotFoundError

        with self._thread_lock:
            existing = self._collections.get(name)
            if existing is not None:
                existing._check(embedder_name, dim)
                return existing
            self._stamp_before_open(name)
            try:
                with self.guard():
                    raw = self.client.get_collection(self._full_name(name), embedding_function=None)
            except (NotFoundError, ValueError):  # older chromadb raise ValueError for a missing one
                return None
            return self._keep(name, raw, embedder_name, dim)

    def collection_names(self, prefix: str = "") -> dict[str, dict[str, Any]]:
        """Names (without our namespace) and metadata of the collections whose name starts with `prefix`."""
        full_prefix = self._full_name(prefix)
        out: dict[str, dict[str, Any]] = {}
        with self.guard():
            listed = self.client.list_collections()
        for item in listed:
            name = getattr(item, "name", item)
            if isinstance(name, str) and name.startswith(full_prefix):
                out[name[len(self._namespace) :]] = dict(getattr(item, "metadata", None) or {})
        return out

    def has_collection(self, name: str) -> bool:
        full = self._full_name(name)
        with self.guard():
            return any(getattr(c, "name", c) == full for c in self.client.list_collections())

    def drop_collection(self, name: str) -> None:
        with self.write_lock():
            self._collections.pop(name, None)
            with contextlib.suppress(Exception):
                self.client.delete_collection(self._full_name(name))
            self._bump_generation(name)
            if self.path is not None:
                with contextlib.suppress(OSError):
                    (self.path / GENERATION_DIR / self._full_name(name)).unlink()
            with _SEEN_LOCK:
                _SEEN.pop((self.location, name), None)


_SEEN: dict[tuple[str, str], tuple[int, int, int] | None] = {}
_SEEN_LOCK = threading.Lock()

_OPEN: dict[tuple[str, ...], VectorStore] = {}
_OPEN_LOCK = threading.Lock()


def open_store(path: str | Path | None = None, *, settings: MemorySettings | None = None) -> VectorStore:
    """The process-wide `VectorStore` for a folder (or for the settings' folder or server).

    Sharing one object per location keeps one write lock and one view of the generation per process.
    """
    settings = settings or get_memory_settings()
    if path is None and settings.chroma_host:
        key: tuple[str, ...] = (
            "http",
            settings.chroma_host,
            str(settings.chroma_port),
            str(settings.chroma_ssl),
        )
    else:
        folder = Path(path if path is not None else settings.memory_dir).expanduser().resolve()
        key = ("persistent", str(folder))
    with _OPEN_LOCK:
        store = _OPEN.get(key)
        if store is None:
            if key[0] == "http":
                store = VectorStore(
                    host=settings.chroma_host,
                    port=settings.chroma_port,
                    ssl=settings.chroma_ssl,
                    settings=settings,
                )
            else:
                store = VectorStore(key[1], settings=settings)
            _OPEN[key] = store
        return store


class VectorCollection:
    """One Chroma collection in cosine space. All writes go through the store's write lock."""

    def __init__(self, store: VectorStore, name: str, raw: Any) -> None:
        self.store = store
        self.name = name
        self.raw = raw
        meta = raw.metadata or {}
        self.embedder_name = str(meta.get("helper:embedder", ""))
        self.dim = int(meta.get("helper:dim", 0))

    def _check(self, embedder_name: str, dim: int) -> None:
        if self.embedder_name != embedder_name or self.dim != int(dim):
            raise EmbeddingMismatchError(
                f"{self.store.location} collection {self.name!r} was built with embeddings "
                f"{self.embedder_name!r} ({self.dim}-d), not {embedder_name!r} ({dim}-d); set HELPER_EMBEDDINGS "
                "back, use another memory folder or collection, or export and re-import the records"
            )

    # ------------------------------------------------------------------------------------ writes
    def _vectors(self, embeddings: Any, n: int) -> np.ndarray:
        vectors = np.asarray(embeddings, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = vectors[None, :]
        if vectors.shape != (n, self.dim):
            raise ValueError(
                f"collection {self.name!r}: expected {n}x{self.dim} vectors, got {vectors.shape}"
            )
        if not np.all(np.isfinite(vectors)):
            raise ValueError(f"collection {self.name!r}: vectors contain NaN or infinity")
        return vectors

    def upsert(self, entries: Sequence[Entry]) -> None:
        """Insert or replace entries (each must carry its vector), in order, in as few calls as possible.

        When this returns, every entry is committed to the store.
        """
        entries = list(entries)
        if not entries:
            return
        for entry in entries:
            if entry.embedding is None:
                raise ValueError(f"collection {self.name!r}: entry {entry.id!r} has no vector")
        vectors = self._vectors(
            np.stack([np.asarray(e.embedding, dtype=np.float32) for e in entries]), len(entries)
        )
        try:
            with self.store.guard():
                batch = max(1, int(self.store.client.get_max_batch_size()))
        except MemoryStoreError:
            raise
        except Exception:  # noqa: BLE001 - older servers lack the call
            batch = 1000
        with self.store.write_lock(), self.store.guard():
            self.store.check_space()
            for start in range(0, len(entries), batch):
                chunk = entries[start : start + batch]
                self.raw.upsert(
                    ids=[e.id for e in chunk],
                    embeddings=vectors[start : start + batch],
                    documents=[e.document or "" for e in chunk],
                    metadatas=[_clean_metadata(e.metadata) for e in chunk],
                )
            self._wrote()

    def delete(self, ids: Sequence[str] | None = None, where: Mapping[str, Any] | None = None) -> None:
        if ids is not None:
            ids = list(ids)
            if not ids:
                return
        if ids is None and not where:
            raise ValueError("delete() needs ids or a where filter (use clear() to empty a collection)")
        with self.store.write_lock(), self.store.guard():
            self.store.check_space()
            self.raw.delete(ids=ids, where=dict(where) if where else None)
            self._wrote()

    def clear(self) -> None:
        ids = [e.id for e in self.get(include_documents=False, include_metadata=False)]
        for start in range(0, len(ids), 5000):
            self.delete(ids=ids[start : start + 5000])

    def _wrote(self) -> None:
        """After a write (under the lock): publish a new generation; our own index is now current."""
        self._writes = getattr(self, "_writes", 0) + 1
        self.store._mark_seen(self.name, self.store._bump_generation(self.name))

    def sync(self) -> None:
        """Catch this process's index up with writes made by other processes (embedded store)."""
        store = self.store
        if store.kind != "persistent":
            return
        known, stamp = store._seen(self.name)
        if known and stamp == store._generation(self.name):
            return
        with store.write_lock():
            self.raw.delete(ids=[_SYNC_ID])  # a no-op write: Chroma applies the pending log first
            store._mark_seen(self.name, store._generation(self.name))

    # ------------------------------------------------------------------------------------- reads
    def count(self, where: Mapping[str, Any] | None = None) -> int:
        with self.store.guard():
            if not where:
                return int(self.raw.count())
            return len(self.raw.get(where=dict(where), include=[])["ids"])

    def get(
        self,
        ids: Sequence[str] | None = None,
        where: Mapping[str, Any] | None = None,
        *,
        limit: int | None = None,
        offset: int | None = None,
        include_embeddings: bool = False,
        include_documents: bool = True,
        include_metadata: bool = True,
    ) -> list[Entry]:
        include: list[str] = []
        if include_documents:
            include.append("documents")
        if include_metadata:
            include.append("metadatas")
        if include_embeddings:
            include.append("embeddings")
        if ids is not None:
            ids = list(ids)
            if not ids:
                return []
        with self.store.guard():
            result = self.raw.get(
                ids=ids, where=dict(where) if where else None, limit=limit, offset=offset, include=include
            )
        entries = _entries(result, include_embeddings)
        if ids is not None:  # Chroma does not keep the requested order
            by_id = {e.id: e for e in entries}
            entries = [by_id[i] for i in ids if i in by_id]
        return entries

    def exact_query(self, embedding: Any, k: int) -> list[ScoredEntry]:
        """Up to `k` entries by decreasing cosine similarity to one vector, by comparing it with every
        stored vector (no index), so every entry can be found.

        HNSW is approximate: in 4 of 15 memories of 5,000 routines one entry was missing from the
        index's answers even at k = 10,000 (an entry the graph does not reach). Below a size where a
        full comparison is cheap (a 20,000 x 384 matrix product takes a few ms), exactness is worth
        more than the index. The vectors are read once and kept until the collection changes (a
        write by this process or, for the embedded store, another's)."""
        if k <= 0:
            return []
        self.sync()
        ids, matrix = self._all_vectors()
        if not ids:
            return []
        query = self._vectors(embedding, 1)[0]
        scores = (matrix @ query) / (float(np.linalg.norm(query)) or 1.0)  # rows are unit length
        k = min(int(k), len(ids))
        top = np.argpartition(-scores, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
        top = top[np.argsort(-scores[top], kind="stable")]
        by_id = {e.id: e for e in self.get(ids=[ids[i] for i in top])}
        return [
            ScoredEntry(id=ids[i], document=by_id[ids[i]].document, metadata=by_id[ids[i]].metadata,
                        embedding=None, score=float(scores[i]))
            for i in top
            if ids[i] in by_id
        ]

    def _all_vectors(self) -> tuple[list[str], np.ndarray]:
        """(ids, unit-length vectors) of every entry, cached until the collection changes."""
        key = (self.count(), getattr(self, "_writes", 0),
               self.store._generation(self.name) if self.store.kind == "persistent" else None)
        cached = getattr(self, "_exact_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        with self.store.guard():
            result = self.raw.get(include=["embeddings"])
        ids = [str(i) for i in result.get("ids") or []]
        raw = result.get("embeddings")
        matrix = np.asarray(raw if raw is not None and len(raw) else np.zeros((0, self.dim)), dtype=np.float32)
        keep = [i for i, entry_id in enumerate(ids) if entry_id != _SYNC_ID]
        ids, matrix = [ids[i] for i in keep], matrix[keep] if len(keep) != len(ids) else matrix
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = matrix / np.where(norms == 0, 1.0, norms)  # cosine = dot product of unit rows
        self._exact_cache = (key, ids, matrix)
        return ids, matrix

    def query(
        self,
        embeddings: Any,
        k: int,
        where: Mapping[str, Any] | None = None,
        *,
        include_embeddings: bool = False,
    ) -> list[list[ScoredEntry]]:
        """For each query vector, up to `k` (at most `MAX_QUERY_K`) entries by decreasing cosine similarity."""
        vectors = np.asarray(embeddings, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = vectors[None, :]
        vectors = self._vectors(vectors, vectors.shape[0])
        if k <= 0:
            return [[] for _ in range(len(vectors))]
        self.sync()
        include = ["documents", "metadatas", "distances"] + (["embeddings"] if include_embeddings else [])
        with self.store.guard():
            result = self.raw.query(
                query_embeddings=vectors,
                n_results=min(int(k), MAX_QUERY_K),
                where=dict(where) if where else None,
                include=include,
            )
        out: list[list[ScoredEntry]] = []
        for row in range(len(vectors)):
            hits: list[ScoredEntry] = []
            ids = result["ids"][row]
            for col, entry_id in enumerate(ids):
                if entry_id == _SYNC_ID:
                    continue
                embedding = None
                if include_embeddings and result.get("embeddings") is not None:
                    embedding = np.asarray(result["embeddings"][row][col], dtype=np.float32)
                hits.append(
                    ScoredEntry(
                        id=entry_id,
                        document=(result.get("documents") or [[None] * len(ids)])[row][col],
                        metadata=dict((result.get("metadatas") or [[{}] * len(ids)])[row][col] or {}),
                        embedding=embedding,
                        score=1.0 - float(result["distances"][row][col]),
                    )
                )
            out.append(hits)
        return out


def _entries(result: Mapping[str, Any], with_embeddings: bool) -> list[Entry]:
    ids = list(result.get("ids") or [])
    docs = result.get("documents")
    metas = result.get("metadatas")
    embs = result.get("embeddings") if with_embeddings else None
    out = []
    for i, entry_id in enumerate(ids):
        if entry_id == _SYNC_ID:
            continue
        out.append(
            Entry(
                id=entry_id,
                document=docs[i] if docs is not None else None,
                metadata=dict(metas[i] or {}) if metas is not None else {},
                embedding=np.asarray(embs[i], dtype=np.float32) if embs is not None else None,
            )
        )
    return out


def _clean_metadata(metadata: Mapping[str, Any]) -> dict[str, Any] | None:
    """Chroma metadata takes str/int/float/bool values: drop None, JSON-encode anything else."""
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if value is None:
            continue
        if isinstance(value, bool | int | float | str):
            out[str(key)] = value
        else:
            out[str(key)] = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return out or None
