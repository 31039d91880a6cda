"""Many people at once, nothing lost: `helper app` and the LangGraph server under concurrent users,
with every person's data checked afterwards, and a round killed with `kill -9`.

Part `app` (rounds of N = `--users`, default 1,4,16,32): a new home per round; `helper app` started
on it; N people, each in a tab of their own (`load_page.PageTab`: Gradio's queue protocol, as the page
talks), at the same time:

    open a session -> import 3 routines (a file) -> list -> recall one ("Do the NAME": the recall
    path that needs no LLM; answer "done") -> import a second file (new versions of two of them)
    -> export (and download it) -> delete the third -> list

and the first `--llm-users` people (default 2) also teach a routine through the real local model
("Perform the NAME: make me a coffee", answer "done", confirm). Each call's seconds are kept per
operation; a chat request that had to wait says so in the page's status line ("waiting for another
request to finish ..."), and the seconds from that line to the next are its queue wait as the page
states it. The app is then stopped, and the home read back (`load_ledger`): every person's routines
against what the server acknowledged to them (0 lost, 0 duplicated, 0 leaked, 0 out of order), and
every person's conversation thread against the requests they sent.

The kill round (`--kill-users`, default 16): the same, but the app is killed with SIGKILL once
`--kill-after` (40 %) of the round's calls were answered. Calls in flight then have no answer. The app is
started again on the same home; each person whose import was in flight imports the same file again
(the import resumes), and the check runs with one more rule: what was in flight is stored whole or not
at all.

Part `server` (`--server-threads`, default 1,4,16,32): the LangGraph server (`langgraph dev`, from the
`serve` extra; `--langgraph` names the executable) serving `helper_agent/serving.py:graph`, with N
threads at once, each a person who recalls a routine of theirs (taught with `helper routines add`
before the server starts) and answers the feedback question, then recalls another person's routine
by its name (it must not be found: no leak), and `--llm-users` of them teach one through the local
model. Checked: each thread's state holds its own request and user, in order, and the routines
memory as in part `app`. A kill -9 round restarts the server and reads every acknowledged thread back.

Run (the local model is used: hold `flock /tmp/llm.lock` on a shared machine):
    python benchmarks/load_bench.py --part app [--users 1,4,16,32] [--kill-users 16] [--json PATH]
    python benchmarks/load_bench.py --part server --langgraph .venv-serve/bin/langgraph [--json PATH]
Results: `--out results/load` (a table per part, and each round's findings).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster_bench import free_port, wait_until_serving
from load_ledger import Ledger, Verdict, Write, check_routines, check_threads, name_key
from load_page import PageError, PageTab

from helper_agent.chat_runtime import ChatRuntime
from helper_agent.memory.base import write_jsonl

PROGRAMS = (
    'mug = InteractionObject("Mug")\nmug.pickup()\n',
    'apple = InteractionObject("Apple")\napple.pickup()\n',
    'plate = InteractionObject("Plate")\nplate.clean()\n',
    'mug = InteractionObject("Mug")\nmug.clean()\n',
    'bread = InteractionObject("Bread")\nbread.slice()\n',
)
WAITING = "waiting for another request"


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank), 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return round(ordered[rank - 1], 3)


@dataclass
class Timings:
    """Seconds per operation, the queue waits the page stated, and calls that got no answer."""

    seconds: dict[str, list[float]] = field(default_factory=dict)
    waits: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # calls that got no answer (the kill), or an unexpected one
    failed: list[str] = field(default_factory=list)  # calls the server answered with an error
    lock: threading.Lock = field(default_factory=threading.Lock)

    flying: dict[str, int] = field(default_factory=dict)

    def start(self, op: str) -> None:
        with self.lock:
            self.flying[op] = self.flying.get(op, 0) + 1

    def end(self, op: str) -> None:
        with self.lock:
            self.flying[op] -= 1

    def add(self, op: str, seconds: float) -> None:
        with self.lock:
            self.seconds.setdefault(op, []).append(seconds)

    def calls(self) -> int:
        return sum(len(v) for v in self.seconds.values())


class Killed(RuntimeError):
    """The server was killed while this person's call was in flight."""


