"""Typer sub-applications of the `helper` command, one module per command group.

Each module exposes `app: typer.Typer`; `helper_agent.cli` mounts them.
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.syntax import Syntax


def table_console(piped_width: int) -> Console:
    """A console for commands that print wide tables: the terminal's width, or `piped_width`
    when output goes to a file or pipe (Rich's 80-column default there squeezes the tables)."""
    return Console(width=None if sys.stdout.isatty() else piped_width)


def program_syntax(program: str) -> Syntax:
    """A program with line numbers that match the planner's notes ("line 6: object class ...").

    A validated program keeps the line positions of the model's reply (the fence and prose become
    blank lines), so its leading blank lines are not shown but counted: the first shown line is
    numbered as it was written. Stripping them shifted every number the notes cite."""
    body = program.lstrip("\n")
    return Syntax(body.rstrip("\n"), "python", theme="ansi_dark", line_numbers=True,
                  start_line=len(program) - len(body) + 1)
