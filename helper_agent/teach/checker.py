"""Goal-condition checking over simulator metadata, with TEACh's semantics and counting.

Input is a list of AI2-THOR-shaped object dicts (``event.metadata["objects"]`` merged with TEACh's
custom properties: ``simbotObjectClass``, ``simbotIsCooked``, ``simbotLastParentReceptacle``, ...).
`check_task` returns a `TaskProgress` whose ``success``, ``goal_conditions_total`` and
``goal_conditions_satisfied`` equal what TEACh's ``Task_THOR.check_episode_progress`` computes for
the same objects, including its counting rules:

* an atomic component needing N instances counts ``len(conditions) * N`` conditions; satisfied
  objects count fully, and the best partial candidates (most conditions met, then nearest) fill the
  remaining instances with the conditions they meet;
* instance-shareable components always need one instance;
* a ``Sliced`` primary condition also accepts the unsliced object as a candidate, and then only one
  instance is looked for among candidates (one loaf yields many slices);
* an ``all`` component counts every object matching the primary condition, and is left out of the
  totals when it succeeds without any step to report;
* a relation counts one condition per required head object, for every task instance;
* ``Sink`` and ``SinkBasin`` (and ``Bathtub``/``BathtubBasin``) match each other as object types;
* ``parentReceptacles`` is taken from the metadata when present (AI2-THOR lists every enclosing
  receptacle there), otherwise followed recursively through ``simbotLastParentReceptacle``.

Object order matters exactly as in TEACh (objects are scanned in metadata order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from helper_agent.teach.tasks import AtomicComponent, Relation, SubtaskComponent, Task

ObjectMeta = Mapping[str, Any]
DistanceFn = Callable[[ObjectMeta], float]

_TYPE_ALIASES = {
    "Sink": "SinkBasin",
    "SinkBasin": "Sink",
    "Bathtub": "BathtubBasin",
    "BathtubBasin": "Bathtub",
}


# --------------------------------------------------------------------------------------------------
# Result models


class Step(BaseModel):
    """One condition (or relation) of one object: met or not, with the text describing it."""

    model_config = ConfigDict(populate_by_name=True)

    success: bool
    object_id: str = Field(alias="objectId")
    object_type: str = Field(alias="objectType")
    desc: str


class ProblemKey(BaseModel):
    """An unmet property of an object, as TEACh reports it in ``problem_keys``."""

    model_config = ConfigDict(populate_by_name=True)

    object_type: str = Field(alias="objectType")
    determiner: str
    property_name: str
    desired_property_value: Any = None


class SubgoalProgress(BaseModel):
    """Status of one component or relation of a task."""

    kind: Literal["component", "subtask", "relation"]
    key: str
    success: bool
    description: str = ""
    steps: list[Step] = Field(default_factory=list)
    problem_keys: dict[str, list[ProblemKey]] = Field(default_factory=dict)
    goal_conditions_total: int = 0
    goal_conditions_satisfied: int = 0
    representative_obj_id: str | None = None
    step_successes: list[bool] | None = None
    subtask: TaskProgress | None = None

    @property
    def unmet_steps(self) -> list[Step]:
        return [s for s in self.steps if not s.success]

    def unmet_descriptions(self) -> list[str]:
        """The failure texts of the unmet steps, in order, without repeats."""
        out: list[str] = []
        for s in self.unmet_steps:
            if s.desc not in out:
                out.append(s.desc)
        return out


class TaskProgress(BaseModel):
    """Result of checking a task against one state."""

    task_name: str
    description: str
    success: bool
    satisfied_objects: list[str] | None = None
    candidate_objects: list[str] | None = None
    subgoals: list[SubgoalProgress] = Field(default_factory=list)
    goal_conditions_total: int = 0
    goal_conditions_satisfied: int = 0
    component_satisfied_objects: dict[str, list[str]] = Field(default_factory=dict)
    component_candidate_objects: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def goal_conditions_unsatisfied(self) -> int:
        return max(
            0, self.goal_conditions_total - min(self.goal_conditions_total, self.goal_conditions_satisfied)
        )

    def failed_subgoals(self) -> list[SubgoalProgress]:
        return [s for s in self.subgoals if not s.success]

    def unmet(self) -> list[tuple[str, list[Step]]]:
        """(subgoal description, unmet steps) for every failed subgoal."""
        return [(s.description or self.description, s.unmet_steps) for s in self.failed_subgoals()]

    def to_teach_dict(self) -> dict[str, Any]:
        """TEACh's ``check_episode_progress`` output shape (object ids in place of object dicts)."""

        def subgoal(s: SubgoalProgress) -> dict[str, Any]:
            d: dict[str, Any] = {
                "success": s.success,
                "description": s.description,
                "steps": [st.model_dump(by_alias=True) for st in s.steps],
                "problem_keys": {
                    k: [p.model_dump(by_alias=True) for p in v] for k, v in s.problem_keys.items()
                },
                "goal_conditions_total": s.goal_conditions_total,
                "goal_conditions_satisfied": s.goal_conditions_satisfied,
            }
            if s.kind == "subtask":
                d["representative_obj_id"] = s.representative_obj_id
                d["step_successes"] = list(s.step_successes or [])
            return d

        return {
            "description": self.description,
            "success": self.success,
            "satisfied_objects": self.satisfied_objects,
            "candidate_objects": self.candidate_objects,
            "subgoals": [subgoal(s) for s in self.subgoals],
            "goal_conditions_total": self.goal_conditions_total,
            "goal_conditions_satisfied": self.goal_conditions_satisfied,
        }


