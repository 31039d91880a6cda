"""The packaged routine-adaptation examples shown to the planner when it adapts a recalled routine.

They teach the small model the move the personalization suite asks for (copy the routine, change
only what the request says), so they must be valid programs and must not be the suite itself.
"""

from __future__ import annotations

import json

import pytest

from helper_agent.evals.studies.personalization import load_suite
from helper_agent.graphs.helper.prompts import AdaptationExample, load_adaptation_examples, routine_messages
from helper_agent.memory.errors import InvalidRecordError
from helper_agent.program import compile_program

SHOTS = load_adaptation_examples()


@pytest.mark.parametrize("shot", SHOTS, ids=lambda s: s.id)
def test_each_program_compiles(shot: AdaptationExample) -> None:
    assert compile_program(shot.routine_program).subgoals
    assert compile_program(shot.program).subgoals


def test_an_unchanged_recall_copies_and_a_changed_one_differs() -> None:
    for shot in SHOTS:
        assert (shot.program == shot.routine_program) == (not shot.changes), shot.id
    assert {len(s.changes) for s in SHOTS} >= {0, 1, 2, 3}


def test_nothing_comes_from_the_personalization_suite() -> None:
    suite = load_suite()
    names = {r.name.lower() for r in suite.routines}
    texts = {r.text.lower() for r in suite.requests} | {r.request.lower() for r in suite.routines}
    programs = {r.program.strip() for r in suite.requests} | {r.program.strip() for r in suite.routines}
    for shot in SHOTS:
        assert shot.routine_name.lower() not in names
        assert shot.request.lower() not in texts and shot.routine_request.lower() not in texts
        assert shot.program.strip() not in programs and shot.routine_program.strip() not in programs


def test_a_retry_carries_the_rejected_program_and_its_reason() -> None:
    routine = {"name": "the Leo watering", "request": "", "program": 'cup = InteractionObject("Cup")\ncup.pickup()'}
    messages = routine_messages("Leo watering please", routine, [], error="line 2: cup.fly() is not in the API",
                                previous="cup.fly()", adaptations=[])
    assert [type(m).__name__ for m in messages] == ["SystemMessage", "HumanMessage", "AIMessage", "HumanMessage"]
    assert "the Leo watering" in messages[1].content and "cup.fly()" in messages[2].content
    assert "not in the API" in messages[3].content


def test_a_malformed_file_names_the_line(tmp_path, monkeypatch) -> None:
    from helper_agent.graphs.helper import prompts

    bad = tmp_path / "examples"
    bad.mkdir()
    row = SHOTS[0].model_dump() | {"unexpected": 1}
    (bad / "adaptations.jsonl").write_text(json.dumps(SHOTS[0].model_dump()) + "\n" + json.dumps(row) + "\n")
    monkeypatch.setattr(prompts.resources, "files", lambda package: tmp_path)
    prompts.load_adaptation_examples.cache_clear()
    try:
        with pytest.raises(InvalidRecordError, match=r"adaptations.jsonl:2"):
            prompts.load_adaptation_examples()
    finally:
        prompts.load_adaptation_examples.cache_clear()
