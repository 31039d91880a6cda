"""What reaches LangSmith: run inputs and outputs without the household.

Evaluations keep the household out of the graph's state altogether (the environment is in the
runtime context). A checkpointed chat, and the LangGraph server's runs, need it in the state: the
acting nodes write the environment's snapshot into `world` so that a run stopped at the feedback
`interrupt` resumes in the household it left. That snapshot (about 60 KB) would otherwise be sent
with every node's inputs and outputs. The checkpoint is where it is needed; the trace is not.

So those callers trace through `household_free_callbacks()`: a LangChain tracer whose LangSmith
client drops `world` (at any depth of a run's inputs and outputs, replaced by a short note) before
a run is sent. Everything else in the run tree (names, tags, metadata, the program, the subgoals,
LLM calls) is unchanged. Nothing is added when tracing is off.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

HIDDEN_KEYS = frozenset({"world"})
"""State keys that never go into a trace: the household snapshot."""

_MAX_DEPTH = 6


def without_household(data: Any, _depth: int = 0) -> Any:
    """`data` (a run's inputs or outputs) with every `world` value replaced by a short note."""
    if _depth > _MAX_DEPTH:
        return data
    if isinstance(data, dict):
        out: dict[Any, Any] = {}
        for key, value in data.items():
            if key in HIDDEN_KEYS and value is not None:
                out[key] = "<household snapshot: kept in the checkpoint, not traced>"
            else:
                out[key] = without_household(value, _depth + 1)
        return out
    if isinstance(data, (list, tuple)):
        return [without_household(value, _depth + 1) for value in data]
    return data


def tracing_enabled() -> bool:
    """Whether LangChain runs are traced (`LANGSMITH_TRACING=true` or the older variable names)."""
    from langsmith.utils import tracing_is_enabled

    return bool(tracing_is_enabled())


@lru_cache(maxsize=1)
def _client() -> Any:
    from langsmith import Client

    return Client(hide_inputs=without_household, hide_outputs=without_household)


def household_free_tracer() -> Any:
    """A LangChain tracer for the current LangSmith project whose runs carry no household.

    Inside a traced run (a LangGraph server's node) it joins that run's project."""
    from langchain_core.tracers.langchain import LangChainTracer
    from langsmith.run_helpers import get_tracing_context

    parent = get_tracing_context().get("parent")
    project = getattr(parent, "session_name", None) if parent is not None else None
    return LangChainTracer(client=_client(), project_name=project)


def household_free_callbacks() -> list[Any]:
    """Callbacks for a run whose state carries `world`: the household-free tracer when tracing is
    on (it replaces LangChain's default tracer, which would send the snapshot), else none."""
    return [household_free_tracer()] if tracing_enabled() else []


def flush() -> None:
    """Send what the tracers still hold (before a short-lived process exits)."""
    if not tracing_enabled():
        return
    from langchain_core.tracers.langchain import wait_for_all_tracers

    wait_for_all_tracers()
    if _client.cache_info().currsize:
        _client().flush()
