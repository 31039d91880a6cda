"""The `helper` command: one Typer application with a sub-command group per layer.

Every group is a `GuardedGroup` (`helper_agent.commands.errors`): a known failure (a bad file or
field, a server that is down, a missing model) is one line and a non-zero exit status; `--debug` or
`HELPER_DEBUG=1` shows its traceback. Unknown exceptions keep their traceback: they are bugs.
"""

from __future__ import annotations

import importlib

import typer

from helper_agent import __version__
from helper_agent.commands import agent, trace
from helper_agent.commands.app import app as app_command
from helper_agent.commands.errors import DEBUG_KEY, GuardedGroup
from helper_agent.commands.eval import demo
from helper_agent.config import Settings

app = typer.Typer(
    name="helper",
    help="helper-agent: instructable household agents with retrieval-augmented planning and modular memory.",
    no_args_is_help=True,
    add_completion=False,
    cls=GuardedGroup,
)


@app.callback()
def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(
        False, "--debug", envvar="HELPER_DEBUG", help="Show the traceback of errors (also HELPER_DEBUG=1)."
    ),
) -> None:
    """helper-agent: instructable household agents with retrieval-augmented planning and modular memory."""
    ctx.meta[DEBUG_KEY] = debug
    # Every HELPER_ setting (environment and .env) is validated before a command starts: a bad one
    # read later, inside each evaluation episode, once turned every episode into an error record.
    Settings()

# (module under helper_agent.commands, command group name, help). A group whose module is missing is
# simply not offered, so layers can land one at a time.
_GROUPS = (
    ("world", "world", "The embedded household world: demo episodes, scenes, pictures."),
    ("program", "program", "Check HELPER programs: parse, validate and compile to subgoals."),
    ("routines", "routines", "A user's taught routines: add, list, show, remove, export, import."),
    ("bench", "bench", "The built-in TEACh-format benchmark."),
    ("eval", "eval", "TfD/EDH evaluations."),
    ("methods", "methods", "The registered methods (built-in and plug-ins); langgraph.json from them."),
    ("models", "models", "The embedded local models: list them, make their OpenVINO folders once."),
)

for module_name, group, help_text in _GROUPS:
    try:
        module = importlib.import_module(f"helper_agent.commands.{module_name}")
    except ModuleNotFoundError as exc:  # pragma: no cover - only while a layer is absent
        if exc.name != f"helper_agent.commands.{module_name}":
            raise
        continue
    app.add_typer(module.app, name=group, help=help_text, cls=GuardedGroup)


def _agent_commands() -> None:
    app.command("run")(agent.run)
    app.command("chat")(agent.chat)
    app.command("demo")(demo)
    app.command("trace")(trace.trace)
    app.command("app")(app_command)


_agent_commands()


@app.command()
def version() -> None:
    """Print the installed version."""
    typer.echo(__version__)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
