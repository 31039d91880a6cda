"""`Registry`: name -> plugin, the one mechanism behind the method registry (`graphs/registry.py`)
and the memory registry (`memory/registry.py`).

A name is found, in this order, among run-time registrations (`register`), the project's built-ins
(`"module:attribute"`, imported only when asked for, so a plugin's dependencies load only for its
runs) and the distributions' entry points of one group (so a third-party package adds a plugin
without touching our files). Both registries kept a copy of this lookup, its lock, its tolerance of
a broken distribution and its errors; they differ only in their words and in what an entry point
must name, which they pass in.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

T = TypeVar("T")

log = logging.getLogger(__name__)


def as_loaded(name: str, loaded: object, entry: EntryPoint) -> Any:
    """What an entry point names is the plugin itself (a class or a factory)."""
    return loaded


@dataclass
class Registry(Generic[T]):
    """Plugins of one kind by name.

    `noun` names the kind in messages ("method", "memory plugin"); `unknown` is the message for a
    name nobody provides, formatted with `name` and `choices` (the names, comma-separated);
    `error` is raised for it and for an entry point that fails to load; `adopt(name, loaded, entry
    point)` turns what an entry point names into the plugin (and refuses what it cannot use)."""

    group: str
    builtins: dict[str, str]
    noun: str
    unknown: str
    error: type[Exception]
    adopt: Callable[[str, object, EntryPoint], T] = as_loaded
    sorted_names: bool = False  # names() all sorted; else the built-ins in their order, then the rest sorted
    registered: dict[str, T] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def register(self, name: str, plugin: T, *, replace: bool = False) -> None:
        """Make `name` give `plugin` (a built-in's name only with `replace=True`)."""
        with self._lock:
            if not replace and (name in self.registered or name in self.builtins):
                raise ValueError(f"a {self.noun} named {name!r} is already registered (pass replace=True)")
            self.registered[name] = plugin

    def entry_points(self) -> dict[str, EntryPoint]:
        """The group's entry points by name; none (and a warning) when the metadata cannot be read."""
        try:
            return {entry.name: entry for entry in entry_points(group=self.group)}
        except Exception as exc:  # noqa: BLE001 - a broken distribution must not hide the built-ins
            log.warning("cannot read entry points of group %s: %s", self.group, exc)
            return {}

    def names(self) -> list[str]:
        """Every name `get` takes."""
        extra = (set(self.registered) | set(self.entry_points())) - set(self.builtins)
        return sorted({*self.builtins, *extra}) if self.sorted_names else [*self.builtins, *sorted(extra)]

    def get(self, name: str) -> T:
        """The plugin registered, built in or installed under `name` (imported only now)."""
        with self._lock:
            if name in self.registered:
                return self.registered[name]
        if name in self.builtins:
            module, _, attr = self.builtins[name].partition(":")
            return getattr(importlib.import_module(module), attr)
        entries = self.entry_points()
        if name in entries:
            entry = entries[name]
            try:
                loaded = entry.load()
            except Exception as exc:
                raise self.error(f"{self.noun} {name!r} (entry point {entry.value!r} in group {self.group!r}) "
                                 f"failed to load: {exc}") from exc
            return self.adopt(name, loaded, entry)
        raise self.error(self.unknown.format(name=name, choices=", ".join(self.names())))