SubgoalProgress.model_rebuild()


# --------------------------------------------------------------------------------------------------
# Object helpers


class Scene:
    """The objects of one state, indexed by id (first occurrence wins, as in TEACh's linear lookup)."""

    def __init__(self, objects: Sequence[ObjectMeta]) -> None:
        self.objects = objects
        self.by_id: dict[str, ObjectMeta] = {}
        for obj in objects:
            oid = obj.get("objectId")
            if isinstance(oid, str) and oid not in self.by_id:
                self.by_id[oid] = obj

    def get(self, oid: Any) -> ObjectMeta | None:
        return self.by_id.get(oid) if isinstance(oid, str) else None


def type_matches(obj: ObjectMeta, wanted: Any) -> bool:
    """``objectType`` equality with TEACh's Sink/SinkBasin and Bathtub/BathtubBasin equivalence."""
    actual = obj.get("objectType")
    return actual == wanted or (isinstance(actual, str) and _TYPE_ALIASES.get(actual) == wanted)


def _classes(obj: ObjectMeta) -> list[Any]:
    classes = obj.get("simbotObjectClass")
    return list(classes) if isinstance(classes, (list, tuple)) else []


def _type_or_class(obj: ObjectMeta, wanted: Any) -> bool:
    return type_matches(obj, wanted) or wanted in _classes(obj)


def parent_receptacles(obj: ObjectMeta, scene: Scene | Sequence[ObjectMeta]) -> list[str] | None:
    """The receptacles containing ``obj``: ``parentReceptacles`` if not None, else the chain of
    ``simbotLastParentReceptacle`` links (immediate parent first)."""
    if not isinstance(scene, Scene):
        scene = Scene(scene)
    return _parents(obj, scene, set())


def _parents(obj: ObjectMeta, scene: Scene, seen: set[str]) -> list[str] | None:
    if obj.get("parentReceptacles") is not None:
        return list(obj["parentReceptacles"])
    if "simbotLastParentReceptacle" in obj:
        parent_id = obj["simbotLastParentReceptacle"]
        oid = obj.get("objectId")
        if parent_id is not None and parent_id != oid and parent_id not in seen:
            chain = [parent_id]
            parent = scene.get(parent_id)
            if parent is not None:
                further = _parents(parent, scene, seen | {str(oid), parent_id})
                if further is not None:
                    chain += further
            return chain
    return None


def condition_status(obj: ObjectMeta, conditions: Mapping[str, Any], scene: Scene) -> dict[str, bool]:
    """For each condition, whether ``obj`` meets it (TEACh's ``obj_satisfies_props``)."""
    status: dict[str, bool] = {}
    for prop, wanted in conditions.items():
        if prop not in obj:
            status[prop] = False
        elif prop == "objectType":
            status[prop] = type_matches(obj, wanted)
        elif prop == "simbotLastParentReceptacle" and wanted is not None:
            parent = scene.get(obj[prop])
            status[prop] = parent is not None and _type_or_class(parent, wanted)
        elif prop == "parentReceptacles":
            parents = _parents(obj, scene, set()) or []
            status[prop] = any(
                (p := scene.get(pid)) is not None and _type_or_class(p, wanted) for pid in parents
            )
        elif type(wanted) is int and wanted in (0, 1):
            status[prop] = bool(obj[prop]) == bool(wanted)
        elif isinstance(obj[prop], list):
            status[prop] = wanted in obj[prop]
        else:
            status[prop] = wanted == obj[prop]
    return status


