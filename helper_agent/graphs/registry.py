"""Name -> method: the one list `--agent`, `helper run`, the app, the served graphs and
`langgraph.json` read.

A method is a package under `graphs/` whose `agent.py` holds a `METHOD = Method(...)`: its name,
one line saying what it is, the switches it takes (`--agent-option KEY=VALUE`), and
`build(request) -> Agent`. Adding one to the project is that package plus one line in
`BUILTIN_METHODS`; a third-party package adds one without touching our files through the
entry-point group `helper_agent.methods` (as `helper_agent.memories` does for memories)::

    [project.entry-points."helper_agent.methods"]
    react = "my_package.react.agent:METHOD"

`register_method(method)` does the same at run time.

A method is built from a `BuildRequest`: the chat model, its switches, the memory folder, the seed,
the feedback rounds, and, in an evaluation, the dataset and a reader of its train split. The
graphs may not read datasets (`teach/` sits below them only for the harness), so the evaluation
layer reads the train split and hands it over as plain `TrainingEpisode`s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint

from langchain_core.language_models import BaseChatModel

from helper_agent.graphs.base import Agent
from helper_agent.graphs.options import check_known
from helper_agent.plugins import Registry

ENTRY_POINT_GROUP = "helper_agent.methods"

#: The project's methods, in the order help texts list them: name -> "module:attribute" of its `Method`.
BUILTIN_METHODS: dict[str, str] = {
    "helper": "helper_agent.graphs.helper.agent:METHOD",
    "llm-planner": "helper_agent.graphs.llm_planner.agent:METHOD",
    "prag": "helper_agent.graphs.prag.agent:METHOD",
    "embodiedrag": "helper_agent.graphs.embodiedrag.agent:METHOD",
}


@dataclass(frozen=True)
class TrainingEpisode:
    """One episode of a dataset's train split, as a method may learn from it: the instruction
    (the dialogue), the reference actions that did the task, and the task family."""

    id: str  # "<split>:<instance id>"
    instruction: str
    actions: list[tuple[str, str | None]]  # (action, object id) of the reference future
    family: str = ""


@dataclass(frozen=True)
class ActionExample:
    """One solved task a benchmark lends a method as an in-context example: the task as an agent is
    told it, the steps that did it (named actions, `graphs/action_sequences.Step`), and the object
    names that task's actions could take (LLM-Planner's visible objects)."""

    id: str
    request: str
    steps: tuple[tuple[str, tuple[str, ...]], ...]
    objects: tuple[str, ...] = ()


#: `(instance id, request, k) -> up to k examples` for the episode `instance id`. The benchmark owns
#: the pool and its rule (EAI: cross-task gold sequences from tasks 101-342, each checked against
#: the evaluated task, `evals/studies/eai/pool.py`); a method only asks.
ExampleSource = Callable[[str, str, int], list[ActionExample]]


@dataclass
class BuildRequest:
    """What a method is built from (one per run, or per interactive request)."""

    chat_model: BaseChatModel
    options: dict[str, str] = field(default_factory=dict)  # the method's switches (`-o KEY=VALUE`)
    memory_dir: str | None = None  # the run's memory folder; None: the user's shared memories
    seed: int = 0
    feedback: int = 0  # feedback rounds the harness may answer (`--feedback`)
    ablate: str | None = None  # HELPER's `--ablate` (mem, precheck, correction, locator)
    data: str = ""  # the dataset folder the run reads ("": none, an interactive request)
    training: Callable[[], list[TrainingEpisode]] | None = None  # its train split, read by the caller
    examples: ExampleSource | None = None  # a benchmark's solved tasks as examples (EAI's gold pool)

    @classmethod
    def interactive(cls, chat_model: BaseChatModel, options: dict[str, str] | None = None, *,
                    task_known: bool = False) -> BuildRequest:
        """One interactive request (`helper run`, the app, the served graphs): the user's shared
        memories, no dataset; feedback comes from the checker only when the task is known (an
        instance), since a plain request has nobody to ask."""
        return cls(chat_model=chat_model, options=dict(options or {}), feedback=1 if task_known else 0)


@dataclass(frozen=True)
class ExperienceUse:
    """How a method reads an experience memory (`memory/experience.ExperienceMemory`): a database of
    its own past episodes (goal, per step the scene graph, action and observation, done flag) that
    `helper eval progressive` fills between iterations. A method that declares one reads the
    database folder from its switch `option`, and reports its trajectory as P-RAG does
    (`AgentResult.trace`: `[action, observation, scene graph]` per step), so the iteration can store it.
    """

    option: str = "database"  # the switch naming the database folder (none: the empty iteration 0)
    retrieval_options: tuple[str, ...] = ()  # switches that act only through what is retrieved


@dataclass(frozen=True)
class Method:
    """A method as the registry knows it."""

    name: str
    summary: str  # one line: the paper and what the method does (help texts, `helper methods`)
    build: Callable[[BuildRequest], Agent]
    options: tuple[str, ...] = ()  # the switches `-o KEY=VALUE` takes
    check: Callable[[dict[str, str]], object] | None = None  # raises ValueError on a bad value
    served_graph: str | None = None  # "module:attribute" of its own served graph; None: the generic one
    experience: ExperienceUse | None = None  # how it reads an experience memory; None: it has none

    def check_options(self, options: dict[str, str]) -> None:
        """Refuse an unknown switch or a bad value before a run starts (every episode would
        otherwise find it and be recorded as that many errors)."""
        check_known(options, self.options, self.name)
        if self.check is not None:
            self.check(options)


class UnknownAgent(ValueError):
    pass


def _method_of(name: str, loaded: object, entry: EntryPoint) -> Method:
    """An entry point names a `Method`, or a callable that returns one, called `name`."""
    method = loaded if isinstance(loaded, Method) else loaded()  # type: ignore[operator]
    if not isinstance(method, Method) or method.name != name:
        raise UnknownAgent(f"entry point {entry.value!r} in group {ENTRY_POINT_GROUP!r} must name a Method "
                           f"called {name!r}")
    return method


METHODS: Registry[Method] = Registry(group=ENTRY_POINT_GROUP, builtins=BUILTIN_METHODS, noun="method",
                                     unknown="unknown agent {name!r}; choose from {choices}", error=UnknownAgent,
                                     adopt=_method_of)
"""The methods: run-time registrations, `BUILTIN_METHODS`, the entry points (`helper_agent.plugins`)."""


def register_method(method: Method, *, replace: bool = False) -> None:
    """Make `method` buildable by its name."""
    METHODS.register(method.name, method, replace=replace)


def method_names() -> list[str]:
    """Every name `--agent` takes: the built-ins in their order, then run-time registrations and
    entry points, sorted."""
    return METHODS.names()


def get_method(name: str) -> Method:
    """The method registered under `name` (imported only now: a method's extra dependencies load
    only for its runs)."""
    return METHODS.get(name)


def experience_use(name: str) -> ExperienceUse:
    """How the method `name` reads its experience memory; a `ValueError` that says which methods have
    one when it has none (progressive iteration fills a database only such a method reads)."""
    method = get_method(name)
    if method.experience is None:
        having = [n for n in method_names() if get_method(n).experience is not None]
        raise ValueError(f"{name} has no experience memory to iterate on; methods that have one: "
                         f"{', '.join(having) or 'none'}")
    return method.experience


def build_agent(name: str, request: BuildRequest) -> Agent:
    """The agent `name` names, built with the method's own switches (checked first)."""
    method = get_method(name)
    method.check_options(request.options)
    return method.build(request)


def check_agent_options(name: str, options: dict[str, str], oracles: tuple[str, ...] = ()) -> None:
    """Refuse `name`'s switches before a run starts; an oracle (`oracles`) takes no switches."""
    if name in oracles:
        check_known(options, (), name)
        return
    get_method(name).check_options(options)
