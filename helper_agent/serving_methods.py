"""Served graphs for every registered method without a served graph of its own (`langgraph.json`):
LLM-Planner, P-RAG, EmbodiedRAG and any plug-in method; HELPER's is `helper_agent.serving`.

Each method's graph acts on an environment handed to it and never builds one, so, as for HELPER
(`helper_agent.serving`), the server runs an outer graph: its one node builds the household from the
run's typed input (a generated room, or a TEACh instance's initial state), builds the method the way
`helper run --agent NAME` does (the user's shared memories, the method's own switches), lets it act,
and returns what it did. With an instance the output also carries TEACh's checker verdict, computed
by the harness after the agent has finished; the agent never sees it. These methods ask no person
anything, so there is no interrupt: with an instance, the feedback they may get is the checker's, as
in `helper run --instance`.

    input   {"request": "make me a coffee", "room": "Kitchen", "seed": 7}
    context {"llm": "local:1.5b", "options": ["replan=off", "k=9"]}

The graphs come from the method registry (`graphs/registry.py`): this module holds one served graph
per such method as the attribute `graph_attribute(name)` (`llm-planner` -> `llm_planner`), and
`langgraph_config()` is `langgraph.json` as the registry says it (`helper methods langgraph-json`
writes it; a test checks the committed file against it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict  # pydantic builds JSON schemas only from this one on Python < 3.12

from helper_agent.evals.engine.harness import run_instance
from helper_agent.graphs.base import EpisodeSetup
from helper_agent.graphs.options import parse_agent_options
from helper_agent.graphs.registry import BuildRequest, build_agent, get_method, method_names
from helper_agent.serving import served_chat_model, served_household, served_llm, served_path

ROOT = Path(__file__).resolve().parents[1]


class MethodInput(TypedDict, total=False):
    """One request in a generated room, or a TEACh instance's household."""

    request: str  # what to do; with an instance, its dialogue when empty
    room: str  # Kitchen, LivingRoom, Bedroom or Bathroom (generated household)
    seed: int  # seed of the generated household
    instance: str | None  # a TfD/EDH instance file in a folder of HELPER_SERVE_FOLDERS (its game in the dataset layout)


class MethodOutput(TypedDict, total=False):
    """What the agent did, by its own account, and (with an instance) the checker's verdict."""

    request: str
    program: str  # the plans (LLM-Planner) or actions the method wrote
    outcome: str
    log: list[str]
    subgoals: list[list[Any]]
    usage: dict[str, float]
    steps: int
    checker: dict[str, Any] | None


class MethodState(MethodInput, MethodOutput, total=False):
    pass


@dataclass
class MethodContext:
    """Run settings a client may set: the chat model and the method's switches, as `-o KEY=VALUE`
    takes them on the command line (checked by the method; an unknown key is an error)."""

    llm: str = ""  # chat model spec: "" = HELPER_LLM, or one of the server's HELPER_SERVE_LLMS
    options: list[str] = field(default_factory=list)


_LOCK = threading.Lock()
_AGENTS: dict[tuple[str, str, tuple[str, ...], bool], Any] = {}


def served_method_names() -> list[str]:
    """The registered methods served by this module's graph (those without a served graph of their own)."""
    return [name for name in method_names() if get_method(name).served_graph is None]


def graph_attribute(name: str) -> str:
    """The attribute of this module that holds method `name`'s served graph."""
    return name.replace("-", "_").replace(".", "_")


PATH_OPTIONS = ("pool",)
"""Method switches whose value is a file on the server (LLM-Planner's `pool=FILE`): a client may
name only files in the folders of HELPER_SERVE_FOLDERS (`helper_agent.serving.served_path`)."""


def served_options(options: list[str]) -> list[str]:
    """The run's `-o KEY=VALUE` switches, with every path switch checked against the served folders."""
    out = []
    for option in options:
        key, sep, value = str(option).partition("=")
        if key.strip() in PATH_OPTIONS and sep:
            option = f"{key.strip()}={served_path(value.strip(), f'options {key.strip()}')}"
        out.append(option)
    return out


def _agent(method: str, llm: str, options: list[str], task_known: bool) -> Any:
    """One agent per (method, model, switches, task known) per server process: its memories and
    model load once. Whether the task is known is in the key because a method may build on it
    (EmbodiedRAG's feedback)."""
    key = (method, llm, tuple(sorted(options)), task_known)
    with _LOCK:
        if key not in _AGENTS:
            request = BuildRequest.interactive(served_chat_model(llm), parse_agent_options(options), task_known=task_known)
            _AGENTS[key] = build_agent(method, request)
        return _AGENTS[key]


def _episode_node(method: str) -> Any:
    def episode(state: MethodState, runtime: Runtime[MethodContext], config: RunnableConfig) -> dict[str, Any]:
        """Build the household, let the method act on it, and (with an instance) score it."""
        ctx = runtime.context if isinstance(runtime.context, MethodContext) else MethodContext(**(runtime.context or {}))
        options, llm = served_options(list(ctx.options)), served_llm(ctx.llm)  # refused before anything is opened
        env, loaded, request = served_household(state)
        agent = _agent(method, llm, options, loaded is not None)
        checker = None
        if loaded is not None:
            record, result = run_instance(loaded, agent, env, tags=["serve"])
            checker = {"success": bool(record["success"]),
                       "goal_conditions_satisfied": record["completed_goal_conditions"],
                       "goal_conditions_total": record["total_goal_conditions"]}
        else:
            result = agent.run(EpisodeSetup(env=env, request=request, tags=["serve"]))
        return {"request": request, "program": result.program, "outcome": result.outcome, "log": list(result.log),
                "subgoals": list(result.trace), "usage": dict(result.usage), "steps": env.steps, "checker": checker}

    return episode


def build_method_graph(method: str, checkpointer: Any = None) -> Any:
    """The served graph of one registered method (`llm-planner`, `prag`, `embodiedrag`, a plug-in's)."""
    if method not in served_method_names():
        raise ValueError(f"served methods: {', '.join(served_method_names())} (HELPER: helper_agent.serving)")
    builder = StateGraph(MethodState, input_schema=MethodInput, output_schema=MethodOutput, context_schema=MethodContext)
    builder.add_node("episode", _episode_node(method))
    builder.add_edge(START, "episode")
    builder.add_edge("episode", END)
    return builder.compile(checkpointer=checkpointer, name=method)


def _graph_path(served_graph: str) -> str:
    """`module:attribute` as `langgraph.json` names a graph: a file path, relative to the repository
    when the module is in it."""
    module, _, attribute = served_graph.partition(":")
    spec = find_spec(module)
    if spec is None or spec.origin is None:
        raise ValueError(f"served graph {served_graph!r}: no module {module!r}")
    origin = Path(spec.origin).resolve()
    path = f"./{origin.relative_to(ROOT).as_posix()}" if origin.is_relative_to(ROOT) else str(origin)
    return f"{path}:{attribute}"


def langgraph_config() -> dict[str, Any]:
    """`langgraph.json` for every registered method: its own served graph, or this module's."""
    graphs = {}
    for name in method_names():
        own = get_method(name).served_graph
        graphs[name] = _graph_path(own or f"{__name__}:{graph_attribute(name)}")
    return {"dependencies": ["."], "graphs": graphs}


# One served graph per method, as module attributes: `langgraph.json` names them, and LangGraph's
# server reads a graph from the module's namespace.
globals().update({graph_attribute(name): build_method_graph(name) for name in served_method_names()})