# ------------------------------------------------------------------------------------------- the app
def routine_file(folder: Path, user: str, part: str, names: list[str], offset: int) -> tuple[Path, tuple[Any, ...]]:
    """A routines file of `user` (what the page's import box takes) and the versions it holds."""
    from helper_agent.memory.routines import Routine  # the record the file format validates

    records = [Routine(user=user, name=name, program=PROGRAMS[(offset + j) % len(PROGRAMS)],
                       request=f"{user} {part}: {name}", version=0, source="imported")
               for j, name in enumerate(names)]
    path = folder / f"{user}-{part}.jsonl"
    write_jsonl(path, "routines", records)
    return path, tuple((name_key(r.name), r.program, r.request) for r in records)


class AppPerson:
    """One person in their own tab, doing the script of part `app`, and keeping their ledger."""

    def __init__(self, url: str, layout: Any, user: str, folder: Path, timings: Timings, teach: bool,
                 gate: Callable[[], None]) -> None:
        self.tab = PageTab(url, layout)
        self.user, self.folder, self.timings, self.teach, self.gate = user, folder, timings, teach, gate
        self.ledger = Ledger(user)
        self.names = [f"the {user} tidy {j}" for j in range(3)]
        self.live = Verdict()

    def call(self, op: str, elem: str, trigger: str, values: dict[str, Any]) -> Any:
        self.gate()
        self.timings.start(op)
        try:
            reply = self.tab.call(elem, trigger, values)
        except PageError as exc:
            raise Killed(f"{self.user} {op}: {exc}") from exc
        finally:
            self.timings.end(op)
        self.timings.add(op, reply.seconds)
        error = reply.text("error")
        said = reply.outputs.get("chatbot") or []
        content = message_text(said[-1]) if isinstance(said, list) and said else ""
        if error.startswith("⚠️") or content.startswith("⚠️"):
            self.timings.failed.append(f"{self.user} {op}: {error or content}")
        return reply

    def run(self) -> None:
        try:
            self.script()
        except Killed as exc:
            self.timings.errors.append(f"in flight at the kill: {exc}")
        finally:
            self.tab.close()

    def script(self) -> None:
        self.call("open", "open", "click", {"user": self.user, "seed": 0, "room": "Kitchen"})
        self.import_file("a", self.names, 0)
        self.check_list("list")
        if self.teach:
            self.chat("teach", f"Perform the {self.user} coffee: make me a coffee", answers=2)
        self.chat("recall", f"Do {self.names[0]}", answers=1)
        self.import_file("b", self.names[:2], 3)
        self.export()
        self.delete(self.names[2])
        self.check_list("list")

    def import_file(self, part: str, names: list[str], offset: int) -> None:
        path, versions = routine_file(self.folder, self.user, part, names, offset)
        write = Write(versions=versions, source=str(path))
        self.ledger.writes.append(write)
        self.gate()
        try:
            file_data = self.tab.upload(path)
        except PageError as exc:
            raise Killed(f"{self.user} upload: {exc}") from exc
        reply = self.call("import", "routines-import", "upload", {"routines-import": file_data})
        note = reply.text("routines-note")
        if note.startswith(f"imported {len(versions)} routine version(s) for {self.user}"):
            write.acknowledged = True
        else:
            self.timings.errors.append(f"{self.user} import: {note}")

    def check_list(self, op: str) -> None:
        reply = self.call(op, "routines-refresh", "click", {})
        table = reply.outputs.get("routines") or {}
        rows = table.get("data") if isinstance(table, dict) else table
        listed = {name_key(str(row[0])) for row in rows or [] if row and row[0]}
        expected = set(self.ledger.expected()) | set(self.ledger.taught)
        for name in listed - expected - set(self.ledger.teaching):
            self.live.leaked.append(f"{self.user}'s list shows {name!r}, which they do not hold")
        for name in expected - listed:
            self.live.lost.append(f"{self.user}'s list lacks {name!r}")

    def chat(self, op: str, text: str, answers: int) -> None:
        """A request, then `answers` answers as a person presses them: "done" at the feedback question,
        "yes" at "Store it?" (the page's yes button)."""
        self.ledger.requests_in_flight.append(text)
        taught = name_key(f"the {self.user} coffee")
        if op == "teach":
            self.ledger.teaching.append(taught)
        reply = self.call(op, "send", "click", {"request": text, "method": "helper"})
        self._waits(reply)
        self.ledger.requests.append(text)
        self.ledger.requests_in_flight.remove(text)
        for _ in range(answers):
            question = reply.text("question")
            if not question:
                break
            button = "answer-yes" if "Store it" in question else "answer-done"
            reply = self.call(f"{op}:answer", button, "click", {})
            self._waits(reply)
        if op == "teach":
            said = " ".join(message_text(m) for m in reply.outputs.get("chatbot") or []).lower()
            if f"routine '{taught}" in said and "stored)" in said:
                self.ledger.taught.append(taught)
                self.ledger.teaching.remove(taught)

    def _waits(self, reply: Any) -> None:
        stated = [(at, text) for at, text in reply.statuses]
        for n, (at, text) in enumerate(stated):
            if text.startswith(WAITING):
                after = next((t for t, _ in stated[n + 1:]), reply.seconds)
                with self.timings.lock:
                    self.timings.waits.append(round(after - at, 3))

    def export(self) -> None:
        reply = self.call("export", "routines-export", "click", {})
        file_data = reply.outputs.get("routines-exported")
        if not isinstance(file_data, dict):
            self.timings.errors.append(f"{self.user} export: no file ({reply.text('routines-note')})")
            return
        try:
            body = self.tab.download(file_data)
        except PageError as exc:
            raise Killed(f"{self.user} download: {exc}") from exc
        records = exported_records(body)
        found = check_routines([self.ledger], {self.user: records})
        for kind in ("lost", "duplicated", "leaked", "out_of_order"):
            getattr(self.live, kind).extend(f"export: {line}" for line in getattr(found, kind))

    def delete(self, name: str) -> None:
        self.call("list", "routines-refresh", "click", {})  # the page's dropdown holds the names to pick
        write = Write(deleted=name_key(name))
        self.ledger.writes.append(write)
        reply = self.call("delete", "routine-delete", "click", {"routine-name": name})
        if reply.text("routines-note").startswith("deleted 1 version(s)"):
            write.acknowledged = True
        else:
            self.timings.errors.append(f"{self.user} delete: {reply.text('routines-note')}")


