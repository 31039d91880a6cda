"""The words a person reads in `helper app` (and, for the reply, `helper chat`), without a browser:
the graph's log lines as sentences, subgoal outcomes, routine sources and times, what a search
opened, and the person's own answers when a conversation is rebuilt (issue 63)."""

from __future__ import annotations

import re
from datetime import UTC, timedelta, timezone
from types import SimpleNamespace

import pytest

from helper_agent.app.session import person_words, step_messages, subgoal_rows
from helper_agent.app.words import local_time, routine_source
from helper_agent.evals.studies.requests.claims import read_claim
from helper_agent.graphs.helper.facts import opened_sentence, plain_note, request_facts, step_outcome

RAW = re.compile(r"\b(?:retrieve|plan|validate|execute|locate|correct|replan|feedback|confirm|memorize|finish):|"
                 r"not_found|confirmed_success|examples? [a-z]+-|corr-|\d{4}-\d\d-\d\dT")


@pytest.mark.parametrize(("line", "said"), [
    ("finish: refused", None),
    ("finish: incomplete", None),
    ("replan: attempt 1 repeated the failed program",
     "The new program I wrote was the one that did not finish; I am writing another."),
    ("replan: every attempt repeated the failed program; it is not run again; asking what is missing",
     "Every new program I wrote was the one that did not finish, so I did not run it again."),
    ("replan: from feedback: the mug is still dirty", "I'll do what you say is missing."),
    ("replan: the missing part, read from the feedback: toggle_on FloorLamp; toggle_off DeskLamp",
     "What I'll do now: switch on the floor lamp; switch off the desk lamp."),
    ("replan: the missing part, read from the feedback: place TomatoSliced in Plate x2",
     "What I'll do now: put two tomato slices in the plate."),
    ("correct: corrective program (examples corr-blocked-open-01, corr-not-visible-02)",
     "A step failed, so I am trying another way."),
    ("correct: the fridge is closed, so open it first. (examples corr-blocked-open-01)",
     "A step failed, so I am trying another way: the fridge is closed, so open it first."),
    ("correct: corrective program rejected (line 1: 'x' is not allowed); retrying the failed step",
     "The fix I wrote for the failed step did not work out, so I am trying that step again."),
    ("locate: Television not found", "I looked for the television but did not find it."),
    ("locate: CoffeeMachine found", "I found the coffee machine."),
    ("locate: stopped by step_limit", "I stopped looking: this request's steps are used up."),
    ("retrieve: examples coffee-01, toast-02; routine 'the morning coffee' (0.912)",
     "I'm recalling your routine 'the morning coffee'."),
    ("retrieve: examples coffee-01, toast-02; routine 'Mary's coffee' (named)", "I'm recalling your routine 'Mary's coffee'."),
    ("retrieve: examples coffee-01, toast-02", None),
    ("plan: recalled routine 'the morning coffee'", "I'm doing your routine 'the morning coffee' as you taught it."),
    ("plan: attempt 1 adapting routine 'the morning coffee'", "I'm adapting your routine 'the morning coffee' to this request."),
    ("plan: attempt 1", None),
    ("validate: 6 subgoals", None),
])
def test_a_log_line_reads_as_a_sentence_or_not_at_all(line: str, said: str | None) -> None:
    assert plain_note(line) == said
    assert said is None or not RAW.search(said)


def _snap(log: list[str], nxt: tuple[str, ...] = ("execute",), **values: object) -> SimpleNamespace:
    return SimpleNamespace(values={"log": log, **values}, next=nxt, tasks=(), config={})


def test_the_conversation_never_shows_a_node_name_or_an_example_id() -> None:
    before = _snap(["retrieve: examples a-01"])
    lines = ["locate: Television not found", "correct: corrective program (examples corr-blocked-open-01)",
             "replan: attempt 1 repeated the failed program", "replan: from feedback: more", "finish: incomplete",
             "validate: rejected: nothing", "execute: not_found after 0/2 subgoals"]
    shown = step_messages(before, _snap(["retrieve: examples a-01", *lines]), replay=False)
    text = "\n".join(m["content"] for m in shown)
    assert "I looked for the television but did not find it." in text and not RAW.search(text), text
    assert len(shown) == 4  # locate, correct and two replan lines; finish, validate and execute say nothing here


def test_a_rebuilt_conversation_shows_what_the_person_typed() -> None:
    """After a reload the person's corrections read "not satisfied (…)"; their own words come from
    the checkpoint's resume value, else from the log line."""
    before = _snap([])
    answered = _snap(["feedback: not satisfied (not yet: the mug is dirty)"])
    assert step_messages(before, answered, replay=True, heard="not yet: the mug is dirty") == [
        {"role": "user", "content": "not yet: the mug is dirty"}]
    assert step_messages(before, answered, replay=True) == [{"role": "user", "content": "not yet: the mug is dirty"}]
    assert step_messages(before, _snap(["feedback: satisfied"]), replay=True, heard="thanks, that's it") == [
        {"role": "user", "content": "thanks, that's it"}]
    assert person_words("feedback: satisfied") == "done"
    assert person_words("confirm: no thanks") == "no thanks"
    assert person_words("feedback: the checker's sentence") == "the checker's sentence"


def test_subgoal_outcomes_read_as_words() -> None:
    rows = subgoal_rows({"execution": {"trace": [["Navigate(Television)", "not_found", 330], ["Pickup(Mug)", "done", 1],
                                                 ["ToggleOn(Lamp)", "stopped", 2]]}})
    assert [row[2] for row in rows] == ["not found", "done", "stopped (out of steps or tries)"]
    assert step_outcome("failure_limit") == "failure limit"


def test_routine_sources_and_times_read_as_words() -> None:
    assert routine_source("confirmed_success") == "taught and confirmed"
    assert routine_source("taught") == "taught" and routine_source("imported") == "imported"
    assert local_time("2026-12-06T14:03:07.123456Z", UTC) == "6 Dec 2026, 14:03"
    assert local_time("2026-12-06T14:03:07.123456Z", timezone(timedelta(hours=1))) == "6 Dec 2026, 15:03"
    assert local_time("2026-12-06T23:59:00", timezone(timedelta(hours=2))) == "7 Dec 2026, 01:59"  # naive: UTC
    assert local_time("not a time") == "not a time"


def test_what_a_search_opened_is_said_in_the_reply_and_keeps_its_claim() -> None:
    assert opened_sentence([("Drawer", "Box")]) == "I opened a drawer looking for the box"
    assert opened_sentence([("Cabinet", "Knife"), ("Drawer", "Knife"), ("Cabinet", "Knife"), ("Fridge", "Egg")]) == (
        "I opened two cabinets and a drawer looking for the knife and a fridge looking for the egg")
    values = {"request": "hand me the knife", "outcome": "success", "execution": {"status": "done"},
              "opened_looking": [["Cabinet", "Knife"], ["Drawer", "Knife"]]}
    reply = request_facts(values).reply()
    assert reply == "success; I opened a cabinet and a drawer looking for the knife"
    assert read_claim(reply) == "done"
    stored = {**values, "stored": {"name": "the knife", "version": 1, "user": "mary"}}
    assert read_claim(request_facts(stored).reply()) == "stored"
    assert request_facts({**values, "opened_looking": []}).reply() == "success"
