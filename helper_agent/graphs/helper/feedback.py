"""Reading a person's answer to "Is the task completed to your satisfaction? Did I miss anything?".

A word list read "no" as "nothing missing" and so as satisfied, and "No, it's not done" went
unheard. The answer is read by the chat model under a small grammar instead: it can only say
`satisfied` or `not satisfied`, optionally followed by what is missing. The first word is a choice
between two continuations, so even the 0.5B model answers in the format; the few-shot turns
(`prompts/examples/feedback_shots.jsonl`) come from the calibration answers in
`benchmarks/data/feedback_answers.jsonl`, and `benchmarks/feedback_bench.py` measures the reader on
those and on held-out answers it was not tuned on.

Only an empty answer is read without the model (nothing said: nothing to do). A reply that is not
in the format (a provider that ignores grammars) counts as not satisfied, with the person's words as
what is missing: asking again costs a round, a false "satisfied" costs the person's task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

FEEDBACK_GRAMMAR = r'''root ::= "satisfied" | "not satisfied" detail?
detail ::= ": " [^\n]+
'''
"""GBNF of a reading: `satisfied`, `not satisfied` or `not satisfied: <what is missing>`."""

SYSTEM = (
    "A household robot finished a task and asked the person: \"Is the task completed to your satisfaction? "
    "Did I miss anything?\" Read the person's answer. Write `satisfied` when the person is content and wants "
    "nothing more. Otherwise write `not satisfied: ` and what is missing or wrong, in a few words. A bare "
    "\"no\" answers whether the task is completed, so it means not satisfied; an answer that names a "
    "problem or something more to do is not satisfied, even after \"yes\"."
)

SHOTS_FILE = "feedback_shots.jsonl"


@dataclass(frozen=True)
class FeedbackReading:
    """What the person meant: satisfied, or not, and then what is missing (their words if unsaid)."""

    satisfied: bool
    missing: str = ""


@cache
def feedback_shots() -> tuple[tuple[str, str], ...]:
    """The packaged few-shot (answer, reading) pairs."""
    path = resources.files("helper_agent.prompts").joinpath("examples", SHOTS_FILE)
    shots = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            shots.append((str(record["answer"]), str(record["reading"])))
    return tuple(shots)


def feedback_messages(answer: str) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(content=SYSTEM)]
    for said, reading in feedback_shots():
        messages += [HumanMessage(content=f"Answer: {said}"), AIMessage(content=reading)]
    return [*messages, HumanMessage(content=f"Answer: {answer}")]


# The verdict first (a model without the grammar may add quotes, a full stop or more words).
_READING = re.compile(r"^[\s`'\"*]*(?P<verdict>not satisfied|satisfied)\b[\s`'\"*.,;:!-]*(?P<missing>.*)$", re.I | re.S)


def parse_reading(text: str, answer: str) -> FeedbackReading:
    """A model's reply as a reading; anything outside the format is "not satisfied" with `answer`."""
    match = _READING.match(text.strip().splitlines()[0] if text.strip() else "")
    if match and match.group("verdict").lower() == "satisfied":
        return FeedbackReading(True)
    missing = (match.group("missing") or "").strip() if match else ""
    return FeedbackReading(False, missing or answer.strip())


def read_feedback(answer: str, ask: Any) -> FeedbackReading:
    """Read `answer` with `ask(messages, grammar) -> str` (the graph's LLM call under a grammar)."""
    if not answer.strip():
        return FeedbackReading(True)
    return parse_reading(ask(feedback_messages(answer.strip()), FEEDBACK_GRAMMAR), answer)


_SATISFIED_LINE = "feedback: satisfied"
_NOT_SATISFIED = "feedback: not satisfied ("


def answers_in_log(log: Iterable[str]) -> list[str]:
    """The answers of a request's log that asked for more, in order, as `nodes.ask_feedback` writes
    them: a person's as "feedback: not satisfied (<their words>)", an evaluation's feedback source's
    as "feedback: <the checker's sentence>" ("feedback: satisfied" either way when nothing was
    missing). A reader of one format alone missed the other: a taught routine checked against its
    request and the answers (`scoping.routine_in_scope`) saw no answer in an evaluation."""
    out: list[str] = []
    for line in log:
        if not line.startswith("feedback: ") or line == _SATISFIED_LINE:
            continue
        said = line[len("feedback: "):]
        if line.startswith(_NOT_SATISFIED) and line.endswith(")"):
            said = line[len(_NOT_SATISFIED):-1]
        if said:
            out.append(said)
    return out
