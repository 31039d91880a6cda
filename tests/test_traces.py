"""What reaches LangSmith, measured against a loopback stand-in for its ingest API.

The stand-in is a tiny HTTP server on 127.0.0.1 that answers `GET /info` and accepts the run-ingest
endpoints the langsmith client uses (`POST /runs/multipart`, and `POST /runs`, `PATCH /runs/{id}`,
`POST /runs/batch` for older configurations). It records every byte posted. Each traced program
runs in its own process (LANGSMITH_ENDPOINT, LANGSMITH_API_KEY, LANGSMITH_TRACING=true) and
flushes its tracer before it exits.

- one oracle episode through the harness: the runs read like the graph, each subgoal is a span
  under `execute`, the oracle's fake chat model is traced and counted, no household is sent, and
  the whole episode is under 200 KB;
- a checkpointed run that keeps `world` snapshots in its state (chat, the LangGraph server) sends
  no household when traced through `helper_agent.tracing`, and would without it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from helper_agent.evals.benchmark import generate_benchmark

ROOT = Path(__file__).resolve().parents[1]
HOUSEHOLD = b'"helper-agent-state"'  # the format tag of every household snapshot
LIMIT = 200 * 1024


@dataclass
class Ingest:
    """What the stand-in received: (method, path, content type, body) per request."""

    requests: list[tuple[str, str, str, bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def posted(self) -> int:
        """Bytes of run data posted (request bodies to the run endpoints)."""
        return sum(len(body) for _, path, _, body in self.requests if path.startswith("/runs"))

    def body(self) -> bytes:
        return b"".join(body for _, path, _, body in self.requests if path.startswith("/runs"))

    def runs(self) -> dict[str, dict]:
        """Runs by id: each posted run with its inputs/outputs parts and its patches merged in."""
        runs: dict[str, dict] = {}
        for _, path, content_type, body in self.requests:
            if path.startswith("/runs/multipart"):
                for name, payload in _multipart(body, content_type):
                    _, run_id, *part = name.split(".")
                    value = json.loads(payload)
                    run = runs.setdefault(run_id, {})
                    if part:
                        run[part[0]] = value
                    else:
                        run.update(value)
            elif path.startswith("/runs/batch"):
                data = json.loads(body)
                for run in [*data.get("post", []), *data.get("patch", [])]:
                    runs.setdefault(str(run["id"]), {}).update(run)
            elif path.startswith("/runs"):
                run = json.loads(body)
                runs.setdefault(str(run.get("id") or path.rsplit("/", 1)[-1]), {}).update(run)
        return runs


def _multipart(body: bytes, content_type: str) -> Iterator[tuple[str, bytes]]:
    boundary = re.search(r"boundary=([^;\s]+)", content_type)
    assert boundary, content_type
    for chunk in body.split(b"--" + boundary.group(1).encode()):
        if b"\r\n\r\n" not in chunk:
            continue
        head, payload = chunk.split(b"\r\n\r\n", 1)
        name = re.search(rb'name="([^"]+)"', head)
        if name:
            yield name.group(1).decode(), payload.rstrip(b"\r\n")


@pytest.fixture()
def langsmith() -> Iterator[tuple[str, Ingest]]:
    """The stand-in's base URL and what it receives."""
    ingest = Ingest()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _read(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size) if size else b""
            assert not self.headers.get("Content-Encoding"), "compressed ingest: count the decoded bytes too"
            with ingest.lock:
                ingest.requests.append((self.command, self.path, self.headers.get("Content-Type", ""), body))

        def _reply(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._read()
            if self.path.startswith("/info"):
                self._reply(200, {"version": "0.10.0", "batch_ingest_config": {
                    "use_multipart_endpoint": True, "size_limit_bytes": 20_000_000, "size_limit": 100,
                    "scale_up_qsize_trigger": 1000, "scale_up_nthreads_limit": 1, "scale_down_nempty_trigger": 4}})
            else:
                self._reply(404, {"detail": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            self._read()
            self._reply(202, {})

        def do_PATCH(self) -> None:  # noqa: N802
            self._read()
            self._reply(202, {})

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", ingest
    finally:
        server.shutdown()
        server.server_close()


SCRIPT = textwrap.dedent(
    """
    import json, sys
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from helper_agent.envs.symbolic import SymbolicEnv
    from helper_agent.graphs.helper.agent import Memories
    from helper_agent import tracing

    mode, arg = sys.argv[1], sys.argv[2]
    memories = Memories.at()
    if mode == "oracle":
        from helper_agent.evals.engine.agents import OracleGraphAgent
        from helper_agent.evals.engine.harness import run_instance
        from helper_agent.teach.instances import load_instance

        record, result = run_instance(load_instance(arg), OracleGraphAgent(memories), SymbolicEnv(), tags=["tfd"])
        out = {"success": record["success"], "llm_calls": record["llm_calls"], "outcome": result.outcome,
               "subgoals": result.trace}
    elif mode in ("chat", "serve"):  # helper chat, or the served graph, with a scripted fake chat model
        import helper_agent.llm as llm

        program = 'cm = InteractionObject("CoffeeMachine")\\ncm.toggle_on()'
        llm.make_chat_model = lambda *a, **k: FakeListChatModel(responses=[f"```python\\n{program}\\n```", "satisfied"])
        if mode == "chat":
            from helper_agent.cli import app

            try:
                app(["chat", "--user", "mary", "--scene", "3"], standalone_mode=False)
            except SystemExit:
                pass
            out = {"chat": "done"}
        else:
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.types import Command
            from helper_agent.serving import build_served_graph

            graph = build_served_graph(InMemorySaver())
            config = {"configurable": {"thread_id": "t"}}
            first = graph.invoke({"request": "switch on the coffee machine", "seed": 3}, config)
            final = graph.invoke(Command(resume="yes"), config)
            out = {"interrupted": "__interrupt__" in first, "outcome": final["outcome"]}
    else:  # a run that keeps the household in its state, as chat and the LangGraph server do
        from langgraph.checkpoint.memory import InMemorySaver
        from helper_agent.graphs.helper import HelperConfig, HelperContext, build_graph

        env = SymbolicEnv()
        env.reset(3, room_type="Kitchen")
        program = 'cm = InteractionObject("CoffeeMachine")\\ncm.toggle_on()'
        context = HelperContext(env=env, chat_model=FakeListChatModel(responses=[f"```python\\n{program}\\n```"]),
                                examples=memories.examples, corrections=memories.corrections, routines=memories.routines,
                                feedback=lambda: "", config=HelperConfig(feedback_rounds=1), keep_snapshots=True)
        callbacks = tracing.household_free_callbacks() if mode == "snapshots-filtered" else []
        state = build_graph(InMemorySaver()).invoke({"request": "switch on the coffee machine"},
                                                    {"configurable": {"thread_id": "t"}, "callbacks": callbacks},
                                                    context=context)
        out = {"outcome": state["outcome"], "world_in_state": bool(state.get("world"))}
    from langchain_core.tracers.langchain import wait_for_all_tracers
    from langsmith.run_trees import get_cached_client

    tracing.flush()
    wait_for_all_tracers()
    get_cached_client().flush()
    print(json.dumps(out))
    """
)


def traced(endpoint: str, tmp_path: Path, *args: str, stdin: str = "") -> dict:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
           "HELPER_HOME": str(tmp_path / "home"), "HELPER_EMBEDDINGS": "hash", "TOKENIZERS_PARALLELISM": "false",
           "LANGSMITH_ENDPOINT": endpoint, "LANGSMITH_API_KEY": "lsv2-test-key", "LANGSMITH_TRACING": "true",
           "LANGSMITH_PROJECT": "helper-tests"}
    result = subprocess.run([sys.executable, "-c", SCRIPT, *args], env=env, input=stdin, capture_output=True, text=True,
                            timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def instance(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("bench")
    generate_benchmark(data, seed=3, sizes={"valid_unseen": 1})
    return next((data / "tfd_instances" / "valid_unseen").glob("*.tfd.json"))


def test_one_oracle_episode_sends_under_200_kb_and_no_household(langsmith, instance: Path, tmp_path: Path) -> None:  # noqa: ANN001
    endpoint, ingest = langsmith
    out = traced(endpoint, tmp_path, "oracle", str(instance))
    assert out["success"] == 1 and out["llm_calls"] >= 1  # the oracle's fake chat model is counted
    posted = ingest.posted()
    print(f"one oracle episode: {posted} bytes posted in {len(ingest.requests)} requests")
    assert 0 < posted < LIMIT
    assert HOUSEHOLD not in ingest.body()
    runs = ingest.runs()
    by_name = {}
    for run in runs.values():
        by_name.setdefault(run.get("name"), []).append(run)
    (root,) = [r for r in runs.values() if not r.get("parent_run_id")]
    assert root["name"].startswith("oracle-graph:")
    assert {"retrieve", "plan", "validate", "execute", "ask_feedback", "memorize"} <= set(by_name)
    llm_runs = [r for r in runs.values() if r.get("run_type") == "llm"]
    assert llm_runs and all(r["name"] in ("plan", "locate", "correct", "replan") for r in llm_runs)
    assert root["extra"]["metadata"]["instance_id"] == instance.name.removesuffix(".json")
    assert "tfd" in root["tags"]
    # Subgoals are spans under `execute`: one per subgoal run, in order, with its outcome.
    executes = {str(r["id"]) for r in by_name["execute"]}
    spans = sorted((r for r in runs.values() if r.get("run_type") == "tool"), key=lambda r: r["dotted_order"])
    print(f"{len(spans)} subgoal spans under execute")
    assert [r["name"] for r in spans] == [subgoal for subgoal, _, _ in out["subgoals"]]
    assert all(str(r["parent_run_id"]) in executes for r in spans)
    assert [r["outputs"]["status"] for r in spans] == [status for _, status, _ in out["subgoals"]]


def test_a_run_keeping_household_snapshots_traces_none_of_them(langsmith, tmp_path: Path) -> None:  # noqa: ANN001
    endpoint, ingest = langsmith
    out = traced(endpoint, tmp_path, "snapshots-filtered", "")
    assert out == {"outcome": "success", "world_in_state": True}
    assert HOUSEHOLD not in ingest.body()
    runs = ingest.runs()
    assert {"retrieve", "plan", "execute", "memorize"} <= {r.get("name") for r in runs.values()}
    # The snapshots are in the state, so runs still show the key, with a note in its place.
    worlds = [part["world"] for r in runs.values() for part in (r.get("inputs"), r.get("outputs"))
              if isinstance(part, dict) and part.get("world")]
    assert worlds and all(w.startswith("<household snapshot") for w in worlds)
    filtered = ingest.posted()
    print(f"a run keeping snapshots, traced without them: {filtered} bytes")
    assert filtered < LIMIT


def test_without_the_filter_the_snapshots_would_be_traced(langsmith, tmp_path: Path) -> None:  # noqa: ANN001
    """The control: LangChain's default tracer sends the state as it is."""
    endpoint, ingest = langsmith
    traced(endpoint, tmp_path, "snapshots-unfiltered", "")
    assert HOUSEHOLD in ingest.body()
    print(f"the same run traced with the snapshots: {ingest.posted()} bytes")
    assert ingest.posted() > LIMIT


@pytest.mark.parametrize("mode", ["chat", "serve"])
def test_chat_and_the_served_graph_trace_no_household(mode: str, langsmith, tmp_path: Path) -> None:  # noqa: ANN001
    endpoint, ingest = langsmith
    out = traced(endpoint, tmp_path, mode, "", stdin="switch on the coffee machine\nyes\n/quit\n")
    assert out == ({"chat": "done"} if mode == "chat" else {"interrupted": True, "outcome": "success"})
    runs = ingest.runs()
    assert {"retrieve", "plan", "execute", "ask_feedback", "memorize"} <= {r.get("name") for r in runs.values()}
    assert HOUSEHOLD not in ingest.body()
    if mode == "serve":  # the HELPER graph's runs nest under the served graph's node, one trace per run
        (graph_run, *_) = [r for r in runs.values() if r.get("name") == "helper-graph"]
        node = runs[str(graph_run["parent_run_id"])]
        assert node["name"] == "episode" and node["trace_id"] == graph_run["trace_id"]
        assert graph_run["dotted_order"].startswith(node["dotted_order"])
        assert len({r["trace_id"] for r in runs.values()}) == 2  # the request and its resume
    print(f"{mode}: {ingest.posted()} bytes for one request")
    assert ingest.posted() < LIMIT
