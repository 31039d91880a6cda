"""One settings source: `.env` reaches the memory layer (it once read only the environment)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from helper_agent.config import Settings, get_settings
from helper_agent.memory.errors import StoreUnavailableError
from helper_agent.memory.routines import RoutineMemory
from helper_agent.memory.settings import MemorySettings, get_memory_settings


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A working directory for `.env`, no HELPER_* variables, and fresh process-wide settings."""
    import os

    for name in list(os.environ):
        if name.startswith("HELPER_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def test_memory_settings_are_the_project_settings() -> None:
    assert MemorySettings is Settings and get_memory_settings is get_settings


@pytest.mark.parametrize(
    ("dotenv", "environ", "expected"),
    [
        ("HELPER_CHROMA_HOST=memory.example\nHELPER_CHROMA_PORT=9100\n", {}, ("memory.example", 9100)),
        ("HELPER_CHROMA_HOST=memory.example\n", {"HELPER_CHROMA_HOST": "env.example"}, ("env.example", 8000)),
        ("", {"HELPER_CHROMA_PORT": "9200"}, (None, 9200)),
        ("# comment\nHELPER_ROUTINE_IMPORT_BATCH=7\n", {}, (None, 8000)),
    ],
)
def test_dotenv_and_environment_reach_memory_settings(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, dotenv: str, environ: dict[str, str], expected: tuple
) -> None:
    (workdir / ".env").write_text(dotenv)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    settings = get_memory_settings()
    assert (settings.chroma_host, settings.chroma_port) == expected
    assert MemorySettings().chroma_host == expected[0]
    if "IMPORT_BATCH" in dotenv:
        assert settings.routine_import_batch == 7


def test_dotenv_chroma_host_reaches_the_routine_store(workdir: Path) -> None:
    """The bug this fixes: HELPER_CHROMA_HOST in .env silently left routines in the local folder."""
    port = closed_port()
    (workdir / ".env").write_text(f"HELPER_CHROMA_HOST=127.0.0.1\nHELPER_CHROMA_PORT={port}\nHELPER_EMBEDDINGS=hash:16\n")
    with pytest.raises(StoreUnavailableError) as err:
        RoutineMemory()
    message = str(err.value)
    assert f"http://127.0.0.1:{port}" in message
    assert "HELPER_CHROMA_HOST" in message and "HELPER_CHROMA_PORT" in message
    assert not (workdir / ".helper").exists()  # nothing was written to a local store


def test_memory_dir_follows_home_from_dotenv(workdir: Path) -> None:
    (workdir / ".env").write_text("HELPER_HOME=elsewhere\n")
    assert get_memory_settings().memory_dir == Path("elsewhere") / "memory"


def test_routines_default_user_comes_from_dotenv(workdir: Path) -> None:
    from helper_agent.commands.routines import _default_user

    (workdir / ".env").write_text("HELPER_USER=mary\n")
    assert _default_user() == "mary"
