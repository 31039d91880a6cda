"""HELPER's personalization suite: taught routines, recalled unchanged or with 1-3 modifications.

A user teaches a named routine ("Perform the Mary cleaning: clean two plates and two cups in the
sink"); later requests recall it unchanged ("Do the Mary cleaning") or with one, two or three
modifications ("Do the Mary cleaning, but with bowls instead of cups and only one plate"). A request
succeeds when executing the planner's adapted program satisfies every TEACh task of its goal.
HELPER's Table 3 reports the success rate per category: original plan, one, two, three changes.

The suite is data (`data/personalization.json`): five routines (sandwich, breakfast, salad, placing
things, cleaning), each with its user, name, teaching request, program and room type, and eight
requests per routine (two of each category), each with its text, the changes in words, the goal as
TEACh tasks, a gold adapted program and a scene rule.

**Scene rule.** A request's scene is the first seed from `scene.base_seed` whose generated room of
`scene.room_type` (a) has every object type the gold program needs, at least as many of each
pickupable type as the program makes objects of it (a sliced class needs its whole type and a
knife; clean/fill need a sink, toast a toaster, cook a microwave or a pan), (b) has exactly that
many of X for every "all X" goal (Clean All X, Put All X On/In Y), plus the spec's own `needs`
(minimum counts) and `exact` counts, and (c) after dirtying every instance of the types the goal
wants clean (every condition ``isDirty: 0`` in the goal's task tree, plus `scene.make_dirty`),
satisfies none of the goal's tasks. The seed the rule chose is recorded in the data
(`scene.seed`); `find_seed` recomputes it and the tests check that the two agree
(`helper eval personalization --write-seeds` rewrites them after a change to the world generator).

    suite = load_suite()
    result = run_suite(lambda req, routine: my_planner(req.text, routine.program))
    table3(result)   # {"original": 1.0, "one": 0.9, "two": 0.8, "three": 0.6, "overall": 0.825}
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.engine.agents import ProgramAgent
from helper_agent.graphs.base import Agent, AgentResult, EpisodeSetup
from helper_agent.program import CompiledProgram, ProgramError, SubgoalKind, compile_program
from helper_agent.teach import (
    Task,
    TaskDefinitionError,
    check_task,
    default_registry,
    dirty_types,
)
from helper_agent.tools.executor import ExecutorConfig
from helper_agent.world.catalog import load_catalog
from helper_agent.world.generator import generate_scene
from helper_agent.world.metadata import export_objects
from helper_agent.world.rooms import ROOM_TYPES
from helper_agent.world.state import WorldState

__all__ = [
    "CATEGORIES",
    "CATEGORY_CHANGES",
    "TABLE3_LABELS",
    "GoalResult",
    "GoalTask",
    "PersonalizationDataError",
    "PersonalizationRequest",
    "PersonalizationSuite",
    "RequestScore",
    "Routine",
    "SceneRequirements",
    "SceneSpec",
    "SuiteResult",
    "default_suite_path",
    "find_seed",
    "gold_planner",
    "load_suite",
    "prepare_request",
    "routine_planner",
    "run_suite",
    "scene_problems",
    "scene_requirements",
    "score_program",
    "table3",
    "write_seeds",
]

Category = Literal["original", "one", "two", "three"]
CATEGORIES: tuple[str, ...] = ("original", "one", "two", "three")
CATEGORY_CHANGES: dict[str, int] = {"original": 0, "one": 1, "two": 2, "three": 3}
TABLE3_LABELS: dict[str, str] = {
    "original": "Original Plan",
    "one": "One Change",
    "two": "Two Changes",
    "three": "Three Changes",
    "overall": "Overall",
}
# Goals over every instance of a type: the scene must hold exactly as many as the gold program handles.
ALL_X_TASKS = ("Clean All X", "Put All X On Y", "Put All X In One Y")
MAX_SEED_SCAN = 3000

_PACKAGE = "helper_agent.evals.studies"
_DATA_FILE = "data/personalization.json"


class PersonalizationDataError(ValueError):
    """The suite file is malformed; the message names the file and the field, e.g.
    ``personalization.json: key 'requests[3].goal[0].params': task 'Sandwich' takes 2 parameter(s)``."""

    def __init__(self, source: str, key: str | None, problem: str) -> None:
        self.source = source
        self.key = key
        self.problem = problem
        super().__init__(f"{source}: key '{key}': {problem}" if key else f"{source}: {problem}")


# --------------------------------------------------------------------------------------------------
# The data


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _join_program(value: Any) -> Any:
    """Programs may be written as one string or as a list of lines (more readable in JSON)."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return value