def _oid(obj: ObjectMeta) -> str:
    return str(obj.get("objectId", ""))


def _otype(obj: ObjectMeta) -> str:
    return str(obj.get("objectType", ""))


def _step(success: bool, obj: ObjectMeta, desc: str) -> Step:
    return Step(success=success, objectId=_oid(obj), objectType=_otype(obj), desc=desc)


def _problem(obj: ObjectMeta, determiner: str, prop: str, value: Any) -> ProblemKey:
    return ProblemKey(
        objectType=_otype(obj), determiner=determiner, property_name=prop, desired_property_value=value
    )


# --------------------------------------------------------------------------------------------------
# Component and relation checks


@dataclass
class _Outcome:
    success: bool
    satisfied: list[ObjectMeta]
    candidates: list[ObjectMeta]
    steps: list[Step] = field(default_factory=list)
    problem_keys: dict[str, list[ProblemKey]] = field(default_factory=dict)
    total: int = 0
    satisfied_count: int = 0


@dataclass
class _Candidate:
    obj: ObjectMeta
    status: dict[str, bool]
    num_met: int
    distance: float


def _condition_steps(
    comp: AtomicComponent,
    problems: list[_Candidate],
    representative: ObjectMeta | None,
) -> tuple[list[Step], dict[str, list[ProblemKey]]]:
    steps: list[Step] = []
    for key, desc in comp.condition_failure_descs.items():
        failing = [c for c in problems if not c.status.get(key, True)]
        if failing:
            steps.extend(_step(False, c.obj, desc) for c in failing)
        elif representative is not None:
            steps.append(_step(True, representative, desc))
    problem_keys: dict[str, list[ProblemKey]] = {}
    for c in problems:
        problem_keys[_oid(c.obj)] = [
            _problem(c.obj, comp.determiner, key, comp.conditions[key])
            for key, ok in c.status.items()
            if not ok
        ]
    return steps, problem_keys


def check_component_n_instances(
    comp: AtomicComponent,
    scene: Scene,
    num_instances: int,
    distance: DistanceFn | None = None,
    allow_state_change: bool = False,
) -> _Outcome:
    """An atomic component that needs ``num_instances`` objects."""
    if comp.instance_shareable:
        num_instances = 1
    primary = comp.primary_condition
    primary_value = comp.conditions[primary]
    success = False
    satisfied: list[ObjectMeta] = []
    candidates: list[_Candidate] = []
    instances_to_check = num_instances
    for obj in scene.objects:
        status = condition_status(obj, comp.conditions, scene)
        if all(status.values()):
            satisfied.append(obj)
            if len(satisfied) >= num_instances:
                success = True
            continue
        if success:
            continue
        primary_ok = status[primary]
        if not primary_ok and isinstance(primary_value, str):
            for marker in ("Sliced", "Cracked"):
                if marker in primary_value and obj.get(primary) == primary_value.replace(marker, ""):
                    primary_ok = True
        if not primary_ok:
            continue
        others_ok = all(ok for key, ok in status.items() if key != primary)
        if others_ok and isinstance(primary_value, str) and "Sliced" in primary_value:
            # One whole object can become several slices: only one instance is sought.
            instances_to_check = 1
            if allow_state_change:
                satisfied.append(obj)
                if len(satisfied) >= instances_to_check:
                    success = True
                continue
        cand = _Candidate(obj, status, sum(status.values()), distance(obj) if distance else 0.0)
        position = next(
            (
                i
                for i, cur in enumerate(candidates)
                if cand.num_met > cur.num_met
                or (cand.num_met == cur.num_met and cand.distance < cur.distance)
            ),
            len(candidates),
        )
        candidates.insert(position, cand)

    per_object = len(comp.conditions)
    still_needed = max(0, instances_to_check - len(satisfied))
    problems = candidates[: min(len(candidates), still_needed)]
    representative = satisfied[0] if satisfied else (candidates[0].obj if candidates else None)
    steps, problem_keys = _condition_steps(comp, problems, representative)
    return _Outcome(
        success=success,
        satisfied=satisfied,
        candidates=[c.obj for c in candidates],
        steps=steps,
        problem_keys=problem_keys,
        total=per_object * num_instances,
        satisfied_count=per_object * min(num_instances, len(satisfied)) + sum(c.num_met for c in problems),
    )


