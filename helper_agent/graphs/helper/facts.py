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
    # what the robot opened while it searched, and what for: (the opened thing's class, the class it
    # looked for); a drawer left open showed only in the app's picture legend, the reply says it now
    opened_looking: list[tuple[str, str]] = Field(default_factory=list)
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
        changed that was not asked for, when the scope check could not keep it out, and what it
        opened while it searched ("I opened a drawer looking for the mug")."""
        parts = [self._verdict()]
        if self.unasked and self.outcome != "refused":
            parts.append(f"I also changed the {', '.join(_words(c) for c in self.unasked)}, which you did not ask for")
        if self.opened_looking:
            parts.append(opened_sentence(self.opened_looking))
        return "; ".join(parts)

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
        if self.outcome == "invalid_program":
            # The validator's reason is the planner's ("the request does not mention CoffeeMachine
            # ..."), not the person's: it stays in the log (`helper chat --verbose`), and the person
            # gets a sentence and a question (issue 63).
            return ("not done: I couldn't work out how to do that (no valid program); could you say it "
                    "another way, naming the things to use?")
        label = {"incomplete": "not done: the execution did not finish",
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
        request=str(values.get("said") or values.get("request") or ""),
        outcome=str(values.get("outcome") or ""),
        stored=StoredRoutine.model_validate(stored) if stored else None,
        recalled=routine.get("name"),
        failed_subgoal=str(execution.get("failed_subgoal") or ""),
        error=str(execution.get("error") or execution.get("failure") or values.get("plan_error") or ""),
        feedback=str(values.get("feedback") or ""),
        refusal=str(values.get("refusal") or ""),
        unasked=_unasked_done(values),
        opened_looking=[(str(opened), str(wanted)) for opened, wanted in values.get("opened_looking") or []],
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


def thing_words(cls: str) -> str:
    """An object class as a person says it: "CoffeeMachine" -> "coffee machine", "TomatoSliced" ->
    "tomato slice", "EggCracked" -> "cracked egg"."""
    if cls.endswith("Sliced") and len(cls) > 6:
        return f"{_words(cls[:-6])} slice"
    if cls.endswith("Cracked") and len(cls) > 7:
        return f"cracked {_words(cls[:-7])}"
    return _words(cls)


_NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _counted(cls: str, n: int) -> str:
    """"a drawer", "two cabinets", "12 drawers"."""
    words = thing_words(cls)
    if n == 1:
        return _a(words)
    plural = words + ("es" if words.endswith(("s", "x", "ch", "sh")) else "s")
    return f"{_NUMBERS[n] if n < len(_NUMBERS) else n} {plural}"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def opened_sentence(opened_looking: list[tuple[str, str]]) -> str:
    """What a search opened, per thing looked for, in the order it happened: "I opened a drawer and
    two cabinets looking for the mug" (the app's picture rang "Drawer_3 opened" and no reply said why)."""
    by_wanted: dict[str, dict[str, int]] = {}
    for opened, wanted in opened_looking:
        counts = by_wanted.setdefault(wanted, {})
        counts[opened] = counts.get(opened, 0) + 1
    said = [f"{_listed([_counted(cls, n) for cls, n in counts.items()])} looking for the {thing_words(wanted)}"
            for wanted, counts in by_wanted.items()]
    return "I opened " + _listed(said)


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


# ---------------------------------------------------------------------------------- plain words
STEP_OUTCOMES = {"done": "done", "skipped": "skipped", "failed": "failed", "not_found": "not found",
                 "stopped": "stopped (out of steps or tries)", "pending": "not run"}
"""A subgoal's outcome (the executor's status) as a person reads it in a subgoal table."""


def step_outcome(status: str) -> str:
    """"not_found" -> "not found"; an unknown status with its underscores as spaces."""
    return STEP_OUTCOMES.get(status, status.replace("_", " "))


