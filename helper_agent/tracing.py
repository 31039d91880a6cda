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

from collections.abc import Mapping
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


@lru_cache(maxsize=1)
def _tracer_class() -> Any:
    from langchain_core.tracers.langchain import LangChainTracer

    class HouseholdFreeTracer(LangChainTracer):
        """Sends every run it traces through its own (filtering) client. A run nested under a run of
        another tracer (the LangGraph server's node that invokes the HELPER graph) would otherwise
        inherit that tracer's client and send its updates, world included, unfiltered."""

        def _start_trace(self, run: Any) -> None:
            super()._start_trace(run)
            run.ls_client = self.client

    return HouseholdFreeTracer


def household_free_tracer() -> Any:
    """A LangChain tracer for the current LangSmith project whose runs carry no household.

    Inside a traced run (a LangGraph server's node) it joins that run's project and trace."""
    from langsmith.run_helpers import get_tracing_context

    parent = get_tracing_context().get("parent")
    project = getattr(parent, "session_name", None) if parent is not None else None
    tracer = _tracer_class()(client=_client(), project_name=project)
    if parent is not None:  # nest under the run that is calling us, as LangChain's own tracer would
        tracer.order_map[parent.id] = (parent.trace_id, parent.dotted_order)
    return tracer


def household_free_callbacks(config: Mapping[str, Any] | None = None) -> list[Any]:
    """Callbacks for a run whose state carries `world`: the household-free tracer when tracing is
    on, else none.

    At the top of a run they take the place of LangChain's default tracer. Inside a traced run
    (`config`: the config of the node that invokes the graph) LangGraph would merge them with the
    node's own callbacks, whose tracer would then send every nested run as it is; so the other
    LangChain tracers are removed from that node's child callbacks (they trace the node's children
    only: the node's own run is ended by its parent's callbacks)."""
    if not tracing_enabled():
        return []
    from langchain_core.callbacks import BaseCallbackManager
    from langchain_core.tracers.langchain import LangChainTracer

    manager = (config or {}).get("callbacks")
    if isinstance(manager, BaseCallbackManager):
        manager.handlers = [h for h in manager.handlers if not isinstance(h, LangChainTracer)]
        manager.inheritable_handlers = [h for h in manager.inheritable_handlers if not isinstance(h, LangChainTracer)]
    return [household_free_tracer()]


def flush() -> None:
    """Send what the tracers still hold (before a short-lived process exits)."""
    if not tracing_enabled():
        return
    from langchain_core.tracers.langchain import wait_for_all_tracers

    wait_for_all_tracers()
    if _client.cache_info().currsize:
        _client().flush()