def check_component_all_instances(comp: AtomicComponent, scene: Scene) -> _Outcome:
    """An atomic component every object matching its primary condition must satisfy."""
    satisfied: list[ObjectMeta] = []
    problems: list[_Candidate] = []
    for obj in scene.objects:
        status = condition_status(obj, comp.conditions, scene)
        if not status[comp.primary_condition]:
            continue
        if all(status.values()):
            satisfied.append(obj)
        else:
            problems.append(_Candidate(obj, status, sum(status.values()), 0.0))
    per_object = len(comp.conditions)
    steps, problem_keys = _condition_steps(comp, problems, satisfied[0] if satisfied else None)
    return _Outcome(
        success=not problems,
        satisfied=satisfied,
        candidates=[c.obj for c in problems],
        steps=steps,
        problem_keys=problem_keys,
        total=per_object * (len(satisfied) + len(problems)),
        satisfied_count=per_object * len(satisfied) + sum(c.num_met for c in problems),
    )


def _instances_for(determiner: str, num_task_instances: int) -> int:
    return num_task_instances if determiner == "a" else num_task_instances * int(determiner)


def check_relation(
    rel: Relation,
    per_satisfied: Mapping[str, list[ObjectMeta]],
    per_candidates: Mapping[str, list[ObjectMeta]],
    scene: Scene,
    num_task_instances: int = 1,
) -> _Outcome:
    """A ``parentReceptacles`` (or other list-valued property) relation between components."""

    def entity_objects(entity: str) -> list[ObjectMeta]:
        return list(per_satisfied.get(entity) or []) + list(per_candidates.get(entity) or [])

    def property_values(obj: ObjectMeta) -> list[Any] | None:
        if rel.property == "parentReceptacles":
            return _parents(obj, scene, set())
        value = obj.get(rel.property)
        return value if isinstance(value, list) else (None if value is None else [value])

    total = 0
    for entity, det in zip(rel.head_entity_list, rel.head_determiner_list, strict=True):
        if det == "all":
            total += num_task_instances * len(entity_objects(entity))
        else:
            total += _instances_for(det, num_task_instances)

    tails = entity_objects(rel.tail_entity_list[0])
    tail_ids = {_oid(t) for t in tails}
    if not tail_ids:
        return _Outcome(success=False, satisfied=[], candidates=[], total=total)
    tail_type = _otype(tails[0])
    tail_det = rel.tail_determiner_list[0]
    steps: list[Step] = []
    problem_keys: dict[str, list[ProblemKey]] = {}

    def add_problem(obj: ObjectMeta, det: str, wanted_type: str) -> None:
        steps.append(_step(False, obj, rel.failure_desc))
        problem_keys.setdefault(_oid(obj), []).append(_problem(obj, det, rel.property, wanted_type))

    if tail_det == "a":
        success = True
        satisfied_count = 0
        satisfied: list[ObjectMeta] = []
        for entity, det in zip(rel.head_entity_list, rel.head_determiner_list, strict=True):
            if det == "0":
                continue
            met: list[ObjectMeta] = []
            unmet: list[ObjectMeta] = []
            for head in entity_objects(entity):
                values = property_values(head) or []
                (met if any(v in tail_ids for v in values) else unmet).append(head)
            satisfied_count += len(met)
            if det == "all":
                if unmet:
                    success = False
                    for obj in unmet:
                        add_problem(obj, det, tail_type)
                elif met:
                    steps.append(_step(True, met[0], rel.failure_desc))
            else:
                needed = _instances_for(det, num_task_instances)
                if len(met) < needed:
                    success = False
                    for obj in unmet[: needed - len(met)]:
                        add_problem(obj, det, tail_type)
            satisfied += met
        if success and satisfied and not steps:
            steps.append(_step(True, satisfied[0], rel.failure_desc))
        return _Outcome(success, satisfied, [], steps, problem_keys, total, satisfied_count)

    # tail determiner "the": all heads must share one tail object (per task instance).
    @dataclass
    class _HeadStatus:
        det: str
        met: list[ObjectMeta]
        unmet: list[ObjectMeta]
        needed: int

        @property
        def counted(self) -> int:
            return min(self.needed, len(self.met))

        @property
        def ok(self) -> bool:
            return len(self.met) >= self.needed

    satisfied_tails: list[list[_HeadStatus]] = []
    ranked: list[tuple[int, int, ObjectMeta, list[_HeadStatus]]] = []
    for tail in tails:
        tail_id = _oid(tail)
        heads: list[_HeadStatus] = []
        for entity, det in zip(rel.head_entity_list, rel.head_determiner_list, strict=True):
            if det == "0":
                continue
            candidates = entity_objects(entity)
            met, unmet = [], []
            for head in candidates:
                values = property_values(head)
                (met if values is not None and tail_id in values else unmet).append(head)
            needed = len(candidates) if det == "all" else (1 if det == "a" else int(det))
            heads.append(_HeadStatus(det, met, unmet, needed))
        if all(h.ok for h in heads):
            satisfied_tails.append(heads)
            if len(satisfied_tails) >= num_task_instances:
                break
            continue
        n_heads_ok = sum(h.ok for h in heads)
        n_instances_ok = sum(h.counted for h in heads)
        position = next(
            (i for i, (ho, io, _, _) in enumerate(ranked) if n_heads_ok > ho or n_instances_ok > io),
            len(ranked),
        )
        ranked.insert(position, (n_heads_ok, n_instances_ok, tail, heads))
        still_needed = max(0, num_task_instances - len(satisfied_tails))
        del ranked[still_needed:]

    satisfied_count = 0
    satisfied = []
    for idx, heads in enumerate(satisfied_tails):
        for h in heads:
            if idx < num_task_instances:
                satisfied_count += h.counted
            satisfied += h.met
    still_needed = max(0, num_task_instances - len(satisfied_tails))
    for _, _, tail, heads in ranked[:still_needed]:
        for h in heads:
            satisfied_count += h.counted
            missing = h.needed - len(h.met)
            for obj in h.unmet[: max(0, missing)]:
                add_problem(obj, h.det, _otype(tail))
    success = len(satisfied_tails) >= num_task_instances
    return _Outcome(success, satisfied, [], steps, problem_keys, total, satisfied_count)


