"""Readers and writers for TEACh's JSON files: games, EDH instances and TfD instances.

The models use TEACh's own key names and keep every key they do not know (``extra="allow"``), and
writing dumps only the keys that were read or set, so ``read -> write`` reproduces the input exactly.
Numbers keep their JSON type (an integer stays an integer, a float a float).

Malformed input raises `TeachFormatError` naming the file and the key path, e.g.
``data/x.edh0.json: key 'driver_action_history[3].action_name': field required``. Every way a file
can be unreadable (missing, a directory, binary or not UTF-8, too large, nested too deeply) is such
an error too. Numbers must be finite. The objects of a game's initial and final states are checked
the way the simulator will read them (`helper_agent.world.metadata.validate_objects`: types, finite
positions within range, known object types, unique ids, parents that exist), and a scene may hold at
most `HELPER_MAX_SCENE_OBJECTS` objects, so a bad game fails when it is read, with its file and key
path, rather than later with a traceback from the simulator.

Dataset layout read by `TeachDataset` (the layout of TEACh's download)::

    <root>/games/<split>/<game_id>.game.json
    <root>/edh_instances/<split>/<game_id>.edh<N>.json
    <root>/tfd_instances/<split>/<game_id>.tfd.json
    <root>/images/<split>/<game_id>/...
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    PrivateAttr,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from helper_agent.config import get_settings
from helper_agent.teach.errors import TeachFormatError
from helper_agent.world.errors import StateFormatError
from helper_agent.world.metadata import (
    AgentEntry,
    FieldError,
    describe_error,
    read_json_file,
    validate_grid,
    validate_objects,
)

SPLITS = ("train", "valid_seen", "valid_unseen", "test_seen", "test_unseen")


# --------------------------------------------------------------------------------------------------
# Field types that keep JSON values exactly


def _number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PydanticCustomError("number_type", "expected a number")
    if not math.isfinite(value):
        raise PydanticCustomError("finite_number", "expected a finite number, got {value}", {"value": repr(value)})
    return value


def _opt_number(value: Any) -> Any:
    return None if value is None else _number(value)


def _object_record(value: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(value.get("objectId"), str):
        raise PydanticCustomError("object_id", "object has no string 'objectId'")
    return value


Number = Annotated[Any, PlainValidator(_number)]
OptNumber = Annotated[Any, PlainValidator(_opt_number)]
Utterance = Annotated[list[StrictStr], Field(min_length=2, max_length=2)]
ObjectRecord = Annotated[dict[str, Any], AfterValidator(_object_record)]


class TeachRecord(BaseModel):
    """Base of all TEACh file models: unknown keys are kept; dumping reproduces the input keys."""

    model_config = ConfigDict(extra="allow", validate_assignment=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict: keys that were read or set (declared or unknown), nothing added."""
        return self.model_dump(exclude_unset=True)


# --------------------------------------------------------------------------------------------------
# Game files


class Interaction(TeachRecord):
    """One entry of an episode's ``interactions`` (an action or utterance by an agent)."""

    agent_id: StrictInt | None = None
    action_id: StrictInt
    time_start: Number
    duration: OptNumber = None
    success: StrictInt | None = None
    action_idx: StrictInt | None = None
    obj_interaction_action: StrictInt | None = None
    oid: StrictStr | None = None
    x: OptNumber = None
    y: OptNumber = None
    utterance: StrictStr | None = None
    corrected_utterance: StrictStr | None = None
    query: StrictStr | None = None
    pose: list[Number] | None = None
    pose_delta: list[Number] | None = None

    @model_validator(mode="after")
    def _agent_or_object(self) -> Interaction:
        if self.agent_id is None and "object_id" not in (self.model_extra or {}):
            raise ValueError("an interaction needs 'agent_id' (or 'object_id')")
        return self


def _limits() -> Any:
    return get_settings()


