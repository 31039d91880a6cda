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

from collections.abc import Callable
from typing import Any

from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.errors import UnknownMemoryError
from helper_agent.memory.settings import get_memory_settings
from helper_agent.memory.store import EMBEDDING_CACHE_FILE, VectorStore, open_store
from helper_agent.plugins import Registry

ENTRY_POINT_GROUP = "helper_agent.memories"

BUILTIN_MEMORIES: dict[str, str] = {
    "examples": "helper_agent.memory.examples:ExampleMemory",
    "corrections": "helper_agent.memory.corrections:CorrectionMemory",
    "routines": "helper_agent.memory.routines:RoutineMemory",
    "experience": "helper_agent.memory.experience:ExperienceMemory",
    "scene_graph": "helper_agent.memory.scene_graph:SceneGraphMemory",
    "fewshot": "helper_agent.memory.fewshot:FewShotMemory",
}

MEMORIES: Registry[Callable[..., Any]] = Registry(
    group=ENTRY_POINT_GROUP, builtins=BUILTIN_MEMORIES, noun="memory plugin",
    unknown="no memory named {name!r}; available: {choices}", error=UnknownMemoryError, sorted_names=True)
"""The memories: run-time registrations, `BUILTIN_MEMORIES`, the entry points (`helper_agent.plugins`)."""


def register_memory(name: str, factory: Callable[..., Any], *, replace: bool = False) -> None:
    """Make `create_memory(name, ...)` call `factory(...)`."""
    MEMORIES.register(name, factory, replace=replace)


def available_memories() -> list[str]:
    """Every name `create_memory` accepts: built-ins, run-time registrations, entry points."""
    return MEMORIES.names()


def memory_factory(name: str) -> Callable[..., Any]:
    """The class or factory registered under `name`."""
    return MEMORIES.get(name)


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
