"""What `helper chat` and `helper app` share: one household chat runtime over the HELPER graph.

Both front ends drive the same compiled graph, the same SQLite checkpointer (`<home>/checkpoints.sqlite`)
and the same memories, so a session started in the browser can be continued at the terminal and the
other way round. A session is a checkpointed thread; its household travels in the checkpoint's
`world` (the graph writes it when `keep_snapshots` is on), so a restarted process resumes in the
household it left.

Only the graph's public interface is used here: `build_graph`, the typed state's keys, the
`interrupt` payload of `ask_feedback` and the checkpointer's thread ids.
"""

from __future__ import annotations

import inspect
import re
import sqlite3
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from helper_agent import tracing
from helper_agent.config import get_settings
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.graphs.base import AgentResult, EpisodeSetup
from helper_agent.graphs.helper import HelperConfig, HelperContext, build_graph
from helper_agent.graphs.helper.agent import Memories
from helper_agent.graphs.helper.facts import request_facts
from helper_agent.graphs.helper.nodes import CONFIRM_KIND
from helper_agent.llm import LLMBudget, LLMError

USER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
"""A user name: it becomes part of thread ids and routine collection names, so letters, digits,
`_`, `.` and `-` only (a `:` would make one user's sessions look like another's)."""


MAX_REQUEST_CHARS = 2000
"""The longest request a person may type (`helper chat`, `helper app`); a TEACh dialogue loaded
from an instance file is not typed and not bounded. A 10,000-character paste was planned whole."""


class RequestTooLong(ValueError):
    """A typed request longer than `MAX_REQUEST_CHARS`."""


def check_request(text: str) -> str:
    """The request, or `RequestTooLong` saying the bound (nothing is cut silently)."""
    if len(text) > MAX_REQUEST_CHARS:
        raise RequestTooLong(f"the request has {len(text):,} characters; the limit is {MAX_REQUEST_CHARS:,}: "
                             "say it in fewer words")
    return text


class UnknownUser(ValueError):
    """A user name that cannot name a household (empty, or characters a thread id cannot carry)."""


def check_user(user: str | None) -> str:
    """The user name, stripped, or `UnknownUser` saying what a name may hold."""
    name = (user or "").strip()
    if not USER_NAME.match(name):
        shown = repr(name) if name else "an empty name"
        raise UnknownUser(f"unknown user {shown}: a user is a name of letters, digits, '_', '.' or '-' "
                          "(at most 40), e.g. mary")
    return name


def default_thread(user: str) -> str:
    """The thread `helper chat --user U` uses when none is given: the user's household."""
    return f"household:{user}"


def is_users_thread(thread: str, user: str) -> bool:
    """Whether `thread` is one of `user`'s sessions (`household:U` or `household:U:<id>`)."""
    base = default_thread(user)
    return thread == base or thread.startswith(base + ":")


@dataclass
class ChatRuntime:
    """The graph, its checkpointer and the memories of one chat home (`HELPER_HOME` or `--home`)."""

    home: Path
    memories: Memories
    connection: sqlite3.Connection
    graph: Any
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def open(cls, home: Path | None = None) -> ChatRuntime:
        """Open (creating) the home. With a Chroma server configured the memories live on it, in the
        shared collections that `helper routines` reads (what a person teaches reaches the shared
        store); else in the memory folder of an explicit `home`, or the settings' memory folder."""
        settings = get_settings()
        own_home = home is not None
        home = home or settings.home
        home.mkdir(parents=True, exist_ok=True)
        memories = Memories.at(str(home / "memory") if own_home and not settings.chroma_host else None)
        connection = sqlite3.connect(str(home / "checkpoints.sqlite"), check_same_thread=False)
        return cls(home, memories, connection, build_graph(SqliteSaver(connection)))

    def close(self) -> None:
        self.connection.close()

    def context(self, env: SymbolicEnv, chat_model: BaseChatModel, user: str,
                config: HelperConfig | None = None) -> HelperContext:
        """The runtime context of a person's request: no feedback source (a person answers the
        feedback question through `interrupt`) and the household kept in every checkpoint, so a
        chat killed mid-task resumes in the household it left."""
        return HelperContext(env=env, chat_model=chat_model, examples=self.memories.examples,
                             corrections=self.memories.corrections, routines=self.memories.routines,
                             config=config or chat_config(), keep_snapshots=True,
                             tags=["chat", f"user:{user}"])

    @staticmethod
    def config(thread: str, run_name: str = "helper chat", callbacks: list[Any] | None = None) -> dict[str, Any]:
        """The graph's run config for a thread. The checkpoints keep the household; the traces do
        not (`helper_agent.tracing`)."""
        return {"configurable": {"thread_id": thread}, "run_name": run_name, "tags": ["chat"],
                "callbacks": [*tracing.household_free_callbacks(), *(callbacks or [])]}

    def snapshot(self, thread: str) -> Any:
        return self.graph.get_state(self.config(thread))

    def household(self, thread: str, env: SymbolicEnv, scene: int = 0, room: str = "Kitchen") -> bool:
        """Put `env` in the household the thread's checkpoint holds (True), else a new one of
        `scene` and `room` (False)."""
        world = self.snapshot(thread).values.get("world")
        if world:
            env.restore(world)
            return True
        env.reset(scene, room_type=room)
        return False

    def run_request(self, thread: str, context: HelperContext, request: str, user: str,
                    answer: Callable[[dict[str, Any]], str], run_name: str = "helper chat") -> dict[str, Any]:
        """One request to its end, as `helper chat` drives it, with `answer(payload)` standing for
        the person at each feedback question (the `interrupt` payload); under the request's own LLM
        budget. An LLM that fails ends the request in the thread (`llm_budget`/`llm_unavailable`),
        as in the chat. Returns the thread's final state values."""
        config = self.config(thread, run_name)
        payload: Any = {"request": request, "user": user}
        try:
            with llm_budget():
                while True:
                    self.graph.invoke(payload, config, context=context, durability="sync")
                    question = pending_question(self.graph.get_state(config))
                    if question is None:
                        break
                    payload = Command(resume=answer(question))
        except LLMError as exc:
            outcome = "llm_budget" if "budget" in type(exc).__name__.lower() else "llm_unavailable"
            self.graph.update_state(config, {"outcome": outcome, "execution": {"status": outcome, "error": str(exc)},
                                             "log": [f"stopped: {type(exc).__name__}: {exc}"]}, as_node="finish")
        return dict(self.graph.get_state(config).values)

    def threads(self, user: str) -> list[str]:
        """The user's sessions (checkpointed threads), most recently used first."""
        with self._lock:
            try:
                rows = self.connection.execute(
                    "SELECT thread_id, MAX(checkpoint_id) FROM checkpoints GROUP BY thread_id").fetchall()
            except sqlite3.OperationalError:  # no checkpoint written yet: the table does not exist
                return []
        rows.sort(key=lambda row: row[1] or "", reverse=True)
        return [thread for thread, _ in rows if is_users_thread(str(thread), user)]


