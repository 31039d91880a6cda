"""The scripted person: answers the feedback question from what TEACh's checker sees.

After each execution the agent asks "Is the task completed to your satisfaction? Did I miss
anything?". The person checks the household against the case's goal (`teach.check_task`) and says
"yes" when every goal is met; otherwise "no, " and what is still wrong, in plain words built from
the unmet goal conditions, one clause per unmet thing:

    no, you didn't slice the tomato and you didn't put the tomato slice on the plate

Each unmet condition of a component becomes a clause from `_CLAUSES` (the condition and the object
class it is about, as the task names it: "bread slice", not the whole loaf the checker looked at); an
unmet relation becomes "you didn't put the <head> <on|in> the <tail>", the preposition from the
tail's kind (a container takes "in"). Repeated clauses are said once. For an impossible case the
person has no goal to check: asked anyway, they say no and why (`RequestCase.why`).

Asked what a word means ("Do you mean the television?", kind `clarify_word`), the person says
yes when that class is one the goal changes, else no; asked whether to go on without a word
("Shall I make the sandwich without it?"), yes, unless the case is impossible. Asked to confirm a routine before it is stored ("I'll remember the Kim breakfast as: ... Store
it?", an `interrupt` payload of kind `confirm_routine` that carries the routine's program), the
person says "yes" when the household meets the goal now and the routine's program names every
object class the goal changes (`goal_classes`: a component with a state condition, a slice, or
the head of a relation; a slice by its whole, "Bread" for "BreadSliced"); otherwise "no",
so a routine that would replay only part of the request is not stored. Confirmations are kept in
`confirmations`, apart from the feedback `rounds` the metrics read.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from helper_agent.teach import SubtaskComponent, Task, TaskProgress, check_task, object_phrase
from helper_agent.teach.checker import SubgoalProgress

SATISFIED = "yes"

_IN = frozenset({"Bowl", "Pot", "Box", "Mug", "Cup", "Fridge", "Cabinet", "Drawer", "Microwave", "Sink", "SinkBasin",
                 "GarbageCan", "Bathtub", "BathtubBasin", "Pan", "Safe", "LaundryHamper", "Toaster", "CoffeeMachine"})
"""Receptacles a thing goes *in* (the rest it goes *on*)."""


def _name(cls: str) -> str:
    return object_phrase(cls)


def preposition(receptacle: str) -> str:
    return "in" if receptacle in _IN else "on"


def _clause(cls: str, prop: str, value: Any) -> str:
    """One unmet condition of an object of class `cls`, as a person says it."""
    name = _name(cls)
    if prop == "objectType":
        wanted = str(value)
        if wanted == "EggCracked":
            return "you didn't crack the egg"
        if wanted.endswith("Sliced"):
            return f"you didn't slice the {_name(wanted.removesuffix('Sliced'))}"
        return f"there's no {_name(wanted)}"
    yes = value not in (0, "0", False, None)
    if prop == "isDirty":
        return f"the {name} isn't clean" if not yes else f"the {name} should be dirty"
    if prop in ("isCooked", "simbotIsCooked"):
        return f"you didn't toast the {name}" if cls.startswith("Bread") else f"you didn't cook the {name}"
    if prop == "simbotIsBoiled":
        return f"you didn't boil the {name}"
    if prop == "simbotIsFilledWithCoffee":
        return f"there's no coffee in the {name}"
    if prop in ("isFilledWithLiquid", "simbotIsFilledWithWater"):
        return "you didn't water the plant" if cls == "HousePlant" else f"you didn't fill the {name} with water"
    if prop == "isToggled":
        return f"you didn't turn {'on' if yes else 'off'} the {name}"
    if prop in ("parentReceptacles", "simbotLastParentReceptacle") and value:
        tail = str(value).split("|")[0]
        return f"you didn't put the {name} {preposition(tail)} the {_name(tail)}"
    return f"the {name} isn't right yet"


def _wanted_class(comp: Any) -> str | None:
    if isinstance(comp, SubtaskComponent):
        return comp.task.task_anchor_object and _anchor_class(comp.task)
    wanted = comp.conditions.get(comp.primary_condition)
    return wanted if isinstance(wanted, str) else None


def _anchor_class(task: Task) -> str | None:
    anchor = task.components.get(task.task_anchor_object or "")
    return _wanted_class(anchor) if anchor is not None else None


def _relation_clause(task: Task, index: int, progress: SubgoalProgress) -> list[str]:
    relation = task.relations[index] if index < len(task.relations) else None
    if relation is None:
        return ["something isn't where it should be"]
    tail = _wanted_class(task.components[relation.tail_entity_list[0]]) or "place"
    out = []
    for entity, det in zip(relation.head_entity_list, relation.head_determiner_list, strict=True):
        if det == "0":
            continue
        head = _wanted_class(task.components[entity])
        if head is None:
            continue
        many = det == "all" or (det.isdigit() and int(det) > 1)
        what = f"every {_name(head)}" if det == "all" else f"the {_name(head)}{'s' if many else ''}"
        out.append(f"you didn't put {what} {preposition(tail)} the {_name(tail)}")
    return out or [f"something isn't {preposition(tail)} the {_name(tail)}"]


def unmet_clauses(task: Task, progress: TaskProgress) -> list[str]:
    """What is still wrong, one plain clause per unmet condition, in the task's order, no repeats."""
    out: list[str] = []

    def add(clauses: list[str]) -> None:
        out.extend(c for c in clauses if c not in out)

    for sub in progress.subgoals:
        if sub.success:
            continue
        if sub.kind == "relation":
            add(_relation_clause(task, int(sub.key.removeprefix("relation[").rstrip("]") or 0), sub))
            continue
        comp = task.components.get(sub.key)
        if isinstance(comp, SubtaskComponent) and sub.subtask is not None:
            add(unmet_clauses(comp.task, sub.subtask))
            continue
        cls = _wanted_class(comp) if comp is not None else None
        keys = [key for keys in sub.problem_keys.values() for key in keys]
        if not keys:
            add([f"there's no {_name(cls)}" if cls else "something is missing"])
        for key in keys:
            clause = _clause(cls or key.object_type, key.property_name, key.desired_property_value)
            if getattr(comp, "determiner", "") == "all" and key.property_name == "isDirty":
                clause = f"not every {_name(cls or key.object_type)} is clean"  # "wash all the pots"
            add([clause])
    return out


