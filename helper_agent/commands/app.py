"""`helper app`: the household assistant in a browser (chat, the home, routines, the trace).

The same graph, checkpointer and memories as `helper chat` (`helper_agent.chat_runtime`): a session
started here continues at the terminal with `helper chat --user U --thread ID`, and back.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from helper_agent.chat_runtime import ChatRuntime, UnknownUser, check_user
from helper_agent.commands.errors import CommandInputError
from helper_agent.llm import make_chat_model

console = Console()


def parse_logins(auth: str | None) -> list[tuple[str, str]]:
    """`USER:PASSWORD[,USER:PASSWORD...]` as Gradio's `auth` list; each USER must be a user name the
    app accepts, since a login opens only that user's sessions."""
    logins = []
    for item in (auth or "").split(","):
        if not item.strip():
            continue
        user, sep, password = item.strip().partition(":")
        try:
            user = check_user(user)
        except UnknownUser as exc:
            raise CommandInputError(f"--auth (HELPER_APP_AUTH): {exc}") from None
        if not sep or not password:
            raise CommandInputError(f"--auth (HELPER_APP_AUTH): login {user!r} has no password (USER:PASSWORD)")
        logins.append((user, password))
    return logins
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
UPLOAD_SIZE = re.compile(r"^[1-9][0-9]{0,9}\s*(b|kb|mb|gb)$")


def app(
    host: str = typer.Option("127.0.0.1", help="Address to listen on; anything but localhost exposes the app."),
    port: int = typer.Option(7860, min=1, max=65535, help="Port to listen on."),
    llm: str = typer.Option("local", envvar="HELPER_LLM", help="Chat model spec (local, local:1.5b, openai:gpt-4o, or a base URL)."),
    home: Path | None = typer.Option(None, help="Folder for checkpoints and memory (default: HELPER_HOME or .helper)."),
    auth: str | None = typer.Option(
        None, envvar="HELPER_APP_AUTH", show_default=False,
        help="Logins, USER:PASSWORD[,USER:PASSWORD...] (better in HELPER_APP_AUTH than on the command line); "
             "required when --host is not loopback. With logins, each person opens only their own user's sessions."),
    max_upload: str = typer.Option("5mb", help="Largest file the page accepts (an instance, a routines file): 5mb, 500kb."),
) -> None:
    """Start the web app: chat with the HELPER graph, watch the home, manage routines, read traces."""
    logins = parse_logins(auth)
    if not UPLOAD_SIZE.match(max_upload.strip().lower()):
        raise CommandInputError(f"--max-upload {max_upload!r}: a size such as 5mb, 500kb or 1gb")
    if host not in LOCAL_HOSTS and not logins:
        raise CommandInputError(f"--host {host}: anyone who can reach this machine could act as any user and read "
                                "their routines; give logins with HELPER_APP_AUTH=USER:PASSWORD (or --auth), or "
                                "listen on 127.0.0.1")
    # Deferred: Gradio takes longer to import than the whole rest of the CLI (measured: 75 s against 31 s
    # for `helper_agent.cli` on the loaded 2-core machine), and every other command and `helper --help` would pay it.
    from helper_agent.app.launch import launch

    runtime = ChatRuntime.open(home)
    lock = threading.Lock()
    built: dict[str, Any] = {}

    def chat_model() -> Any:
        """Built on first use, so the page opens (and says what is wrong) even when the LLM cannot load."""
        with lock:
            if "model" not in built:
                built["model"] = make_chat_model(llm)
            return built["model"]

    console.print(f"helper app: http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}  "
                  f"(home {runtime.home}, LLM {llm}; Ctrl+C stops it)", highlight=False)
    try:
        launch(runtime, chat_model, llm, host, port, logins=logins, max_upload=max_upload)
    finally:
        runtime.close()