def pending_question(snapshot: Any) -> dict[str, Any] | None:
    """The `interrupt` payload the thread waits on (the feedback question), if any."""
    for task in snapshot.tasks:
        for waiting in task.interrupts:
            value = waiting.value
            return value if isinstance(value, dict) else {"question": str(value)}
    return None


def source_answer(source: Callable[..., str] | None, payload: dict[str, Any]) -> str:
    """An evaluation's answer to the question the thread waits on (`payload`, the `interrupt` value).

    A source that takes the payload (`helper eval requests`' scripted person) answers either question
    itself. A feedback source that takes nothing (a checker's sentence, "" when nothing is missing)
    answers the feedback question; asked to confirm a routine before it is stored, its "" (the task
    is done) is a yes, which stores what the request taught as before the question existed."""
    if source is None:
        return ""
    try:
        takes_payload = bool(inspect.signature(source).parameters)
    except (TypeError, ValueError):
        takes_payload = False
    if takes_payload:
        return source(payload)
    said = source()
    return ("yes" if not said.strip() else said) if payload.get("kind") == CONFIRM_KIND else said


def outcome_text(values: dict[str, Any], env: Any = None) -> tuple[bool, str]:
    """The request's end as (succeeded, one line), from this request's facts only (`request_facts`,
    the line `helper chat` prints)."""
    facts = request_facts(values, getattr(env, "steps", None), getattr(env, "failures", None))
    return bool(facts.succeeded), facts.reply()


def chat_config(feedback_rounds: int = 2, max_steps: int | None = None) -> HelperConfig:
    """The graph's settings for a person's requests, as `helper chat` has them by default: two
    feedback rounds, and each request's own step and failure budgets from the settings."""
    settings = get_settings()
    return HelperConfig(feedback_rounds=feedback_rounds, max_steps=max_steps or settings.max_steps,
                        max_failures=settings.max_failures)


def llm_budget() -> LLMBudget:
    """One request's LLM time budget (`HELPER_LLM_BUDGET_SECONDS`, else 600 s, as in `helper chat`)."""
    return LLMBudget(get_settings().llm_budget_seconds or 600.0)


class ChatAgent:
    """`helper chat`'s runtime as an agent of the evaluation harness (`graphs.base.Agent`): each
    episode is one request on a thread of its own, through the chat's graph, checkpointer and
    memories; the person who answers the feedback question is the episode's `feedback` source
    (`helper eval requests` hands it a scripted person). Requests of the same user share that
    user's routines, as in the chat: a routine taught in one episode is recalled in a later one."""

    oracle = False

    def __init__(self, runtime: ChatRuntime, chat_model: BaseChatModel, config: HelperConfig | None = None,
                 name: str = "helper-chat") -> None:
        self.runtime, self.chat_model, self.config, self.name = runtime, chat_model, config or chat_config(), name

    def run(self, setup: EpisodeSetup) -> AgentResult:
        user = check_user(setup.user or "person")
        # A new thread per episode: a request interrupted by a crash is never resumed by a retry.
        thread = f"eval:{setup.instance_id or 'request'}:{uuid.uuid4().hex[:8]}"
        context = self.runtime.context(setup.env, self.chat_model, user, self.config)  # type: ignore[arg-type]
        person = setup.feedback
        values = self.runtime.run_request(thread, context, setup.request, user,
                                          lambda payload: source_answer(person, payload),
                                          run_name=f"{self.name}: {setup.instance_id}")
        facts = request_facts(values, getattr(setup.env, "steps", None), getattr(setup.env, "failures", None))
        execution = values.get("execution") or {}
        return AgentResult(outcome=facts.outcome, program=str(values.get("program") or ""), log=facts.log,
                           usage={"llm_calls": facts.llm_calls, "llm_seconds": facts.llm_seconds},
                           trace=list(execution.get("trace") or []), reply=facts.reply(),
                           error=facts.error if facts.outcome in ("llm_unavailable",) else None)