def say(clauses: list[str]) -> str:
    """The person's answer for these unmet clauses ("yes" when there are none)."""
    if not clauses:
        return SATISFIED
    body = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + " and " + clauses[-1]
    return f"no, {body}"


@dataclass
class Check:
    """What the person saw at one point: whether every goal is met, and what is still wrong."""

    satisfied: bool
    unmet: list[str]
    goal_conditions: tuple[int, int]  # (satisfied, total) over the goals


def check_goal(goal: list[Task], objects: list[Mapping[str, Any]]) -> Check:
    """The checker on a household's objects, for every goal task."""
    clauses: list[str] = []
    satisfied = total = 0
    met = True
    for task in goal:
        progress = check_task(task, objects)  # type: ignore[arg-type]
        satisfied += min(progress.goal_conditions_satisfied, progress.goal_conditions_total)
        total += progress.goal_conditions_total
        if not progress.success:
            met = False
            clauses += [c for c in unmet_clauses(task, progress) or ["the task isn't done"] if c not in clauses]
    return Check(met, clauses, (satisfied, total))


@dataclass
class ScriptedPerson:
    """Answers the feedback question for one request (its env, its goal) and remembers each answer.

    `rounds` holds what it saw and said each time it was asked, so the first check (first-try
    success) and the last (success after corrections) are read from the record, not re-run."""

    env: Any
    goal: list[Task]
    why: str | None = None  # an impossible case: the reason the person gives
    started: float = field(default_factory=time.perf_counter)  # when the request was said
    rounds: list[dict[str, Any]] = field(default_factory=list)
    confirmations: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, payload: Mapping[str, Any] | None = None) -> str:
        if payload is not None and payload.get("kind") == "confirm_routine":
            return self.confirm(str(payload.get("program") or ""))
        if payload is not None and payload.get("kind") == "clarify_word":
            return self.clarify(str(payload.get("class") or ""))
        # Whether the agent said, with its question, that something was not done: what the request
        # asked that it does not see (`unmet`), what else of the kind it left (`others`: "another
        # book is not on the desk") or a step that did not finish (`silent_failures`).
        warned = bool(payload and (payload.get("unmet") or payload.get("others")
                                   or (payload.get("execution") or {}).get("status", "done") != "done"))
        if self.why is not None:
            said = f"no, {self.why}"
            self.rounds.append({"satisfied": False, "unmet": [], "answer": said, "warned": warned,
                                "at": self._seconds()})
            return said
        seen = self.check()
        said = say(seen.unmet) if not seen.satisfied else SATISFIED
        self.rounds.append({"satisfied": seen.satisfied, "unmet": seen.unmet, "answer": said,
                            "goal_conditions": list(seen.goal_conditions), "warned": warned,
                            "others": list((payload or {}).get("others") or []), "at": self._seconds()})
        return said

    def _seconds(self) -> float:
        """Seconds since the request was said (`at` of a round: when the person was asked)."""
        return round(time.perf_counter() - self.started, 3)

    def check(self) -> Check:
        return check_goal(self.goal, self.env.objects_metadata())

    def clarify(self, cls: str) -> str:
        """The answer to "Do you mean the television?": yes when the goal names the class (a thing
        it changes or a place it puts one), else no; to "Shall I make the sandwich without it?" (no
        class), yes: the goal needs no thing the agent cannot name. For an impossible case, never."""
        wanted = cls in goal_classes(self.goal, every=True) if cls else True  # "" : go on without the word
        said = "yes" if self.why is None and wanted else "no"
        self.confirmations.append({"answer": said, "clarified": cls})
        return said

    def confirm(self, program: str) -> str:
        """The answer to "Store it?" for a routine whose program is `program` (see the module docstring)."""
        lacking = [cls for cls in goal_classes(self.goal) if not re.search(rf'"{re.escape(cls)}', program)]
        said = "yes" if self.why is None and self.check().satisfied and not lacking else "no"
        self.confirmations.append({"answer": said, "lacking": lacking})
        return said


