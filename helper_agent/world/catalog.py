"""The object catalog: what every object type of the embedded world is and what can be done with it.

The simulator, the scene generator, the metadata exporter and the executor's pre-condition checks all
ask the same questions ("can a Mug be picked up?", "does a Toaster take a Potato?", "which knob drives
which burner?"). Answering them from one data file keeps the embedded world consistent with itself and
with AI2-THOR, whose affordance flags (pickupable, receptacle, openable, toggleable, sliceable, cookable,
dirtyable, canFillWithLiquid, breakable, canBeUsedUp, isHeatSource, isColdSource, moveable) the file
mirrors, and with TEACh, whose ``simbotObjectClass`` groups (Tableware, Drinkware, ...) its
``simbot_classes`` reproduce so that TEACh task definitions can be checked unchanged.

The data lives in ``helper_agent/world/data/object_catalog.json``; this module validates it (pydantic
for field types, then cross-references between types) and exposes it read-only. A malformed file fails
loudly at load time with a message naming the file, the type and the field, rather than surfacing later
as an odd simulator behaviour.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "ROOM_TYPES",
    "Catalog",
    "CatalogError",
    "ObjectType",
    "UnknownObjectType",
    "load_catalog",
]

ROOM_TYPES: tuple[str, ...] = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")
"""The four TEACh room types; ``ObjectType.rooms`` uses these names."""

_PACKAGE = "helper_agent.world"
_RESOURCE = "data/object_catalog.json"
_SUPPORTED_VERSIONS = (1,)


class UnknownObjectType(KeyError):
    """An object type the catalog does not know.

    A KeyError, so ``except KeyError`` keeps working, but with a readable message: LLM-written programs
    and hand-written tasks misspell types ("Tomatoe", "sinkbasin"), and suggesting the close names turns
    that into a one-step fix for the planner or the user.
    """

    def __init__(self, name: str, known: Iterable[str] = ()) -> None:
        self.name = name
        self.suggestions: list[str] = _close_names(name, list(known))
        message = f"unknown object type {name!r}"
        if self.suggestions:
            message += f"; did you mean {' or '.join(repr(s) for s in self.suggestions)}?"
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        # KeyError.__str__ would show the message quoted like a dict key.
        return self.message


class CatalogError(ValueError):
    """The catalog data is malformed; the message names the source, the type and the field."""


def _close_names(name: str, known: list[str]) -> list[str]:
    """Close matches, case-insensitively (types are CamelCase; people and LLMs often are not)."""
    by_lower: dict[str, str] = {k.lower(): k for k in known}
    exact = by_lower.get(name.lower())
    if exact is not None:
        return [exact]
    matches = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.6)
    return [by_lower[m] for m in matches]


@dataclass(frozen=True)
class ObjectType:
    """One object type: AI2-THOR affordances plus the facts the embedded world needs to lay out rooms.

    Frozen because one catalog instance is shared (cached) by every simulator and generator in the
    process; nobody should be able to make Mugs unpickupable for everyone else by accident.
    """

    name: str
    pickupable: bool
    receptacle: bool
    openable: bool
    toggleable: bool
    sliceable: bool
    cookable: bool
    dirtyable: bool
    can_fill_with_liquid: bool
    breakable: bool
    can_be_used_up: bool
    is_heat_source: bool
    is_cold_source: bool
    moveable: bool
    sliced_type: str | None
    slice_count: int
    simbot_classes: tuple[str, ...]
    rooms: tuple[str, ...]
    blocks_floor: bool
    height: float
    surface_height: float | None
    capacity: int
    spawn_in: tuple[str, ...]
    # Where things put "into" this fixture really go: Sink -> SinkBasin, Bathtub -> BathtubBasin.
    placement_target: str | None = None
    # Types of older AI2-THOR versions (ALFRED's 2.1) kept so such data loads; never generated.
    legacy: bool = False


# --------------------------------------------------------------------------- validation models


class _TypeModel(BaseModel):
    """Field types of one entry of ``types``; strict, so ``"true"`` or ``1`` is not a boolean."""

    model_config = ConfigDict(extra="forbid", strict=True)

    pickupable: bool
    receptacle: bool
    openable: bool
    toggleable: bool
    sliceable: bool
    cookable: bool
    dirtyable: bool
    can_fill_with_liquid: bool
    breakable: bool
    can_be_used_up: bool
    is_heat_source: bool
    is_cold_source: bool
    moveable: bool
    sliced_type: str | None
    slice_count: int = Field(ge=0)
    simbot_classes: list[str] = Field(min_length=1)
    rooms: list[Literal["Kitchen", "LivingRoom", "Bedroom", "Bathroom"]]
    blocks_floor: bool
    height: float = Field(gt=0)
    surface_height: float | None = Field(ge=0)
    capacity: int = Field(ge=0)
    spawn_in: list[str]
    placement_target: str | None = None
    legacy: bool = False


class _CatalogModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    version: int
    description: str = ""
    types: dict[str, _TypeModel] = Field(min_length=1)
    receptacle_accepts: dict[str, list[str]]
    controls: dict[str, str | None]


def _format_validation_error(source: str, exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        where = ".".join(str(part) for part in err["loc"]) or "<top level>"
        got = "" if err["type"] == "missing" else f" (got {err['input']!r})"
        lines.append(f"  {where}: {err['msg']}{got}")
    return f"invalid object catalog {source}:\n" + "\n".join(lines)


# --------------------------------------------------------------------------- the catalog


class Catalog:
    """Read-only access to the object types, what receptacles accept, and which toggles drive what.

    Construct it from the parsed JSON (``Catalog(data, source)``) or use :func:`load_catalog`. All
    lookups by type name raise :class:`UnknownObjectType` for names the catalog does not know, because
    a silent ``False`` for a misspelled type would make a planner believe an action is impossible.
    """

    def __init__(self, data: Mapping[str, Any], source: str = "<dict>") -> None:
        self.source = source
        if not isinstance(data, Mapping):
            raise CatalogError(
                f"invalid object catalog {source}: expected a JSON object, got {type(data).__name__}"
            )
        try:
            model = _CatalogModel.model_validate(dict(data))
        except ValidationError as exc:
            raise CatalogError(_format_validation_error(source, exc)) from exc
        if model.version not in _SUPPORTED_VERSIONS:
            raise CatalogError(
                f"invalid object catalog {source}: version: {model.version} is not supported "
                f"(expected one of {_SUPPORTED_VERSIONS})"
            )
        self.version: int = model.version
        self.types: Mapping[str, ObjectType] = MappingProxyType(
            {
                name: ObjectType(
                    name=name,
                    **{
                        key: tuple(value) if isinstance(value, list) else value
                        for key, value in entry.model_dump().items()
                    },
                )
                for name, entry in model.types.items()
            }
        )
        self._accepts: dict[str, frozenset[str]] = {
            r: frozenset(objs) for r, objs in model.receptacle_accepts.items()
        }
        self._controls: dict[str, str | None] = dict(model.controls)
        self._base: dict[str, str] = {t.sliced_type: t.name for t in self.types.values() if t.sliced_type}
        errors = self._cross_reference_errors(model)
        if errors:
            raise CatalogError(f"invalid object catalog {source}:\n" + "\n".join(f"  {e}" for e in errors))

    # ------------------------------------------------------------------ validation across types

    def _cross_reference_errors(self, model: _CatalogModel) -> list[str]:
        """Everything pydantic cannot see: names that must exist and flags that must agree.

        Each message starts with the JSON path of the offending field, like pydantic's own errors.
        """
        types = self.types
        errors: list[str] = []
        for name, t in types.items():
            at = f"types.{name}"
            if t.simbot_classes[0] != name:
                # TEACh matches a task's object by simbotObjectClass, whose first entry is the type.
                errors.append(
                    f"{at}.simbot_classes: must start with the type itself ({name!r}), got {t.simbot_classes[0]!r}"
                )
            if t.sliceable != (t.sliced_type is not None):
                errors.append(
                    f"{at}.sliced_type: a sliceable type needs a sliced_type and only it ({t.sliced_type!r})"
                )
            if t.sliced_type is not None:
                if t.sliced_type not in types:
                    errors.append(f"{at}.sliced_type: {self._unknown(t.sliced_type)}")
                elif not types[t.sliced_type].pickupable:
                    errors.append(f"{at}.sliced_type: {t.sliced_type!r} must be pickupable")
            if (t.slice_count > 0) != t.sliceable:
                errors.append(f"{at}.slice_count: must be > 0 exactly when sliceable (got {t.slice_count})")
            if t.pickupable and t.moveable:
                errors.append(f"{at}.moveable: AI2-THOR's moveable means pushable furniture, not pickupable")
            if not t.receptacle:
                if t.capacity:
                    errors.append(f"{at}.capacity: only receptacles have a capacity (got {t.capacity})")
                if t.surface_height is not None:
                    errors.append(f"{at}.surface_height: only receptacles have a surface height")
            if t.spawn_in and not t.pickupable:
                errors.append(f"{at}.spawn_in: only pickupable types start inside receptacles")
            for host in t.spawn_in:
                if host not in types:
                    errors.append(f"{at}.spawn_in: {self._unknown(host)}")
                elif name not in self._accepts.get(host, frozenset()):
                    errors.append(
                        f"{at}.spawn_in: {host!r} does not accept {name!r} (see receptacle_accepts)"
                    )
            if t.placement_target is not None:
                if t.placement_target not in types:
                    errors.append(f"{at}.placement_target: {self._unknown(t.placement_target)}")
                elif not types[t.placement_target].receptacle:
                    errors.append(f"{at}.placement_target: {t.placement_target!r} is not a receptacle")
        for receptacle, objs in model.receptacle_accepts.items():
            at = f"receptacle_accepts.{receptacle}"
            if receptacle not in types:
                errors.append(f"{at}: {self._unknown(receptacle)}")
            elif not types[receptacle].receptacle:
                errors.append(f"{at}: {receptacle!r} is not a receptacle")
            for obj in objs:
                if obj not in types:
                    errors.append(f"{at}: {self._unknown(obj)}")
                elif not types[obj].pickupable:
                    errors.append(f"{at}: {obj!r} is not pickupable, so it cannot be placed")
        for toggle, target in model.controls.items():
            at = f"controls.{toggle}"
            if toggle not in types:
                errors.append(f"{at}: {self._unknown(toggle)}")
            elif not types[toggle].toggleable:
                errors.append(f"{at}: {toggle!r} is not toggleable")
            if target is not None and target not in types:
                errors.append(f"{at}: {self._unknown(target)}")
        return errors

    def _unknown(self, name: str) -> str:
        return str(UnknownObjectType(name, self.types))

    # ------------------------------------------------------------------ lookups

    def get(self, name: str) -> ObjectType:
        """The type called ``name`` (exact, case-sensitive, as in AI2-THOR metadata)."""
        try:
            return self.types[name]
        except KeyError:
            raise UnknownObjectType(name, self.types) from None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.types

    def __len__(self) -> int:
        return len(self.types)

    def __repr__(self) -> str:
        return f"Catalog({len(self.types)} types from {self.source})"

    def names(self) -> list[str]:
        """All type names, sorted, so generators that iterate over them stay deterministic."""
        return sorted(self.types)

    def accepts(self, receptacle: str, obj: str) -> bool:
        """Whether an ``obj`` can be placed in or on a ``receptacle`` (both type names).

        False for a receptacle whose contents go elsewhere (Sink: its SinkBasin) and for
        non-receptacles; raises UnknownObjectType for names the catalog does not know.
        """
        self.get(receptacle)
        self.get(obj)
        return obj in self._accepts.get(receptacle, frozenset())

    def accepted_by(self, receptacle: str) -> list[str]:
        """The types ``receptacle`` accepts, sorted (empty for non-receptacles)."""
        self.get(receptacle)
        return sorted(self._accepts.get(receptacle, frozenset()))

    def receptacles_for(self, obj: str) -> list[str]:
        """The receptacle types that accept ``obj``, sorted: where a planner may put it."""
        self.get(obj)
        return sorted(r for r, objs in self._accepts.items() if obj in objs)

    def controlled_type(self, toggle_type: str) -> str | None:
        """The type a toggle drives (StoveKnob -> StoveBurner, Faucet -> SinkBasin), None if none."""
        self.get(toggle_type)
        return self._controls.get(toggle_type)

    def types_in_class(self, simbot_class: str) -> list[str]:
        """Types whose TEACh ``simbotObjectClass`` includes ``simbot_class``, sorted.

        A type name is its own class (as in TEACh), so ``types_in_class("Mug") == ["Mug"]``, and Sink and
        SinkBasin (Bathtub and BathtubBasin) share their names. An unknown class gives an empty list:
        classes are open-ended labels, not types.
        """
        return sorted(name for name, t in self.types.items() if simbot_class in t.simbot_classes)

    def classes(self) -> list[str]:
        """Every simbot class used by some type, sorted (type names included)."""
        return sorted({c for t in self.types.values() for c in t.simbot_classes})

    def base_type(self, name: str) -> str:
        """The whole-object type of a piece: "TomatoSliced" -> "Tomato", "EggCracked" -> "Egg".

        Derived from ``sliced_type`` rather than by stripping a suffix, so it stays right for names
        that merely end in "Sliced"; any other type is its own base.
        """
        self.get(name)
        return self._base.get(name, name)


# --------------------------------------------------------------------------- loading


def _read_json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(f"invalid object catalog {source}: not JSON: {exc}") from exc


@functools.lru_cache(maxsize=1)
def _packaged_catalog() -> Catalog:
    resource = resources.files(_PACKAGE).joinpath(_RESOURCE)
    source = f"{_PACKAGE}/{_RESOURCE}"
    return Catalog(_read_json(resource.read_text(encoding="utf-8"), source), source=source)


def load_catalog(path: str | Path | None = None) -> Catalog:
    """The catalog in ``path``, or the packaged one when ``path`` is None.

    The packaged catalog is parsed and validated once per process and shared (it is read-only);
    an explicit path is read afresh each call, so edits to a user's own catalog file take effect.
    """
    if path is None:
        return _packaged_catalog()
    file = Path(path)
    return Catalog(_read_json(file.read_text(encoding="utf-8"), str(file)), source=str(file))