def message_text(message: Any) -> str:
    """A conversation message's text (Gradio sends its content as a list of parts)."""
    content = message.get("content") if isinstance(message, dict) else message
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return str(content or "")


def exported_records(body: bytes) -> list[Any]:
    from helper_agent.memory.routines import Routine  # the record the export writes

    lines = [json.loads(line) for line in body.decode("utf-8").splitlines() if line.strip()]
    return [Routine.model_validate(obj) for obj in lines if "_format" not in obj]


class AppServer:
    """`helper app` on a home and a free port, as a process of its own (so it can be killed)."""

    def __init__(self, home: Path, llm: str) -> None:
        self.home, self.llm = home, llm
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> float:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/"
        log = open(self.home / "app.log", "a")  # noqa: SIM115 - closed by the process's end
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "helper_agent.cli", "app", "--port", str(port), "--home", str(self.home),
             "--llm", self.llm], stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"})
        wait_until_serving(self.proc, self.url, 600)
        return time.monotonic() - started

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def stored_data(home: Path, ledgers: list[Ledger]) -> tuple[dict[str, list[Any]], dict[str, list[tuple[str, str]]]]:
    """Every person's stored routines and the requests their threads' checkpoints started, read
    from the home with the app stopped."""
    runtime = ChatRuntime.open(home)
    try:
        routines = {ledger.user: runtime.memories.routines.list(user=ledger.user) for ledger in ledgers}
        for record in runtime.memories.routines.list():  # a version under a user nobody is: the check counts it
            if record.user not in routines:
                routines.setdefault(record.user, []).append(record)
        threads: dict[str, list[tuple[str, str]]] = {}
        for ledger in ledgers:
            seen: list[tuple[str, str]] = []
            for thread in runtime.threads(ledger.user):
                history = list(runtime.graph.get_state_history(runtime.config(thread)))
                for snap in reversed(history):
                    if snap.next == ("retrieve",):
                        seen.append((str(snap.values.get("user") or ""), str(snap.values.get("request") or "")))
            threads[ledger.user] = seen
        return routines, threads
    finally:
        runtime.close()


