"""Settings, in one place, read from the environment with the `HELPER_` prefix (or a `.env` file).

Every component takes explicit arguments; these settings only provide the defaults the CLI passes.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """helper-agent's settings. Each field can be set as `HELPER_<FIELD>` in the environment."""

    model_config = SettingsConfigDict(env_prefix="HELPER_", env_file=".env", extra="ignore")

    home: Path = Field(default=Path(".helper"), description="Folder for memories, checkpoints and outputs.")
    llm: str = Field(default="local", description="Chat model spec: local, local:1.5b, openai:gpt-4o, or a base URL.")
    temperature: float = 0.0
    llm_timeout: float = Field(default=120.0, gt=0, description="Seconds one request to an LLM server may take.")
    llm_retries: int = Field(
        default=2, ge=0, description="Retries of an LLM call after a timeout, connection error, 429 or 5xx."
    )
    llm_budget_seconds: float | None = Field(
        default=None, gt=0, description="LLM seconds one evaluation episode may use (unset: no limit)."
    )
    max_steps: int = Field(default=1000, description="TEACh's step limit per episode.")
    max_failures: int = Field(default=30, description="TEACh's failed-action limit per episode.")
    chroma_host: str | None = Field(default=None, description="Chroma server host; embedded store when unset.")
    chroma_port: int = 8000
    seed: int = 0

    @property
    def memory_dir(self) -> Path:
        return self.home / "memory"

    @property
    def checkpoint_path(self) -> Path:
        return self.home / "checkpoints.sqlite"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