# --------------------------------------------------------------------------------------------------
# Task check


@dataclass
class _TaskOutcome:
    progress: TaskProgress
    satisfied: list[ObjectMeta] | None
    candidates: list[ObjectMeta] | None


def _representative_obj_id(out: _TaskOutcome) -> str:
    p = out.progress
    if not p.success and out.candidates:
        return _oid(out.candidates[0])
    if out.satisfied:
        return _oid(out.satisfied[0])
    if out.candidates:
        return _oid(out.candidates[0])
    last = ""
    for sg in p.subgoals:
        for step in sg.steps:
            if step.success:
                return step.object_id
            last = step.object_id
    return last


def _ids(objs: Iterable[ObjectMeta] | None) -> list[str] | None:
    return None if objs is None else [_oid(o) for o in objs]


def _check(
    task: Task,
    scene: Scene,
    num_instances_needed: int,
    distance: DistanceFn | None,
    use_task_candidates_in_relations: bool,
) -> _TaskOutcome:
    subgoals: list[SubgoalProgress] = []
    anchor_satisfied: list[ObjectMeta] | None = None
    anchor_candidates: list[ObjectMeta] | None = None
    per_satisfied: dict[str, list[ObjectMeta]] = {}
    per_candidates: dict[str, list[ObjectMeta]] = {}

    for key, comp in task.components.items():
        det = comp.determiner
        if det == "0":
            continue
        if isinstance(comp, SubtaskComponent):
            if det == "all":
                raise NotImplementedError("determiner 'all' is not supported for sub-task components")
            needed = _instances_for(det, num_instances_needed)
            child = _check(comp.task, scene, needed, distance, use_task_candidates_in_relations)
            cp = child.progress
            description = cp.description if det in ("a", "the", "all") else f"{det} x {cp.description}"
            problem_keys: dict[str, list[ProblemKey]] = {}
            for sg in cp.subgoals:
                for oid, keys in sg.problem_keys.items():
                    problem_keys.setdefault(oid, []).extend(keys)
            step_successes = [sg.success for sg in cp.subgoals]
            subgoals.append(
                SubgoalProgress(
                    kind="subtask",
                    key=key,
                    success=all(step_successes),
                    description=description,
                    steps=[st for sg in cp.subgoals for st in sg.steps if not st.success],
                    problem_keys=problem_keys,
                    goal_conditions_total=cp.goal_conditions_total,
                    goal_conditions_satisfied=cp.goal_conditions_satisfied,
                    representative_obj_id=_representative_obj_id(child),
                    step_successes=step_successes,
                    subtask=cp,
                )
            )
            per_satisfied[key] = list(child.satisfied or [])
            if use_task_candidates_in_relations:
                per_candidates[key] = list(child.candidates or [])
            if task.task_anchor_object == key:
                anchor_satisfied, anchor_candidates = child.satisfied, child.candidates
            continue

        if det == "all":
            out = check_component_all_instances(comp, scene)
            include = not out.success or bool(out.steps)
        else:
            out = check_component_n_instances(
                comp, scene, _instances_for(det, num_instances_needed), distance
            )
            include = True
        if include:
            subgoals.append(
                SubgoalProgress(
                    kind="component",
                    key=key,
                    success=out.success,
                    steps=out.steps,
                    problem_keys=out.problem_keys,
                    goal_conditions_total=out.total,
                    goal_conditions_satisfied=out.satisfied_count,
                )
            )
        per_satisfied[key] = out.satisfied
        per_candidates[key] = out.candidates
        if task.task_anchor_object == key:
            anchor_satisfied, anchor_candidates = out.satisfied, out.candidates

    for idx, rel in enumerate(task.relations):
        out = check_relation(rel, per_satisfied, per_candidates, scene, num_instances_needed)
        subgoals.append(
            SubgoalProgress(
                kind="relation",
                key=f"relation[{idx}]",
                success=out.success,
                steps=out.steps,
                problem_keys=out.problem_keys,
                goal_conditions_total=out.total,
                goal_conditions_satisfied=out.satisfied_count,
            )
        )

    progress = TaskProgress(
        task_name=task.task_name,
        description=task.desc,
        success=all(sg.success for sg in subgoals),
        satisfied_objects=_ids(anchor_satisfied),
        candidate_objects=_ids(anchor_candidates),
        subgoals=subgoals,
        goal_conditions_total=sum(sg.goal_conditions_total for sg in subgoals),
        goal_conditions_satisfied=sum(sg.goal_conditions_satisfied for sg in subgoals),
        component_satisfied_objects={k: [_oid(o) for o in v] for k, v in per_satisfied.items()},
        component_candidate_objects={k: [_oid(o) for o in v] for k, v in per_candidates.items()},
    )
    return _TaskOutcome(progress, anchor_satisfied, anchor_candidates)


