"""Memory plugins over one vector-store layer (Chroma) and one embedding layer.

    from helper_agent.memory import create_memory
    examples = create_memory("examples")            # HELPER language-program examples (k = 3)
    corrections = create_memory("corrections")      # HELPER correction examples
    routines = create_memory("routines")            # per-user, versioned personal routines
    experience = create_memory("experience")        # P-RAG experience database
    scene = create_memory("scene_graph", graph_id="episode-17")  # EmbodiedRAG scene graph
    fewshot = create_memory("fewshot")              # LLM-Planner kNN pool (k = 9)

Layers: `settings` (HELPER_* environment), `embeddings` (all-MiniLM-L6-v2 offline by default),
`store` (Chroma: embedded folder, server, or ephemeral), `base` (the `MemoryPlugin` protocol, `Hit`,
JSON Lines export/import), `registry` (names and the `helper_agent.memories` entry points).
Submodules are imported on first use so that `import helper_agent.memory` stays light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "MemorySettings": "settings",
    "get_memory_settings": "settings",
    "SCHEMA_VERSION": "settings",
    "MemoryStoreError": "errors",
    "InvalidRecordError": "errors",
    "ImportFormatError": "errors",
    "IncompatibleStoreError": "errors",
    "StoreUnavailableError": "errors",
    "EmbeddingMismatchError": "errors",
    "UnknownMemoryError": "errors",
    "Embedder": "embeddings",
    "LocalEmbedder": "embeddings",
    "OpenAIEmbedder": "embeddings",
    "HashEmbedder": "embeddings",
    "ChromaEmbeddingFunction": "embeddings",
    "get_embedder": "embeddings",
    "make_embedder": "embeddings",
    "VectorStore": "store",
    "VectorCollection": "store",
    "open_store": "store",
    "Entry": "store",
    "ScoredEntry": "store",
    "MemoryPlugin": "base",
    "BaseMemory": "base",
    "MemoryRecord": "base",
    "Hit": "base",
    "create_memory": "registry",
    "register_memory": "registry",
    "available_memories": "registry",
    "ExampleMemory": "examples",
    "ProgramExample": "examples",
    "load_seed_examples": "examples",
    "CorrectionMemory": "corrections",
    "CorrectionExample": "corrections",
    "correction_query": "corrections",
    "load_seed_corrections": "corrections",
    "RoutineMemory": "routines",
    "Routine": "routines",
    "ExperienceMemory": "experience",
    "Experience": "experience",
    "ExperienceStep": "experience",
    "SceneGraphMemory": "scene_graph",
    "SceneEntity": "scene_graph",
    "SceneEdge": "scene_graph",
    "SubGraph": "scene_graph",
    "EntityQuery": "scene_graph",
    "FewShotMemory": "fewshot",
    "PlanExample": "fewshot",
    "load_knn_set": "fewshot",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'helper_agent.memory' has no attribute {name!r}")
    value = getattr(import_module(f"helper_agent.memory.{module}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    from helper_agent.memory.base import BaseMemory, Hit, MemoryPlugin, MemoryRecord  # noqa: F401
    from helper_agent.memory.corrections import (  # noqa: F401
        CorrectionExample,
        CorrectionMemory,
        correction_query,
        load_seed_corrections,
    )
    from helper_agent.memory.embeddings import (  # noqa: F401
        ChromaEmbeddingFunction,
        Embedder,
        HashEmbedder,
        LocalEmbedder,
        OpenAIEmbedder,
        get_embedder,
        make_embedder,
    )
    from helper_agent.memory.errors import (  # noqa: F401
        EmbeddingMismatchError,
        ImportFormatError,
        IncompatibleStoreError,
        InvalidRecordError,
        MemoryStoreError,
        StoreUnavailableError,
        UnknownMemoryError,
    )
    from helper_agent.memory.examples import ExampleMemory, ProgramExample, load_seed_examples  # noqa: F401
    from helper_agent.memory.experience import Experience, ExperienceMemory, ExperienceStep  # noqa: F401
    from helper_agent.memory.fewshot import FewShotMemory, PlanExample, load_knn_set  # noqa: F401
    from helper_agent.memory.registry import available_memories, create_memory, register_memory  # noqa: F401
    from helper_agent.memory.routines import Routine, RoutineMemory  # noqa: F401
    from helper_agent.memory.scene_graph import (  # noqa: F401
        EntityQuery,
        SceneEdge,
        SceneEntity,
        SceneGraphMemory,
        SubGraph,
    )
    from helper_agent.memory.settings import SCHEMA_VERSION, MemorySettings, get_memory_settings  # noqa: F401
    from helper_agent.memory.store import Entry, ScoredEntry, VectorCollection, VectorStore, open_store  # noqa: F401
