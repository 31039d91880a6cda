"""Several evaluation workers share one OpenAI-compatible model server, and it restarts mid-run.

The server is benchmarks/llm_faults_bench.py's fake (127.0.0.1); the agent is HELPER's graph with
its chat model pointed at the server, as `helper eval tfd --llm URL --workers 2` builds it. While the
run is under way the server goes away: its port accepts connections and drops them (a server
restarting) for a while, then a new server answers on the same port. The episodes wait and retry
(`HELPER_LLM_RETRIES`, backoff), so every episode is recorded, none as an error, and every request
the servers saw carried the program grammar (`HELPER_LLM_GRAMMAR=llama.cpp`).
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from scripts import load_script

pytest.importorskip("langchain_openai")

from helper_agent.evals.benchmark import generate_benchmark  # noqa: E402
from helper_agent.evals.engine.runner import run_eval  # noqa: E402
from helper_agent.evals.engine.spec import EvalSpec  # noqa: E402
from helper_agent.evals.engine.store import ResultStore  # noqa: E402

faults = load_script("benchmarks/llm_faults_bench.py")

EPISODES = 6
PROGRAM = 'mug = InteractionObject("Mug")'  # one line: the fake server re-joins its words with spaces


def _drop_connections(port: int, stop: threading.Event, dropped: list[int]) -> None:
    """Accept on `port` and close at once, until `stop`: a server in the middle of restarting."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(16)
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            dropped.append(1)
            conn.close()


def test_workers_share_a_server_that_restarts_mid_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate_benchmark(tmp_path / "bench", seed=3, sizes={"valid_unseen": EPISODES})
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash")
    monkeypatch.setenv("HELPER_LLM_GRAMMAR", "llama.cpp")
    monkeypatch.setenv("HELPER_LLM_RETRIES", "5")  # backoff 1+2+4+8+16 s: longer than the restart
    first = faults.FakeOpenAIServer("ok", reply=PROGRAM).start()
    port = first.port
    spec = EvalSpec(mode="tfd", data=str(tmp_path / "bench"), split="valid_unseen", planner="helper", feedback=0,
                    llm=f"{first.base_url}#qwen", workers=2, out=str(tmp_path / "run"))
    outcome: dict[str, Any] = {}
    run = threading.Thread(target=lambda: outcome.update(metrics=run_eval(spec)), daemon=True)
    run.start()
    second = None
    try:
        deadline = time.monotonic() + 240
        while len(first.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(first.requests) >= 2, "the workers never called the server"
        first.stop()
        stop, dropped = threading.Event(), []
        restarting = threading.Thread(target=_drop_connections, args=(port, stop, dropped), daemon=True)
        restarting.start()
        deadline = time.monotonic() + 60
        while not dropped and time.monotonic() < deadline and run.is_alive():
            time.sleep(0.05)
        time.sleep(1.0)
        stop.set()
        restarting.join(5)
        second = faults.FakeOpenAIServer("ok", reply=PROGRAM, port=port).start()
        run.join(300)
    finally:
        if second is not None:
            second.stop()
    assert not run.is_alive() and "metrics" in outcome
    assert dropped, "no request reached the server while it was restarting"
    metrics = outcome["metrics"]
    records = ResultStore(tmp_path / "run" / "results.jsonl").records()
    assert metrics["episodes"] == len(records) == EPISODES
    assert metrics["ended_by"]["error"] == 0
    assert not [r["error_message"] for r in records.values() if r.get("error_message")]
    assert second.requests, "nothing was asked after the restart"
    bodies = first.requests + second.requests
    assert all("root ::=" in body.get("grammar", "") for body in bodies)
