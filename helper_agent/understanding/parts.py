"""The parts of a request still open, each with the program that makes it: what a step-wise method
chooses among on the embedded world with `subgoals=on` (`graphs/declarations.py`).

Why: a 0.5B model cannot drive P-RAG's or EmbodiedRAG's primitive steps (built-in benchmark,
first 50 valid_unseen: SR 0.0 and 4.0, issue 62); it picks `goto` whatever the task. On EAI it can
pick one of a few named subgoals, each the step the environment says achieves an unmet condition.
TEACh's dialogues state no conditions, so here the request is read first (EAI's "goal
interpretation", done by the shared reading `outcome.lacks`, never by a benchmark's checker), and
each thing it asked that the household does not show yet becomes one part, acted out by the shared
executor's program API (the same subgoals HELPER's programs compile to):

- a placement: that many of the thing put on or in the place, with the steps the words ask of it
  (cooked, toasted) and of the dish (clean) - the edit language's `put` and `step`, as HELPER's
  completion writes them (`graphs/helper/scoping.from_words`);
- a step on a thing (slice, clean, cook, toast, switch on or off, fill): that method on one of it,
  or on each one not done yet when the words asked it of all of them ("all the bowls");
- what the request makes taken where "them" were to go; a light any lamp gives switched on;
- an egg cracked (and cooked, for a dish of `scope.DISH_STEPS` that cooks it).

What no class names and no single method makes (coffee, a watered plant, a boiled food, a served
dish that is dirty) gets no part: the method then acts on its own steps, as without the switch.
Nothing here is written for a benchmark's task: each part is the reading's, for any request.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from helper_agent.program.api import OBJECT_CONSTRUCTOR
from helper_agent.program.edits.apply import apply_edit
from helper_agent.program.edits.language import Edit
from helper_agent.program.errors import ProgramError
from helper_agent.understanding.asked import Asked
from helper_agent.understanding.outcome import Lack, lacks, preposition, read_request, thing_name
from helper_agent.understanding.scope import STEP_OBJECTS
from helper_agent.understanding.words import plain_name

__all__ = ["Part", "open_parts", "part_of"]

_METHOD_WORDS = {"clean": "clean", "cook": "cook", "toast": "toast", "toggle_on": "switch on",
                 "toggle_off": "switch off", "fill_up": "fill"}
"""The state steps a part acts out, as a person says them."""


@dataclass(frozen=True)
class Part:
    """One open part of a request: the words a model chooses it by, its program, and the sentence of
    what is not met yet (`outcome.Lack.sentence`)."""

    label: str
    program: str
    lack: str


def _one(cls: str, method: str) -> str:
    var = "thing"
    return f'{var} = {OBJECT_CONSTRUCTOR}("{cls}")\n{var}.{method}()\n'


def _placement(placed: str, where: str, count: int, reading: Asked) -> str:
    """The edit language's `put` of `count` `placed` on a `where`, with the steps the words ask of
    either (`from_words`' order: the placement, then each step on what it declares)."""
    program = apply_edit("", Edit("put", target=where, value=placed, count=count))
    for method, cls in reading.steps:
        if cls in (placed, where) and method in ("clean", "cook", "toast"):
            program = apply_edit(program, Edit("step", cls, method))
    return program


def part_of(lack: Lack, reading: Asked, present: Collection[str]) -> Part | None:
    """The part that meets `lack`, or None when no program of the reading's makes it."""
    kind, *args = lack.want
    try:
        if kind == "place":
            placed, where, count = args[0], args[1], int(args[2])
            many = f"{count} {thing_name(placed)}s" if count > 1 else f"the {thing_name(placed)}"
            return Part(f"put {many} {preposition(where)} the {plain_name(where)}",
                        _placement(placed, where, count, reading), lack.sentence)
        if kind == "every":  # each one not in the state yet, one at a time (a washed one is put down)
            method, cls, count = args[0], args[1], int(args[2])
            attributes = ', attributes=["clean"]' if method == "clean" else ""
            after = "    thing.put_down()\n" if method == "clean" else ""
            program = (f"for i in range({count}):\n    thing = {OBJECT_CONSTRUCTOR}(\"{cls}\"{attributes})\n"
                       f"    thing.{method}()\n{after}")
            return Part(f"{_METHOD_WORDS[method]} every {thing_name(cls)}", program, lack.sentence)
        if kind == "slice":
            return Part(f"slice the {plain_name(args[0])}", _one(args[0], "slice"), lack.sentence)
        if kind in _METHOD_WORDS:
            return Part(f"{_METHOD_WORDS[kind]} the {thing_name(args[0])}", _one(args[0], kind), lack.sentence)
        if kind == "serve":  # the one the request made: a toasted (cooked) one, made now if none is
            cls, where, method = args
            made = {"toast": "toasted", "cook": "cooked"}[method]
            program = (f'dish = {OBJECT_CONSTRUCTOR}("{where}")\n'
                       f'thing = {OBJECT_CONSTRUCTOR}("{cls}", attributes=["{made}"])\n'
                       "thing.pickup_and_place(dish)\n")
            return Part(f"put the {thing_name(cls)} {preposition(where)} the {plain_name(where)}", program, lack.sentence)
        if kind == "switch":
            method, *classes = args
            there = [c for c in classes if c in present] or classes
            return Part(f"{_METHOD_WORDS[method]} the {thing_name(there[0])}", _one(there[0], method), lack.sentence)
        if kind == "crack":
            whole, piece = STEP_OBJECTS["crack"][:2]
            if args[0] == "cook":
                return Part(f"cook a cracked {plain_name(whole)}", _one(piece, "cook"), lack.sentence)
            return Part(f"crack the {plain_name(whole)}", _one(whole, "slice"), lack.sentence)
    except (ProgramError, ValueError):
        return None
    return None


def open_parts(request: str, objects: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[Part]]:
    """What the request asked that `objects` do not show yet (`outcome.unmet`'s sentences), and the
    parts that would meet them, once each, in the order asked."""
    present = {str(o.get("objectType")) for o in objects}
    reading = read_request(request, objects, present)
    found = lacks(request, objects, reading, present)
    parts: dict[str, Part] = {}
    for lack in found:
        part = part_of(lack, reading, present)
        if part is not None and part.label not in parts:
            parts[part.label] = part
    return list(dict.fromkeys(lack.sentence for lack in found)), list(parts.values())
