"""One browser tab's chat session: a user, a checkpointed thread, and the household it acts in.

A turn (a request, or the answer to the feedback question) runs the graph in a worker thread and
is read as a stream of `Progress` values: the conversation so far, the subgoal table, the home
picture, the node log, the trace. The page only renders them, so a turn can also be driven and
tested without a browser.

The conversation is rebuilt from the thread's checkpoints (`transcript`), with the same rules the
live view applies step by step (`step_messages`), so a reloaded page or a restarted app shows what
the person saw: the person's own answers (read back from the checkpoints' resume values, not the
log's "not satisfied (...)"), and the graph's notes in plain words (`facts.plain_note`), never a
node's name or an example's id (the node log keeps those).
"""

from __future__ import annotations

import queue
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.serde.types import RESUME as RESUME_CHANNEL
from langgraph.types import Command

from helper_agent.app.home import changes, picture
from helper_agent.app.trace import TurnTrace
from helper_agent.chat_runtime import (
    ChatRuntime,
    check_user,
    default_thread,
    llm_budget,
    outcome_text,
    pending_question,
)
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.graphs.base import AgentResult, EpisodeSetup
from helper_agent.graphs.helper.facts import plain_note, question_lines, step_outcome
from helper_agent.graphs.helper.nodes import CONFIRM_KIND
from helper_agent.graphs.helper.reading import CLARIFY_KIND
from helper_agent.graphs.registry import BuildRequest, build_agent
from helper_agent.llm import LLMUnavailable

Message = dict[str, str]
RESUME = "/resume"
SUBGOAL_COLUMNS = ["#", "subgoal", "outcome", "actions"]
# Log lines that go into the conversation, in plain words (`facts.plain_note`): the locator and
# corrections as they happen, replans, and any line about a routine (recalled, adapted).
SHOWN_NODES = ("locate", "correct", "replan", "finish")
# What the status line says while the LLM answers, by the call's name (not the node's name).
LLM_WORK = {"plan": "writing the program", "locate": "asking where to look", "correct": "writing a fix for the failed step",
            "read_feedback": "reading your answer", "replan": "writing what is missing",
            "request": "reading the changes you asked for", "read_changes": "reading the changes you asked for",
            "edit": "changing your routine", "name": "reading your routine's name", "program": "writing the program"}


