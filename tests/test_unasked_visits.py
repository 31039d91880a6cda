"""A walk to something the request has no use for is dropped from the plan like an unasked change
(`scoping.unasked_visits`, `trim_classes(unvisited=...)`). Chosen on the requests calibration suite:
"switch the TV on" (cal-060) went to a desk lamp copied from an example, in a room without one, and
searched for it for 600 steps."""

from __future__ import annotations

from requests_gold import calibration_gold

from helper_agent.graphs.helper.scoping import fit_to_request, scope_of, unasked_visits
from helper_agent.program import compile_program
from helper_agent.program.edits.trim import trim_classes

LIVING = frozenset({"Television", "TVStand", "Sofa", "RemoteControl", "CoffeeTable", "FloorLamp"})
WALKS = "\n".join(['tv_stand = InteractionObject("TVStand")', "tv_stand.go_to()",
                   'lamp = InteractionObject("DeskLamp")', "lamp.go_to()",
                   'tv = InteractionObject("Television")', "tv.toggle_on()"]) + "\n"


def test_walks_to_what_the_request_has_no_use_for_are_dropped() -> None:
    fitted = fit_to_request(compile_program(WALKS), {"request": "switch the TV on"}, LIVING, compile_program, False)
    assert fitted.compiled is not None
    assert fitted.compiled.source == 'tv = InteractionObject("Television")\ntv.toggle_on()\n'
    assert fitted.notes == ("removed unasked going to the TVStand, going to the DeskLamp: 2 step(s) "
                            "(tv_stand.go_to(); lamp.go_to())",)


def test_a_walk_to_what_the_request_names_or_uses_stays() -> None:
    scope = scope_of({"request": "put the remote on the sofa"}, LIVING)
    kept = "\n".join(['sofa = InteractionObject("Sofa")', "sofa.go_to()", 'remote = InteractionObject("RemoteControl")',
                      "remote.pickup_and_place(sofa)"]) + "\n"
    assert unasked_visits(compile_program(kept), scope) == []
    # Without a scope (a request naming nothing) no walk is judged.
    assert unasked_visits(compile_program(WALKS), None) == []


def test_the_trim_removes_only_the_walks_of_the_classes_given() -> None:
    cut = trim_classes(WALKS, (), unvisited={"DeskLamp"})
    assert cut.removed == ("lamp.go_to()", "lamp = InteractionObject('DeskLamp')")
    assert "tv_stand.go_to()" in cut.program and "tv.toggle_on()" in cut.program


def test_no_calibration_gold_program_walks_anywhere_unasked() -> None:
    walks = []
    for gold in calibration_gold():
        if found := unasked_visits(gold.compiled, scope_of({"request": gold.case.request}, gold.present)):
            walks.append((gold.case.id, found))
    assert walks == []
