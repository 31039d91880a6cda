"""The agents the episode harness runs, behind one small protocol.

An agent is handed an `EpisodeSetup` (the live environment, the request, and a feedback source)
and acts; it returns what it did. It never scores itself: the harness checks the environment
afterwards. Oracles are agents too, labelled as such; only they are handed the episode's reference
(the gold program, the reference future actions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.envs.base import Environment
from helper_agent.graphs.helper import HelperConfig, HelperContext, build_graph
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.routines import RoutineMemory
from helper_agent.program import ProgramError, compile_program
from helper_agent.tools.executor import Executor, ExecutorConfig


@dataclass
class Reference:
    """What only an oracle may see: the episode's gold program and reference future actions."""

    gold_program: str | None = None
    future_actions: list[tuple[str, str | None]] = field(default_factory=list)
    replay: bool = False  # EDH: the gold agent replays the reference future actions


@dataclass
class EpisodeSetup:
    """What an agent is handed for one episode."""

    env: Environment
    request: str  # the dialogue, or a person's request
    instance_id: str = ""
    user: str | None = None
    feedback: Callable[[], str] | None = None  # answers "is the task done?"; None: no feedback
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    reference: Reference | None = None  # filled by the harness for oracles only


@dataclass
class AgentResult:
    """What an agent reports about its episode (its own account, not a score)."""

    outcome: str
    program: str = ""
    log: list[str] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=dict)
    trace: list[list[Any]] = field(default_factory=list)  # [subgoal, status, actions] per subgoal run
    error: str | None = None


@runtime_checkable
class Agent(Protocol):
    name: str
    oracle: bool

    def run(self, setup: EpisodeSetup) -> AgentResult: ...


@dataclass
class Memories:
    examples: ExampleMemory
    corrections: CorrectionMemory
    routines: RoutineMemory

    @classmethod
    def at(cls, path: str | None = None) -> Memories:
        """The memories of one folder, or of the Chroma server when one is configured.

        With `HELPER_CHROMA_HOST` set the server always wins: `path=None` gives the shared
        collections (`helper chat`, `helper run` and `helper routines` use them), a `path` (an
        evaluation's `<out>/memory`) gives that run's own collections on the server, prefixed with
        `server_namespace(path)`, so runs do not mix. Without a server, `path` is a local folder
        (default: the settings' memory folder).
        """
        from helper_agent.memory.settings import get_memory_settings

        if get_memory_settings().chroma_host:
            prefix = f"{server_namespace(path)}." if path else ""
            return cls(*(kind(collection=prefix + kind.default_collection)
                         for kind in (ExampleMemory, CorrectionMemory, RoutineMemory)))
        kwargs: dict[str, Any] = {"path": path} if path else {}
        return cls(ExampleMemory(**kwargs), CorrectionMemory(**kwargs), RoutineMemory(**kwargs))


def server_namespace(path: str) -> str:
    """The collection prefix of a memory folder's stand-in on a Chroma server: the folder's last
    names (readable in the server's collection list) and a hash of its absolute path (unique)."""
    import hashlib
    import os
    import re

    absolute = os.path.abspath(os.path.expanduser(path))
    readable = re.sub(r"[^A-Za-z0-9]+", "-", "-".join(absolute.split(os.sep)[-3:])).strip("-")[-40:].strip("-")
    return f"{readable or 'memory'}-{hashlib.sha256(absolute.encode()).hexdigest()[:10]}"


class HelperAgent:
    """HELPER: the LangGraph graph of `graphs/helper`, run on the environment it is handed."""

    oracle = False

    def __init__(self, chat_model: BaseChatModel, memories: Memories, config: HelperConfig | None = None,
                 name: str = "helper") -> None:
        self.name = name
        self.chat_model = chat_model
        self.memories = memories
        self.config = config or HelperConfig()
        self.graph = build_graph()
        # Built once and shared by every episode: the diagnoser and class mapper embed fixed texts.
        shared = HelperContext(examples=memories.examples)
        self._diagnoser = shared.failure_diagnoser()
        self._mapper = shared.mapper()

    def context(self, setup: EpisodeSetup) -> HelperContext:
        return HelperContext(
            env=setup.env, chat_model=self.chat_model, examples=self.memories.examples,
            corrections=self.memories.corrections, routines=self.memories.routines, feedback=setup.feedback,
            config=self.config, diagnoser=self._diagnoser, class_mapper=self._mapper,
            tags=list(setup.tags), metadata=dict(setup.metadata),
        )

    def run(self, setup: EpisodeSetup) -> AgentResult:
        context = self.context(setup)
        state = self.graph.invoke(
            {"request": setup.request, "user": setup.user},
            config={"run_name": f"{self.name}:{setup.instance_id}", "tags": context.tags,
                    "metadata": context.metadata, "recursion_limit": 100},
            context=context,
        )
        return AgentResult(outcome=state.get("outcome", ""), program=state.get("program", ""),
                           log=list(state.get("log", [])), usage=context.usage.summary(),
                           trace=list((state.get("execution") or {}).get("trace") or []))


def oracle_chat_model(program: str) -> BaseChatModel:
    """A LangChain fake chat model that answers every call with `program` (so it is traced and
    counted like any model)."""
    return FakeListChatModel(responses=[f"```python\n{program}\n```"])


class OracleGraphAgent:
    """ORACLE: the full HELPER graph whose chat model answers every call with the gold program.
    It measures the graph and executor without LLM time."""

    name = "oracle-graph"
    oracle = True

    def __init__(self, memories: Memories, config: HelperConfig | None = None) -> None:
        self.helper = HelperAgent(oracle_chat_model(""), memories, config, name=self.name)

    def run(self, setup: EpisodeSetup) -> AgentResult:
        if setup.reference is None or not setup.reference.gold_program:
            raise ValueError(f"{setup.instance_id}: no gold program for the oracle planner")
        self.helper.chat_model = oracle_chat_model(setup.reference.gold_program)
        return self.helper.run(setup)


class GoldAgent:
    """ORACLE: runs the gold program through the executor (TfD), or replays the reference future
    actions (EDH). It measures the ceiling of the world and executor on a dataset."""

    name = "gold"
    oracle = True

    def run(self, setup: EpisodeSetup) -> AgentResult:
        reference = setup.reference or Reference()
        if reference.replay:
            for action, oid in reference.future_actions:
                setup.env.step(action, oid)
            return AgentResult(outcome="replayed")
        if reference.gold_program:
            result = Executor(setup.env).run(compile_program(reference.gold_program).subgoals)
            return AgentResult(outcome=result.status, program=reference.gold_program)
        raise ValueError(f"{setup.instance_id}: no gold program (the gold planner needs the built-in benchmark)")


class ProgramAgent:
    """Runs a program a function chooses for the request, through the executor, with no LLM.
    The personalization baselines (the gold adapted program, the unmodified routine) are these."""

    def __init__(self, name: str, choose: Callable[[EpisodeSetup], str], oracle: bool = False,
                 config: ExecutorConfig | None = None) -> None:
        self.name = name
        self.choose = choose
        self.oracle = oracle
        self.config = config

    def run(self, setup: EpisodeSetup) -> AgentResult:
        program = self.choose(setup)
        try:
            compiled = compile_program(program)
        except ProgramError as err:
            return AgentResult(outcome="program_error", program=program, log=[f"rejected: {err}"], error=str(err))
        result = Executor(setup.env, config=self.config).run(compiled.subgoals)
        return AgentResult(outcome=result.status, program=program, log=[f"execute: {result.status}"],
                           error=result.error or None)
