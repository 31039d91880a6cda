"""Typer sub-applications of the `helper` command, one module per command group.

Each module exposes `app: typer.Typer`; `helper_agent.cli` mounts them.
"""

from __future__ import annotations

import sys

from rich.console import Console


def table_console(piped_width: int) -> Console:
    """A console for commands that print wide tables: the terminal's width, or `piped_width`
    when output goes to a file or pipe (Rich's 80-column default there squeezes the tables)."""
    return Console(width=None if sys.stdout.isatty() else piped_width)
