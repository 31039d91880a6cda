"""Finding objects the agent has not seen: an LLM locator, random search, and systematic exploration.

HELPER asks the LLM where an unseen object probably is, given the object and the dialogue, then
searches those places. The chat model is injected (any LangChain chat model); its prompt is the
template file `prompts/templates/locator.txt`. Random search (the ablation) visits the same places
in a seeded random order. Both fall back to systematic exploration: every closed receptacle, then
walking the room and looking around.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

from helper_agent.program.subgoals import ObjectRef
from helper_agent.prompts import load_template
from helper_agent.tools.executor import EpisodeLimit, Executor, StepFailed


def _found(executor: Executor, ref: ObjectRef) -> bool:
    return bool(executor._candidates(ref))


def _receptacle_classes(executor: Executor) -> list[str]:
    types = {t.object_type for t in executor.tracker.objects.values() if not t.gone}
    return sorted(t for t in types if executor.catalog.get(t).receptacle and not executor.catalog.get(t).pickupable)


def search_places(executor: Executor, ref: ObjectRef, classes: list[str]) -> bool:
    """Visit instances of each receptacle class in order (nearest first), opening closed ones."""
    for cls in classes:
        ax, az = executor._obs.position
        instances = sorted(
            executor.tracker.of_type(cls),
            key=lambda t: (math.hypot(t.position[0] - ax, t.position[2] - az), t.object_id),
        )
        for tracked in instances:
            if _look_into(executor, tracked.object_id) and _found(executor, ref):
                executor.note(f"locator: found {ref.object_class} at {tracked.object_id}")
                return True
    return _found(executor, ref)


def _look_into(executor: Executor, oid: str) -> bool:
    try:
        executor._walk_to(oid, force=False, swing=executor.catalog.get(executor.env_type(oid)).openable)
        tracked = executor.tracker.objects[oid]
        if executor.catalog.get(tracked.object_type).openable and not tracked.has("open"):
            executor.act("Open", oid)
        return True
    except StepFailed as failed:
        executor.note(f"locator: could not look into {oid}: {failed.error}")
        return False


def explore(executor: Executor, ref: ObjectRef) -> bool:
    """Systematic search: open every closed receptacle seen, then walk the room looking around."""
    for tracked in list(executor.tracker.objects.values()):
        if _found(executor, ref):
            return True
        if executor.catalog.get(tracked.object_type).openable and not tracked.has("open") and not tracked.gone:
            if not executor.catalog.get(tracked.object_type).pickupable:
                _look_into(executor, tracked.object_id)
    grid = executor.env.navigation_grid()
    waypoints = [
        (i, j)
        for i in range(1, grid.width, 4)
        for j in range(1, grid.depth, 4)
        if grid.walkable((i, j))
    ]
    for cell in waypoints:
        if _found(executor, ref):
            return True
        try:
            if executor.explore_to(cell):
                for _ in range(4):
                    executor.act("Turn Left")
                    if _found(executor, ref):
                        return True
        except StepFailed:
            continue
        for tracked in list(executor.tracker.objects.values()):
            info = executor.catalog.get(tracked.object_type)
            if info.openable and not info.pickupable and not tracked.has("open") and tracked.object_id not in executor.tracker.opened:
                _look_into(executor, tracked.object_id)
                if _found(executor, ref):
                    return True
    return _found(executor, ref)


class LLMLocator:
    """Asks a chat model for the likely places of an unseen object, then searches them."""

    def __init__(self, chat_model: Any, dialogue: str = "", max_places: int = 4) -> None:
        self.chat_model = chat_model
        self.dialogue = dialogue
        self.max_places = max_places
        self.calls: list[dict[str, str]] = []

    def suggest(self, executor: Executor, ref: ObjectRef) -> list[str]:
        places = _receptacle_classes(executor)
        prompt = load_template("locator.txt").format(
            room_type=getattr(getattr(executor.env, "state", None), "room_type", "house"),
            object_class=ref.object_class,
            dialogue=self.dialogue or "(nothing)",
            places=", ".join(places) or "(none yet)",
        )
        reply = self.chat_model.invoke(prompt)
        text = reply.content if hasattr(reply, "content") else str(reply)
        self.calls.append({"prompt": prompt, "reply": str(text)})
        return parse_places(str(text), places)[: self.max_places]

    def __call__(self, executor: Executor, ref: ObjectRef) -> bool:
        try:
            ordered = self.suggest(executor, ref)
            executor.note(f"locator suggests: {', '.join(ordered) or 'nothing usable'}")
            if ordered and search_places(executor, ref, ordered):
                return True
            return explore(executor, ref)
        except EpisodeLimit:
            raise


class RandomLocator:
    """HELPER's ablation: search without the LLM, visiting receptacles in a seeded random order.

    Like HELPER's random search it has a budget (`max_visits` receptacles) and no systematic
    fallback, so an object in an unlikely place may not be found.
    """

    def __init__(self, seed: int = 0, max_visits: int = 6) -> None:
        self.rng = random.Random(seed)
        self.max_visits = max_visits

    def __call__(self, executor: Executor, ref: ObjectRef) -> bool:
        candidates = [
            t.object_id
            for t in executor.tracker.objects.values()
            if not t.gone and executor.catalog.get(t.object_type).receptacle and not executor.catalog.get(t.object_type).pickupable
        ]
        candidates.sort()
        self.rng.shuffle(candidates)
        executor.note(f"random search over {min(len(candidates), self.max_visits)} receptacles")
        for oid in candidates[: self.max_visits]:
            if _look_into(executor, oid) and _found(executor, ref):
                return True
        return _found(executor, ref)


def parse_places(text: str, allowed: list[str]) -> list[str]:
    """Place names from a free-text answer, in the order they first appear, restricted to `allowed`."""
    lowered = text.lower()
    hits: list[tuple[int, str]] = []
    for place in allowed:
        pattern = re.escape(place.lower())
        match = re.search(pattern, lowered.replace(" ", ""))
        spaced = re.search(r"\b" + "\\s*".join(re.escape(w) for w in _split_camel(place)) + r"s?\b", lowered)
        positions = [m.start() for m in (match, spaced) if m is not None]
        if positions:
            hits.append((min(positions), place))
    hits.sort()
    return [p for _, p in hits]


def _split_camel(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z][a-z]*|[a-z]+", name)]
