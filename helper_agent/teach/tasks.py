"""TEACh task definitions: the definition language, a loader, and parameter substitution.

A task definition (TEACh's JSON schema) has ``task_id``, ``task_name``, ``task_nparams``,
``task_anchor_object``, ``desc`` and two lists of goals:

* ``components`` - named goals, each either an *atomic* condition set
  (``determiner``, ``primary_condition``, ``instance_shareable``, ``conditions``,
  ``condition_failure_descs``) or a *sub-task* (``determiner``, ``task_name``, ``task_params``);
* ``relations`` - constraints between components (``property`` is always ``parentReceptacles``:
  the head objects must sit in a tail object).

Parameters are written ``#0``, ``#1``, ... anywhere in strings and dictionary keys. Substitution
follows TEACh's rules exactly: higher indices are replaced first (so ``#10`` is not read as ``#1``),
and a dictionary value that becomes a string of digits turns into an ``int`` unless its key is
``determiner`` (this is how ``"isToggled": "#1"`` becomes ``1``).

`load_task_definitions()` reads this project's own definitions (``data/task_definitions``) or
TEACh's official files from a directory, and `TaskRegistry.instantiate` produces a concrete
`Task` tree, ready for `helper_agent.teach.checker.check_task`.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from helper_agent.teach.errors import TaskDefinitionError

REQUIRED_TASK_KEYS = (
    "task_id",
    "task_name",
    "task_nparams",
    "task_anchor_object",
    "desc",
    "components",
    "relations",
)
ATOMIC_COMPONENT_KEYS = (
    "determiner",
    "primary_condition",
    "instance_shareable",
    "conditions",
    "condition_failure_descs",
)
SUBTASK_COMPONENT_KEYS = ("determiner", "task_name", "task_params")
RELATION_KEYS = (
    "property",
    "tail_entity_list",
    "tail_determiner_list",
    "head_entity_list",
    "head_determiner_list",
    "failure_desc",
)


# --------------------------------------------------------------------------------------------------
# Concrete (parameter-substituted) tasks


@dataclass
class AtomicComponent:
    """A set of conditions that one object (or N, or all matching objects) must satisfy."""

    key: str
    determiner: str
    primary_condition: str
    instance_shareable: bool
    conditions: dict[str, Any]
    condition_failure_descs: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "determiner": self.determiner,
            "primary_condition": self.primary_condition,
            "instance_shareable": self.instance_shareable,
            "conditions": dict(self.conditions),
            "condition_failure_descs": dict(self.condition_failure_descs),
        }


@dataclass
class SubtaskComponent:
    """A component that is itself a task, to be achieved ``determiner`` times."""

    key: str
    determiner: str
    task_name: str
    task_params: list[str]
    task: Task

    def to_dict(self) -> dict[str, Any]:
        return {
            "determiner": self.determiner,
            "task_name": self.task_name,
            "task_params": list(self.task_params),
            "task": self.task.to_dict(),
        }


Component = AtomicComponent | SubtaskComponent


@dataclass
class Relation:
    """Head components' objects must have a tail component's object in ``property``."""

    property: str
    tail_entity_list: list[str]
    tail_determiner_list: list[str]
    head_entity_list: list[str]
    head_determiner_list: list[str]
    failure_desc: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "property": self.property,
            "tail_entity_list": list(self.tail_entity_list),
            "tail_determiner_list": list(self.tail_determiner_list),
            "head_entity_list": list(self.head_entity_list),
            "head_determiner_list": list(self.head_determiner_list),
            "failure_desc": self.failure_desc,
        }


@dataclass
class Task:
    """A task with its parameters filled in and its sub-tasks resolved."""

    task_id: int
    task_name: str
    task_nparams: int
    task_params: list[str]
    task_anchor_object: str | None
    desc: str
    components: dict[str, Component]
    relations: list[Relation] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The task as it appears in a TEACh game file's ``tasks`` list (without ``episodes``)."""
        return {
            "task_id": self.task_id,
            "task_name": self.task_name,
            "task_params": list(self.task_params),
            "task_nparams": self.task_nparams,
            "task_anchor_object": self.task_anchor_object,
            "desc": self.desc,
            "components": {k: c.to_dict() for k, c in self.components.items()},
            "relations": [r.to_dict() for r in self.relations],
            "comments": "",
        }

    def iter_tasks(self) -> Iterator[Task]:
        """This task and every sub-task, depth first."""
        yield self
        for comp in self.components.values():
            if isinstance(comp, SubtaskComponent):
                yield from comp.task.iter_tasks()


