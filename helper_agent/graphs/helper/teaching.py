"""What a taught routine holds, and how it is put to the person before it is stored.

A request that teaches a routine ("Perform the Kim breakfast: make a coffee in the mug and put a
slice of toast on a plate") may take several rounds: the first program made the coffee and left the
toast beside the plate, the person said "no, the toast never got onto the plate", the replan wrote
only the missing part, and the person said "yes". The routine is the whole request as finally done
across those rounds: every program that ran, in order, as one program (`whole_program`), not only
the last replan (which once stored a breakfast without its coffee). A later round's k-th object of
a class is the earlier rounds' k-th object of that class, as it was when it ran (the executor's
bindings are kept across rounds by instance key, `<class>#<k>`): the toast the replan put on the
plate is the slice the first program toasted, not another one.

What a round "did" is the program when it ran to its end; when it stopped early (a step found
nothing, the person was asked anyway), it is the steps that ran to their end, written back as a
program (`as_done`), not the program: on the calibration suite a first program that re-sliced a
whole apple in a loop stopped after its first slice, the person's correction placed two slices,
and the routine that joined the whole first program would have searched a fresh household for a
second whole apple. A routine is replayed in other households, so where the teaching household's
things stood (`landmark="Microwave"`) is not kept unless the request says it (`portable`): a
"evening tidy" of the calibration suite searched 300 steps for a remote "near the TV stand" (the
planner's guess, in the household it was taught in), and every recall of a routine stored so would
look there first.

Before it is stored the person reads what will be remembered, in words read off the program
(`describe_routine`: "coffee in the mug; a toasted bread slice on the plate"), and says yes or no.
Only a clear yes stores it (`is_yes`): anything else stores nothing, since a wrong routine replays
wrong every time it is recalled, while a routine not stored is taught again in one sentence.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from helper_agent.graphs.helper.state import HelperState, subgoals_from_data
from helper_agent.program import ProgramError, compile_program, render_program
from helper_agent.program.edits.language import EditError, class_words
from helper_agent.program.edits.tree import (
    declarations,
    names_in,
    parse_tree,
    rename_var,
    render_tree,
    var_for,
)
from helper_agent.program.subgoals import Subgoal, SubgoalKind
from helper_agent.understanding.words import named_classes

__all__ = ["as_done", "confirmation_question", "continued", "describe_routine", "is_yes", "portable", "round_done",
           "whole_program", "without_repeats"]

_IN = frozenset({"Bowl", "Pot", "Pan", "Box", "Mug", "Cup", "Fridge", "Cabinet", "Drawer", "Microwave", "SinkBasin",
                 "Sink", "GarbageCan", "Bathtub", "BathtubBasin", "Safe", "LaundryHamper", "Toaster", "CoffeeMachine"})
"""Receptacles a thing goes *in* (the rest it goes *on*)."""

_WORKSHOP = frozenset({"CoffeeMachine", "Toaster", "SinkBasin", "Sink", "StoveBurner", "Microwave"})
"""Places a step uses to change a thing (brew, toast, wash, cook): being left there is not the point."""

_YES = frozenset({"yes", "y", "yeah", "yep", "yup", "sure", "ok", "okay", "store", "save", "remember", "correct",
                  "right", "please", "absolutely", "definitely"})


def whole_program(programs: Sequence[str]) -> str:
    """The programs that ran for one request, in order, as one program (`continued`).

    A later program that already holds every statement of an earlier one (the replan rewrote the
    whole task) replaces it rather than doing it twice."""
    kept: list[str] = []
    for program in (p for p in programs if p.strip()):
        lines = _statements(program)
        kept = [earlier for earlier in kept if not _statements(earlier) <= lines]
        kept.append(program)
    if not kept:
        return ""
    whole = kept[0]
    for part in kept[1:]:
        try:
            whole = continued(whole, part)
        except (ProgramError, EditError):
            whole = f"{whole.rstrip()}\n{part.strip()}\n"
    return whole


_MOVES = frozenset({SubgoalKind.NAVIGATE, SubgoalKind.MOVE_BACK, SubgoalKind.MOVE_CLOSER,
                    SubgoalKind.MOVE_ALTERNATE_VIEWPOINT, SubgoalKind.DO_NOTHING})


def without_repeats(steps: Sequence[Subgoal]) -> list[Subgoal]:
    """`steps` with every run of steps that directly repeats the run before it dropped ("clean the
    plate, pick it up, toast the slice" twice in a row is once): a corrective program re-does the
    steps its failure came after, and a routine kept as the steps that ran would do them twice on
    every recall. The same steps on the same objects right after each other change nothing more."""
    kept = list(steps)
    keys = [(s.kind, s.target, s.receptacle) for s in kept]
    found = True
    while found:
        found = False
        for length in range(1, len(keys) // 2 + 1):
            at = next((i for i in range(len(keys) - 2 * length + 1)
                       if keys[i:i + length] == keys[i + length:i + 2 * length]), None)
            if at is not None:
                del keys[at + length:at + 2 * length], kept[at + length:at + 2 * length]
                found = True
                break
    return kept


def as_done(program: str, subgoals: Sequence[Subgoal], finished: bool, completed: int) -> str:
    """What one round did: `program` when it ran to its end (`finished`), else its first
    `completed` subgoals written back as a program (moves left out: each step finds its object
    again; a run that repeats the one before it once: `without_repeats`), "" when none ran."""
    if finished:
        return program
    steps = without_repeats([s for s in list(subgoals)[:max(0, completed)] if s.kind not in _MOVES])
    if not steps:
        return ""
    try:
        return render_tree(parse_tree(render_program(steps)))
    except EditError:
        return ""


def round_done(state: HelperState) -> str:
    """What the state's last round did, as a routine keeps it (`as_done`): its program when the
    program ran to its end, else the subgoals that ran to their end in the order they ran, the
    corrective programs' among them (`ran_subgoals`). A round whose plan kept failing at one step
    while a corrective program re-did the rest (put the toast on the plate) did that rest; counting
    only the plan's steps before its failure stored a breakfast routine without its toast."""
    execution = state.get("execution") or {}
    finished = execution.get("status") == "done"
    if "ran_subgoals" not in state:  # a checkpoint written before the field: the plan's steps alone
        return as_done(state.get("program", ""), subgoals_from_data(state.get("subgoals") or []),
                       finished, int(execution.get("completed") or 0))
    ran = subgoals_from_data(state.get("ran_subgoals") or [])
    return as_done(state.get("program", ""), ran, finished, len(ran))


def portable(program: str, request: str) -> str:
    """`program` without the landmarks (`landmark="TVStand"`) whose class `request` does not name:
    where things stood in the household a routine was taught in says nothing about the next one.
    The program as it was when it does not parse."""
    try:
        tree = parse_tree(program)
    except EditError:
        return program
    named = set(named_classes(request))
    changed = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "InteractionObject":
            kept = [kw for kw in node.keywords if not (kw.arg == "landmark" and isinstance(kw.value, ast.Constant)
                                                        and str(kw.value.value) not in named)]
            changed |= len(kept) != len(node.keywords)
            node.keywords = kept
    return render_tree(tree) if changed else program


def continued(program: str, part: str) -> str:
    """`program` followed by `part`, a later round that ran in the household `program` left: the
    part's k-th top-level object of a class is the program's k-th one (its declaration dropped,
    its name the program's); its other objects get fresh names where the program uses theirs."""
    tree, extra = parse_tree(program), parse_tree(part)
    earlier: dict[str, list[str]] = {}
    for d in declarations(tree):
        if d.loop is None:
            earlier.setdefault(d.cls, []).append(d.var)
    seen: dict[str, int] = {}
    taken = names_in(tree)
    for d in declarations(extra):
        k = seen[d.cls] = seen.get(d.cls, 0) + 1
        same = earlier.get(d.cls, [])
        if d.loop is None and k <= len(same):
            d.body.remove(d.stmt)
            if d.var != same[k - 1]:
                rename_var([extra], d.var, same[k - 1])
        elif d.var in taken:
            new = var_for(d.cls, taken | names_in(extra))
            rename_var([extra], d.var, new)
            taken.add(new)
    tree.body.extend(extra.body)
    return render_tree(tree)


def _statements(program: str) -> set[str]:
    return {re.sub(r"\s+", "", line) for line in program.splitlines() if line.strip() and not line.strip().startswith("#")}


@dataclass
class _Thing:
    cls: str
    done: list[str] = field(default_factory=list)
    place: str | None = None
    coffee: bool = False


def describe_routine(program: str) -> str:
    """What a routine's program leaves done, in a person's words, one part per object it changes:
    "coffee in the mug; a toasted bread slice on the plate". Tools it only uses (a knife picked up
    and put down) are not named. "" when the program does not compile or changes nothing."""
    try:
        subgoals = compile_program(program).subgoals
    except ProgramError:
        return ""
    things: dict[str, _Thing] = {}
    order: list[str] = []
    for sub in subgoals:
        _note(sub, things, order)
    parts = [_phrase(things[key]) for key in order]
    return "; ".join(dict.fromkeys(p for p in parts if p))


_DONE = {SubgoalKind.CLEAN: "clean", SubgoalKind.SLICE: "sliced", SubgoalKind.COOK: "cooked",
         SubgoalKind.TOAST: "toasted", SubgoalKind.FILL_UP: "filled with water", SubgoalKind.EMPTY: "emptied",
         SubgoalKind.TOGGLE_ON: "switched on", SubgoalKind.TOGGLE_OFF: "switched off"}


def _note(sub: Subgoal, things: dict[str, _Thing], order: list[str]) -> None:
    if sub.target is None:
        return
    key = sub.target.instance_key
    if key not in things:
        things[key] = _Thing(sub.target.object_class)
        order.append(key)
    thing = things[key]
    if sub.kind in _DONE:
        word = _DONE[sub.kind]
        if sub.kind is SubgoalKind.TOGGLE_OFF and thing.cls in _WORKSHOP:
            return  # switching an appliance off after use is tidying, not what the routine is for
        if sub.kind is SubgoalKind.TOGGLE_ON and thing.cls in ("Toaster", "CoffeeMachine", "StoveBurner", "Microwave",
                                                               "Faucet"):
            for other in things.values():  # what stands in the appliance is what it changes
                if other.place == thing.cls and other.cls != thing.cls:
                    if thing.cls == "CoffeeMachine":
                        other.coffee = True
                    elif thing.cls == "Toaster":
                        other.done.append("toasted")
                    elif thing.cls in ("StoveBurner", "Microwave"):
                        other.done.append("cooked")
            return
        if word not in thing.done:
            thing.done.append(word)
    elif sub.kind is SubgoalKind.PLACE and sub.receptacle is not None:
        thing.place = sub.receptacle.object_class
        if thing.place == "CoffeeMachine":
            thing.coffee = True  # a mug in a coffee machine is filled when the machine runs (it is on)
    elif sub.kind is SubgoalKind.POUR and sub.receptacle is not None:
        target = sub.receptacle.instance_key
        if target not in things:
            things[target] = _Thing(sub.receptacle.object_class)
            order.append(target)
        things[target].done.append("watered" if sub.receptacle.object_class == "HousePlant" else "filled")


def _phrase(thing: _Thing) -> str:
    noun = class_words(thing.cls)
    if thing.coffee:
        return f"coffee in the {noun}"
    place = thing.place if thing.place not in _WORKSHOP else None
    if not thing.done and not place:
        return ""
    done = " ".join(dict.fromkeys(thing.done))
    if not place:
        return f"the {noun} {done}"
    what = f"a {done} {noun}" if done else f"the {noun}"
    return f"{what} {'in' if place in _IN else 'on'} the {class_words(place)}"


def confirmation_question(name: str, description: str, update: bool = False) -> str:
    """"I'll remember the Kim breakfast as: coffee in the mug; a toasted bread slice on the plate. Store it?"."""
    what = description or "the program I just ran"
    if update:
        return f"I'll update {name} to: {what}. Store it as a new version?"
    return f"I'll remember {name} as: {what}. Store it?"


def is_yes(answer: str) -> bool:
    """A clear yes to the confirmation question ("yes", "sure, store it", "ok"); a no, a question
    or anything else is not (nothing is stored)."""
    words = re.findall(r"[a-z']+", answer.lower())
    return bool(words) and words[0] in _YES and "not" not in words and "don't" not in words and "no" not in words
