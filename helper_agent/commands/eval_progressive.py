"""`helper eval progressive`: registered on the `helper eval` app by `register`."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to `helper eval` (none yet)."""
