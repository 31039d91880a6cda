"""Gold programs for the everyday-requests suites, written from each case's goal and household (the
built-in benchmark's family programs, parameterised): an oracle that shows every case can be done
and that the scope rule flags nothing a correct program changes (`tests/test_eval_requests.py`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import NamedTuple

from helper_agent.evals.benchmark.families import (
    _clean_plate_lines,
    _plate_of_toast_lines,
    _sandwich_lines,
    _var,
)
from helper_agent.evals.studies.requests import Household, RequestCase, load_suite
from helper_agent.evals.studies.requests.households import prepare
from helper_agent.program import CompiledProgram, compile_program
from helper_agent.understanding.in_household import in_household

COFFEE = ['mug = InteractionObject("Mug", attributes=["clean"])', "mug.clean()",
          'coffee_machine = InteractionObject("CoffeeMachine")', "mug.pickup_and_place(coffee_machine)",
          "coffee_machine.toggle_on()"]
BOIL = ['pot = InteractionObject("Pot")', "pot.fill_up()", 'stove_burner = InteractionObject("StoveBurner")',
        "pot.place(stove_burner)", 'potato = InteractionObject("Potato")', "potato.pickup_and_place(pot)",
        'stove_knob = InteractionObject("StoveKnob")', "stove_knob.toggle_on()", "stove_knob.toggle_off()"]


def _slices_into(kind: str, n: int | str, dish: str, cook: bool = False) -> list[str]:
    var = _var(kind) + "_slice"
    body = [f'    {var} = InteractionObject("{kind}Sliced")']
    body += [f"    {var}.cook()", f"    {var}.place({dish})"] if cook else [f"    {var}.pickup_and_place({dish})"]
    return [f"for i in range({n}):", *body]


def _each(kind: str, count: int, *calls: str) -> list[str]:
    var = _var(kind)
    clean = ', attributes=["clean"]' if "clean()" in calls else ""
    return [f"for i in range({count}):", f'    {var} = InteractionObject("{kind}"{clean})', *(f"    {var}.{c}" for c in calls)]


def lines_for(task: str, p: tuple[str, ...], counts: Counter[str]) -> list[str]:
    """The program lines of one TEACh task in a household with these object counts."""
    if task == "Coffee":
        return COFFEE
    if task == "Toast":
        return ['bread_slice = InteractionObject("BreadSliced")', "bread_slice.toast()"]
    if task == "Plate Of Toast":
        return _plate_of_toast_lines()
    if task == "N Slices Of X In Y":
        dish = _var(p[3])
        return [*_clean_plate_lines(dish, p[3]), *_slices_into(p[1], p[0], dish)]
    if task == "Cooked Slice Of X":
        return ['potato_slice = InteractionObject("PotatoSliced")', "potato_slice.cook()"]
    if task == "N Cooked Slices Of X In Y":
        return [*_clean_plate_lines(), *_slices_into("Potato", p[0], "plate", cook=True)]
    if task == "Boil X":
        return BOIL
    if task == "Omelette":
        return ['egg = InteractionObject("EggCracked")', "egg.cook()"]
    if task == "Clean X":
        return _each(p[0], 1, "clean()", "put_down()")
    if task == "Clean All X":
        return _each(p[0], counts[p[0]], "clean()", "put_down()")
    if task == "Sliced X":
        return _each(p[0], 1, "slice()")
    if task == "Water Plant":
        kind = next(t for t in ("Cup", "Mug", "Bowl", "Pot") if counts[t])
        var = _var(kind)
        return [f'{var} = InteractionObject("{kind}")', f"{var}.fill_up()",
                'house_plant = InteractionObject("HousePlant")', f"{var}.pour(house_plant)"]
    if task in ("Put All X On Y", "Put All X In One Y"):
        target = _var(p[2])
        return [f'{target} = InteractionObject("{p[2]}")', *_each(p[0], counts[p[0]], f"pickup_and_place({target})")]
    if task == "Toggle X All Y":
        return _each(p[2], counts[p[2]], "toggle_on()")
    if task == "Sandwich":
        return _sandwich_lines(int(p[0]), int(p[1]))
    if task == "Salad":
        lines = _clean_plate_lines()
        for kind, n in (("Lettuce", p[0]), ("Tomato", p[1])):
            lines += _slices_into(kind, n, "plate") if int(n) else []
        return lines + (_slices_into("Potato", p[2], "plate", cook=True) if int(p[2]) else [])
    if task == "Breakfast":
        spot = _var(p[13])
        return [*COFFEE, f'{spot} = InteractionObject("{p[13]}")', f"mug.pickup_and_place({spot})",
                *_plate_of_toast_lines(), f"plate.pickup_and_place({spot})"]
    raise ValueError(f"no gold program for {task}")


def household_counts(case: RequestCase, household: Household) -> Counter[str]:
    """How many of each class one of a case's households holds, prepared for the case's goal."""
    goal = [g.instantiate() for g in case.goal]
    return Counter(o.object_type for o in prepare(household, goal).objects.values())


def program(case: RequestCase, household: Household) -> str:
    """The gold program of a case's goal in one of its households."""
    counts = household_counts(case, household)
    return "\n".join(line for g in case.goal for line in lines_for(g.task, g.params, counts))


class GoldCase(NamedTuple):
    """A calibration case that acts, in its own household: what the scope rules are checked on."""

    case: RequestCase
    counts: Counter[str]
    compiled: CompiledProgram  # the gold program, in the household's classes (`in_household`)

    @property
    def present(self) -> frozenset[str]:
        return frozenset(self.counts)


def calibration_gold() -> Iterator[GoldCase]:
    """Every calibration case but the impossible ones, with its household's counts and its gold
    program compiled as the graph compiles a plan there: a rule chosen on the calibration suite
    must leave each of them as it is."""
    for case in load_suite("calibration").cases:
        if case.kind == "impossible":
            continue
        counts = household_counts(case, case.household)
        compiled, _ = in_household(compile_program(program(case, case.household)), frozenset(counts))
        yield GoldCase(case, counts, compiled)
