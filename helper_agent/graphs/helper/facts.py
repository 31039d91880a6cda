"""What one request did, as facts a reply (the chat, the web app, a trace) is built from.

A chat thread carries many requests; a reply must come from this request's facts only. It once read
the accumulated log and said "routine ... stored" after a recall that stored nothing. `RequestFacts`
is read from the graph's state values (`request_facts`), which `retrieve` starts afresh for every
request, and is plain pydantic so any front end can show it or serialise it.
"""

from __future__ import annotations

import re
from typing import Any

from langgraph.types import Overwrite
from pydantic import BaseModel, Field


class StoredRoutine(BaseModel):
    """The routine a request stored (a confirmed success that named one)."""

    name: str
    version: int | None = None
    user: str


class RequestFacts(BaseModel):
    """One request's end: its outcome, what it stored or recalled, what it spent and logged."""

    request: str = ""
    # success, done, incomplete, invalid_program, repeated_program, step_limit, failure_limit,
    # llm_unavailable, llm_budget, refused; "" before the request ended
    outcome: str = ""
    refusal: str = ""  # the sentence saying why a refused request was not done
    # classes a program ran with although the request does not ask for them (the scope check could
    # not trim them): the reply says so, so "success" never hides a change nobody asked for
    unasked: list[str] = Field(default_factory=list)
    stored: StoredRoutine | None = None
    recalled: str | None = None  # the name of the routine the request recalled, if any
    failed_subgoal: str = ""
    error: str = ""
    feedback: str = ""  # the person's last unmet wish ("" when satisfied or never asked)
    finished: bool = False  # the last program ran to its end (the execution's status is "done")
    steps: int = 0  # actions this request took (its step budget is the graph's `max_steps`)
    failures: int = 0
    llm_calls: int = 0  # this request's, across interrupts and resumes
    llm_seconds: float = 0.0
    log: list[str] = Field(default_factory=list)

    def reply(self) -> str:
        """The one-line verdict a person reads (plain text; front ends add colour), with what it
        changed that was not asked for, when the scope check could not keep it out."""
        verdict = self._verdict()
        if not self.unasked or self.outcome == "refused":
            return verdict
        things = ", ".join(_words(c) for c in self.unasked)
        return f"{verdict}; I also changed the {things}, which you did not ask for"

    def _verdict(self) -> str:
        if self.outcome == "success":
            stored = ""
            if self.stored is not None:
                version = f" v{self.stored.version}" if self.stored.version is not None else ""
                stored = f" (routine '{self.stored.name}'{version} for {self.stored.user} stored)"
            return "success" + stored
        if self.outcome == "done":
            return "done"
        if self.outcome == "refused":
            return self.refusal or "not done: I can't do that here"
        if self.outcome == "incomplete" and self.finished and self.feedback:
            # The program ran to its end, but the person's last answer asked for more and no
            # feedback round was left to replan: "the execution did not finish" would be untrue.
            return (f"not done: the program ran to its end, but you said \u201c{self.feedback}\u201d and no "
                    "feedback round is left to replan it; nothing stored")
        label = {"incomplete": "not done: the execution did not finish", "invalid_program": "no valid program",
                 "step_limit": "stopped: step limit", "failure_limit": "stopped: failed-action limit",
                 "repeated_program": "not done: every replan repeated the program your answer was about",
                 "llm_unavailable": "stopped: the LLM did not answer",
                 "llm_budget": "stopped: this request's LLM time is spent"}.get(
            self.outcome, self.outcome or "no outcome")
        detail = "; ".join(part for part in (f"stopped at {self.failed_subgoal}" if self.failed_subgoal else "",
                                             self.error) if part)
        nothing = "; nothing stored" if self.outcome in ("incomplete", "repeated_program") else ""
        return label + (f" ({detail})" if detail else "") + nothing

    @property
    def succeeded(self) -> bool:
        return self.outcome in ("success", "done")


