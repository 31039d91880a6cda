"""The HELPER graph's use of a request's scope (`understanding/scope.py`): which text it is read
from, the note that flags the retrieved examples' objects the request does not ask for, and the
check `nodes.validate` makes before a program runs.

A program that changes an object the request neither names nor needs for one of its steps is sent
back to the planner with the reason ("the request does not mention Lettuce ...; leave it out"),
through the retry path of any rejected program. On the planner's last attempt it runs anyway, with
the objects in the log: doing the request with something extra beats doing nothing (the request
would end "invalid_program"). A recalled routine is never checked: its program is what the person
asked for by its name.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from helper_agent.graphs.helper.requests import teach_request
from helper_agent.graphs.helper.understanding.scope import Scope, changed_classes, request_scope
from helper_agent.program import CompiledProgram, ProgramError, compile_program

__all__ = ["example_note", "out_of_scope", "scope_of"]


def scope_of(state: Mapping[str, Any], present: Collection[str]) -> Scope | None:
    """The scope of the state's request in a household holding `present` classes: the words of a
    taught request after its name ("Perform the Mo snack: <these words>"), with the feedback the
    current program answers; None for a recalled routine or where the rule does not apply."""
    if state.get("routine"):
        return None
    request = str(state.get("request") or "")
    teach = teach_request(request)
    text = teach.body if teach else request
    feedback = str(state.get("feedback") or "")
    return request_scope(f"{text}\n{feedback}".strip(), present)


def out_of_scope(compiled: CompiledProgram, scope: Scope | None) -> list[str]:
    """The classes the compiled program changes that `scope` does not allow ([] without a scope)."""
    return scope.outside(changed_classes(compiled.subgoals)) if scope else []


def example_note(scope: Scope | None, examples: Iterable[Mapping[str, Any]]) -> str:
    """A line for the planner's turn naming the objects the retrieved examples change that this
    request does not ask for, so they are adapted, not copied; "" when there are none or no scope
    applies. (What an example only puts things on, a table or a counter, is not named.)"""
    if scope is None:
        return ""
    found: list[str] = []
    for example in examples:
        try:
            found += changed_classes(compile_program(str(example.get("program") or "")).subgoals)
        except ProgramError:
            continue
    others = scope.outside(found)
    if not others:
        return ""
    return (f"The examples above are other requests. This one does not ask for {', '.join(others)}: "
            "leave them out; change only what this request names and the tools its steps need.")
