"""A case's household: generated from its seed and room, with the dishes the goal wants clean made
dirty first; and the check that a case can be done there (or, for an impossible one, cannot).

**Dirty dishes.** Every object type the goal wants clean (a component the task asks for with the
condition `isDirty` = 0) starts dirty in every instance, plus the household's own `dirty` list, so
that "wash the bowl" has a bowl to wash and a coffee needs its mug rinsed, as in the built-in
benchmark and the personalization suite.

**A case fits its household** (`household_problems`) when the household has every class its goal
names as a thing to act on and the tools its steps need (a knife to slice, a sink to wash, something
to cook on), and no goal is met before the agent starts. An impossible case fits when none of its
`absent` classes is there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from helper_agent.evals.studies.requests.cases import Household, RequestCase
from helper_agent.evals.studies.requests.scope import implied_steps
from helper_agent.program.steps import KNIVES
from helper_agent.teach import SubtaskComponent, Task, check_task, dirty_types
from helper_agent.world.catalog import load_catalog
from helper_agent.world.generator import generate_scene
from helper_agent.world.metadata import export_objects
from helper_agent.world.state import WorldState


def prepare(household: Household, goal: Iterable[Task] = ()) -> WorldState:
    """The household's initial state: generated, then the goal's and the household's dishes dirtied."""
    state = generate_scene(household.seed, household.room)
    catalog = load_catalog()
    dirty = set(dirty_types(goal)) | set(household.dirty)
    for obj in state.objects.values():
        if obj.object_type in dirty and catalog.get(obj.object_type).dirtyable:
            obj.is_dirty = True
    return state


def _needed(goal: Iterable[Task]) -> tuple[set[str], list[set[str]]]:
    """(classes that must be there, groups of which one must be there) for a goal."""
    goal = list(goal)
    must: set[str] = set()

    def visit(task: Task) -> None:
        for comp in task.components.values():
            if comp.determiner == "0":
                continue
            if isinstance(comp, SubtaskComponent):
                visit(comp.task)
                continue
            wanted = comp.conditions.get(comp.primary_condition)
            if comp.primary_condition in ("objectType", "simbotObjectClass") and isinstance(wanted, str):
                whole = "Egg" if wanted == "EggCracked" else wanted.removesuffix("Sliced")
                must.add("SinkBasin" if whole == "Sink" else whole)

    for task in goal:
        visit(task)
    steps = implied_steps(goal)
    groups: list[set[str]] = []
    if steps & {"slice", "crack"}:
        groups.append(set(KNIVES))
    if steps & {"clean", "fill", "water", "boil"}:
        must.add("SinkBasin")
    if "toast" in steps:
        must.add("Toaster")
    if "coffee" in steps:
        must.add("CoffeeMachine")
    if "cook" in steps:
        groups.append({"Microwave", "Pan"})
    if "boil" in steps:
        must |= {"Pot", "StoveBurner"}
    return must, groups


def household_problems(case: RequestCase) -> list[str]:
    """Why the case does not fit its household(s) (empty when it does; see the module docstring)."""
    problems: list[str] = []
    goal = [g.instantiate() for g in case.goal]
    for label, household in (("household", case.household), ("recall_household", case.recall_household)):
        if household is None:
            continue
        state = prepare(household, goal)
        counts = Counter(o.object_type for o in state.objects.values())
        where = f"{label} (seed {household.seed}, {household.room})"
        if case.kind == "impossible":
            there = [cls for cls in case.absent if counts[cls]]
            if there:
                problems.append(f"{where}: has {', '.join(there)}, which the case says is absent")
            lacking = [cls for cls in case.present if not counts[cls]]
            if lacking:
                problems.append(f"{where}: no {', '.join(lacking)}, which the case says is there")
            continue
        must, groups = _needed(goal)
        missing = sorted(cls for cls in must if not counts[cls])
        missing += [" or ".join(sorted(group)) for group in groups if not any(counts[c] for c in group)]
        if missing:
            problems.append(f"{where}: no {', '.join(missing)}")
            continue
        objects = export_objects(state)
        done = [g.describe() for g, task in zip(case.goal, goal, strict=True) if check_task(task, objects).success]
        if done:
            problems.append(f"{where}: already satisfied before the agent starts: {', '.join(done)}")
    return problems