def app_round(n: int, llm: str, llm_users: int, scratch: Path, kill_after: float | None) -> dict[str, Any]:
    """One round of part `app` with `n` people; with `kill_after`, the app is killed with SIGKILL once
    that share of the round's calls were answered, started again, and the in-flight imports resumed."""
    home = Path(tempfile.mkdtemp(prefix=f"load-app-{n}-", dir=scratch))
    files = home / "sent"
    files.mkdir()
    server = AppServer(home, llm)
    startup = server.start()
    layout = PageTab.layout_of(server.url)
    timings = Timings()
    killed = threading.Event()
    calls_per_person = 10

    def gate() -> None:
        if killed.is_set():
            raise Killed("the server is down")

    tag = f"{'k' if kill_after is not None else 'n'}{n}"
    people = [AppPerson(server.url, layout, f"{tag}u{i:02d}", files, timings, teach=i < llm_users, gate=gate)
              for i in range(n)]
    load_before = _load()
    start = time.monotonic()
    killer = None
    if kill_after is not None:
        target = max(1, int(kill_after * n * calls_per_person))

        def kill_when_due() -> None:
            # Once the share is answered, at a moment a write is in flight (an import or a deletion),
            # so the round shows what a kill does to a write, not only to a chat turn.
            while any(t.is_alive() for t in workers) and (
                    timings.calls() < target or not (timings.flying.get("import") or timings.flying.get("delete"))):
                time.sleep(0.002)
            killed.set()
            server.kill()

        killer = threading.Thread(target=kill_when_due, daemon=True)
    workers = [threading.Thread(target=person.run, name=person.user) for person in people]
    for worker in workers:
        worker.start()
    if killer:
        killer.start()
    for worker in workers:
        worker.join()
    wall = time.monotonic() - start
    resumed = 0
    if kill_after is not None:
        if killer:
            killer.join()
        server.start()
        for person in people:
            for write in person.ledger.in_flight():
                if write.source:  # the import resumes: the same file again, in a new tab
                    tab = PageTab(server.url, layout)
                    try:
                        tab.call("open", "click", {"user": person.user, "seed": 0, "room": "Kitchen"})
                        sent = tab.upload(Path(write.source))
                        reply = tab.call("routines-import", "upload", {"routines-import": sent})
                        if reply.text("routines-note").startswith("imported"):
                            resumed += 1
                            person.ledger.writes.append(Write(versions=write.versions, acknowledged=True,
                                                              source=write.source))
                    finally:
                        tab.close()
    server.stop()
    ledgers = [p.ledger for p in people]
    routines, threads = stored_data(home, ledgers)
    verdict = check_routines(ledgers, routines)
    check_threads(ledgers, threads, verdict)
    for person in people:
        for kind in ("lost", "duplicated", "leaked", "out_of_order"):
            getattr(verdict, kind).extend(f"live: {line}" for line in getattr(person.live, kind))
    ops = {op: {"calls": len(v), "p50_s": percentile(v, 50), "p99_s": percentile(v, 99)}
           for op, v in sorted(timings.seconds.items())}
    taught = sum(len(p.ledger.taught) for p in people)
    return {
        "users": n, "killed": kill_after is not None, "startup_s": round(startup, 1), "wall_s": round(wall, 1),
        "calls": timings.calls(), "calls_per_s": round(timings.calls() / wall, 2) if wall else 0.0,
        "ops": ops, "queue_waits": len(timings.waits), "queue_wait_p50_s": percentile(timings.waits, 50),
        "queue_wait_max_s": max(timings.waits, default=0.0), "taught_with_llm": taught,
        "llm_users": min(llm_users, n), "resumed_imports": resumed,
        "versions_stored": sum(len(v) for v in routines.values()),
        "failed_calls": len(timings.failed), "failed": timings.failed,
        **verdict.counts(), "findings": verdict.lines(), "errors": timings.errors,
        "load_before": load_before, "load_after": _load(), "home": str(home),
    }


