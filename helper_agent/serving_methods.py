"""Served graphs for LLM-Planner, P-RAG and EmbodiedRAG (`langgraph.json`), beside HELPER's.

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
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict  # pydantic builds JSON schemas only from this one on Python < 3.12

from helper_agent.serving import served_chat_model, served_household

#: The methods served here (HELPER has its own graph, with the feedback interrupt and routines).
SERVED_METHODS = ("llm-planner", "prag", "embodiedrag")


class MethodInput(TypedDict, total=False):
    """One request in a generated room, or a TEACh instance's household."""

    request: str  # what to do; with an instance, its dialogue when empty
    room: str  # Kitchen, LivingRoom, Bedroom or Bathroom (generated household)
    seed: int  # seed of the generated household
    instance: str | None  # a TfD/EDH instance file on the server (its game must sit in the dataset layout)


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

    llm: str = ""  # chat model spec; "" = HELPER_LLM
    options: list[str] = field(default_factory=list)


_LOCK = threading.Lock()
_AGENTS: dict[tuple[str, str, tuple[str, ...], str, bool], Any] = {}


def _agent(method: str, llm: str, options: list[str], mode: str, task_known: bool) -> Any:
    """One agent per (method, model, switches, mode, task known) per server process: its memories
    and model load once. The last two are in the key because a method may build on them
    (EmbodiedRAG's feedback)."""
    from helper_agent.evals.methods import build_agent, parse_agent_options
    from helper_agent.evals.runner import EvalSpec

    key = (method, llm, tuple(sorted(options)), mode, task_known)
    with _LOCK:
        if key not in _AGENTS:
            spec = EvalSpec.for_request(method, llm, parse_agent_options(options), mode=mode, task_known=task_known,
                                        out="out/serve")
            _AGENTS[key] = build_agent(spec, served_chat_model(llm))
        return _AGENTS[key]


def _episode_node(method: str) -> Any:
    def episode(state: MethodState, runtime: Runtime[MethodContext], config: RunnableConfig) -> dict[str, Any]:
        """Build the household, let the method act on it, and (with an instance) score it."""
        from helper_agent.evals.agents import EpisodeSetup
        from helper_agent.evals.harness import run_instance

        ctx = runtime.context if isinstance(runtime.context, MethodContext) else MethodContext(**(runtime.context or {}))
        env, loaded, request = served_household(state)
        agent = _agent(method, ctx.llm, list(ctx.options), loaded.mode if loaded else "tfd", loaded is not None)
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
    """The served graph of one method (`llm-planner`, `prag` or `embodiedrag`)."""
    if method not in SERVED_METHODS:
        raise ValueError(f"served methods: {', '.join(SERVED_METHODS)} (HELPER: helper_agent.serving)")
    builder = StateGraph(MethodState, input_schema=MethodInput, output_schema=MethodOutput, context_schema=MethodContext)
    builder.add_node("episode", _episode_node(method))
    builder.add_edge(START, "episode")
    builder.add_edge("episode", END)
    return builder.compile(checkpointer=checkpointer, name=method)


llm_planner = build_method_graph("llm-planner")
prag = build_method_graph("prag")
embodiedrag = build_method_graph("embodiedrag")
