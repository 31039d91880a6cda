"""`helper routines`: a user's taught routines (add, list, show, remove, export, import).

Routines live in the memory store (`HELPER_MEMORY_DIR`, default `./.helper/memory`, or the Chroma
server named by `HELPER_CHROMA_HOST`). `--user` defaults to `$HELPER_USER`, then the login name.

Failures (a bad file, a store or server that cannot be used) are reported in one line by the CLI's
error boundary (`helper_agent.commands.errors`). `import` shows a progress bar and commits in
batches of `HELPER_ROUTINE_IMPORT_BATCH` versions, so a killed import loses at most one batch and
running it again completes it.
"""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.syntax import Syntax
from rich.table import Table

from helper_agent.commands.errors import CommandInputError, GuardedGroup, report
from helper_agent.commands.program import read_program_text
from helper_agent.config import Settings
from helper_agent.memory.routines import RoutineMemory
from helper_agent.program import compile_program

app = typer.Typer(no_args_is_help=True, cls=GuardedGroup)
console = Console()


def _default_user() -> str:
    try:
        return Settings().user or getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        return "default"


def _resolve_user(user: str | None) -> str:
    """`--user`, else `$HELPER_USER`, else the login name; a name of spaces only is refused (it once
    reached the memory layer and ended in a traceback)."""
    if user is None:
        return _default_user()
    if not user.strip():
        raise CommandInputError(f"--user {user!r}: a user name needs a visible character")
    return user


User = Annotated[
    str | None, typer.Option("--user", "-u", help="Whose routines (default: $HELPER_USER or the login name).")
]
MemoryDir = Annotated[
    Path | None,
    typer.Option("--memory-dir", help="Memory folder (default: $HELPER_MEMORY_DIR or ./.helper/memory)."),
]


def _memory(memory_dir: Path | None) -> Any:
    """The routine memory (imported here so that `--help` stays fast)."""
    settings = Settings()  # read the environment and .env now, not at first import
    if memory_dir is not None:
        return RoutineMemory(path=memory_dir, settings=settings, program_check=_check_program)
    return RoutineMemory(settings=settings, program_check=_check_program)


def _check_program(text: str) -> None:
    """What `helper program check` runs: a routine the agent could not run is not stored."""
    compile_program(text)


def _fail(message: str) -> None:
    report(message)
    raise typer.Exit(1)


@app.command()
def add(
    name: Annotated[str, typer.Argument(help='The routine\'s name, e.g. "the Mary cleaning".')],
    program: Annotated[str | None, typer.Option("--program", "-p", help="Program text.")] = None,
    program_file: Annotated[
        Path | None, typer.Option("--program-file", "-f", help="Read the program from a file ('-': stdin).")
    ] = None,
    request: Annotated[str, typer.Option("--request", "-r", help="The request that taught it.")] = "",
    confirmed: Annotated[bool, typer.Option("--confirmed", help="Mark it as a confirmed success.")] = False,
    user: User = None,
    memory_dir: MemoryDir = None,
) -> None:
    """Teach a routine (a new version when the name exists)."""
    if (program is None) == (program_file is None):
        raise CommandInputError("give the program with exactly one of --program or --program-file")
    if program_file is not None:
        program = read_program_text(str(program_file))
    user = _resolve_user(user)
    memory = _memory(memory_dir)
    source = "confirmed_success" if confirmed else "taught"
    routine = memory.teach(name, program or "", request, user=user, source=source)
    console.print(
        f"stored [bold]{routine.name}[/bold] v{routine.version} for {routine.user}", highlight=False
    )


@app.command("list")
def list_(user: User = None, memory_dir: MemoryDir = None) -> None:
    """List the user's routines (latest version of each)."""
    user = _resolve_user(user)
    memory = _memory(memory_dir)
    all_versions = memory.list(user=user)
    if not all_versions:
        console.print(f"no routines for {user}", highlight=False)
        return
    counts: dict[str, int] = {}
    for r in all_versions:
        counts[r.key] = counts.get(r.key, 0) + 1
    table = Table(title=f"routines of {user}")
    table.add_column("name")
    table.add_column("version", justify="right")
    table.add_column("versions", justify="right")
    table.add_column("source")
    table.add_column("updated")
    table.add_column("request")
    for r in memory.routines(user=user):
        request = r.request if len(r.request) <= 60 else r.request[:57] + "..."
        table.add_row(r.name, str(r.version), str(counts[r.key]), r.source, r.created_at[:19], request)
    console.print(table)