def _nested(problem: str, subpath: str) -> PydanticCustomError:
    """An error at a path below the field pydantic reports; `parse_record` appends `subpath`."""
    return PydanticCustomError("nested", "{problem}", {"problem": problem, "subpath": subpath})


class EpisodeState(TeachRecord):
    """``initial_state`` / ``final_state`` of an episode."""

    time_start: OptNumber = None
    agents: list[dict[str, Any]] = Field(default_factory=list)
    objects: list[ObjectRecord] = Field(default_factory=list)
    custom_object_metadata: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _scene_is_loadable(self) -> EpisodeState:
        """The objects (merged with their custom metadata) and agent poses as the simulator reads them."""
        merged = self.objects_with_custom_metadata()
        try:
            validate_objects(merged, source="", path="objects", max_objects=_limits().max_scene_objects)
        except FieldError as exc:
            raise _nested(exc.problem, self._where(exc.path)) from None
        for index, agent in enumerate(self.agents):
            if "position" in agent:
                try:
                    AgentEntry.model_validate(agent)
                except ValidationError as exc:
                    subpath, problem = describe_error(exc, f"agents[{index}]")
                    raise _nested(problem, subpath) from None
        return self

    def _where(self, path: str) -> str:
        """`objects[3].isCooked` -> `custom_object_metadata.<id>.isCooked` when that value came from there."""
        head, dot, key = path.partition("].")
        if not dot or not head.startswith("objects["):
            return path
        index = int(head[len("objects[") :])
        field = key.split(".", 1)[0].split("[", 1)[0]
        oid = self.objects[index].get("objectId") if index < len(self.objects) else None
        if isinstance(oid, str) and field in self.custom_object_metadata.get(oid, {}):
            return f"custom_object_metadata.{oid}.{key}"
        return path

    def objects_with_custom_metadata(self) -> list[dict[str, Any]]:
        """Copies of ``objects`` merged with ``custom_object_metadata`` (what the checker reads)."""
        merged = []
        for obj in self.objects:
            new = dict(obj)
            new.update(self.custom_object_metadata.get(obj["objectId"], {}))
            merged.append(new)
        return merged


class Episode(TeachRecord):
    episode_id: StrictStr
    world: StrictStr
    world_type: StrictStr
    commander_embodied: Any = None
    initial_state: EpisodeState | None = None
    interactions: list[Interaction]
    final_state: EpisodeState | None = None


class GameTask(TeachRecord):
    """A game file's task entry: the task definition with its parameters, and the episodes."""

    task_id: StrictInt
    task_name: StrictStr
    task_params: list[StrictStr] = Field(default_factory=list)
    task_nparams: StrictInt | None = None
    task_anchor_object: StrictStr | None = None
    desc: StrictStr | None = None
    components: dict[str, Any] = Field(default_factory=dict)
    relations: list[Any] = Field(default_factory=list)
    comments: Any = None
    episodes: list[Episode]


class Game(TeachRecord):
    """A ``<game_id>.game.json`` gameplay session."""

    version: Any = None
    task_type: Any = None
    comments: Any = None
    definitions: dict[str, Any] | None = None
    tasks: list[GameTask] = Field(min_length=1)

    _game_id: str | None = PrivateAttr(default=None)

    @property
    def game_id(self) -> str | None:
        """The id from the file name (``<game_id>.game.json``), when read from a file."""
        return self._game_id

    @game_id.setter
    def game_id(self, value: str | None) -> None:
        self._game_id = value

    @model_validator(mode="after")
    def _grid_is_loadable(self) -> Game:
        """The built-in benchmark's own floor grid (`helper_agent.grid`), bounded like any scene's."""
        ours = (self.model_extra or {}).get("helper_agent")
        if isinstance(ours, dict) and ours.get("grid") is not None:
            try:
                validate_grid(ours["grid"], source="", path="helper_agent.grid", max_grid_cells=_limits().max_grid_cells)
            except FieldError as exc:
                raise _nested(exc.problem, exc.path) from None
        return self

    @property
    def task(self) -> GameTask:
        return self.tasks[0]

    @property
    def episode(self) -> Episode:
        return self.tasks[0].episodes[0]


