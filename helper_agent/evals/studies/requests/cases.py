"""The benchmark of everyday requests: its cases and the packaged suite files that hold them.

A case is a request in a person's own words, in a generated household (a seed and a room of the
embedded world), with the goal TEACh's checker scores on the final state and the object classes the
request names (what it may change; the tools its steps need are derived, `scope.py`). Three kinds:

- `plain`: one request;
- `teach`: the person teaches a named routine ("Perform the Kim breakfast: ...") and confirms it;
  then the routine is recalled (`recall`, the words the person says later) in a fresh household
  (`recall_household`) and must do the whole taught request, scored by the same goal;
- `impossible`: a request the household cannot do: it names things there are none of ("mow the
  lawn", "feed the cat" where there is none: `absent`), or asks things that are there for what they
  cannot take ("slice the mug", "put the pillow in the vase": `present`); the person expects a
  refusal that says why, and `why` is what they say if asked anyway.

A suite is a JSON Lines file: its first line is a header (`SuiteHeader`: which suite it is and what
it is for), then one case per line. Two suites are packaged: `calibration` (every rule of the agent
is chosen on it) and `reported` (written at the same time, before any rule; only reported). They
share no wording and no goal-and-household pair (`tests/test_eval_requests.py` checks both).

    suite = load_suite("calibration")          # or "reported", or a path
    suite.cases[0].request                     # "could you make me a coffee?"
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from helper_agent.teach import Task, TaskDefinitionError, default_registry
from helper_agent.world.catalog import load_catalog
from helper_agent.world.rooms import ROOM_TYPES

SUITES = ("calibration", "reported")
_PACKAGE = "helper_agent.evals.studies"


class SuiteFileError(ValueError):
    """A suite file that cannot be used; the message names the file, the line and the field:
    ``calibration.jsonl: line 12 (case cal-011): field 'goal[0]': task 'Clean X' takes 1 parameter(s), got 0``."""

    def __init__(self, source: str, line: int | None, problem: str, field: str = "", case: str = "") -> None:
        self.source, self.line, self.field, self.problem = source, line, field, problem
        where = f"line {line}" if line is not None else ""
        if case:
            where += f" (case {case})"
        if field:
            where += f"{': ' if where else ''}field '{field}'"
        super().__init__(f"{source}: {where}: {problem}" if where else f"{source}: {problem}")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Goal(_Model):
    """One TEACh task the final state must satisfy: its name in TEACh's task definitions and its
    parameters (the checker is `teach.check_task`)."""

    task: str = Field(min_length=1)
    params: tuple[str, ...] = ()

    @field_validator("params", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return tuple(str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value)
        return value

    @model_validator(mode="after")
    def _known(self) -> Goal:
        registry = default_registry()
        if self.task not in registry.names():
            raise ValueError(f"unknown TEACh task {self.task!r}")
        try:
            registry.instantiate(self.task, self.params)
        except TaskDefinitionError as exc:
            raise ValueError(str(exc)) from None
        return self

    def instantiate(self) -> Task:
        return default_registry().instantiate(self.task, self.params)

    def describe(self) -> str:
        return f"{self.task}({', '.join(self.params)})"


class Household(_Model):
    """A generated household: the world generator's seed and room, and the object types whose every
    instance starts dirty besides those the goal wants clean (`households.prepare`)."""

    seed: int = Field(ge=0)
    room: str
    dirty: tuple[str, ...] = ()

    @field_validator("room")
    @classmethod
    def _room(cls, value: str) -> str:
        if value not in ROOM_TYPES:
            raise ValueError(f"unknown room {value!r}; expected one of {', '.join(ROOM_TYPES)}")
        return value

    @field_validator("dirty")
    @classmethod
    def _types(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [t for t in value if t not in load_catalog()]
        if unknown:
            raise ValueError(f"unknown object type(s) {', '.join(unknown)}")
        return value


class RequestCase(_Model):
    """One case of the benchmark (see the module docstring for the kinds)."""

    id: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9-]{0,30}$")
    kind: Literal["plain", "teach", "impossible"]
    family: str = Field(min_length=1, description="The task family it covers (coverage only; never read by the agent).")
    request: str = Field(min_length=1, max_length=2000)
    household: Household
    goal: tuple[Goal, ...] = ()
    may_change: tuple[str, ...] = Field(default=(), description="The object classes the request names.")
    user: str = Field(default="sam", pattern=r"^[a-z][a-z0-9]{0,15}$")
    routine: str | None = None  # teach: the routine's name as the person says it ("the Kim breakfast")
    recall: str | None = None  # teach: what the person says later to have it done again
    recall_household: Household | None = None  # teach: the fresh household of the recall
    why: str | None = None  # impossible: why it cannot be done, as the person would say it
    absent: tuple[str, ...] = ()  # impossible: what the request names that the household lacks
    # impossible: what the request names that the household has, but which cannot take what is
    # asked ("slice the mug": the Mug; "put the pillow in the vase": both)
    present: tuple[str, ...] = ()

    @field_validator("may_change", "present")
    @classmethod
    def _classes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [t for t in value if t not in load_catalog()]
        if unknown:
            raise ValueError(f"unknown object class(es) {', '.join(unknown)}")
        return value

    @model_validator(mode="after")
    def _kind_fields(self) -> RequestCase:
        teach_fields = (self.routine, self.recall, self.recall_household)
        if self.kind == "impossible":
            if self.goal or self.may_change:
                raise ValueError("an impossible case has no goal and changes nothing (goal and may_change stay empty)")
            if not self.why or not (self.absent or self.present):
                raise ValueError("an impossible case needs 'why' (the reason a person gives) and 'absent' (what is "
                                 "missing) or 'present' (what is there but cannot take what is asked)")
        else:
            if not self.goal or not self.may_change:
                raise ValueError(f"a {self.kind} case needs a goal and the classes it may change (may_change)")
            if self.why or self.absent or self.present:
                raise ValueError("'why', 'absent' and 'present' belong to impossible cases")
        if self.kind == "teach":
            if any(f is None for f in teach_fields):
                raise ValueError("a teach case needs routine, recall and recall_household")
            if self.routine and self.routine.lower() not in self.request.lower():
                raise ValueError(f"the teaching request must name the routine {self.routine!r}")
            if self.recall_household == self.household:
                raise ValueError("the recall must happen in a fresh household (another seed or room)")
        elif any(f is not None for f in teach_fields):
            raise ValueError("routine, recall and recall_household belong to teach cases")
        return self

    def households(self) -> list[Household]:
        return [self.household] + ([self.recall_household] if self.recall_household else [])


class SuiteHeader(_Model):
    """The first line of a suite file: which suite, and the rule that governs it."""

    suite: str = Field(min_length=1)
    about: str = Field(min_length=1)


class RequestSuite(BaseModel):
    """A loaded suite: its header, its cases in file order, and the file they came from."""

    model_config = ConfigDict(frozen=True)

    header: SuiteHeader
    cases: tuple[RequestCase, ...]
    source: str

    @property
    def name(self) -> str:
        return self.header.suite

    def case(self, case_id: str) -> RequestCase:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(f"no case {case_id!r} in {self.source}")


def suite_path(name: str) -> Path:
    """The packaged file of suite `name` (calibration or reported)."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; packaged suites: {', '.join(SUITES)}")
    return Path(str(resources.files(_PACKAGE).joinpath("data", "requests", f"{name}.jsonl")))


