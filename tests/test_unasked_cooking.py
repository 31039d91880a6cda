"""A cooking no step of the request asks for is unasked, like a cut (`Scope.unasked_steps`,
`understanding/scope.COOKING`). Chosen on the requests calibration suite: "cut a potato into
slices" (cal-045) came back as `potato.cook()`."""

from __future__ import annotations

import pytest

from helper_agent.graphs.helper.scoping import fit_to_request
from helper_agent.program import compile_program

KITCHEN = frozenset({"Egg", "Potato", "Knife", "Microwave", "Pan", "StoveBurner", "Plate", "CounterTop", "SinkBasin"})


def fit(request: str, lines: list[str], last: bool = False):
    return fit_to_request(compile_program("\n".join(lines) + "\n"), {"request": request}, KITCHEN, compile_program, last)


def test_a_cooking_the_request_does_not_ask_for_is_trimmed() -> None:
    fitted = fit("cut a potato into slices", ['potato = InteractionObject("Potato")', "potato.cook()", "potato.slice()"])
    assert fitted.compiled is not None and "cook" not in fitted.compiled.source
    assert "potato.slice()" in fitted.compiled.source
    assert any("removed unasked cook steps" in note for note in fitted.notes)


def test_a_program_that_only_cooks_goes_back_with_the_reason() -> None:
    fitted = fit("cut a potato into slices", ['potato = InteractionObject("Potato")', "potato.cook()"])
    assert fitted.compiled is None and fitted.reason.startswith("the request does not ask to cook anything")


POTATO = ['potato = InteractionObject("Potato")', "potato.slice()", 'slice_ = InteractionObject("PotatoSliced")',
          "slice_.cook()"]
EGG = ['egg = InteractionObject("Egg")', "egg.slice()", 'slice_ = InteractionObject("EggCracked")', "slice_.cook()"]


@pytest.mark.parametrize(("request_", "lines"), [("cook a slice of potato", POTATO), ("fry me a potato slice", POTATO),
                                                 ("can you microwave a slice of potato?", POTATO),
                                                 ("make me an omelette", EGG)])
def test_a_request_that_cooks_keeps_its_cooking(request_: str, lines: list[str]) -> None:
    fitted = fit(request_, lines)
    assert fitted.compiled is not None and "slice_.cook()" in fitted.compiled.source, fitted.notes