# --------------------------------------------------------------------------------------------------
# EDH and TfD instances


class DriverAction(TeachRecord):
    """An entry of ``driver_action_history`` / ``driver_actions_future``."""

    action_id: StrictInt
    action_idx: StrictInt | None = None
    obj_interaction_action: StrictInt | None = None
    action_name: StrictStr
    time_start: Number
    oid: StrictStr | None = None
    x: OptNumber = None
    y: OptNumber = None


class _InstanceBase(TeachRecord):
    game_id: StrictStr
    instance_id: StrictStr | None = None
    pred_start_idx: StrictInt | None = None
    dialog_history: list[Utterance] = Field(default_factory=list)
    dialog_history_cleaned: list[Utterance] | None = None
    driver_action_history: list[DriverAction] = Field(default_factory=list)
    driver_image_history: list[StrictStr] | None = None
    driver_actions_future: list[DriverAction] = Field(default_factory=list)
    driver_images_future: list[StrictStr] | None = None
    interactions: list[Interaction] | None = None
    history_subgoals: list[Any] | None = None
    future_subgoals: list[Any] | None = None
    init_state_diff: dict[str, Any] | None = None
    final_state_diff: dict[str, Any] | None = None
    state_changes: dict[str, Any] | None = None
    expected_init_goal_conditions_total: StrictInt | None = None
    expected_init_goal_conditions_satisfied: StrictInt | None = None

    def dialog(self, cleaned: bool = True) -> list[tuple[str, str]]:
        """(speaker, utterance) pairs, preferring the cleaned dialogue when present."""
        turns = (
            self.dialog_history_cleaned
            if cleaned and self.dialog_history_cleaned is not None
            else self.dialog_history
        )
        return [(t[0], t[1]) for t in turns]

    @property
    def reference_path_length(self) -> int:
        """Length of the reference (gold) trajectory: ``len(driver_actions_future)``."""
        return len(self.driver_actions_future)


class EdhInstance(_InstanceBase):
    """An ``<game_id>.edh<N>.json`` Execution-from-Dialogue-History instance."""

    instance_id: StrictStr
    dialog_history: list[Utterance]
    driver_action_history: list[DriverAction]
    # Not part of TEACh's release, written by benchmarks that cache the final check.
    expected_final_goal_conditions_total: StrictInt | None = None
    expected_final_goal_conditions_satisfied: StrictInt | None = None


class TfdInstance(_InstanceBase):
    """A ``<game_id>.tfd.json`` Trajectory-from-Dialogue instance: the whole dialogue, an empty
    action history, and the driver's successful actions as the reference trajectory."""

    dialog_history: list[Utterance]
    driver_actions_future: list[DriverAction]


# --------------------------------------------------------------------------------------------------
# Reading and writing

M = TypeVar("M", bound=TeachRecord)


def _key_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _message(err: dict[str, Any]) -> str:
    msg = str(err.get("msg", "invalid value"))
    msg = msg.removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:]


