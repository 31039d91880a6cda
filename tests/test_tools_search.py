"""Searching through the executor's public `SearchHost` interface, and the tools layer's import graph.

The locators and the systematic search run here against a small scripted host, not the executor:
that they work proves the interface is all they need. The executor must offer every member of the
interfaces it implements (`SearchHost` for searchers, `MacroHost` for macros), and no module it is
built from may import it, nor may it import a locator.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from typing import Any

import pytest

from helper_agent.envs.base import NavigationGrid, ObjectView, Observation
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.perception.tracker import ObjectTracker
from helper_agent.program.subgoals import ObjectRef
from helper_agent.tools.errors import EpisodeLimit, StepFailed
from helper_agent.tools.executor import Executor
from helper_agent.tools.locator import LLMLocator, RandomLocator, explore
from helper_agent.tools.macros import MacroHost
from helper_agent.tools.search import SearchHost, search_places
from helper_agent.world.catalog import load_catalog

APPLE = ObjectRef("apple#1", "Apple")


class ScriptedHost:
    """A kitchen with two closed cabinets, a fridge and a drawer; the apple is in `hiding_place`.

    Opening a receptacle shows what is inside; every action is recorded.
    """

    def __init__(self, hiding_place: str = "Fridge|1", budget: int = 100, stuck: frozenset[str] = frozenset()) -> None:
        self.tracker = ObjectTracker()
        self.catalog = load_catalog()
        self.hiding_place = hiding_place
        self.budget = budget
        self.stuck = stuck
        self.actions: list[tuple[str, str | None]] = []
        self.notes: list[str] = []
        self.open: set[str] = set()
        self._look()

    def _views(self) -> list[ObjectView]:
        views = [
            ObjectView(oid, oid.split("|")[0], 1.0 + n, True, (1.0 + n, 0.9, 0.0), None, (), {"isOpen": oid in self.open})
            for n, oid in enumerate(("Cabinet|1", "Cabinet|2", "Drawer|1", "Fridge|1", "CounterTop|1"))
        ]
        if self.hiding_place in self.open:
            views.append(ObjectView("Apple|1", "Apple", 1.0, True, (1.0, 0.9, 0.0), self.hiding_place))
        return views

    def _look(self) -> None:
        self.tracker.update(Observation((0, 0, 0, 0), self.position, None, tuple(self._views())))

    # SearchHost -------------------------------------------------------------------------------
    @property
    def position(self) -> tuple[float, float]:
        return (0.0, 0.0)

    room_type = "Kitchen"

    def can_bind(self, ref: ObjectRef) -> bool:
        return bool(self.tracker.of_type(ref.object_class))

    def env_type(self, oid: str) -> str:
        return oid.split("|")[0]

    def walk_to(self, oid: str, *, swing: bool = False) -> None:
        if oid in self.stuck:
            raise StepFailed("Navigate", oid, f"no path to {oid}")

    def act(self, action: str, object_id: str | None = None) -> None:
        if len(self.actions) >= self.budget:
            raise EpisodeLimit("step_limit")
        self.actions.append((action, object_id))
        if action == "Open" and object_id is not None:
            self.open.add(object_id)
        self._look()

    def explore_to(self, cell: tuple[int, int]) -> bool:
        self.actions.append(("explore_to", str(cell)))
        return True

    def navigation_grid(self) -> NavigationGrid:
        return NavigationGrid(6, 6, (0.0, 0.0), 0.25, frozenset())

    def note(self, text: str) -> None:
        self.notes.append(text)


class Chat:
    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def invoke(self, prompt: str) -> Any:
        self.prompts.append(prompt)
        return self.reply


def opened(host: ScriptedHost) -> list[str | None]:
    return [oid for action, oid in host.actions if action == "Open"]


def test_llm_locator_searches_the_suggested_places_first() -> None:
    host = ScriptedHost("Fridge|1")
    chat = Chat("Most likely the fridge, maybe a drawer.")
    assert LLMLocator(chat, dialogue="an apple please")(host, APPLE)
    assert opened(host) == ["Fridge|1"]
    assert "Kitchen" in chat.prompts[0] and "an apple please" in chat.prompts[0]
    assert any("found Apple at Fridge|1" in n for n in host.notes)


def test_llm_locator_falls_back_to_exploring_everything() -> None:
    host = ScriptedHost("Drawer|1")
    assert LLMLocator(Chat("in the fridge"))(host, APPLE)
    assert opened(host) == ["Fridge|1", "Cabinet|1", "Cabinet|2", "Drawer|1"]


def test_random_locator_has_a_budget_and_no_fallback() -> None:
    host = ScriptedHost("Drawer|1")
    assert not RandomLocator(seed=0, max_visits=0)(host, APPLE)
    assert host.actions == []
    assert RandomLocator(seed=0, max_visits=6)(ScriptedHost("Drawer|1"), APPLE)


def test_search_survives_unreachable_places_and_stops_at_the_limit() -> None:
    host = ScriptedHost("Cabinet|2", stuck=frozenset({"Cabinet|1"}))
    assert search_places(host, APPLE, ["Cabinet"])
    assert opened(host) == ["Cabinet|2"] and any("could not look into Cabinet|1" in n for n in host.notes)
    with pytest.raises(EpisodeLimit):
        explore(ScriptedHost("nowhere", budget=3), APPLE)


def _members(protocol: type) -> set[str]:
    names = set(getattr(protocol, "__annotations__", {}))
    for klass in protocol.__mro__:
        if klass is object or klass.__name__ in ("Protocol", "Generic"):
            continue
        names |= set(getattr(klass, "__annotations__", {}))
        names |= {n for n, v in vars(klass).items() if not n.startswith("_") and (callable(v) or isinstance(v, property))}
    return names


@pytest.mark.parametrize("protocol", [SearchHost, MacroHost])
def test_the_executor_implements_its_interfaces(protocol: type) -> None:
    env = SymbolicEnv()
    env.reset(1, room_type="Kitchen")
    executor = Executor(env)
    for name in sorted(_members(protocol)):
        assert hasattr(executor, name), f"Executor lacks {protocol.__name__}.{name}"
        wanted = getattr(protocol, name, None)
        if inspect.isfunction(wanted):
            have = inspect.signature(getattr(executor, name)).parameters
            for param in list(inspect.signature(wanted).parameters)[1:]:
                assert param in have, f"Executor.{name} lacks parameter {param}"
    assert executor.room_type == "Kitchen"
    assert executor.position == env.observe().position


def _loaded_after(module: str) -> set[str]:
    """The tools modules a fresh interpreter has loaded after importing `module`."""
    code = f"import sys, {module}; print(' '.join(m for m in sys.modules if m.startswith('helper_agent.tools')))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return set(out.split())


def test_no_import_cycle_in_the_tools_layer() -> None:
    for name in ("errors", "grounding", "macros", "search", "locator"):
        assert "helper_agent.tools.executor" not in _loaded_after(f"helper_agent.tools.{name}"), name
    assert "helper_agent.tools.locator" not in _loaded_after("helper_agent.tools.executor")