@app.command()
def show(
    name: Annotated[str, typer.Argument(help="The name, or a request such as 'do the Mary cleaning'.")],
    version: Annotated[
        int | None, typer.Option("--version", "-v", help="Show this version (default: latest).")
    ] = None,
    history: Annotated[bool, typer.Option("--history", help="List every version.")] = False,
    min_score: Annotated[
        float | None, typer.Option(help="Minimum similarity when recalling by paraphrase.")
    ] = None,
    user: User = None,
    memory_dir: MemoryDir = None,
) -> None:
    """Show a routine by name, or recall it by paraphrase (with its similarity score)."""
    user = _resolve_user(user)
    memory = _memory(memory_dir)
    versions = memory.versions(name, user=user)
    score = None
    if not versions:
        hits = memory.recall(name, user=user, k=1, min_score=min_score)
        if not hits:
            _fail(f"no routine of {user} matches {name!r}")
        score = hits[0].score
        versions = memory.versions(hits[0].record.name, user=user)
    if history:
        table = Table(title=f"{versions[-1].name} ({user})")
        for col in ("version", "source", "created", "request"):
            table.add_column(col)
        for r in versions:
            table.add_row(str(r.version), r.source, r.created_at[:19], r.request)
        console.print(table)
        return
    chosen = versions[-1]
    if version is not None:
        matching = [r for r in versions if r.version == version]
        if not matching:
            _fail(
                f"{chosen.name!r} has no version {version} (versions: {', '.join(str(r.version) for r in versions)})"
            )
        chosen = matching[0]
    header = f"[bold]{chosen.name}[/bold] v{chosen.version} of {len(versions)} ({chosen.source}, {chosen.created_at[:19]})"
    if score is not None:
        header += f"  recalled from {name!r} with score {score:.3f}"
    console.print(header, highlight=False)
    if chosen.request:
        console.print(f"request: {chosen.request}", highlight=False)
    console.print(Syntax(chosen.program, "python", theme="ansi_dark", word_wrap=True))


@app.command()
def remove(
    name: Annotated[str, typer.Argument(help="The routine's exact name.")],
    version: Annotated[int | None, typer.Option("--version", "-v", help="Remove only this version.")] = None,
    user: User = None,
    memory_dir: MemoryDir = None,
) -> None:
    """Remove a routine (every version, or one with --version)."""
    user = _resolve_user(user)
    memory = _memory(memory_dir)
    n = memory.remove(name, user=user, version=version)
    if n == 0:
        _fail(f"no routine {name!r}" + (f" v{version}" if version is not None else "") + f" for {user}")
    console.print(f"removed {n} version(s) of {name!r} for {user}", highlight=False)


@app.command("export")
def export_(
    path: Annotated[Path, typer.Argument(help="JSON Lines file to write.")],
    user: User = None,
    memory_dir: MemoryDir = None,
) -> None:
    """Write every version of the user's routines to a JSON Lines file."""
    user = _resolve_user(user)
    n = _memory(memory_dir).export_jsonl(path, user=user)
    console.print(f"exported {n} routine version(s) of {user} to {path}", highlight=False)


@app.command("import")
def import_(
    path: Annotated[Path, typer.Argument(help="JSON Lines file written by `helper routines export`.")],
    user: User = None,
    memory_dir: MemoryDir = None,
    batch: Annotated[
        int | None,
        typer.Option("--batch", min=1, help="Versions committed at once (default: $HELPER_ROUTINE_IMPORT_BATCH)."),
    ] = None,
) -> None:
    """Add the routines of a JSON Lines file as the user's (existing versions are kept).

    The file is validated first; then batches are committed one by one with a progress bar. A
    killed import loses at most the batch in flight: run it again to add what is missing.
    """
    user = _resolve_user(user)
    memory = _memory(memory_dir)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(f"importing {path.name}", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        n = memory.import_jsonl(path, user=user, batch_size=batch, progress=progress)
    console.print(f"imported {n} routine version(s) for {user} from {path}", highlight=False)
