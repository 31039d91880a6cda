"""The graph `langgraph.json` serves (`langgraph dev`, LangGraph Platform): the HELPER graph in a
household it builds from the run's input.

The HELPER graph acts on an environment handed to it in its runtime context and never builds one,
so it cannot be served as is (it raises `MissingEnvironment`). This module wraps it in an outer
graph with a typed input and a context of user-settable fields only:

    input   {"request": "make me a coffee", "user": "mary", "room": "Kitchen", "seed": 7}
            {"instance": "out/bench/tfd_instances/valid_unseen/valid_unseen_0003.tfd.json"}
    context {"llm": "openai:gpt-4o", "feedback_rounds": 1, "k": 3, "prechecks": false, ...}

The model and the files belong to the server's configuration, not to its clients: `context.llm` may
only name HELPER_LLM or one of HELPER_SERVE_LLMS, and `instance` (like a method's `-o pool=PATH`) only
a file inside HELPER_SERVE_FOLDERS (none by default); anything else is refused before it is built or
opened.

Its one node builds the `SymbolicEnv` (a generated room from `room`/`seed`, or the instance's
initial state through `teach.load_instance(...).start(env)`, its dialogue being the request when
none is given) and invokes the HELPER graph on it with `HelperContext(env=..., keep_snapshots=True)`.

The feedback question is a LangGraph `interrupt` inside the HELPER graph; the server shows it as
the run's interrupt and a client resumes with `Command(resume="yes")` (or what is missing). On
resume the node runs again: the HELPER graph, a subgraph sharing the server's checkpointer, picks up
at its `interrupt`, and the household is restored from the `world` snapshot in the HELPER graph's
last checkpoint (the node rebuilds the environment first, then restores it), so the replanned
program acts in the household the first program left. Each run is one request in a fresh household.

The `world` snapshot is kept out of traces (`helper_agent.tracing`). With an instance, the output
also carries TEACh's checker verdict on the final household (the agent itself never sees it, unless
`feedback="checker"` asks the checker, not a person, to answer the feedback question).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict  # pydantic builds JSON schemas only from this one on Python < 3.12

import helper_agent.llm as llm
from helper_agent.config import get_settings
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.engine.harness import checker_feedback
from helper_agent.graphs.helper import HelperConfig, HelperContext, build_graph
from helper_agent.graphs.helper.agent import Memories
from helper_agent.teach import check_task
from helper_agent.teach.instances import load_instance
from helper_agent.tracing import household_free_callbacks

ROOMS = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")


class ServeInput(TypedDict, total=False):
    """One request: what to do and who asks, in a generated room or a TEACh instance's household."""

    request: str  # what to do; with an instance, its dialogue when empty
    user: str | None  # whose routines to recall and teach
    room: str  # Kitchen, LivingRoom, Bedroom or Bathroom (generated household)
    seed: int  # seed of the generated household
    instance: str | None  # a TfD/EDH instance file in a folder of HELPER_SERVE_FOLDERS (its game in the dataset layout)


class ServeOutput(TypedDict, total=False):
    """What the agent did, by its own account, and (with an instance) the checker's verdict."""

    request: str
    program: str
    outcome: str
    log: list[str]
    subgoals: list[list[Any]]  # [subgoal, status, actions] per subgoal run, the whole episode
    usage: dict[str, float]  # LLM calls, tokens, seconds of this request, across its resumes
    steps: int
    checker: dict[str, Any] | None  # success and goal conditions (instance runs only)


class ServeState(ServeInput, ServeOutput, total=False):
    pass


@dataclass
class ServeContext:
    """Run settings a client may set (`context` of a run); everything else comes from the server's
    settings. HELPER's ablations are the switches below."""

    llm: str = ""  # chat model spec: "" = HELPER_LLM, or one of the server's HELPER_SERVE_LLMS
    feedback_rounds: int = 1  # 0, 1 or 2 feedback questions
    feedback: str = "person"  # person: the run's interrupt; checker: TEACh's checker answers (instance runs)
    k: int = 3  # retrieved language-program examples
    memory_augmented: bool = True  # False: fixed examples (HELPER's `mem` ablation)
    prechecks: bool = True
    correction: bool = True
    locator: str = "llm"  # llm or random


_LOCK = threading.Lock()
_MODELS: dict[str, Any] = {}
_SHARED: dict[str, Any] = {}


def served_llm(spec: str) -> str:
    """The chat model spec a run's `context.llm` asks for, when the server offers it.

    The model is the server's to choose: a client-set spec used to be built as given, so a client
    could make the server dial any URL (`http://127.0.0.1:9`) or load another model, each cached for
    the life of the process. Now `""` means HELPER_LLM, and anything else must be HELPER_LLM or one of
    HELPER_SERVE_LLMS; so the cache of built models is bounded by that list too."""
    settings = get_settings()
    spec = (spec or "").strip() or settings.llm
    offered = [settings.llm, *(s.strip() for s in settings.serve_llms.split(",") if s.strip())]
    if spec not in offered:
        raise ValueError(f"context.llm {spec!r} is not a model this server offers (it offers: {', '.join(offered)}; "
                         "the server's HELPER_SERVE_LLMS lists the choices)")
    return spec


