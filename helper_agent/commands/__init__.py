"""Typer sub-applications of the `helper` command, one module per command group.

Each module exposes `app: typer.Typer`; `helper_agent.cli` mounts them. The helpers they share
live here.
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.syntax import Syntax

from helper_agent import llm
from helper_agent.commands.errors import fail


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


def load_chat_model(spec: str, *, max_tokens: int | None = None, n_ctx: int | None = None) -> Any:
    """The chat model `--llm SPEC` names, or `error: cannot load the chat model: <why>` and exit 2.

    The one way a command makes its model from `--llm`, so every command reports a bad spec alike.
    `max_tokens` and `n_ctx` (a local model's context length) default to the factory's. The factory
    is looked up on `helper_agent.llm` at call time: a test's scripted model reaches every command."""
    options = {name: value for name, value in (("max_tokens", max_tokens), ("n_ctx", n_ctx)) if value is not None}
    try:
        return llm.make_chat_model(spec, **options)
    except llm.LLMUnavailable as exc:
        fail(f"cannot load the chat model: {exc}")


def check_chat_model(spec: str) -> None:
    """`error: cannot load the chat model: <why>` and exit 2 when `--llm SPEC` names no model, before
    an evaluation's episodes start (they make their models in workers: `runner.check_chat_model`)."""
    # Deferred: the run engine is heavy to import, and only the evaluation commands need it.
    from helper_agent.evals.engine.runner import check_chat_model as check

    try:
        check(spec)
    except llm.LLMUnavailable as exc:
        fail(f"cannot load the chat model: {exc}")