class GoalTask(_Model):
    """One TEACh task that must be satisfied: a task name from the task definitions and its parameters."""

    task_name: str = Field(min_length=1)
    params: tuple[str, ...] = ()

    @field_validator("params", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return tuple(str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value)
        return value

    def instantiate(self) -> Task:
        return default_registry().instantiate(self.task_name, self.params)

    def describe(self) -> str:
        return f"{self.task_name}({', '.join(self.params)})"


class SceneSpec(_Model):
    """How a request's scene is found (see the module docstring); `seed` is the recorded result."""

    room_type: str
    base_seed: int = Field(ge=0)
    seed: int | None = Field(default=None, ge=0)
    needs: dict[str, int] = Field(default_factory=dict)
    exact: dict[str, int] = Field(default_factory=dict)
    make_dirty: tuple[str, ...] = ()
    note: str = ""  # why the base seed is what it is, when that needs saying

    @field_validator("room_type")
    @classmethod
    def _room(cls, value: str) -> str:
        if value not in ROOM_TYPES:
            raise ValueError(f"unknown room type {value!r}; expected one of {', '.join(ROOM_TYPES)}")
        return value


class Routine(_Model):
    """A routine a user taught: its name, the teaching request and the program that performs it.

    Field names follow `helper_agent.memory.routines.Routine` (user, name, request, program), so a
    harness can store it with ``RoutineMemory.teach(r.name, r.program, r.request, user=r.user)``.
    """

    name: str = Field(min_length=1, description='e.g. "the Mary cleaning"')
    user: str = Field(min_length=1)
    task: str = Field(min_length=1, description="sandwich, breakfast, salad, place or clean")
    request: str = Field(min_length=1, description="The teaching request.")
    program: str = Field(min_length=1)
    room_type: str
    goal: tuple[GoalTask, ...] = Field(min_length=1, description="What the routine achieves, as TEACh tasks.")

    _program = field_validator("program", mode="before")(_join_program)

    @field_validator("room_type")
    @classmethod
    def _room(cls, value: str) -> str:
        return SceneSpec._room(value)


class PersonalizationRequest(_Model):
    """A later request that recalls a routine, unchanged or with modifications."""

    id: str = Field(min_length=1)
    routine: str = Field(min_length=1, description="The routine's name.")
    category: Category
    text: str = Field(min_length=1)
    changes: tuple[str, ...] = ()
    goal: tuple[GoalTask, ...] = Field(min_length=1)
    program: str = Field(min_length=1, description="The gold adapted program.")
    scene: SceneSpec

    _program = field_validator("program", mode="before")(_join_program)

    @property
    def n_changes(self) -> int:
        return CATEGORY_CHANGES[self.category]


class _SuiteFile(_Model):
    description: str = ""
    routines: tuple[Routine, ...] = Field(min_length=1)
    requests: tuple[PersonalizationRequest, ...] = Field(min_length=1)


class PersonalizationSuite(BaseModel):
    """The loaded suite: routines by name and the requests in file order."""

    model_config = ConfigDict(frozen=True)

    routines: tuple[Routine, ...]
    requests: tuple[PersonalizationRequest, ...]
    description: str = ""
    source: str = ""

    def routine(self, name: str) -> Routine:
        for r in self.routines:
            if r.name == name:
                return r
        raise KeyError(f"no routine named {name!r} in the personalization suite")

    def request(self, request_id: str) -> PersonalizationRequest:
        for r in self.requests:
            if r.id == request_id:
                return r
        raise KeyError(f"no request {request_id!r} in the personalization suite")

    def by_category(self, category: str) -> list[PersonalizationRequest]:
        return [r for r in self.requests if r.category == category]

    def by_routine(self, name: str) -> list[PersonalizationRequest]:
        return [r for r in self.requests if r.routine == name]


def default_suite_path() -> Path:
    return Path(str(resources.files(_PACKAGE).joinpath(_DATA_FILE)))


def _loc(loc: Sequence[Any]) -> str:
    """A pydantic error location as a key path: requests[3].goal[0].params."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def _describe_validation_error(source: str, error: ValidationError, raw: Any) -> PersonalizationDataError:
    first = error.errors()[0]
    loc = list(first["loc"])
    key = _loc(loc)
    # Name the request or routine too: "requests[3] (id 'mary-two-a')".
    if len(loc) >= 2 and loc[0] in ("requests", "routines") and isinstance(loc[1], int):
        try:
            item = raw[loc[0]][loc[1]]
            label = item.get("id") if loc[0] == "requests" else item.get("name")
        except (KeyError, IndexError, TypeError, AttributeError):
            label = None
        if label:
            key = key.replace(f"{loc[0]}[{loc[1]}]", f"{loc[0]}[{loc[1]}] ({label})", 1)
    more = f" (and {error.error_count() - 1} more problem(s))" if error.error_count() > 1 else ""
    return PersonalizationDataError(source, key, f"{first['msg']}{more}")


def load_suite(path: str | Path | None = None) -> PersonalizationSuite:
    """Read and check the suite file (default: the packaged `data/personalization.json`).

    Raises `PersonalizationDataError` naming the file and the field for unreadable JSON, a missing
    or mistyped field, an unknown task or wrong parameter count, a program the compiler rejects,
    a request naming an unknown routine, duplicate ids, or a category that disagrees with the
    number of changes.
    """
    file = Path(path) if path is not None else default_suite_path()
    source = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise PersonalizationDataError(source, None, f"cannot read the suite file: {exc}") from exc
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PersonalizationDataError(
            source, None, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    try:
        data = _SuiteFile.model_validate(raw)
    except ValidationError as exc:
        raise _describe_validation_error(source, exc, raw) from exc
    _check_suite(source, data)
    return PersonalizationSuite(
        routines=data.routines, requests=data.requests, description=data.description, source=source
    )


def _check_goal(source: str, key: str, goal: Sequence[GoalTask]) -> None:
    registry = default_registry()
    for i, g in enumerate(goal):
        if g.task_name not in registry.names():
            raise PersonalizationDataError(
                source, f"{key}[{i}].task_name", f"unknown TEACh task {g.task_name!r}"
            )
        try:
            g.instantiate()
        except TaskDefinitionError as exc:
            raise PersonalizationDataError(source, f"{key}[{i}].params", str(exc)) from exc


def _check_program(source: str, key: str, program: str) -> None:
    try:
        compile_program(program)
    except ProgramError as exc:
        raise PersonalizationDataError(source, key, f"the program does not compile: {exc}") from exc


def _check_suite(source: str, data: _SuiteFile) -> None:
    names: set[str] = set()
    for i, r in enumerate(data.routines):
        key = f"routines[{i}] ({r.name})"
        if r.name in names:
            raise PersonalizationDataError(source, f"{key}.name", f"duplicate routine name {r.name!r}")
        names.add(r.name)
        _check_goal(source, f"{key}.goal", r.goal)
        _check_program(source, f"{key}.program", r.program)
    ids: set[str] = set()
    for i, q in enumerate(data.requests):
        key = f"requests[{i}] ({q.id})"
        if q.id in ids:
            raise PersonalizationDataError(source, f"{key}.id", f"duplicate request id {q.id!r}")
        ids.add(q.id)
        if q.routine not in names:
            raise PersonalizationDataError(
                source, f"{key}.routine", f"unknown routine {q.routine!r}; the suite has {sorted(names)}"
            )
        if len(q.changes) != q.n_changes:
            raise PersonalizationDataError(
                source,
                f"{key}.changes",
                f"category {q.category!r} needs {q.n_changes} change(s), {len(q.changes)} listed",
            )
        _check_goal(source, f"{key}.goal", q.goal)
        _check_program(source, f"{key}.program", q.program)
        for field in ("needs", "exact"):
            for otype, n in getattr(q.scene, field).items():
                if otype not in load_catalog() or n < 0:
                    raise PersonalizationDataError(
                        source, f"{key}.scene.{field}.{otype}", "needs a known object type and a count >= 0"
                    )


# --------------------------------------------------------------------------------------------------
# Scenes


class SceneRequirements(BaseModel):
    """What a request's scene must hold (derived from the gold program and goal, plus the spec)."""

    minimum: dict[str, int] = Field(default_factory=dict)
    exact: dict[str, int] = Field(default_factory=dict)
    cook: bool = False  # a microwave, or a pan and a stove burner
    dirty: tuple[str, ...] = ()

    def problems(self, counts: Counter[str]) -> list[str]:
        out = [f"{n} {t} needed, {counts[t]} present" for t, n in self.minimum.items() if counts[t] < n]
        out += [
            f"exactly {n} {t} needed, {counts[t]} present" for t, n in self.exact.items() if counts[t] != n
        ]
        if self.cook and not (counts["Microwave"] or (counts["Pan"] and counts["StoveBurner"])):
            out.append("nothing to cook with (a microwave, or a pan and a stove)")
        return out


def _whole(cls: str) -> str | None:
    if cls == "EggCracked":
        return "Egg"
    return cls[: -len("Sliced")] if cls.endswith("Sliced") else None


def _dirty_types(goal: Iterable[GoalTask]) -> list[str]:
    """Types the goal wants clean (`teach.dirty_types` over its instantiated tasks)."""
    return dirty_types(g.instantiate() for g in goal)


def scene_requirements(
    req: PersonalizationRequest, compiled: CompiledProgram | None = None
) -> SceneRequirements:
    """The object counts the request's scene must have (see the module docstring)."""
    catalog = load_catalog()
    compiled = compiled or compile_program(req.program)
    minimum: Counter[str] = Counter()
    instances: Counter[str] = Counter()
    cook = False

    def need(cls: str, n: int = 1) -> None:
        minimum[cls] = max(minimum[cls], n)

    for ref in compiled.objects:
        cls = "SinkBasin" if ref.object_class == "Sink" else ref.object_class
        if ref.landmark:
            need(ref.landmark)
        whole = _whole(cls)
        if whole is not None:
            need(whole)
            if whole != "Egg":
                need("Knife")
        elif cls in catalog and catalog.get(cls).pickupable:
            instances[cls] += 1
        else:
            need(cls)
    for cls, n in instances.items():
        need(cls, n)
    for sub in compiled.subgoals:
        if sub.kind in (SubgoalKind.CLEAN, SubgoalKind.FILL_UP):
            need("SinkBasin")
        elif sub.kind is SubgoalKind.TOAST:
            need("Toaster")
        elif sub.kind is SubgoalKind.SLICE:
            need("Knife")
        elif sub.kind is SubgoalKind.COOK:
            cook = True
    exact: dict[str, int] = {}
    for g in req.goal:
        if g.task_name in ALL_X_TASKS:
            kind = g.params[0]
            if not instances[kind]:
                raise ValueError(
                    f"request {req.id!r}: goal {g.describe()} is about every {kind}, but the gold program "
                    f"handles no {kind}"
                )
            exact[kind] = instances[kind]
    for cls, n in req.scene.needs.items():
        need(cls, n)
    exact.update(req.scene.exact)
    for cls in exact:
        minimum.pop(cls, None)
    dirty = _dirty_types(req.goal)
    dirty += [t for t in req.scene.make_dirty if t not in dirty]
    return SceneRequirements(minimum=dict(minimum), exact=exact, cook=cook, dirty=tuple(dirty))


def _dirty(state: WorldState, types: Iterable[str]) -> None:
    catalog = load_catalog()
    wanted = set(types)
    for obj in state.objects.values():
        if obj.object_type in wanted and catalog.get(obj.object_type).dirtyable:
            obj.is_dirty = True


def _scene_for_seed(
    req: PersonalizationRequest, seed: int, needs: SceneRequirements
) -> tuple[WorldState, list[str]]:
    """The scene of `seed` set up for `req`, and why it does not fit the rule (empty when it does)."""
    state = generate_scene(seed, req.scene.room_type)
    problems = needs.problems(Counter(o.object_type for o in state.objects.values()))
    if problems:
        return state, problems
    _dirty(state, needs.dirty)
    objects = export_objects(state)
    done = [g.describe() for g in req.goal if check_task(g.instantiate(), objects).success]
    if done:
        problems.append("already satisfied initially: " + ", ".join(done))
    return state, problems


def find_seed(req: PersonalizationRequest, max_scan: int = MAX_SEED_SCAN) -> int:
    """The first seed from `req.scene.base_seed` whose scene fits the rule (ignores the recorded seed)."""
    needs = scene_requirements(req)
    for seed in range(req.scene.base_seed, req.scene.base_seed + max_scan):
        if not _scene_for_seed(req, seed, needs)[1]:
            return seed
    raise LookupError(
        f"request {req.id!r}: no {req.scene.room_type} from seed {req.scene.base_seed} within {max_scan} seeds "
        f"fits the scene rule"
    )


def prepare_request(req: PersonalizationRequest) -> WorldState:
    """The request's seeded scene (the recorded seed, else the scanned one), dishes dirtied as the goal needs."""
    needs = scene_requirements(req)
    seed = req.scene.seed if req.scene.seed is not None else find_seed(req)
    state = generate_scene(seed, req.scene.room_type)
    _dirty(state, needs.dirty)
    return state


def scene_problems(req: PersonalizationRequest) -> list[str]:
    """Why the recorded seed does not fit the scene rule (empty when it does)."""
    if req.scene.seed is None:
        return ["no seed recorded"]
    return _scene_for_seed(req, req.scene.seed, scene_requirements(req))[1]


# --------------------------------------------------------------------------------------------------
# Scoring


class GoalResult(BaseModel):
    task_name: str
    params: tuple[str, ...]
    success: bool
    goal_conditions_satisfied: int
    goal_conditions_total: int


class RequestScore(BaseModel):
    """How one program did on one request. A program the compiler rejects, or an execution that
    raised, is a failure recorded here (`status` "program_error" or "error"), never an exception."""

    request_id: str
    routine: str
    category: str
    success: bool
    goal_conditions_satisfied: int = 0
    goal_conditions_total: int = 0
    goals: list[GoalResult] = Field(default_factory=list)
    # the executor's (done, failed, not_found, step_limit, failure_limit), program_error, or error
    status: str = ""
    steps: int = 0
    failures: int = 0
    error: str | None = None
    seed: int | None = None
    seconds: float = 0.0
    program: str = ""
    llm_calls: int = 0
    llm_seconds: float = 0.0
    # The agent's own account (its log: the recalled routine, the changes it read, each edit and
    # why one was rejected), so a failure can be read without re-running the model.
    log: list[str] = Field(default_factory=list)

    @property
    def goal_condition_rate(self) -> float:
        return (
            self.goal_conditions_satisfied / self.goal_conditions_total if self.goal_conditions_total else 0.0
        )


def _goal_results(req: PersonalizationRequest, objects: list[dict[str, Any]]) -> list[GoalResult]:
    out = []
    for g in req.goal:
        progress = check_task(g.instantiate(), objects)
        out.append(
            GoalResult(
                task_name=g.task_name,
                params=g.params,
                success=progress.success,
                goal_conditions_satisfied=min(
                    progress.goal_conditions_satisfied, progress.goal_conditions_total
                ),
                goal_conditions_total=progress.goal_conditions_total,
            )
        )
    return out


def score_program(
    req: PersonalizationRequest,
    program: str,
    *,
    state: WorldState | None = None,
    config: ExecutorConfig | None = None,
) -> RequestScore:
    """Compile and execute `program` in the request's scene, then check every goal task."""
    agent = ProgramAgent("program", lambda setup: program, config=config)
    return score_agent(req, agent, state=state)


def score_agent(
    req: PersonalizationRequest,
    agent: Agent,
    *,
    user: str | None = None,
    state: WorldState | None = None,
) -> RequestScore:
    """Let `agent` act on the request in its scene (through the episode harness's protocol), then
    check every goal task. An exception in the agent is a recorded failure (status "error")."""
    start = time.perf_counter()
    state = state if state is not None else prepare_request(req)
    env = SymbolicEnv()
    env.reset(state)
    setup = EpisodeSetup(env=env, request=req.text, instance_id=req.id, user=user, tags=["personalization"],
                         metadata={"routine": req.routine, "category": req.category})
    try:
        result = agent.run(setup)
    except Exception as exc:  # noqa: BLE001 - an agent's failure is a recorded failure, not an exception
        result = AgentResult(outcome="error", error=f"{type(exc).__name__}: {exc}")
    goals = _goal_results(req, env.objects_metadata())
    return RequestScore(
        request_id=req.id,
        routine=req.routine,
        category=req.category,
        success=all(g.success for g in goals),
        goal_conditions_satisfied=sum(g.goal_conditions_satisfied for g in goals),
        goal_conditions_total=sum(g.goal_conditions_total for g in goals),
        goals=goals,
        status=result.outcome,
        steps=env.steps,
        failures=env.failures,
        error=result.error,
        seed=getattr(state, "seed", None),
        seconds=round(time.perf_counter() - start, 4),
        program=result.program,
        llm_calls=int(result.usage.get("llm_calls", 0)),
        llm_seconds=float(result.usage.get("llm_seconds", 0.0)),
        log=list(result.log),
    )


class SuiteResult(BaseModel):
    scores: list[RequestScore] = Field(default_factory=list)
    seconds: float = 0.0

    def by_category(self) -> dict[str, list[RequestScore]]:
        out: dict[str, list[RequestScore]] = {}
        for c in CATEGORIES:
            hits = [s for s in self.scores if s.category == c]
            if hits:
                out[c] = hits
        return out

    def failed(self) -> list[RequestScore]:
        return [s for s in self.scores if not s.success]

    @property
    def success_rate(self) -> float:
        return sum(s.success for s in self.scores) / len(self.scores) if self.scores else 0.0


Planner = Callable[[PersonalizationRequest, Routine], str]
Progress = Callable[[int, int, RequestScore], None]


def gold_planner(req: PersonalizationRequest, routine: Routine) -> str:
    """A perfect planner: the request's gold adapted program (a ceiling for the world and executor)."""
    return req.program


def routine_planner(req: PersonalizationRequest, routine: Routine) -> str:
    """A planner that ignores every modification and replays the recalled routine unchanged."""
    return routine.program


def run_suite(
    planner: Planner | Agent,
    requests: Sequence[PersonalizationRequest] | None = None,
    progress: Progress | None = None,
    *,
    suite: PersonalizationSuite | None = None,
    config: ExecutorConfig | None = None,
) -> SuiteResult:
    """Score `planner` on `requests` (default: every request of `suite`, default the packaged one).

    `planner` is an agent (handed each request's scene and text, as the routine's user) or a
    function given the request and its routine that returns program text, which the executor runs.
    A bad program or failed execution is a failed score. `progress(done, total, score)` is called
    after each request.
    """
    suite = suite or load_suite()
    todo = list(suite.requests if requests is None else requests)
    start = time.perf_counter()
    scores: list[RequestScore] = []
    for i, req in enumerate(todo):
        routine = suite.routine(req.routine)
        if isinstance(planner, Agent):
            score = score_agent(req, planner, user=routine.user)
        else:
            score = score_program(req, planner(req, routine), config=config)
        scores.append(score)
        if progress is not None:
            progress(i + 1, len(todo), score)
    return SuiteResult(scores=scores, seconds=round(time.perf_counter() - start, 3))


def table3(result: SuiteResult) -> dict[str, float]:
    """Success rate (0..1) per category in HELPER's Table 3 order (original, one, two, three), then
    "overall"; categories without requests are left out (`TABLE3_LABELS` has the column titles)."""
    out = {c: sum(s.success for s in scores) / len(scores) for c, scores in result.by_category().items()}
    out["overall"] = result.success_rate
    return out


# --------------------------------------------------------------------------------------------------
# Maintenance: `helper eval personalization --write-seeds` after a change to the world generator


def write_seeds(path: str | Path | None = None) -> dict[str, tuple[int | None, int]]:
    """Recompute every request's seed with the scene rule and record it in the file; returns changes."""
    file = Path(path) if path is not None else default_suite_path()
    suite = load_suite(file)
    raw = json.loads(file.read_text(encoding="utf-8"))
    changed: dict[str, tuple[int | None, int]] = {}
    for item, req in zip(raw["requests"], suite.requests, strict=True):
        seed = find_seed(req)
        if item["scene"].get("seed") != seed:
            changed[req.id] = (item["scene"].get("seed"), seed)
            item["scene"]["seed"] = seed
    if changed:
        file.write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed
