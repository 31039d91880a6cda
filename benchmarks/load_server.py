"""Part `server` of the load benchmark: the LangGraph server (`langgraph dev`) with N threads at once.

Each round gets a folder of its own: the routines memory (`HELPER_HOME`), the server's own state
(`.langgraph_api/`, which `langgraph dev` keeps in its working folder) and a `langgraph.json` that
serves this checkout's `helper_agent/serving.py:graph`. Before the server starts, every person is
taught two routines in the memory (what `helper routines add` does); then N people at once, each on
a thread of their own:

    create a thread -> "Do the NAME" (recalled without an LLM; the run stops at the feedback
    question, the run's interrupt) -> resume with "done" (the answer is read by the model)

and `--llm-users` of them also teach a routine through the local model ("Perform the NAME: make me a
coffee", "done", "yes") and ask, in a new thread, for another person's routine by its name (it must
not be recalled). Afterwards, with the server stopped: every thread's state holds its own person's
request and user and ended as acknowledged, and the routines memory holds exactly what was taught
(`load_ledger.check_routines`). In the kill round the server is killed with SIGKILL once
`--kill-after` of the calls were answered and started again on the same folder; every thread whose
run was acknowledged is read back from it.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from cluster_bench import free_port, wait_until_serving
from load_bench import PROGRAMS, Killed, Timings, _load, percentile
from load_ledger import Ledger, Verdict, Write, check_routines, name_key

ROOT = Path(__file__).resolve().parents[1]


def _teach(memory: str, lessons: list[tuple[str, str, str, str]]) -> None:
    """(user, name, program, request) each taught in `memory` (run in a process of its own: Chroma
    caches a folder's client per process, so the reading afterwards must not share it)."""
    from helper_agent.graphs.helper.agent import Memories

    routines = Memories.at(memory).routines
    for user, name, program, request in lessons:
        routines.teach(name, program, request, user=user, source="taught")


def _read(memory: str, users: list[str], out: str) -> None:
    from helper_agent.graphs.helper.agent import Memories

    routines = Memories.at(memory).routines
    stored = {u: [r.model_dump(mode="json") for r in routines.list(user=u)] for u in users}
    for record in routines.list():  # a version under a user nobody is: the check counts it as leaked
        if record.user not in users:
            stored.setdefault(record.user, []).append(record.model_dump(mode="json"))
    Path(out).write_text(json.dumps(stored))


def _in_process(target: Any, *args: Any) -> None:
    process = multiprocessing.get_context("spawn").Process(target=target, args=args)
    process.start()
    process.join()
    if process.exitcode != 0:
        raise RuntimeError(f"{target.__name__} ended with status {process.exitcode}")


class LangGraphServer:
    """`langgraph dev` in a round's folder, as a process group of its own (so kill -9 takes it all)."""

    def __init__(self, folder: Path, executable: str, llm: str) -> None:
        self.folder, self.executable, self.llm = folder, executable, llm
        self.proc: subprocess.Popen | None = None
        self.url = ""
        # the repository's langgraph.json, as shipped, with its paths made absolute
        shipped = json.loads((ROOT / "langgraph.json").read_text())
        config = {**shipped, "dependencies": [str(ROOT)],
                  "graphs": {"helper": str(ROOT / shipped["graphs"]["helper"].removeprefix("./"))}}
        if "checkpointer" in shipped:
            config["checkpointer"] = {**shipped["checkpointer"],
                                      "path": str(ROOT / shipped["checkpointer"]["path"].removeprefix("./"))}
        (folder / "langgraph.json").write_text(json.dumps(config))

    def start(self) -> float:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        log = open(self.folder / "server.log", "a")  # noqa: SIM115 - closed with the process
        started = time.monotonic()
        env = {**os.environ, "HELPER_HOME": str(self.folder / "home"), "HELPER_LLM": self.llm,
               "LANGGRAPH_NO_VERSION_CHECK": "true", "LANGSMITH_TRACING": "false"}
        self.proc = subprocess.Popen([self.executable, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
                                      "--port", str(port), "--config", "langgraph.json"],
                                     cwd=self.folder, stdout=log, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        wait_until_serving(self.proc, f"{self.url}/ok", 600)
        return time.monotonic() - started

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class ThreadPerson:
    """One person on the server: their threads, what each run returned, and their ledger."""

    def __init__(self, server: LangGraphServer, user: str, timings: Timings, llm_user: bool, other: str,
                 gate: Any) -> None:
        self.server, self.user, self.timings, self.llm_user, self.other, self.gate = \
            server, user, timings, llm_user, other, gate
        self.http = httpx.Client(timeout=httpx.Timeout(1800.0, connect=10.0))
        self.ledger = Ledger(user)
        self.threads: dict[str, dict[str, Any]] = {}  # thread id -> {"request", "acknowledged", "outcome"}
        self.live = Verdict()

    def post(self, op: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.gate()
        self.timings.start(op)
        start = time.monotonic()
        try:
            answer = self.http.post(self.server.url + path, json=body)
        except httpx.HTTPError as exc:
            raise Killed(f"{self.user} {op}: {type(exc).__name__}: {exc}") from exc
        finally:
            self.timings.end(op)
        if answer.status_code != 200:
            raise Killed(f"{self.user} {op}: HTTP {answer.status_code}: {answer.text[:200]}")
        self.timings.add(op, time.monotonic() - start)
        out = answer.json()
        if isinstance(out, dict) and out.get("__error__"):
            self.timings.failed.append(f"{self.user} {op}: {out['__error__']}")
        return out

    def run(self) -> None:
        try:
            self.request("recall", f"Do the {self.user} tidy 0", ["done"])
            if self.llm_user:
                taught = name_key(f"the {self.user} coffee")
                self.ledger.teaching.append(taught)
                final = self.request("teach", f"Perform the {self.user} coffee: make me a coffee", ["done", "yes"])
                if any(line.startswith(f"memorize: routine '{taught}'") and f" for {self.user}" in line
                       for line in final.get("log") or []):
                    self.ledger.teaching.remove(taught)
                    self.ledger.taught.append(taught)
                final = self.request("probe", f"Do the {self.other} tidy 1", ["done"])
                if any(f"recalled routine '{self.other}" in line.lower() for line in final.get("log") or []):
                    self.live.leaked.append(f"{self.user} recalled {self.other}'s routine")
        except Killed as exc:
            self.timings.errors.append(f"in flight at the kill: {exc}")
        finally:
            self.http.close()

    def request(self, op: str, text: str, answers: list[str]) -> dict[str, Any]:
        thread = self.post("thread", "/threads", {})["thread_id"]
        self.threads[thread] = {"request": text, "acknowledged": False}
        self.ledger.requests_in_flight.append(text)
        out = self.post(op, f"/threads/{thread}/runs/wait",
                        {"assistant_id": "helper", "input": {"request": text, "user": self.user, "room": "Kitchen",
                                                             "seed": 0}})
        self.ledger.requests_in_flight.remove(text)
        self.ledger.requests.append(text)
        self.threads[thread]["answered"] = True  # the run answered (its interrupt, or its end)
        for answer in answers:
            if not out.get("__interrupt__"):
                break
            out = self.post(f"{op}:answer", f"/threads/{thread}/runs/wait",
                            {"assistant_id": "helper", "command": {"resume": answer}})
        self.threads[thread].update(acknowledged=not out.get("__interrupt__"), outcome=out.get("outcome"))
        return out


def check_threads_on(server: LangGraphServer, people: list[ThreadPerson], verdict: Verdict) -> int:
    """Every acknowledged thread read back from the (running) server: its person's request and user,
    and the outcome it answered. Returns how many were read."""
    read = 0
    with httpx.Client(timeout=60.0) as http:
        for person in people:
            for thread, sent in person.threads.items():
                got = http.get(f"{server.url}/threads/{thread}/state")
                if got.status_code != 200:  # the thread's creation was acknowledged: it must be there
                    verdict.lost.append(f"{person.user}: thread {thread} ({'run answered' if sent['acknowledged'] else 'created'}) "
                                        f"answers {got.status_code}")
                    continue
                values = got.json().get("values") or {}
                read += 1
                if sent.get("answered") and not values.get("request"):
                    verdict.lost.append(f"{person.user}: thread {thread} answered its run, but holds no request now")
                if values.get("user") not in (None, person.user):
                    verdict.leaked.append(f"{person.user}'s thread {thread} holds user {values.get('user')!r}")
                if values.get("request") not in (None, sent["request"]):
                    verdict.leaked.append(f"{person.user}'s thread {thread} holds request {values.get('request')!r}")
                if sent["acknowledged"] and values.get("outcome") != sent.get("outcome"):
                    verdict.lost.append(f"{person.user}: thread {thread} ended {sent.get('outcome')!r} "
                                        f"but holds {values.get('outcome')!r}")
    return read


def server_round(n: int, args: Any, scratch: Path, kill_after: float | None) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix=f"load-server-{n}-", dir=scratch))
    memory = str(folder / "home" / "memory")
    tag = f"{'k' if kill_after is not None else 's'}{n}"
    users = [f"{tag}u{i:02d}" for i in range(n)]
    lessons = [(u, f"the {u} tidy {j}", PROGRAMS[(i + j) % len(PROGRAMS)], f"{u} taught: tidy {j}")
               for i, u in enumerate(users) for j in range(2)]
    _in_process(_teach, memory, lessons)
    server = LangGraphServer(folder, args.langgraph, args.llm)
    startup = server.start()
    timings = Timings()
    killed = threading.Event()

    def gate() -> None:
        if killed.is_set():
            raise Killed("the server is down")

    people = [ThreadPerson(server, u, timings, i < args.llm_users, users[(i + 1) % n], gate)
              for i, u in enumerate(users)]
    for person, u in zip(people, users, strict=True):
        person.ledger.writes.append(Write(versions=tuple((name_key(name), program, request)
                                                         for user, name, program, request in lessons if user == u),
                                          acknowledged=True))
    load_before = _load()
    start = time.monotonic()
    workers = [threading.Thread(target=p.run, name=p.user) for p in people]
    for worker in workers:
        worker.start()
    if kill_after is not None:
        calls = n * 3 + min(n, args.llm_users) * 7
        target = max(1, int(kill_after * calls))
        # once the share is answered, at a moment a run is in flight (not between two calls)
        while any(w.is_alive() for w in workers) and (
                timings.calls() < target or not any(timings.flying.get(op) for op in ("recall", "teach", "probe"))):
            time.sleep(0.005)
        killed.set()
        server.kill()
    for worker in workers:
        worker.join()
    wall = time.monotonic() - start
    verdict = Verdict()
    if kill_after is not None:
        server.start()
    read = check_threads_on(server, people, verdict)
    server.stop()
    out = folder / "stored.json"
    _in_process(_read, memory, users, str(out))
    from helper_agent.memory.routines import Routine  # the records the memory lists

    stored = {u: [Routine.model_validate(r) for r in rows] for u, rows in json.loads(out.read_text()).items()}
    found = check_routines([p.ledger for p in people], stored)
    for kind in ("lost", "duplicated", "leaked", "out_of_order", "half_written"):
        getattr(verdict, kind).extend(getattr(found, kind))
        for person in people:
            getattr(verdict, kind).extend(f"live: {line}" for line in getattr(person.live, kind))
    ops = {op: {"calls": len(v), "p50_s": percentile(v, 50), "p99_s": percentile(v, 99)}
           for op, v in sorted(timings.seconds.items())}
    return {
        "users": n, "killed": kill_after is not None, "startup_s": round(startup, 1), "wall_s": round(wall, 1),
        "calls": timings.calls(), "calls_per_s": round(timings.calls() / wall, 2) if wall else 0.0, "ops": ops,
        "queue_waits": 0, "queue_wait_p50_s": 0.0, "queue_wait_max_s": 0.0,
        "taught_with_llm": sum(len(p.ledger.taught) for p in people), "llm_users": min(args.llm_users, n),
        "threads_read_back": read, "versions_stored": sum(len(v) for v in stored.values()),
        "failed_calls": len(timings.failed), "failed": timings.failed,
        **verdict.counts(), "findings": verdict.lines(), "errors": timings.errors,
        "load_before": load_before, "load_after": _load(), "folder": str(folder),
    }


def server_rounds(args: Any, sizes: list[int], scratch: Path) -> list[dict[str, Any]]:
    rounds = []
    for n in sizes:
        rounds.append(server_round(n, args, scratch, None))
        print(json.dumps({k: v for k, v in rounds[-1].items() if k not in ("findings", "errors")}), flush=True)
    if args.kill_users:
        rounds.append(server_round(args.kill_users, args, scratch, args.kill_after))
        print(json.dumps({k: v for k, v in rounds[-1].items() if k not in ("findings", "errors")}), flush=True)
    return rounds
