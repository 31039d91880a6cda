"""Prompt templates and seed examples, kept as data files in this package."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load_template(name: str) -> str:
    """The text of `templates/<name>` (e.g. "locator.txt")."""
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")