def check_task(
    task: Task,
    objects: Sequence[ObjectMeta],
    *,
    num_instances_needed: int = 1,
    distance_to_agent: DistanceFn | None = None,
    use_task_candidates_in_relations: bool = False,
) -> TaskProgress:
    """Check ``task`` against the object metadata of one state.

    ``distance_to_agent`` (object -> metres) breaks ties between equally good candidates, as TEACh
    does when given a simulator; without it all distances count as 0 and metadata order decides.
    """
    return _check(
        task, Scene(list(objects)), num_instances_needed, distance_to_agent, use_task_candidates_in_relations
    ).progress


def merge_custom_metadata(
    objects: Iterable[Mapping[str, Any]], custom_object_metadata: Mapping[str, Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    """Copies of ``objects`` updated with TEACh's per-object custom properties (as stored in a game
    file state's ``custom_object_metadata``)."""
    custom = custom_object_metadata or {}
    merged: list[dict[str, Any]] = []
    for obj in objects:
        new = dict(obj)
        extra = custom.get(new.get("objectId", ""))
        if extra:
            new.update(extra)
        merged.append(new)
    return merged


# --------------------------------------------------------------------------------------------------
# EDH: the task implied by a state diff

#: Object properties whose change an EDH instance is evaluated on.
EDH_CHECKED_PROPERTIES = frozenset(
    {
        "isToggled",
        "isBroken",
        "isFilledWithLiquid",
        "isDirty",
        "isUsedUp",
        "isCooked",
        "isOpen",
        "isPickedUp",
        "objectType",
        "simbotLastParentReceptacle",
        "simbotIsCooked",
        "simbotIsFilledWithWater",
        "simbotIsBoiled",
        "simbotIsFilledWithCoffee",
        "simbotPickedUp",
    }
)
#: A custom property in a diff makes the listed plain properties redundant (not checked twice).
EDH_PROPERTY_OVERRIDES: dict[str, tuple[str, ...]] = {
    "simbotPickedUp": ("isPickedUp",),
    "simbotIsCooked": ("isCooked",),
    "simbotIsFilledWithWater": ("isFilledWithLiquid",),
    "simbotIsFilledWithCoffee": ("isFilledWithLiquid",),
    "simbotIsBoiled": ("isCooked", "simbotIsCooked"),
}


def object_type_from_id(object_id: str) -> str:
    """``Tomato|+1.0|+0.9|-0.5`` -> ``Tomato``; ``Tomato|...|TomatoSliced_2`` -> ``TomatoSliced``."""
    parts = object_id.split("|")
    if len(parts) == 4:
        return parts[0]
    return parts[-1].split("_")[0]


def _words(camel: str) -> str:
    out = ""
    for i, ch in enumerate(camel):
        if ch.isupper() and i > 0 and not camel[i - 1].isupper():
            out += " "
        out += ch.lower()
    return out


def describe_desired_state(object_type: str, prop: str, value: Any) -> str:
    """A sentence saying what state an object of ``object_type`` should reach."""
    name = _words(object_type)
    yes = bool(value) if isinstance(value, (bool, int)) else value is not None
    phrases: dict[str, tuple[str, str]] = {
        "isToggled": ("turned on", "turned off"),
        "isBroken": ("broken", "intact"),
        "isFilledWithLiquid": ("filled with liquid", "empty"),
        "isDirty": ("dirty", "clean"),
        "isUsedUp": ("used up", "not used up"),
        "isCooked": ("cooked", "uncooked"),
        "isOpen": ("open", "closed"),
        "isPickedUp": ("picked up", "put down"),
        "simbotIsCooked": ("cooked", "uncooked"),
        "simbotIsFilledWithWater": ("filled with water", "without water"),
        "simbotIsBoiled": ("boiled", "not boiled"),
        "simbotIsFilledWithCoffee": ("filled with coffee", "without coffee"),
        "simbotPickedUp": ("picked up", "left where it was"),
    }
    if prop in phrases:
        return f"The {name} should be {phrases[prop][0 if yes else 1]}."
    if prop == "simbotLastParentReceptacle":
        if value is None:
            return f"The {name} should be held."
        return f"The {name} should be placed in or on the {_words(str(value).split('|')[0])}."
    if prop == "objectType":
        return f"There should be a {_words(str(value))}."
    return f"The {name} should have {prop} = {value!r}."


def task_from_state_changes(state_changes: Mapping[str, Any]) -> Task:
    """The task an EDH instance is evaluated on, built from its ``state_changes`` like TEACh does:
    one atomic component per (object type, property, value) with the number of objects changed as
    determiner."""
    components: dict[str, AtomicComponent] = {}
    objects = state_changes.get("objects") or {}
    for object_id, changes in objects.items():
        obj_type = object_type_from_id(object_id)
        changed = set(changes)
        overridden = {
            p for key in changed & EDH_PROPERTY_OVERRIDES.keys() for p in EDH_PROPERTY_OVERRIDES[key]
        }
        for prop in sorted((changed & EDH_CHECKED_PROPERTIES) - overridden):
            value = changes[prop]
            key = repr((obj_type, prop, value))
            if key in components:
                components[key].determiner = str(int(components[key].determiner) + 1)
                continue
            conditions: dict[str, Any] = {"objectType": obj_type}
            if prop == "simbotLastParentReceptacle" and value is not None:
                conditions[prop] = str(value).split("|")[0]
            else:
                conditions[prop] = value
            components[key] = AtomicComponent(
                key=key,
                determiner="1",
                primary_condition="objectType",
                instance_shareable=False,
                conditions=conditions,
                condition_failure_descs={prop: describe_desired_state(obj_type, prop, value)},
            )
    return Task(
        task_id=0,
        task_name="edh_custom",
        task_nparams=0,
        task_params=[],
        task_anchor_object=None,
        desc="Complete the remaining state changes of the dialogue.",
        components=dict(components),
        relations=[],
    )
