"""The HELPER graph's planning half on its own: retrieve, plan, validate (with retries).

HELPER's personalization experiment scores the plan a request produces from a recalled routine,
executing it separately; this runs the same nodes as the graph, in the same order, without acting.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from helper_agent.graphs.helper import nodes
from helper_agent.graphs.helper.context import HelperContext


def plan_program(context: HelperContext, request: str, user: str | None = None) -> tuple[str, list[str]]:
    """The validated program for a request (or the last attempt when none validated), and the log."""
    runtime: Any = SimpleNamespace(context=context)
    config: dict[str, Any] = {"callbacks": [], "tags": ["plan-only"]}
    state: dict[str, Any] = {"request": request, "user": user, "log": []}

    def apply(update: dict[str, Any]) -> None:
        log = update.pop("log", [])
        state.update(update)
        state["log"] = [*state["log"], *log]

    apply(nodes.retrieve(state, runtime))
    while True:
        apply(nodes.plan(state, runtime, config))
        apply(nodes.validate(state, runtime))
        if nodes.after_validate(state, runtime) != "plan":
            break
    return state.get("program", ""), state["log"]