def new_log_lines(before: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """The log lines a step added (all of them when a new request started the log again)."""
    log, old = list(values.get("log") or []), list(before.get("log") or [])
    return log[len(old):] if log[: len(old)] == old else log


def person_words(line: str) -> str:
    """What the person answered, as well as the log line says it (when the checkpoint's own resume
    value is not there): "feedback: not satisfied (the mug is dirty)" -> "the mug is dirty"."""
    said = line.partition(": ")[2]
    if line.startswith("feedback: "):
        if said == "satisfied":
            return "done"
        if said.startswith("not satisfied (") and said.endswith(")"):
            return said[len("not satisfied ("):-1]
    return said


def step_messages(prev: Any, snap: Any, replay: bool, heard: str | None = None) -> list[Message]:
    """What the conversation gains between two checkpoints of a thread. `replay`: rebuilding from
    history, where the person's own words come from the checkpoints too (`heard`: what the person
    answered to the question `prev` waited on, as they typed it)."""
    values, before = snap.values, (prev.values if prev is not None else {})
    out: list[Message] = []
    if replay and snap.next == ("retrieve",):
        out.append({"role": "user", "content": str(values.get("request", ""))})
        return out
    new = new_log_lines(before, values)
    for line in new:
        node = line.partition(":")[0]
        if node in ("feedback", "confirm") and replay:  # the answer to the question, or to "Store it?"
            out.append({"role": "user", "content": heard if heard is not None else person_words(line)})
            heard = None
        elif node in SHOWN_NODES or (node in ("retrieve", "plan") and "routine" in line):
            note = plain_note(line)
            if note:
                out.append({"role": "assistant", "content": f"_{note}_"})
    adaptation = values.get("adaptation") or {}
    if adaptation.get("summary") and adaptation != (before.get("adaptation") or {}):
        out.append({"role": "assistant", "content": f"**{adaptation['summary']}**"})  # the routine and the changes understood
    if snap.next[:1] == ("execute",) and values.get("program") and not values.get("plan_error") \
            and any(line.startswith("validate:") for line in new):
        out.append({"role": "assistant", "content": "My program:\n```python\n" + values["program"].strip("\n") + "\n```"})
    question = pending_question(snap)
    # A question once: not again for a checkpoint that waits on the same one (the feedback question,
    # then the confirmation of the routine to store, are two).
    if question and not (prev is not None and pending_question(prev) == question):
        out += question_messages(question)
    if not snap.next and values.get("outcome") and (prev is None or prev.next):
        _, text = outcome_text(values)  # steps need the live household; the reply does not
        # Words, not an emoji: a check mark was an empty box on a machine without an emoji font.
        out.append({"role": "assistant", "content": f"**Result:** {text}"})
    return out


def question_messages(payload: dict[str, Any]) -> list[Message]:
    """The feedback question as the conversation shows it: what was not done (and why) first, in
    plain words, then the question in bold (`question_lines`, what `helper chat` prints too)."""
    *before, question = question_lines(payload)
    return [*({"role": "assistant", "content": line} for line in before),
            {"role": "assistant", "content": f"**{question}**"}]


def subgoal_rows(values: dict[str, Any]) -> list[list[Any]]:
    """The whole request's subgoal runs (plan, corrections, replans) as table rows."""
    trace = (values.get("execution") or {}).get("trace") or []
    return [[n, subgoal, step_outcome(str(status)), actions] for n, (subgoal, status, actions) in enumerate(trace, 1)]


@dataclass
class Turn:
    """One graph run of the session, for the trace panel."""

    label: str
    trace: TurnTrace


@dataclass
class Progress:
    """What the page shows after each step of a turn."""

    messages: list[Message]
    subgoals: list[list[Any]]
    picture: Path | None
    log: list[str]
    status: str
    question: str | None = None
    done: bool = False


@dataclass
class Session:
    runtime: ChatRuntime
    chat_model: BaseChatModel
    user: str
    thread: str
    files: Path
    env: SymbolicEnv = field(default_factory=SymbolicEnv)
    messages: list[Message] = field(default_factory=list)
    subgoals: list[list[Any]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    picture: Path | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Held by the page from a send until its turn ends (waiting for another tab's turn included):
    # a second send meanwhile is refused in words and its text stays in the box (`refused`).
    busy: threading.Lock = field(default_factory=threading.Lock)
    refused: bool = False
    # The household when the current request started: the picture after each turn highlights
    # everything the request changed (its answer turn and replans included).
    request_start: list[dict[str, Any]] | None = None

    # ------------------------------------------------------------------------------ opening
    @classmethod
    def open(cls, runtime: ChatRuntime, chat_model: BaseChatModel, user: str, thread: str | None = None,
             scene: int = 0, room: str = "Kitchen", files: Path | None = None) -> Session:
        """The user's session `thread` (default: the one `helper chat --user U` uses), in the household
        its checkpoint holds, else a new one of `scene` and `room`. Raises `UnknownUser`."""
        user = check_user(user)
        session = cls(runtime, chat_model, user, thread or default_thread(user),
                      files or runtime.home / "app-files" / uuid.uuid4().hex[:8])
        if not runtime.household(session.thread, session.env, scene, room):
            # A new household goes into the thread now: the first request's start then has a household
            # to compare with, so a reloaded page can ring what that request changed.
            runtime.graph.update_state(runtime.config(session.thread), {"world": session.env.snapshot()},
                                       as_node="finish")
        session.messages = session.transcript()
        snap = runtime.snapshot(session.thread)
        if snap.next and pending_question(snap) is None:
            session.messages.append({"role": "assistant", "content": (
                f"Paused: the request “{snap.values.get('request', '')}” stopped before it finished "
                f"(the app or the LLM stopped); send **{RESUME}** to finish it, or ask something else.")})
        session.subgoals = subgoal_rows(snap.values)
        session.request_start = session.last_request_start()
        whole = changes(session.request_start, session.env.objects_metadata()) if session.request_start else None
        session.picture = picture(session.env, session.files, whole)
        return session

    def last_request_start(self) -> list[dict[str, Any]] | None:
        """The household's objects when the thread's last request started (what the picture's
        highlights compare with), or None when the household was replaced since (a new home)."""
        for snap in self.runtime.graph.get_state_history(self.runtime.config(self.thread)):  # newest first
            if snap.next == ("retrieve",):
                world = snap.values.get("world")
                if not world:
                    return None
                before = SymbolicEnv()
                before.restore(world)
                return before.objects_metadata()
            if (snap.metadata or {}).get("source") == "update":
                return None
        return None

    def new_thread(self) -> str:
        """A new session id of this user (`household:U:<id>`), in the same household."""
        return f"{default_thread(self.user)}:{uuid.uuid4().hex[:8]}"

    def confirming(self) -> bool:
        """Whether the thread waits on a yes-or-no question: the confirmation of a routine to store
        ("... Store it?") or what an unsure word means ("Do you mean the television?")."""
        pending = pending_question(self.runtime.snapshot(self.thread))
        return bool(pending and pending.get("kind") in (CONFIRM_KIND, CLARIFY_KIND))

    def question(self) -> str | None:
        """The question the thread waits on (feedback, with the last round's note, or the
        confirmation of a routine to store), or None."""
        pending = pending_question(self.runtime.snapshot(self.thread))
        return question_lines(pending)[-1] if pending else None

    def transcript(self) -> list[Message]:
        """The conversation of the thread, rebuilt from its checkpoints, with the person's answers
        as they typed them (each question's checkpoint keeps the value it was resumed with)."""
        config = self.runtime.config(self.thread)
        history = list(self.runtime.graph.get_state_history(config))
        answers = self.answers()
        messages: list[Message] = []
        prev = None
        for snap in reversed(history):
            heard = answers.get(_checkpoint_id(prev)) if prev is not None else None
            messages += step_messages(prev, snap, replay=True, heard=heard)
            prev = snap
        return messages

    def answers(self) -> dict[str, str]:
        """Checkpoint id -> what the person answered to the question it waited on."""
        found: dict[str, str] = {}
        for saved in self.runtime.graph.checkpointer.list(self.runtime.config(self.thread)):
            for _, channel, value in saved.pending_writes or []:
                if channel == RESUME_CHANNEL and isinstance(value, str):
                    found.setdefault(str(saved.config["configurable"]["checkpoint_id"]), value)
        return found

    def new_home(self, scene: int, room: str) -> None:
        """Act in a new household from now on (the session keeps its routines and conversation)."""
        self.env.reset(scene, room_type=room)
        self.request_start = None
        self.runtime.graph.update_state(self.runtime.config(self.thread), {"world": self.env.snapshot()},
                                        as_node="finish")
        self.picture = picture(self.env, self.files)

    # ------------------------------------------------------------------------------ turns
    def ask(self, request: str) -> Iterator[Progress]:
        """Run a request to its end or to the feedback question."""
        self.messages.append({"role": "user", "content": request})
        self.subgoals = []
        self.request_start = self.env.objects_metadata()
        yield from self._turn({"request": request, "user": self.user}, f"request: {request[:60]}")

    def answer(self, text: str) -> Iterator[Progress]:
        """Answer the feedback question the thread waits on."""
        self.messages.append({"role": "user", "content": text})
        yield from self._turn(Command(resume=text), f"feedback: {text[:60]}")

    def run_method(self, method: str, request: str, llm: str) -> Iterator[Progress]:
        """One request by another registered method (`helper run --agent NAME`): one episode in this
        household, without the feedback question or a checkpoint of its own; the household it
        leaves is written into the session's thread, so the next request starts from it."""
        self.messages.append({"role": "user", "content": f"[{method}] {request}"})
        self.subgoals = []
        before = self.env.objects_metadata()
        done: queue.Queue[AgentResult | BaseException] = queue.Queue()

        def work() -> None:
            try:
                agent = build_agent(method, BuildRequest.interactive(self.chat_model))
                done.put(agent.run(EpisodeSetup(env=self.env, request=request, user=self.user, tags=["app", method])))
            except Exception as exc:  # noqa: BLE001 - shown in the page
                done.put(exc)

        with self.lock:
            worker = threading.Thread(target=work, name=f"{method}-{self.thread}", daemon=True)
            worker.start()
            yield self._progress(f"{method} is working (its steps show when it ends)...")
            result = done.get()
            worker.join()
            if isinstance(result, BaseException):
                self.messages.append({"role": "assistant", "content": f"⚠️ {explain_error(result)}"})
            else:
                if result.program:
                    self.messages.append({"role": "assistant", "content": f"{method} wrote:\n```\n{result.program.strip()}\n```"})
                self.subgoals = [[n, *row] for n, row in enumerate(result.trace, 1)]
                self.log += result.log
                self.messages.append({"role": "assistant", "content": f"{method}: {step_outcome(result.outcome)}"
                                      + (f" ({result.error})" if result.error else "")})
            self.runtime.graph.update_state(self.runtime.config(self.thread), {"world": self.env.snapshot()},
                                            as_node="finish")
            self.picture = picture(self.env, self.files, changes(before, self.env.objects_metadata()))
            yield self._progress("", done=True)

    def resume(self) -> Iterator[Progress]:
        """Finish a request a stopped process left between two nodes."""
        yield from self._turn(None, "resumed request")

    def _turn(self, payload: Any, label: str) -> Iterator[Progress]:
        events: queue.Queue[tuple[Any, ...]] = queue.Queue()
        start = {"meta": self.env.objects_metadata(), "subgoal": self.env.objects_metadata()}

        def on_event(kind: str, *args: Any) -> None:  # runs in the graph's thread
            if kind == "subgoal_started":
                start["subgoal"] = self.env.objects_metadata()
            elif kind == "subgoal_finished":
                changed = changes(start["subgoal"], self.env.objects_metadata())
                events.put(("subgoal", args, picture(self.env, self.files, changed)))
                return
            events.put((kind, *args))

        trace = TurnTrace(on_event)
        self.turns.append(Turn(label, trace))
        config = self.runtime.config(self.thread, run_name="helper app", callbacks=[trace])
        context = self.runtime.context(self.env, self.chat_model, self.user)

        def work() -> None:
            try:
                prev = self.runtime.graph.get_state(config)
                with llm_budget():  # each request (and each answer's replan) under its own LLM budget
                    for _ in self.runtime.graph.stream(payload, config, context=context, stream_mode="updates",
                                                       durability="sync"):
                        snap = self.runtime.graph.get_state(config)
                        events.put(("step", prev, snap))
                        prev = snap
                events.put(("end",))
            except Exception as exc:  # noqa: BLE001 - shown in the page; the thread keeps its checkpoint
                events.put(("error", exc))

        with self.lock:
            worker = threading.Thread(target=work, name=f"turn-{self.thread}", daemon=True)
            worker.start()
            status = "planning..."
            yield self._progress(status)
            while True:
                event = events.get()
                kind = event[0]
                if kind == "llm":
                    status = f"asking the LLM: {LLM_WORK.get(str(event[1]).rpartition(':')[2], 'thinking')}..."
                elif kind == "subgoal":
                    name, outcome, actions = event[1]
                    self.subgoals.append([len(self.subgoals) + 1, name, step_outcome(str(outcome)), actions])
                    self.picture = event[2]
                    status = f"{name}: {step_outcome(str(outcome))}"
                elif kind == "step":
                    prev, snap = event[1], event[2]
                    self.messages += step_messages(prev, snap, replay=False)
                    self.log += new_log_lines(prev.values, snap.values)
                    if (snap.values.get("execution") or {}).get("trace") is not None:
                        self.subgoals = subgoal_rows(snap.values) or self.subgoals
                    status = "working..." if snap.next else ""
                elif kind == "error":
                    exc = event[1]
                    self.messages.append({"role": "assistant", "content": f"⚠️ {explain_error(exc)}"})
                    status = "stopped by an error"
                    break
                elif kind == "end":
                    break
                yield self._progress(status)
            worker.join()
            whole = changes(self.request_start or start["meta"], self.env.objects_metadata())
            self.picture = picture(self.env, self.files, whole)
            pending = pending_question(self.runtime.snapshot(self.thread))
            asked = question_messages(pending) if pending else []
            if asked and self.messages[-len(asked):] != asked:
                self.messages += asked
            yield self._progress("" if kind == "end" else status, question=self.question(), done=True)

    def _progress(self, status: str, question: str | None = None, done: bool = False) -> Progress:
        return Progress(list(self.messages), [list(row) for row in self.subgoals], self.picture,
                        list(self.log[-200:]), status, question, done)


def _checkpoint_id(snap: Any) -> str:
    return str(((snap.config or {}).get("configurable") or {}).get("checkpoint_id", ""))


def explain_error(exc: BaseException) -> str:
    """One line for the page: an LLM that is down says which and how to start one."""
    if isinstance(exc, LLMUnavailable):
        return (f"the LLM is not available: {exc}. Start one (`make demo` installs the local model; an "
                "OpenAI-compatible server: `python -m llama_cpp.server --model MODEL.gguf --n_ctx 4096`) "
                "and pick it with `helper app --llm SPEC`; the request stays in this session.")
    return f"{type(exc).__name__}: {exc}"
