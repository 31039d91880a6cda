"""A Chroma server that is down, or goes down mid-run, is one error naming the server and the settings."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helper_agent.memory.embeddings import HashEmbedder
from helper_agent.memory.errors import StoreUnavailableError
from helper_agent.memory.routines import RoutineMemory
from helper_agent.memory.settings import MemorySettings
from helper_agent.memory.store import VectorStore

CHROMA = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("127.0.0.1", "Connection refused"),
        ("no-such-host.invalid", ""),  # the resolver's wording varies
    ],
)
def test_server_down_is_one_line_naming_host_port_and_settings(host: str, reason: str) -> None:
    port = free_port()
    settings = MemorySettings(chroma_host=host, chroma_port=port, chroma_connect_timeout=2)
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as err:
        VectorStore(host=host, port=port, settings=settings)
    message = str(err.value)
    assert message.startswith(f"Chroma server http://{host}:{port} is unreachable (")
    assert reason in message and "\n" not in message
    assert f"HELPER_CHROMA_HOST={host}" in message and f"HELPER_CHROMA_PORT={port}" in message
    assert time.monotonic() - started < 10


def test_a_listener_that_is_not_chroma_is_refused(tmp_path: Path) -> None:
    """Something answers on the port, but not Chroma's API (here: a plain HTTP file server)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(port)
        with pytest.raises(StoreUnavailableError, match=r"it answered, but not as a Chroma server"):
            VectorStore(host="127.0.0.1", port=port)
    finally:
        proc.kill()
        proc.wait(timeout=30)


def _wait_for(port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on port {port}")


@pytest.mark.skipif(not Path(CHROMA).exists(), reason="the chroma CLI is not installed")
def test_server_that_goes_down_mid_run(tmp_path: Path) -> None:
    port = free_port()
    server = subprocess.Popen(
        [CHROMA, "run", "--path", str(tmp_path / "data"), "--port", str(port), "--host", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(port)
        store = VectorStore(host="127.0.0.1", port=port)
        memory = RoutineMemory(store=store, embedder=HashEmbedder(16))
        memory.teach("the Mary cleaning", "# wash\ndo_nothing()\n", "wash the plates", user="mary")
        assert memory.recall("the Mary cleaning", user="mary")[0].record.name == "the Mary cleaning"
        assert store.kind == "http" and memory.users() == ["mary"]
    finally:
        server.kill()
        server.wait(timeout=30)
    for call in (lambda: memory.recall("the Mary cleaning", user="mary"), lambda: memory.teach("x", "# x\ndo_nothing()\n", user="mary")):
        with pytest.raises(StoreUnavailableError, match=rf"Chroma server http://127.0.0.1:{port} is unreachable"):
            call()