_CHANGES = frozenset({"isDirty", "isCooked", "simbotIsCooked", "simbotIsBoiled", "simbotIsFilledWithCoffee",
                      "isFilledWithLiquid", "simbotIsFilledWithWater", "isToggled", "parentReceptacles",
                      "simbotLastParentReceptacle"})
"""Conditions a request's steps bring about (the rest, such as `receptacle`, say what kind of object it is)."""


def goal_classes(goal: list[Task], every: bool = False) -> list[str]:
    """The object classes the goal changes, a slice or a cracked egg by its whole: its components
    with a state condition (`_CHANGES`) or a sliced class, and the heads of its relations (not a
    sink that is only where the washing happens). `every`: every class the goal names, the places
    things are put too."""
    out: list[str] = []

    def visit(task: Task) -> None:
        heads = {entity for relation in task.relations for entity in relation.head_entity_list}
        unwanted = {entity for relation in task.relations  # none of it wanted ("a salad with no potato")
                    for entity, det in zip(relation.head_entity_list, relation.head_determiner_list, strict=True) if det == "0"}
        for key, comp in task.components.items():
            if key in unwanted or str(getattr(comp, "determiner", "")) == "0":
                continue
            if isinstance(comp, SubtaskComponent):
                visit(comp.task)
                continue
            conditions = getattr(comp, "conditions", None) or {}
            changed = bool(_CHANGES & set(conditions)) or str(conditions.get("objectType", "")).endswith(("Sliced", "Cracked"))
            cls = _wanted_class(comp) if changed or key in heads or every else None
            if cls:
                out.append(re.sub(r"(Sliced|Cracked)$", "", cls))

    for task in goal:
        visit(task)
    return list(dict.fromkeys(out))