def _field(loc: Sequence[Any]) -> str:
    """A pydantic error location as a field path: goal[0].params."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def _first_error(source: str, line: int, error: ValidationError, case: str = "") -> SuiteFileError:
    first = error.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    more = f" (and {error.error_count() - 1} more problem(s))" if error.error_count() > 1 else ""
    return SuiteFileError(source, line, message + more, _field(first["loc"]), case)


def load_suite(name_or_path: str | Path) -> RequestSuite:
    """Read and check a suite: a packaged name (calibration, reported) or a path to a file in that format.

    Raises `SuiteFileError` naming the file, the line and the field: an unreadable file, a line that
    is not a JSON object, a missing header, a missing or mistyped field, an unknown TEACh task or a
    wrong parameter count, an unknown object class or room, a kind's fields missing, a duplicate id."""
    path = suite_path(str(name_or_path)) if str(name_or_path) in SUITES else Path(name_or_path)
    source = path.name if str(name_or_path) in SUITES else str(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteFileError(source, None, f"cannot read the suite file: {exc}") from exc
    header: SuiteHeader | None = None
    cases: list[RequestCase] = []
    seen: dict[str, int] = {}
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SuiteFileError(source, number, f"not JSON: {exc.msg} at column {exc.colno}") from exc
        if not isinstance(raw, dict):
            raise SuiteFileError(source, number, f"expected a JSON object, got {type(raw).__name__}")
        if header is None:
            try:
                header = SuiteHeader.model_validate(raw)
            except ValidationError as exc:
                error = _first_error(source, number, exc)
                raise SuiteFileError(source, number, "the first line must be the suite's header "
                                     f"({{\"suite\": ..., \"about\": ...}}): {error.problem}", error.field) from exc
            continue
        label = str(raw.get("id", "")) if isinstance(raw.get("id"), str) else ""
        try:
            case = RequestCase.model_validate(raw)
        except ValidationError as exc:
            raise _first_error(source, number, exc, label) from exc
        if case.id in seen:
            raise SuiteFileError(source, number, f"duplicate id (first on line {seen[case.id]})", "id", case.id)
        seen[case.id] = number
        cases.append(case)
    if header is None:
        raise SuiteFileError(source, None, "empty: no header and no cases")
    if not cases:
        raise SuiteFileError(source, None, "no cases after the header")
    return RequestSuite(header=header, cases=tuple(cases), source=str(path))
