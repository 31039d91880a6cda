"""The API section of the planner's prompts, kept as a data file (`helper_agent/prompts/api.md`)."""

from __future__ import annotations

import functools
from importlib import resources

_PACKAGE = "helper_agent.prompts"
_RESOURCE = "api.md"


@functools.lru_cache(maxsize=1)
def api_documentation() -> str:
    """The text that describes the action API to the LLM (read once per process)."""
    return resources.files(_PACKAGE).joinpath(_RESOURCE).read_text(encoding="utf-8").strip() + "\n"