_LIMITS = {"step_limit": "this request's steps are used up", "failure_limit": "too many actions failed"}
# The missing part's steps ("place TomatoSliced in Plate x2", `program.edits.part.Missing.describe`)
_PART_STEP = re.compile(r"^(?P<step>[a-z_]+) (?P<cls>[A-Za-z]+)(?: in (?P<place>[A-Za-z]+))?(?: x(?P<n>\d+))?$")
_PART_WORDS = {"slice": "slice {t}", "open": "open {t}", "close": "close {t}", "clean": "wash {t}",
               "empty": "empty {t}", "fill_up": "fill {t}", "cook": "cook {t}", "toast": "toast {t}",
               "boil": "boil {t} in {p}", "coffee": "make coffee in {t}", "water": "water {t} with {p}",
               "place": "put {t} in {p}", "toggle_on": "switch on {t}", "toggle_off": "switch off {t}"}


def _part_step(described: str) -> str:
    """One step of a missing part in words: "place TomatoSliced in Plate" -> "put the tomato slice in the plate"."""
    match = _PART_STEP.match(described.strip())
    if match is None or match["step"] not in _PART_WORDS:
        return ""
    n = int(match["n"] or 1)
    thing = f"the {thing_words(match['cls'])}" if n == 1 else _counted(match["cls"], n)
    return _PART_WORDS[match["step"]].format(t=thing, p=f"the {thing_words(match['place'] or '')}")


def plain_note(line: str) -> str | None:
    """A line of the graph's log as a sentence a person reads, or None for a line that is the
    engineers' (the app's node log keeps every line as it is). The conversation once showed
    "finish: refused", "replan: attempt 1 repeated the failed program" and "correct: corrective
    program (examples corr-blocked-open-01, ...)": node names and example ids, not words.

    `finish` says nothing: the request's end is the reply (`RequestFacts.reply`) right after it."""
    node, _, rest = line.partition(": ")
    if node == "retrieve":
        match = re.search(r"; routine '(?P<name>.*)' \([^()]*\)$", rest)
        return f"I'm recalling your routine '{match['name']}'." if match else None
    if node == "plan":
        if match := re.fullmatch(r"recalled routine '(?P<name>.*)'", rest):
            return f"I'm doing your routine '{match['name']}' as you taught it."
        if match := re.fullmatch(r"attempt (?P<n>\d+) adapting routine '(?P<name>.*)'", rest):
            again = "" if match["n"] == "1" else " again"
            return f"I'm adapting your routine '{match['name']}' to this request{again}."
        return None
    if node == "locate":
        if match := re.fullmatch(r"stopped by (?P<why>\w+)", rest):
            return f"I stopped looking: {_LIMITS.get(match['why'], match['why'].replace('_', ' '))}."
        if match := re.fullmatch(r"(?P<cls>\w+) (?P<found>found|not found)", rest):
            thing = thing_words(match["cls"])
            return f"I found the {thing}." if match["found"] == "found" else \
                f"I looked for the {thing} but did not find it."
        return None
    if node == "correct":
        if rest.startswith("corrective program rejected"):
            return "The fix I wrote for the failed step did not work out, so I am trying that step again."
        why = re.sub(r"\s*\(examples[^()]*\)$", "", rest).strip()
        if why in ("", "corrective program"):
            return "A step failed, so I am trying another way."
        return f"A step failed, so I am trying another way: {why.rstrip('.')}."
    if node == "replan":
        if rest.startswith("from feedback: "):
            return "I'll do what you say is missing."
        if rest.startswith("the missing part, read from the feedback: "):
            steps = [_part_step(s) for s in rest.split(": ", 1)[1].split(";")]
            return f"What I'll do now: {'; '.join(steps)}." if all(steps) and steps else None
        if re.fullmatch(r"attempt \d+ repeated the failed program", rest):
            return "The new program I wrote was the one that did not finish; I am writing another."
        if rest.startswith("every attempt repeated the failed program"):
            return "Every new program I wrote was the one that did not finish, so I did not run it again."
        return None
    return None