def parse_record(model: type[M], data: Any, source: str = "<data>") -> M:
    """Validate ``data`` as ``model``; errors become `TeachFormatError` naming ``source`` and the key."""
    if not isinstance(data, dict):
        raise TeachFormatError(source, None, f"expected a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        key = _key_path(tuple(first.get("loc", ())))
        subpath = (first.get("ctx") or {}).get("subpath")
        if subpath:
            key = f"{key}.{subpath}" if key and not subpath.startswith("[") else key + subpath
        problem = _message(first)
        if len(errors) > 1:
            problem += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
        raise TeachFormatError(source, key or None, problem) from None


def load_json(path: str | Path, *, max_bytes: int | None = None) -> Any:
    """Parse a JSON file; every way it can fail raises `TeachFormatError` naming the file.

    Files over `max_bytes` (default `HELPER_MAX_INPUT_BYTES`) are refused before they are read.
    """
    limit = max_bytes if max_bytes is not None else _limits().max_input_bytes
    try:
        return read_json_file(path, max_bytes=limit)
    except StateFormatError as exc:
        source = str(path)
        problem = str(exc).removeprefix(f"{source}: ")
        if problem.startswith("invalid JSON at line "):  # keep TEACh readers' wording
            where, _, msg = problem.removeprefix("invalid JSON at ").partition(": ")
            line, _, column = where.partition(" column ")
            problem = f"invalid JSON: {msg} ({line}, column {column})"
        raise TeachFormatError(source, None, problem) from None


def _strip_suffix(name: str, suffix: str) -> str:
    return name.removesuffix(suffix)


def read_game(path: str | Path) -> Game:
    """Read a ``*.game.json`` file; ``game.game_id`` is taken from the file name."""
    path = Path(path)
    game = parse_record(Game, load_json(path), str(path))
    game.game_id = _strip_suffix(path.name, ".game.json")
    return game


def read_edh_instance(path: str | Path) -> EdhInstance:
    path = Path(path)
    return parse_record(EdhInstance, load_json(path), str(path))


def read_tfd_instance(path: str | Path) -> TfdInstance:
    """Read a TfD instance; without an ``instance_id`` key the file name minus ``.json`` is used
    (as TEACh's TfD runner does), without being added to the written file."""
    path = Path(path)
    instance = parse_record(TfdInstance, load_json(path), str(path))
    if instance.instance_id is None:
        instance.__dict__["instance_id"] = _strip_suffix(path.name, ".json")
    return instance


def write_record(record: TeachRecord, path: str | Path, indent: int | None = None) -> Path:
    """Write a game / EDH / TfD model as JSON (parent folders created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record.to_dict(), indent=indent), encoding="utf-8")
    return path


write_game = write_record
write_edh_instance = write_record
write_tfd_instance = write_record


class TeachDataset:
    """A TEACh-layout dataset folder (``games/``, ``edh_instances/``, ``tfd_instances/`` by split)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise FileNotFoundError(f"{self.root}: no such dataset directory")

    def splits(self, kind: str = "games") -> list[str]:
        folder = self.root / kind
        return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []

    def game_path(self, split: str, game_id: str) -> Path:
        return self.root / "games" / split / f"{game_id}.game.json"

    def image_dir(self, split: str, game_id: str) -> Path:
        return self.root / "images" / split / game_id

    def _paths(self, kind: str, split: str, pattern: str) -> list[Path]:
        folder = self.root / kind / split
        return sorted(folder.glob(pattern)) if folder.is_dir() else []

    def game_paths(self, split: str) -> list[Path]:
        return self._paths("games", split, "*.game.json")

    def edh_paths(self, split: str) -> list[Path]:
        return self._paths("edh_instances", split, "*.json")

    def tfd_paths(self, split: str) -> list[Path]:
        return self._paths("tfd_instances", split, "*.json")

    def games(self, split: str) -> Iterator[Game]:
        for p in self.game_paths(split):
            yield read_game(p)

    def edh_instances(self, split: str) -> Iterator[EdhInstance]:
        for p in self.edh_paths(split):
            yield read_edh_instance(p)

    def tfd_instances(self, split: str) -> Iterator[TfdInstance]:
        for p in self.tfd_paths(split):
            yield read_tfd_instance(p)

    def game(self, split: str, game_id: str) -> Game:
        return read_game(self.game_path(split, game_id))

    def game_for(self, instance: EdhInstance | TfdInstance, split: str) -> Game:
        """The game an EDH/TfD instance was made from."""
        return self.game(split, instance.game_id)