def served_path(path: str, field_name: str) -> str:
    """`path` (a run's `instance`, a method's `pool=`) when it lies in a folder HELPER_SERVE_FOLDERS
    lets clients name; else ValueError, before the path is opened or even resolved on disk.

    A client used to name any path on the server and the server opened it."""
    folders = [Path(f).expanduser() for f in get_settings().serve_folders.split(os.pathsep) if f.strip()]
    if not folders:
        raise ValueError(f"{field_name}: this server lets clients name no files (the server's HELPER_SERVE_FOLDERS "
                         "lists the folders they may)")
    lexical = Path(os.path.abspath(Path(path).expanduser()))
    if not any(lexical.is_relative_to(os.path.abspath(f)) for f in folders):
        raise ValueError(f"{field_name}: {path!r} is not in a folder this server lets clients name "
                         f"(HELPER_SERVE_FOLDERS: {get_settings().serve_folders})")
    real = lexical.resolve()  # a symlink inside a served folder must not lead out of it
    if not any(real.is_relative_to(f.resolve()) for f in folders):
        raise ValueError(f"{field_name}: {path!r} leads out of the folders this server lets clients name")
    return str(real)


def served_chat_model(spec: str) -> Any:
    """One chat model per offered spec per server process (the local model loads once)."""
    spec = served_llm(spec)
    with _LOCK:
        if spec not in _MODELS:
            _MODELS[spec] = llm.make_chat_model(spec, temperature=get_settings().temperature)
        return _MODELS[spec]


def _memories() -> Any:
    """The shared memories (the settings' folder or Chroma server), opened once per process."""
    with _LOCK:
        if "memories" not in _SHARED:
            _SHARED["memories"] = Memories.at()
        return _SHARED["memories"]


def _helper_graph() -> Any:
    with _LOCK:
        if "graph" not in _SHARED:
            _SHARED["graph"] = build_graph()  # no checkpointer: a subgraph uses the server's
        return _SHARED["graph"]


def _config(ctx: ServeContext) -> Any:
    if ctx.locator not in ("llm", "random"):
        raise ValueError(f"locator must be llm or random, not {ctx.locator!r}")
    if ctx.feedback not in ("person", "checker"):
        raise ValueError(f"feedback must be person or checker, not {ctx.feedback!r}")
    return HelperConfig(memory_augmented=ctx.memory_augmented, prechecks=ctx.prechecks, correction=ctx.correction,
                        locator=ctx.locator, feedback_rounds=max(0, int(ctx.feedback_rounds)), k=max(1, int(ctx.k)))


def served_household(state: ServeState) -> tuple[Any, Any, str]:
    """The environment at the run's start, the loaded instance (or None), and the request."""
    env = SymbolicEnv()
    request = (state.get("request") or "").strip()
    if state.get("instance"):
        loaded = load_instance(served_path(str(state["instance"]), "instance"))
        loaded.start(env)
        return env, loaded, request or loaded.dialogue
    room = state.get("room") or "Kitchen"
    if room not in ROOMS:
        raise ValueError(f"room must be one of {', '.join(ROOMS)}, not {room!r}")
    if not request:
        raise ValueError("give a request (or an instance)")
    env.reset(int(state.get("seed") or 0), room_type=room)
    return env, None, request


def _saved_world(graph: Any, config: RunnableConfig) -> dict[str, Any] | None:
    """The household snapshot in the HELPER graph's checkpoint under this node (a run being
    resumed), or None (a new run, or no checkpointer)."""
    try:
        return graph.get_state(config).values.get("world")
    except ValueError:  # "No checkpointer set": invoked without one, so nothing to resume
        return None


def episode(state: ServeState, runtime: Runtime[ServeContext], config: RunnableConfig) -> dict[str, Any]:
    """Build the household, then run the HELPER graph on it (resuming it after an interrupt)."""
    ctx = runtime.context if isinstance(runtime.context, ServeContext) else ServeContext(**(runtime.context or {}))
    served_llm(ctx.llm)  # refused before the household is built
    graph = _helper_graph()
    env, loaded, request = served_household(state)
    # Resuming after the feedback interrupt: the HELPER graph continues from its checkpoint, so the
    # household must be the one it left, not the one the input describes.
    if snapshot := _saved_world(graph, config):
        env.restore(snapshot)
    feedback = None
    if ctx.feedback == "checker":
        if loaded is None:
            raise ValueError("feedback='checker' needs an instance (the checker knows its task)")
        feedback = checker_feedback(loaded.task, env)
    memories = _memories()
    context = HelperContext(env=env, chat_model=served_chat_model(ctx.llm), examples=memories.examples,
                            corrections=memories.corrections, routines=memories.routines, feedback=feedback,
                            config=_config(ctx), keep_snapshots=True, tags=["serve"],
                            metadata={"instance_id": loaded.instance_id} if loaded else {})
    final = graph.invoke({"request": request, "user": state.get("user")}, context=context,
                         config={"callbacks": household_free_callbacks(config), "run_name": "helper-graph"})
    update: dict[str, Any] = {
        "request": request,
        "program": final.get("program", ""),
        "outcome": final.get("outcome", ""),
        "log": list(final.get("log") or []),
        "subgoals": list((final.get("execution") or {}).get("trace") or []),
        # the request's LLM use across its resumes (the graph's state), not only this process's
        "usage": {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "llm_seconds": 0.0,
                  **(final.get("usage") or {})},
        "steps": env.steps,
        "checker": None,
    }
    if loaded is not None:
        progress = check_task(loaded.task, env.objects_metadata())
        update["checker"] = {"success": progress.success, "goal_conditions_satisfied": progress.goal_conditions_satisfied,
                             "goal_conditions_total": progress.goal_conditions_total}
    return update


def build_served_graph(checkpointer: Any = None) -> Any:
    """The served graph; `langgraph dev` gives it the server's checkpointer."""
    builder = StateGraph(ServeState, input_schema=ServeInput, output_schema=ServeOutput, context_schema=ServeContext)
    builder.add_node("episode", episode)
    builder.add_edge(START, "episode")
    builder.add_edge("episode", END)
    return builder.compile(checkpointer=checkpointer, name="helper")


graph = build_served_graph()
