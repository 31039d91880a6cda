"""A turn's span tree, readable without a LangSmith account.

`TurnTrace` is a LangChain tracer: it receives the same run records a LangSmith tracer sends (graph
nodes, LLM calls with their token usage, the executor's subgoal spans from
`graphs/helper/tracing.py`) and keeps them in memory. While a turn runs it also tells the page
what is happening (a subgoal started or ended, an LLM call started), so the subgoal table and the
home picture can follow the executor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run

COLUMNS = ["span", "kind", "seconds", "prompt tokens", "completion tokens", "detail"]


class TurnTrace(BaseTracer):
    """Collects one turn's runs and calls `events` (in the graph's thread, as they happen) with
    ("subgoal_started", name), ("subgoal_finished", name, status, actions) and ("llm", name)."""

    def __init__(self, events: Callable[..., None] | None = None) -> None:
        super().__init__()
        self.events = events
        self.roots: list[Run] = []

    def _persist_run(self, run: Run) -> None:
        self.roots.append(run)

    def _emit(self, *event: Any) -> None:
        if self.events is not None:
            self.events(*event)

    def _on_chain_start(self, run: Run) -> None:
        if run.run_type == "tool":  # the executor's subgoal spans
            self._emit("subgoal_started", run.name)

    def _on_chain_end(self, run: Run) -> None:
        if run.run_type == "tool":
            outputs = run.outputs or {}
            self._emit("subgoal_finished", run.name, outputs.get("status", ""), len(outputs.get("actions") or []))

    def _on_chat_model_start(self, run: Run) -> None:
        self._emit("llm", run.name)

    def _on_llm_start(self, run: Run) -> None:
        self._emit("llm", run.name)

    def rows(self) -> list[list[Any]]:
        """The span tree as table rows, indented by depth."""
        out: list[list[Any]] = []
        for root in self.roots:
            _rows(root, 0, out)
        return out


def _tokens(run: Run) -> tuple[Any, Any]:
    outputs = run.outputs or {}
    for generation in (outputs.get("generations") or [[]])[0]:
        message = generation.get("message") if isinstance(generation, dict) else None
        usage = (message or {}).get("kwargs", {}).get("usage_metadata") if isinstance(message, dict) else None
        if usage:
            return usage.get("input_tokens", ""), usage.get("output_tokens", "")
    usage = (outputs.get("llm_output") or {}).get("token_usage") or {}
    return usage.get("prompt_tokens", ""), usage.get("completion_tokens", "")


def _rows(run: Run, depth: int, out: list[list[Any]]) -> None:
    if "langsmith:hidden" in (run.tags or []):
        return
    seconds = round((run.end_time - run.start_time).total_seconds(), 2) if run.end_time else ""
    prompt, completion = _tokens(run) if run.run_type in ("llm", "chat_model") else ("", "")
    if run.error and "GraphInterrupt" in run.error:
        detail = "waiting for the person's answer (interrupt)"
    elif run.error:
        detail = "failed: " + run.error.strip().splitlines()[-1][:160]
    elif run.run_type == "tool":
        outputs = run.outputs or {}
        detail = f"{outputs.get('status', '')}, {len(outputs.get('actions') or [])} actions"
    else:
        detail = ""
    kind = {"chain": "node" if depth == 1 else "route", "tool": "subgoal", "llm": "LLM call"}.get(run.run_type, run.run_type)
    if depth == 0:
        kind = "graph"
    out.append(["· " * depth + run.name, kind, seconds, prompt, completion, detail])
    for child in sorted(run.child_runs, key=lambda r: r.start_time):
        _rows(child, depth + 1, out)