def dirty_types(tasks: Iterable[Task]) -> list[str]:
    """The object types `tasks` want clean, in first-seen order: every condition set the tasks ask for
    (a component with determiner "0", such as Breakfast's unused dishes, is not asked for), sub-tasks
    included, whose `isDirty` is 0. The benchmarks dirty these in a household before a run, so the
    task cannot be met by doing nothing."""
    out: list[str] = []

    def visit(task: Task) -> None:
        for comp in task.components.values():
            if comp.determiner == "0":
                continue
            if isinstance(comp, SubtaskComponent):
                visit(comp.task)
            elif comp.conditions.get("isDirty") == 0:
                kind = comp.conditions.get(comp.primary_condition)
                if isinstance(kind, str) and kind not in out:
                    out.append(kind)

    for task in tasks:
        visit(task)
    return out


# --------------------------------------------------------------------------------------------------
# Parameter substitution (TEACh's rules)


def substitute_params(text: str, params: Sequence[str]) -> str:
    """Replace ``#i`` by ``params[i]``, highest index first."""
    for idx in range(len(params) - 1, -1, -1):
        text = text.replace(f"#{idx}", params[idx])
    return text


def _sub_value(value: Any, params: Sequence[str]) -> Any:
    if isinstance(value, str):
        return substitute_params(value, params)
    if isinstance(value, list):
        return [_sub_value(v, params) for v in value]
    if isinstance(value, dict):
        return _sub_dict(value, params)
    return value


def _sub_dict(d: Mapping[str, Any], params: Sequence[str]) -> dict[str, Any]:
    # TEACh rewrites the dict in place: keys that change are re-inserted at the end, so the
    # resulting order is "unchanged keys, then substituted keys", each group in original order.
    kept: dict[str, Any] = {}
    moved: dict[str, Any] = {}
    for key, value in d.items():
        new_key = substitute_params(key, params)
        new_value = _sub_value(value, params)
        if isinstance(value, str) and new_value.isdecimal() and new_key != "determiner":
            new_value = int(new_value)
        (kept if new_key == key else moved)[new_key] = new_value
    for key, value in moved.items():
        kept[key] = value
    return kept


# --------------------------------------------------------------------------------------------------
# Definitions and the registry


def _is_valid_determiner(det: str) -> bool:
    return det in ("a", "all") or det.isdigit()


