"""A change nobody asked for that the scope check could not keep out is said in the reply
(`scoping.Fitted.kept` -> state `unasked_kept` -> `facts.RequestFacts.unasked`), and only when a
step on it ran, so every line of the reply is true."""

from __future__ import annotations

import pytest

from helper_agent.evals.studies.requests.claims import read_claim
from helper_agent.graphs.helper import scoping
from helper_agent.graphs.helper.facts import request_facts
from helper_agent.graphs.helper.state import subgoals_to_data
from helper_agent.program import compile_program

KITCHEN = frozenset({"Mug", "CoffeeMachine", "Lettuce", "CounterTop", "SinkBasin"})
PROGRAM = "\n".join(['mug = InteractionObject("Mug")', 'coffee_machine = InteractionObject("CoffeeMachine")',
                     "mug.pickup_and_place(coffee_machine)", "coffee_machine.toggle_on()",
                     'lettuce = InteractionObject("Lettuce")', 'counter = InteractionObject("CounterTop")',
                     "lettuce.pickup_and_place(counter)"]) + "\n"


def test_the_last_attempt_that_cannot_be_trimmed_runs_with_its_unasked_classes_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scoping, "trimmed", lambda *args, **kwargs: None)
    state = {"request": "a coffee would be great right now"}
    fitted = scoping.fit_to_request(compile_program(PROGRAM), state, KITCHEN, compile_program, last=True)
    assert fitted.compiled is not None and fitted.kept == ("Lettuce",)
    # Before the last attempt it goes back to the planner instead, keeping nothing.
    again = scoping.fit_to_request(compile_program(PROGRAM), state, KITCHEN, compile_program, last=False)
    assert again.compiled is None and again.kept == ()


def _values(completed: int) -> dict:
    compiled = compile_program(PROGRAM)
    return {"request": "a coffee would be great right now", "outcome": "success", "unasked_kept": ["Lettuce"],
            "subgoals": subgoals_to_data(compiled.subgoals), "execution": {"status": "done", "completed": completed}}


def test_the_reply_says_the_unasked_change_that_ran_and_still_claims_done() -> None:
    values = _values(completed=len(compile_program(PROGRAM).subgoals))
    reply = request_facts(values).reply()
    assert reply == "success; I also changed the lettuce, which you did not ask for"
    assert read_claim(reply) == "done"


def test_a_kept_class_whose_steps_never_ran_is_not_said() -> None:
    coffee_steps = len(compile_program("\n".join(PROGRAM.splitlines()[:4])).subgoals)
    assert request_facts(_values(completed=coffee_steps)).reply() == "success"
