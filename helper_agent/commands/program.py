"""`helper program`: check HELPER programs (parse, validate, compile to subgoals) and show the API text.

A rejected program is the command's answer (`rejected: <reason>`, exit 1); a file that cannot be
read goes to the CLI's error boundary (`error: <file>: <why>`, exit 2).
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from helper_agent.commands.errors import CommandInputError, GuardedGroup
from helper_agent.config import Settings
from helper_agent.files import read_bounded
from helper_agent.program import ProgramError, api_documentation, compile_program

app = typer.Typer(
    help="Check HELPER programs: parse, validate and compile to subgoals.",
    no_args_is_help=True,
    add_completion=False,
    cls=GuardedGroup,
)
console = Console()


def read_program_text(file: str) -> str:
    """The program text of `file` (`-`: stdin), at most `HELPER_MAX_INPUT_BYTES` bytes: a larger input
    is refused after reading one byte past the limit, never read whole."""
    limit = Settings().max_input_bytes
    if file == "-":
        data = sys.stdin.buffer.read(limit + 1)
        if len(data) > limit:
            raise CommandInputError(f"-: standard input larger than {limit} bytes (HELPER_MAX_INPUT_BYTES)")
    else:
        if Path(file).is_dir():
            raise CommandInputError(f"{file}: is a directory, not a program file")
        data = read_bounded(file, limit, setting="HELPER_MAX_INPUT_BYTES")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandInputError(f"{file}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None


@app.command()
def check(
    file: str = typer.Argument(..., help="The program file, or - for standard input."),
    notes: bool = typer.Option(True, "--notes/--no-notes", help="Also print the compiler's notes."),
) -> None:
    """Compile a program and print its subgoals; exit 1 with the reason if it is rejected."""
    text = read_program_text(file)
    try:
        compiled = compile_program(text)
    except ProgramError as exc:
        console.print(f"[red]rejected:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    table = Table(title=f"{len(compiled.subgoals)} subgoals")
    table.add_column("#", justify="right")
    table.add_column("subgoal")
    table.add_column("object")
    table.add_column("receptacle")
    table.add_column("line", justify="right")
    table.add_column("note")
    for n, s in enumerate(compiled.subgoals, 1):
        table.add_row(
            str(n),
            s.kind.value,
            escape(f"{s.target.instance_key} ({s.target.describe()})") if s.target else "",
            escape(f"{s.receptacle.instance_key} ({s.receptacle.describe()})") if s.receptacle else "",
            str(s.line) if s.line else "-",
            escape(s.note),
        )
    console.print(table)
    if notes and compiled.notes:
        for note in compiled.notes:
            console.print(f"[dim]note:[/dim] {escape(note)}")


@app.command()
def api() -> None:
    """Print the API text that goes into the planner's prompts."""
    typer.echo(api_documentation(), nl=False)