# ------------------------------------------------------------------------------------------ reports
def table(rounds: list[dict[str, Any]], title: str, waits: bool = True) -> str:
    """The rounds as a Markdown table; `waits`: with the queue waits the page stated (the app's page
    states them; the LangGraph server has no such line)."""
    ops = sorted({op for r in rounds for op in r["ops"]})
    head = ["N", "kill -9", "calls", "calls/s", *[f"{op} p50/p99 s" for op in ops],
            *(["queue waits (p50/max s)"] if waits else []),
            "failed calls", "lost", "dup", "leaked", "out of order", "half-written"]
    lines = [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rounds:
        cells = [str(r["users"]), "yes" if r["killed"] else "", str(r["calls"]), f"{r['calls_per_s']:.2f}"]
        for op in ops:
            o = r["ops"].get(op)
            cells.append(f"{o['p50_s']:.2f} / {o['p99_s']:.2f}" if o else "")
        if waits:
            cells.append(f"{r['queue_waits']} ({r['queue_wait_p50_s']:.1f}/{r['queue_wait_max_s']:.1f})")
        cells += [str(r[k]) for k in ("failed_calls", "lost", "duplicated", "leaked", "out_of_order", "half_written")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The flat figures of `--json`: the data check summed over every round."""
    return {
        "max_users": max((r["users"] for r in rounds), default=0),
        "rounds": len(rounds),
        "lost": sum(r["lost"] for r in rounds),
        "duplicated": sum(r["duplicated"] for r in rounds),
        "leaked": sum(r["leaked"] for r in rounds),
        "out_of_order": sum(r["out_of_order"] for r in rounds),
        "half_written": sum(r["half_written"] for r in rounds),
        "failed_calls": sum(r["failed_calls"] for r in rounds),
        "calls": sum(r["calls"] for r in rounds),
        "kill_rounds": sum(1 for r in rounds if r["killed"]),
        **{f"calls_per_s_n{r['users']}{'_kill' if r['killed'] else ''}": r["calls_per_s"] for r in rounds},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["app", "server"], default="app")
    parser.add_argument("--users", default="1,4,16,32", help="People at once, one round each.")
    parser.add_argument("--kill-users", type=int, default=16, help="People in the kill -9 round (0: no such round).")
    parser.add_argument("--kill-after", type=float, default=0.4, help="Share of the round's calls answered before the kill.")
    parser.add_argument("--llm", default="local")
    parser.add_argument("--llm-users", type=int, default=2, help="People per round who also teach through the LLM.")
    parser.add_argument("--langgraph", default="langgraph", help="The `langgraph` executable (part server).")
    parser.add_argument("--scratch", type=Path, default=None, help="Where the rounds' homes go (default: a temporary folder).")
    parser.add_argument("--out", type=Path, default=Path("results/load"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="load-bench-"))
    scratch.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.users.split(",") if s.strip()]
    rounds: list[dict[str, Any]] = []
    if args.part == "app":
        for n in sizes:
            rounds.append(app_round(n, args.llm, args.llm_users, scratch, None))
            print(json.dumps({k: v for k, v in rounds[-1].items() if k not in ("findings", "errors")}), flush=True)
        if args.kill_users:
            rounds.append(app_round(args.kill_users, args.llm, args.llm_users, scratch, args.kill_after))
            print(json.dumps({k: v for k, v in rounds[-1].items() if k not in ("findings", "errors")}), flush=True)
    else:
        from load_server import server_rounds  # the LangGraph server's part

        rounds = server_rounds(args, sizes, scratch)
    title = "helper app over HTTP" if args.part == "app" else "LangGraph server"
    text = table(rounds, title, waits=args.part == "app")
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.part}.md").write_text(text)
    (args.out / f"{args.part}-rounds.json").write_text(json.dumps(rounds, indent=1))
    figures = summary(rounds)
    for key, value in figures.items():
        print(f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
