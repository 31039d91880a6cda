"""Finding objects the agent has not seen: an LLM locator and random search.

HELPER asks the LLM where an unseen object probably is, given the object and the dialogue, then
searches those places. The chat model is injected (any LangChain chat model); its prompt is the
template file `prompts/templates/locator.txt`. Random search (the ablation) visits the same places
in a seeded random order. The LLM locator falls back to systematic exploration (`search.explore`:
every closed receptacle, then walking the room and looking around).

A locator is called as `locator(executor, ref) -> bool` and uses only the executor's `SearchHost`
interface (`tools/search.py`), so this module does not depend on the executor.
"""

from __future__ import annotations

import random
import re
from typing import Any

from helper_agent.program.subgoals import ObjectRef
from helper_agent.prompts import load_template
from helper_agent.tools.search import SearchHost, explore, look_into, search_places

__all__ = ["LLMLocator", "RandomLocator", "explore", "parse_places", "search_places"]


def _receptacle_classes(host: SearchHost) -> list[str]:
    types = {t.object_type for t in host.tracker.objects.values() if not t.gone}
    return sorted(t for t in types if host.catalog.get(t).receptacle and not host.catalog.get(t).pickupable)


class LLMLocator:
    """Asks a chat model for the likely places of an unseen object, then searches them."""

    def __init__(self, chat_model: Any, dialogue: str = "", max_places: int = 4) -> None:
        self.chat_model = chat_model
        self.dialogue = dialogue
        self.max_places = max_places
        self.calls: list[dict[str, str]] = []

    def suggest(self, executor: SearchHost, ref: ObjectRef) -> list[str]:
        places = _receptacle_classes(executor)
        prompt = load_template("locator.txt").format(
            room_type=executor.room_type,
            object_class=ref.object_class,
            dialogue=self.dialogue or "(nothing)",
            places=", ".join(places) or "(none yet)",
        )
        reply = self.chat_model.invoke(prompt)
        text = reply.content if hasattr(reply, "content") else str(reply)
        self.calls.append({"prompt": prompt, "reply": str(text)})
        return parse_places(str(text), places)[: self.max_places]

    def __call__(self, executor: SearchHost, ref: ObjectRef) -> bool:
        """Search the suggested places, then everywhere; an `EpisodeLimit` ends the search (it propagates)."""
        ordered = self.suggest(executor, ref)
        executor.note(f"locator suggests: {', '.join(ordered) or 'nothing usable'}")
        if ordered and search_places(executor, ref, ordered):
            return True
        return explore(executor, ref)


class RandomLocator:
    """HELPER's ablation: search without the LLM, visiting receptacles in a seeded random order.

    Like HELPER's random search it has a budget (`max_visits` receptacles) and no systematic
    fallback, so an object in an unlikely place may not be found.
    """

    def __init__(self, seed: int = 0, max_visits: int = 6) -> None:
        self.rng = random.Random(seed)
        self.max_visits = max_visits

    def __call__(self, executor: SearchHost, ref: ObjectRef) -> bool:
        candidates = [
            t.object_id
            for t in executor.tracker.objects.values()
            if not t.gone and executor.catalog.get(t.object_type).receptacle and not executor.catalog.get(t.object_type).pickupable
        ]
        candidates.sort()
        self.rng.shuffle(candidates)
        executor.note(f"random search over {min(len(candidates), self.max_visits)} receptacles")
        for oid in candidates[: self.max_visits]:
            if look_into(executor, oid) and executor.can_bind(ref):
                return True
        return executor.can_bind(ref)


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
