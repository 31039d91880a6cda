"""Settings, in one place, read from the environment with the `HELPER_` prefix (or a `.env` file).

One class for every layer, because two classes drifted: the memory layer used to read the
environment but not `.env`, so `HELPER_CHROMA_HOST` written in `.env` silently left memories in the
local folder. `helper_agent.memory.settings.MemorySettings` is this class under its old name.

Every component takes explicit arguments; these settings only provide the defaults the CLI passes.
The `.env` file is read from the working directory; real environment variables win over it.

Limits (`max_*`) bound the work one input can cause: beyond a limit the input is refused with an
error that names the file, the field and the setting, never processed for minutes.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SETTINGS_CONFIG = SettingsConfigDict(env_prefix="HELPER_", env_file=".env", extra="ignore")
"""How settings are read: `HELPER_<FIELD>` from the environment, then from `./.env`."""

DEFAULT_MAX_SCENE_OBJECTS = 2000
"""AI2-THOR and TEACh scenes hold about 50-300 objects; 2000 leaves room for bigger houses."""

DEFAULT_MAX_GRID_CELLS = 250_000
"""0.25 m cells: 250,000 cells is a 125 m x 125 m floor, far above any AI2-THOR house."""

DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024
"""TEACh's largest game files are a few MB; a JSON input above 64 MiB is refused before parsing."""


class Settings(BaseSettings):
    """helper-agent's settings. Each field can be set as `HELPER_<FIELD>` in the environment or `.env`."""

    model_config = SETTINGS_CONFIG

    # ------------------------------------------------------------------------------ everything
    home: Path = Field(default=Path(".helper"), description="Folder for memories, checkpoints and outputs.")
    llm: str = Field(default="local", description="Chat model spec: local, local:1.5b, openai:gpt-4o, or a base URL.")
    llm_grammar: str = Field(default="none", description="Grammar field an OpenAI-compatible server reads: none, llama.cpp (grammar) or vllm (guided_grammar).")
    temperature: float = 0.0
    llm_timeout: float = Field(default=120.0, gt=0, description="Seconds one request to an LLM server may take.")
    llm_stream: bool = Field(
        default=False,
        description="Stream replies from an OpenAI-compatible server, so a request past HELPER_LLM_TIMEOUT is cancelled "
                    "on the server too (its connection is closed; llama_cpp.server stops at the next token) instead of "
                    "running on while the retry waits behind it.",
    )
    llm_retries: int = Field(
        default=2, ge=0, description="Retries of an LLM call after a timeout, connection error, 429 or 5xx."
    )
    llm_prefix_cache: bool = Field(
        default=True,
        description="The local model serves the prompt prefix it shares with its previous call from its KV cache; "
                    "false evaluates every prompt token, as a server without prefix caching does (to time that case).",
    )
    llm_budget_seconds: float | None = Field(
        default=None, gt=0, description="LLM seconds one evaluation episode may use (unset: no limit)."
    )
    max_steps: int = Field(default=1000, description="TEACh's step limit per episode.")
    max_failures: int = Field(default=30, description="TEACh's failed-action limit per episode.")
    seed: int = 0
    user: str | None = Field(default=None, description="Default --user of `helper routines` (else the login name).")
    debug: bool = Field(default=False, description="Show the traceback of errors the CLI reports in one line.")

    # ------------------------------------------------------------------------ input limits
    max_scene_objects: int = Field(
        default=DEFAULT_MAX_SCENE_OBJECTS, ge=1, description="Objects one scene (state file, game) may hold."
    )
    max_grid_cells: int = Field(
        default=DEFAULT_MAX_GRID_CELLS, ge=1, description="Floor cells (0.25 m) one scene's grid may span."
    )
    max_input_bytes: int = Field(
        default=DEFAULT_MAX_INPUT_BYTES, ge=1, description="Size of one JSON input file (game, instance, state)."
    )

    # ------------------------------------------------------------------------------- memory
    memory_dir: Path | None = Field(
        default=None,  # always a Path after validation: filled in from `home` below
        description="Folder of the embedded Chroma store (default: $HELPER_HOME/memory).",
    )
    chroma_host: str | None = Field(default=None, description="Chroma server host; embedded store when unset.")
    chroma_port: int = Field(default=8000, ge=1, le=65535, description="Chroma server port.")
    chroma_ssl: bool = Field(default=False, description="Use https for the Chroma server.")
    chroma_connect_timeout: float = Field(
        default=5.0, gt=0, description="Seconds to wait for the Chroma server to accept a connection."
    )

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
    routine_import_batch: int = Field(
        default=200, ge=1, le=5000, description="Routine versions committed per batch by an import."
    )

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
    def _resolve_memory_dir(self) -> Settings:
        if self.memory_dir is None:
            self.memory_dir = self.home / "memory"
        self.memory_dir = Path(self.memory_dir).expanduser()
        return self

    @property
    def checkpoint_path(self) -> Path:
        return self.home / "checkpoints.sqlite"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment and `.env`."""
    return Settings()