@dataclass
class TaskDefinition:
    """One task definition file, with ``#i`` placeholders still in place."""

    task_id: int
    task_name: str
    task_nparams: int
    task_anchor_object: str | None
    desc: str
    components: dict[str, dict[str, Any]]
    relations: list[dict[str, Any]]
    raw: dict[str, Any]
    source: str = ""

    @property
    def subtask_names(self) -> list[str]:
        return [c["task_name"] for c in self.components.values() if "task_name" in c]

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> TaskDefinition:
        if not isinstance(data, dict):
            raise TaskDefinitionError(f"{source}: a task definition must be a JSON object")
        for key in REQUIRED_TASK_KEYS:
            if key not in data:
                raise TaskDefinitionError(f"{source}: missing key '{key}'")
        if not isinstance(data["task_id"], int) or isinstance(data["task_id"], bool):
            raise TaskDefinitionError(f"{source}: key 'task_id' must be an integer")
        if not isinstance(data["task_name"], str) or not data["task_name"]:
            raise TaskDefinitionError(f"{source}: key 'task_name' must be a non-empty string")
        if not isinstance(data["task_nparams"], int) or data["task_nparams"] < 0:
            raise TaskDefinitionError(f"{source}: key 'task_nparams' must be a non-negative integer")
        if data["task_anchor_object"] is not None and not isinstance(data["task_anchor_object"], str):
            raise TaskDefinitionError(f"{source}: key 'task_anchor_object' must be a string or null")
        if not isinstance(data["desc"], str):
            raise TaskDefinitionError(f"{source}: key 'desc' must be a string")
        components = data["components"]
        if not isinstance(components, dict):
            raise TaskDefinitionError(f"{source}: key 'components' must be an object")
        for name, comp in components.items():
            where = f"{source}: key 'components.{name}'"
            if not isinstance(comp, dict):
                raise TaskDefinitionError(f"{where}: a component must be an object")
            required = SUBTASK_COMPONENT_KEYS if "task_name" in comp else ATOMIC_COMPONENT_KEYS
            missing = [k for k in required if k not in comp]
            if missing:
                raise TaskDefinitionError(f"{where}: missing key(s) {', '.join(repr(k) for k in missing)}")
            if not isinstance(comp["determiner"], (str, int)) or isinstance(comp["determiner"], bool):
                raise TaskDefinitionError(f"{where}.determiner: must be a string")
            if "task_name" in comp:
                if not isinstance(comp["task_params"], list):
                    raise TaskDefinitionError(f"{where}.task_params: must be a list")
            else:
                if not isinstance(comp["conditions"], dict) or not comp["conditions"]:
                    raise TaskDefinitionError(f"{where}.conditions: must be a non-empty object")
                if comp["primary_condition"] not in comp["conditions"]:
                    raise TaskDefinitionError(f"{where}.primary_condition: not one of the conditions")
                if not isinstance(comp["condition_failure_descs"], dict):
                    raise TaskDefinitionError(f"{where}.condition_failure_descs: must be an object")
        relations = data["relations"]
        if not isinstance(relations, list):
            raise TaskDefinitionError(f"{source}: key 'relations' must be a list")
        for idx, rel in enumerate(relations):
            where = f"{source}: key 'relations[{idx}]'"
            if not isinstance(rel, dict):
                raise TaskDefinitionError(f"{where}: a relation must be an object")
            missing = [k for k in RELATION_KEYS if k not in rel]
            if missing:
                raise TaskDefinitionError(f"{where}: missing key(s) {', '.join(repr(k) for k in missing)}")
            if len(rel["head_entity_list"]) != len(rel["head_determiner_list"]):
                raise TaskDefinitionError(
                    f"{where}: head_entity_list and head_determiner_list differ in length"
                )
            if len(rel["tail_entity_list"]) != 1 or len(rel["tail_determiner_list"]) != 1:
                raise TaskDefinitionError(f"{where}: exactly one tail entity is supported")
            if rel["tail_determiner_list"][0] not in ("a", "the"):
                raise TaskDefinitionError(f"{where}: tail determiner must be 'a' or 'the'")
        return cls(
            task_id=data["task_id"],
            task_name=data["task_name"],
            task_nparams=data["task_nparams"],
            task_anchor_object=data["task_anchor_object"],
            desc=data["desc"],
            components=components,
            relations=relations,
            raw=data,
            source=source,
        )


