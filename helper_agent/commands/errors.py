"""The CLI's error boundary: a known failure is one line on stderr and a non-zero exit status.

A person who passes a bad file, a bad setting or a server that is down needs to read what to fix
(the file and the field, or the server and the setting), not forty frames of a traceback. So every
command group of `helper` is a `GuardedGroup`: an exception the project knows as an input or
environment failure is printed as `error: <message>` on one line, and the process exits with

- 2 for bad input: a file, a field, a setting (the user fixes the input);
- 1 for a failure to do the work: a memory store or server, a missing model, a rejected program.

Anything else is a bug and keeps its traceback. `helper --debug ...` or `HELPER_DEBUG=1` shows the
traceback of known failures too.

Known failures are matched by the qualified names of the exception's classes, so this module imports
none of the layers (`helper --help` stays fast, and the table is the list of what is caught).
"""

from __future__ import annotations

import os
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup
from typer.exceptions import TyperException

from helper_agent.config import Settings

PASS_THROUGH = (typer.Exit, typer.Abort, TyperException)
"""Exceptions that already are the CLI's answer (an exit status, a usage error): not ours to handle."""

INPUT_ERROR = 2
"""Exit status for bad input (a file, a field, a setting)."""

FAILURE = 1
"""Exit status for work that could not be done (a store, a server, a model, a rejected program)."""

DEBUG_KEY = "helper_debug"
"""Where the root callback records `--debug` in the click context's shared `meta`."""

# qualified class name -> exit status; a subclass matches through its MRO
KNOWN: dict[str, int] = {
    "helper_agent.commands.errors.CommandInputError": INPUT_ERROR,
    "helper_agent.config.SettingsError": INPUT_ERROR,
    "helper_agent.files.FileFormatError": INPUT_ERROR,
    "helper_agent.files.FileWriteError": FAILURE,
    "helper_agent.teach.errors.TeachError": INPUT_ERROR,
    "helper_agent.world.errors.WorldError": INPUT_ERROR,
    "helper_agent.world.catalog.CatalogError": INPUT_ERROR,
    "helper_agent.world.catalog.UnknownObjectType": INPUT_ERROR,
    "helper_agent.evals.studies.personalization.PersonalizationDataError": INPUT_ERROR,
    "helper_agent.memory.errors.MemoryStoreError": FAILURE,
    "helper_agent.llm.errors.LLMUnavailable": FAILURE,
    "helper_agent.envs.thor.EnvironmentUnavailable": FAILURE,
    "helper_agent.evals.engine.executors.ExecutorUnavailable": FAILURE,
    "helper_agent.perception.align.DiagnoserUnavailable": FAILURE,
    "helper_agent.world.generator.SceneGenerationError": FAILURE,
    "helper_agent.program.errors.ProgramError": FAILURE,
    "openai.OpenAIError": FAILURE,  # e.g. no OPENAI_API_KEY for --llm openai:MODEL
}

# What to add after the message, for failures whose own message does not say which setting to change.
HINTS: dict[str, str] = {
    "helper_agent.llm.errors.LLMUnavailable": "choose another model with --llm or HELPER_LLM",
    "openai.OpenAIError": "set OPENAI_API_KEY, or choose another model with --llm or HELPER_LLM",
}

SETTINGS_MODELS = frozenset({"Settings", "MemorySettings"})
"""Titles of pydantic validation errors that come from the `HELPER_*` settings."""


class CommandInputError(ValueError):
    """Bad input a command found itself (an unreadable file, a wrong option value): one line, exit 2."""


def _qualified_names(exc: BaseException) -> list[str]:
    return [f"{cls.__module__}.{cls.__qualname__}" for cls in type(exc).__mro__]


def one_line(text: str) -> str:
    """Collapse a message to one line: the layers' messages are one line, foreign ones may not be."""
    return "; ".join(part.strip() for part in text.strip().splitlines() if part.strip())


def _settings_message(exc: Any) -> str:
    """`HELPER_CHROMA_PORT='abc': input should be a valid integer` from a settings ValidationError."""
    first = exc.errors()[0]
    loc = [str(p) for p in first.get("loc", ())]
    name = f"HELPER_{loc[0].upper()}" if loc else "a HELPER_ setting"
    value = first.get("input")
    shown = f"={value!r}" if isinstance(value, str | int | float) else ""
    msg = str(first.get("msg", "invalid value"))
    more = exc.error_count() - 1
    return (
        f"setting {name}{shown} (environment or .env): {msg[:1].lower()}{msg[1:]}"
        + (f" (and {more} more)" if more > 0 else "")
    )


def describe(exc: BaseException) -> tuple[str, int] | None:
    """The one-line message and exit status for a known failure; None for a bug (keep its traceback)."""
    names = _qualified_names(exc)
    for name in names:
        if name in KNOWN:
            message = one_line(str(exc)) or type(exc).__name__
            hint = next((HINTS[n] for n in names if n in HINTS), None)
            if hint and hint not in message:
                message = f"{message} ({hint})"
            return message, KNOWN[name]
    if "pydantic_core._pydantic_core.ValidationError" in names and getattr(exc, "title", "") in SETTINGS_MODELS:
        return _settings_message(exc), INPUT_ERROR
    if isinstance(exc, OSError) and exc.filename is not None and not isinstance(exc, ConnectionError):
        return f"{exc.filename}: {exc.strerror or type(exc).__name__}", INPUT_ERROR
    return None


def debug_enabled(ctx: typer.Context | None) -> bool:
    """`--debug` on the root command, or `HELPER_DEBUG` true in the environment or `.env`."""
    if ctx is not None and ctx.meta.get(DEBUG_KEY):
        return True
    if os.environ.get("HELPER_DEBUG", "").strip().lower() in {"1", "true", "yes", "on"}:
        return True
    try:
        return Settings().debug
    except Exception:  # noqa: BLE001 - a bad setting is being reported; it must not hide the error
        return False


def report(message: str) -> None:
    """Print `error: <message>` on stderr as a single line (never wrapped to the terminal's width)."""
    typer.echo(typer.style("error:", fg="red") + " " + message, err=True)


def fail(message: str, status: int = INPUT_ERROR) -> NoReturn:
    """Report `message` as one `error:` line on stderr and exit with `status` (2: bad input).

    Commands used to print their errors with Rich on stdout, which wraps a long line over two to
    four lines when the output is a pipe; this is the one way a command reports an error itself."""
    report(one_line(message))
    raise typer.Exit(status)


class GuardedGroup(TyperGroup):
    """A command group whose sub-commands report known failures in one line (see the module doc)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except PASS_THROUGH:
            raise
        except Exception as exc:
            known = describe(exc)
            if known is None or debug_enabled(ctx):
                raise
            message, status = known
            report(message)
            raise typer.Exit(status) from None