def request_facts(values: dict[str, Any], env_steps: int | None = None, env_failures: int | None = None) -> RequestFacts:
    """The facts of the request whose graph state is `values` (`graph.get_state(config).values`).

    `env_steps`/`env_failures` are the household's counts now (for the steps this request took);
    without them the counts are 0."""
    execution = values.get("execution") or {}
    stored = values.get("stored")
    routine = values.get("routine") or {}
    steps = env_steps - int(values.get("steps_at_start", 0)) if env_steps is not None else 0
    failures = env_failures - int(values.get("failures_at_start", 0)) if env_failures is not None else 0
    return RequestFacts(
        request=str(values.get("request") or ""),
        outcome=str(values.get("outcome") or ""),
        stored=StoredRoutine.model_validate(stored) if stored else None,
        recalled=routine.get("name"),
        failed_subgoal=str(execution.get("failed_subgoal") or ""),
        error=str(execution.get("error") or execution.get("failure") or values.get("plan_error") or ""),
        feedback=str(values.get("feedback") or ""),
        refusal=str(values.get("refusal") or ""),
        unasked=_unasked_done(values),
        finished=execution.get("status") == "done",
        steps=max(steps, 0),
        failures=max(failures, 0),
        llm_calls=int((values.get("usage") or {}).get("llm_calls", 0)),
        llm_seconds=float((values.get("usage") or {}).get("llm_seconds", 0.0)),
        log=log_lines(values.get("log")),
    )


def unfinished_sentence(execution: dict[str, Any]) -> str:
    """What an execution that did not finish left undone, and why, in one sentence a person reads
    before the feedback question ("" when it ran to its end). The chat once asked "Is the task
    completed to your satisfaction?" right after five "locate: Lamp not found" lines, with no word
    that nothing had been done."""
    status = str(execution.get("status") or "")
    if not status or status == "done":
        return ""
    step = str(execution.get("failed_subgoal") or "")
    why = str(execution.get("failure") or execution.get("error") or "")
    if status == "not_found":
        missing, error = str(execution.get("missing") or ""), str(execution.get("error") or "")
        found = error.removeprefix("could not find ") if error.startswith("could not find ") else missing
        # "could not find a whole Apple (8 slices seen ...)" keeps its own words; a bare class gets an article
        why = (f"I could not find {found if found.startswith('a whole ') else _a(found)}" if found
               else why or "an object was not found")
    elif status in ("step_limit", "failure_limit"):
        why = {"step_limit": "I used up this request's steps",
               "failure_limit": "too many actions failed"}[status]
    what = f"{step} and the steps after it were not done" if step else "the program did not run to its end"
    return f"I did not finish the task: {what}, because {why or status}."


def _unasked_done(values: dict[str, Any]) -> list[str]:
    """The unasked classes a program ran with (`unasked_kept`) that a step of the last program that
    ran did act on: a class whose steps never ran was not changed, and the reply says only what is
    true."""
    kept = [str(c) for c in values.get("unasked_kept") or []]
    if not kept:
        return []
    ran = (values.get("subgoals") or [])[: int((values.get("execution") or {}).get("completed") or 0)]
    touched = {str((s.get(role) or {}).get("object_class") or "") for s in ran for role in ("target", "receptacle")}
    return [c for c in kept if c in touched]


def _words(cls: str) -> str:
    """A class as words: "CoffeeMachine" -> "coffee machine"."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", cls).lower()


def _a(name: str) -> str:
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def question_lines(payload: dict[str, Any]) -> list[str]:
    """The lines a front end shows for the feedback question `ask_feedback` waits on (its
    `interrupt` payload): what was not done first, then the question, and on the last round that
    it is the last (what a person says then is not replanned)."""
    lines = [unfinished_sentence(payload.get("execution") or {})]
    question = str(payload.get("question") or "")
    if payload.get("last"):
        question += " (The last round: I will not replan after this answer.)"
    return [line for line in (*lines, question) if line]


def log_lines(update: Any) -> list[str]:
    """The log lines of a state value or of one node's update (`retrieve` writes an `Overwrite`)."""
    if isinstance(update, Overwrite):
        update = update.value
    return [str(line) for line in update or []]