class TaskRegistry:
    """Task definitions by name and id, with sub-task references checked."""

    def __init__(self, definitions: Iterable[TaskDefinition]) -> None:
        self._by_name: dict[str, TaskDefinition] = {}
        self._by_id: dict[int, TaskDefinition] = {}
        for d in definitions:
            if d.task_id in self._by_id:
                raise TaskDefinitionError(
                    f"duplicate task_id {d.task_id} in {d.source} and {self._by_id[d.task_id].source}"
                )
            if d.task_name in self._by_name:
                raise TaskDefinitionError(
                    f"duplicate task_name {d.task_name!r} in {d.source} and {self._by_name[d.task_name].source}"
                )
            self._by_id[d.task_id] = d
            self._by_name[d.task_name] = d
        self._check_references()

    def _check_references(self) -> None:
        unresolved = [
            f"sub-task {sub!r} in task {d.task_name!r} ({d.source})"
            for d in self._by_name.values()
            for sub in d.subtask_names
            if sub not in self._by_name
        ]
        if unresolved:
            raise TaskDefinitionError("cannot resolve " + "; ".join(unresolved))
        state: dict[str, int] = {}

        def visit(name: str, path: list[str]) -> None:
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                raise TaskDefinitionError("circular sub-task reference: " + " -> ".join([*path, name]))
            state[name] = 1
            for sub in self._by_name[name].subtask_names:
                visit(sub, [*path, name])
            state[name] = 2

        for name in self._by_name:
            visit(name, [])

    def __len__(self) -> int:
        return len(self._by_name)

    def __iter__(self) -> Iterator[TaskDefinition]:
        return iter(sorted(self._by_name.values(), key=lambda d: d.task_id))

    def __contains__(self, key: object) -> bool:
        return key in self._by_name or key in self._by_id

    def names(self) -> list[str]:
        return [d.task_name for d in self]

    def ids(self) -> list[int]:
        return [d.task_id for d in self]

    def get(self, name_or_id: str | int) -> TaskDefinition:
        """The definition with this ``task_name`` or ``task_id``; KeyError if unknown."""
        if isinstance(name_or_id, int) and not isinstance(name_or_id, bool):
            if name_or_id in self._by_id:
                return self._by_id[name_or_id]
        elif name_or_id in self._by_name:
            return self._by_name[name_or_id]
        raise KeyError(f"unknown TEACh task {name_or_id!r}")

    def instantiate(self, name_or_id: str | int, params: Sequence[Any] = ()) -> Task:
        """A concrete task: parameters substituted, sub-tasks resolved recursively."""
        return self._instantiate(self.get(name_or_id), [str(p) for p in params])

    def _instantiate(self, definition: TaskDefinition, params: list[str]) -> Task:
        if len(params) != definition.task_nparams:
            raise TaskDefinitionError(
                f"task {definition.task_name!r} takes {definition.task_nparams} parameter(s), got {len(params)}: "
                f"{params!r}"
            )
        desc = substitute_params(definition.desc, params)
        anchor = definition.task_anchor_object
        if anchor is not None:
            anchor = substitute_params(anchor, params)
        raw_components = _sub_dict(copy.deepcopy(definition.components), params)
        raw_relations = _sub_value(copy.deepcopy(definition.relations), params)
        components: dict[str, Component] = {}
        for key, comp in raw_components.items():
            det = str(comp["determiner"])
            if not _is_valid_determiner(det):
                raise TaskDefinitionError(
                    f"task {definition.task_name!r}, component {key!r}: invalid determiner {det!r} "
                    f"(parameters {params!r})"
                )
            if "task_name" in comp:
                sub_params = [str(p) for p in comp["task_params"]]
                child = self._instantiate(self.get(comp["task_name"]), sub_params)
                components[key] = SubtaskComponent(key, det, comp["task_name"], sub_params, child)
            else:
                components[key] = AtomicComponent(
                    key=key,
                    determiner=det,
                    primary_condition=comp["primary_condition"],
                    instance_shareable=bool(comp["instance_shareable"]),
                    conditions=dict(comp["conditions"]),
                    condition_failure_descs=dict(comp["condition_failure_descs"]),
                )
        relations = [
            Relation(
                property=r["property"],
                tail_entity_list=[str(x) for x in r["tail_entity_list"]],
                tail_determiner_list=[str(x) for x in r["tail_determiner_list"]],
                head_entity_list=[str(x) for x in r["head_entity_list"]],
                head_determiner_list=[str(x) for x in r["head_determiner_list"]],
                failure_desc=str(r["failure_desc"]),
            )
            for r in raw_relations
        ]
        for rel in relations:
            for det in rel.head_determiner_list:
                if not _is_valid_determiner(det):
                    raise TaskDefinitionError(
                        f"task {definition.task_name!r}: invalid head determiner {det!r} (parameters {params!r})"
                    )
        return Task(
            task_id=definition.task_id,
            task_name=definition.task_name,
            task_nparams=definition.task_nparams,
            task_params=list(params),
            task_anchor_object=anchor,
            desc=desc,
            components=components,
            relations=relations,
        )

    def task_from_game_task(self, game_task: Mapping[str, Any] | Any) -> Task:
        """The task to check for a game file's task entry, looked up by ``task_id`` as TEACh's TfD
        evaluation does, with the game's ``task_params``."""
        if not isinstance(game_task, Mapping):
            game_task = {"task_id": game_task.task_id, "task_params": game_task.task_params}
        return self.instantiate(int(game_task["task_id"]), list(game_task.get("task_params") or []))


def _default_definitions_dir() -> Path:
    return Path(str(resources.files("helper_agent.teach").joinpath("data", "task_definitions")))


def load_task_definitions(directory: str | Path | None = None) -> TaskRegistry:
    """Load every ``*.json`` definition in ``directory`` (this project's packaged definitions when
    None; pass TEACh's ``task_definitions`` folder to use the official ones)."""
    root = Path(directory) if directory is not None else _default_definitions_dir()
    if not root.is_dir():
        raise TaskDefinitionError(f"{root}: not a directory of task definitions")
    definitions: list[TaskDefinition] = []
    for path in sorted(root.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise TaskDefinitionError(f"{path}: invalid JSON: {exc}") from exc
        definitions.append(TaskDefinition.from_dict(data, source=str(path)))
    if not definitions:
        raise TaskDefinitionError(f"{root}: no task definition files (*.json)")
    return TaskRegistry(definitions)


@functools.cache
def default_registry() -> TaskRegistry:
    """The packaged task definitions, loaded once."""
    return load_task_definitions()
