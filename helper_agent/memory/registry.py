"""Name → memory plugin, so graphs and users choose memories in configuration.

    create_memory("examples")                                  # HELPER language-program examples
    create_memory("routines", path="~/.helper-agent/memory")   # another folder
    create_memory("experience", embeddings="hash:256", policy="keep_latest_round")

Built-in names: `examples`, `corrections`, `routines`, `experience`, `scene_graph`, `fewshot`.

Third-party packages add plugins through the entry-point group `helper_agent.memories`; the entry
point names a class or factory that takes the same keyword arguments (at least `store`, `embedder`,
`settings`) and returns an object implementing `MemoryPlugin`::

    [project.entry-points."helper_agent.memories"]
    my_memory = "my_package.memory:MyMemory"

`register_memory(name, factory)` does the same at run time.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.errors import UnknownMemoryError
from helper_agent.memory.settings import get_memory_settings
from helper_agent.memory.store import EMBEDDING_CACHE_FILE, VectorStore, open_store

ENTRY_POINT_GROUP = "helper_agent.memories"

BUILTIN_MEMORIES: dict[str, str] = {
    "examples": "helper_agent.memory.examples:ExampleMemory",
    "corrections": "helper_agent.memory.corrections:CorrectionMemory",
    "routines": "helper_agent.memory.routines:RoutineMemory",
    "experience": "helper_agent.memory.experience:ExperienceMemory",
    "scene_graph": "helper_agent.memory.scene_graph:SceneGraphMemory",
    "fewshot": "helper_agent.memory.fewshot:FewShotMemory",
}

log = logging.getLogger(__name__)

_REGISTERED: dict[str, Callable[..., Any]] = {}
_LOCK = threading.Lock()


def register_memory(name: str, factory: Callable[..., Any], *, replace: bool = False) -> None:
    """Make `create_memory(name, ...)` call `factory(...)`."""
    with _LOCK:
        if not replace and (name in _REGISTERED or name in BUILTIN_MEMORIES):
            raise ValueError(f"a memory named {name!r} is already registered (pass replace=True)")
        _REGISTERED[name] = factory


def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_memories() -> list[str]:
    """Every name `create_memory` accepts: built-ins, run-time registrations, entry points."""
    names = set(BUILTIN_MEMORIES) | set(_REGISTERED)
    try:
        names |= set(_entry_points())
    except Exception as exc:  # noqa: BLE001 - a broken distribution must not hide the built-ins
        log.warning("cannot read entry points of group %s: %s", ENTRY_POINT_GROUP, exc)
    return sorted(names)


def memory_factory(name: str) -> Callable[..., Any]:
    """The class or factory registered under `name`."""
    with _LOCK:
        if name in _REGISTERED:
            return _REGISTERED[name]
    if name in BUILTIN_MEMORIES:
        module, _, attr = BUILTIN_MEMORIES[name].partition(":")
        return getattr(importlib.import_module(module), attr)
    eps = _entry_points()
    if name in eps:
        try:
            return eps[name].load()
        except Exception as exc:
            raise UnknownMemoryError(
                f"memory plugin {name!r} (entry point {eps[name].value!r} in group {ENTRY_POINT_GROUP!r}) "
                f"failed to load: {exc}"
            ) from exc
    raise UnknownMemoryError(f"no memory named {name!r}; available: {', '.join(available_memories())}")


def create_memory(name: str, **config: Any) -> Any:
    """Build the memory `name` from keyword configuration.

    Besides each memory's own arguments, these are understood for every memory:
    `store` (a VectorStore), `path` / `memory_dir` (an embedded store folder), `host`/`port`
    (a Chroma server), `embedder` (an Embedder) or `embeddings` (a spec such as "hash:256"),
    `settings` (MemorySettings), `collection` (collection name).
    """
    factory = memory_factory(name)
    settings = config.get("settings") or get_memory_settings()
    if "memory_dir" in config:
        config["path"] = config.pop("memory_dir")
    host = config.pop("host", None)
    port = config.pop("port", None)
    if host and "store" not in config:
        config["store"] = VectorStore(host=host, port=int(port or settings.chroma_port))
    if "path" in config and "store" not in config:
        config["store"] = open_store(config.pop("path"), settings=settings)
    spec = config.pop("embeddings", None)
    if spec and "embedder" not in config:
        store = config.get("store")
        cache = None
        if settings.embedding_cache and store is not None and getattr(store, "path", None) is not None:
            cache = store.path / EMBEDDING_CACHE_FILE
        config["embedder"] = get_embedder(spec, cache_path=cache, settings=settings)
    return factory(**config)
