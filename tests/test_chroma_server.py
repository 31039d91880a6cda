"""With a Chroma server configured, every command's memory lives on it.

A real server (`chroma run`, from the chromadb package) on 127.0.0.1; `helper eval` (oracle-graph
planner on a tiny generated benchmark), `helper chat` (scripted on stdin, LangChain's fake chat
model) and `helper routines` run as the user runs them, and the records are counted through
`chromadb.HttpClient`. The settings come from the environment, or from a `.env` file in the working
directory. No local memory folder is created.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.memory.folders import server_namespace

CHROMA = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
ROOT = Path(__file__).resolve().parents[1]
COFFEE = ('mug = InteractionObject("Mug", attributes=["clean"])\nmug.clean()\ncm = InteractionObject("CoffeeMachine")\n'
          'mug.pickup_and_place(cm)\ncm.toggle_on()')

# The CLI with `make_chat_model` swapped for LangChain's fake chat model (argv[1]: its replies).
DRIVER = textwrap.dedent(
    """
    import json, sys
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    import helper_agent.llm as llm

    responses = json.loads(sys.argv[1])
    llm.make_chat_model = lambda *a, **k: FakeListChatModel(responses=responses)
    from helper_agent.cli import app
    app(sys.argv[2:], standalone_mode=True)
    """
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A Chroma server on 127.0.0.1 for this module (skipped when it cannot start)."""
    if not Path(CHROMA).exists():
        pytest.skip("the chroma CLI is not installed")
    port = free_port()
    data = tmp_path_factory.mktemp("chroma-data")
    log = open(data.parent / f"chroma-{port}.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([CHROMA, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        import chromadb

        deadline = time.monotonic() + 60
        while True:
            try:
                chromadb.HttpClient(host="127.0.0.1", port=port).heartbeat()
                break
            except Exception:  # noqa: BLE001 - not up yet
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.skip(f"the Chroma server did not start (exit {proc.poll()})")
                time.sleep(0.3)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        log.close()


def counts(port: int) -> dict[str, int]:
    """Records per collection on the server."""
    import chromadb

    client = chromadb.HttpClient(host="127.0.0.1", port=port)
    return {c.name: c.count() for c in client.list_collections()}


def helper(args: list[str], cwd: Path, env: dict[str, str], replies: list[str] | None = None,
           stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", DRIVER, json.dumps(replies or []), *args], cwd=cwd, env=env,
                          input=stdin, capture_output=True, text=True, timeout=600)


def base_env(home: Path, port: int | None = None) -> dict[str, str]:
    env = {"HELPER_HOME": str(home), "HELPER_EMBEDDINGS": "hash", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "COLUMNS": "200", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": str(ROOT)}
    if port is not None:
        env.update(HELPER_CHROMA_HOST="127.0.0.1", HELPER_CHROMA_PORT=str(port))
    return env


def user_collection(user: str, prefix: str = "") -> str:
    return f"{prefix}helper_routines__u_{hashlib.sha256(user.encode()).hexdigest()[:32]}"


def test_eval_writes_its_memory_to_the_server(server: int, tmp_path: Path) -> None:
    generate_benchmark(tmp_path / "bench", seed=5, sizes={"valid_unseen": 2})
    out = tmp_path / "run"
    result = helper(["eval", "tfd", "--data", str(tmp_path / "bench"), "--split", "valid_unseen", "--planner",
                     "oracle-graph", "--out", str(out)], tmp_path, base_env(tmp_path / "home", server))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["ended_by"] != "error" for r in records), records
    # The run's memory is its own collections on the server, not a folder under the run.
    namespace = server_namespace(str(out / "memory"))
    found = counts(server)
    examples = found.get(f"{namespace}.helper_examples", 0)
    assert examples > 0, found  # seeded with the shipped examples, retrieved from for each episode
    assert not (out / "memory").exists() and not (tmp_path / "home" / "memory").exists()


def test_train_memory_seeding_goes_to_the_run_collections(server: int, tmp_path: Path) -> None:
    generate_benchmark(tmp_path / "bench", seed=6, sizes={"train": 3, "valid_unseen": 1})
    out = tmp_path / "run"
    env = base_env(tmp_path / "home", server)
    args = ["eval", "tfd", "--data", str(tmp_path / "bench"), "--split", "valid_unseen", "--planner", "oracle-graph",
            "--out", str(out)]
    assert helper(args, tmp_path, env).returncode == 0
    namespace = server_namespace(str(out / "memory"))
    before = counts(server)
    result = helper([*args, "--train-memory"], tmp_path, env)
    assert result.returncode == 0, result.stderr[-3000:]
    after = counts(server)
    assert after[f"{namespace}.helper_examples"] == before[f"{namespace}.helper_examples"] + 3  # 3 train dialogues
    assert after.get("helper_examples") == before.get("helper_examples")  # the shared examples are untouched


def test_chat_and_routines_share_the_server(server: int, tmp_path: Path) -> None:
    env = base_env(tmp_path / "home", server)
    fenced = f"```python\n{COFFEE}\n```"
    chat = helper(["chat", "--user", "mary", "--scene", "3", "--home", str(tmp_path / "home")], tmp_path, env,
                  replies=[fenced, "Cabinet", "satisfied"], stdin="Perform the morning coffee: make me a coffee\nyes\nyes\n/quit\n")
    assert chat.returncode == 0, chat.stdout[-2000:] + chat.stderr[-3000:]
    assert "success (routine 'the morning coffee' v1 for mary stored)" in chat.stdout
    assert counts(server).get(user_collection("mary")) == 1
    assert not (tmp_path / "home" / "memory").exists()  # --home keeps the checkpoints only
    # `helper routines` reads and writes the same collections.
    listed = helper(["routines", "list", "--user", "mary"], tmp_path, env)
    assert listed.returncode == 0 and "the morning coffee" in listed.stdout, listed.stdout + listed.stderr
    added = helper(["routines", "add", "the evening tea", "--program", 'k = InteractionObject("Kettle")\nk.fill_up()',
                    "--user", "mary"], tmp_path, env)
    assert added.returncode == 0, added.stderr[-3000:]
    assert counts(server).get(user_collection("mary")) == 2


def test_a_dotenv_file_in_the_working_directory_selects_the_server(server: int, tmp_path: Path) -> None:
    work = tmp_path / "project"
    work.mkdir()
    (work / ".env").write_text(f"HELPER_CHROMA_HOST=127.0.0.1\nHELPER_CHROMA_PORT={server}\nHELPER_EMBEDDINGS=hash\n")
    env = base_env(tmp_path / "home")  # no HELPER_CHROMA_* in the environment
    env.pop("HELPER_EMBEDDINGS")
    added = helper(["routines", "add", "the dotenv routine", "--program", 'cm = InteractionObject("CoffeeMachine")\ncm.toggle_on()',
                    "--user", "dora"], work, env)
    assert added.returncode == 0, added.stderr[-3000:]
    assert counts(server).get(user_collection("dora")) == 1
    assert not (work / ".helper").exists() and not (tmp_path / "home" / "memory").exists()


def test_without_a_server_memories_stay_local(tmp_path: Path) -> None:
    env = base_env(tmp_path / "home")
    added = helper(["routines", "add", "the local routine", "--program", 'cm = InteractionObject("CoffeeMachine")\ncm.toggle_on()',
                    "--user", "lou"], tmp_path, env)
    assert added.returncode == 0, added.stderr[-3000:]
    assert (tmp_path / "home" / "memory").is_dir()
