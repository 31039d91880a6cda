"""Distractor objects: grow a household without changing what its task asks for.

EmbodiedRAG's claim is about large homes: the bigger the scene graph, the more a retrieved subgraph
saves over the whole graph. `add_distractors(state, n, seed)` adds `n` small loose objects lying on
the floor at walkable cells, deterministically from `seed` (the first `n` of one fixed sequence, so
the 100 distractors of a scene are among its 300 and its 1,000).

Why they do not interfere with the TEACh goals (the benchmark still checks the same goals):
- their classes (`DISTRACTOR_CLASSES`) have no state a task checks: not receptacles, not
  sliceable, cookable, dirtyable, fillable, toggleable, breakable or usable up, and no knife (a
  knife would change which knife a slicer fetches);
- a class the episode's task or program names is excluded by the caller (`exclude=`): "Put all
  RemoteControl on a Sofa" counts every remote in the room, so no remote is added to that scene;
- they lie on the floor (no parent), so they take no place in any receptacle, never block a walkable
  cell (small objects do not block the floor) and are never inside anything a task opens.
They are seen like any other object, so they enter the agent's observations and its scene graph.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from helper_agent.world.catalog import Catalog, load_catalog
from helper_agent.world.generator import add_object
from helper_agent.world.state import WorldState

#: Small objects found in homes whose state no TEACh task reads (checked against the catalog below).
DISTRACTOR_CLASSES: tuple[str, ...] = (
    "AlarmClock", "BaseballBat", "BasketBall", "Boots", "CD", "CreditCard", "Dumbbell",
    "KeyChain", "Newspaper", "Pillow", "RemoteControl", "TeddyBear", "TennisRacket", "Watch",
)

_STATEFUL = ("receptacle", "openable", "toggleable", "sliceable", "cookable", "dirtyable", "can_fill_with_liquid",
             "breakable", "can_be_used_up")


def stateless(otype: str, catalog: Catalog) -> bool:
    """Pickupable and without any property a task checks or an action changes (besides its place)."""
    info = catalog.get(otype)
    return bool(info.pickupable) and not any(getattr(info, flag, False) for flag in _STATEFUL)


def distractor_classes(exclude: Iterable[str] = (), catalog: Catalog | None = None) -> list[str]:
    """The distractor classes usable in a scene whose task names the classes in `exclude`."""
    catalog = catalog or load_catalog()
    banned = set(exclude)
    return [t for t in DISTRACTOR_CLASSES if t in catalog and t not in banned and stateless(t, catalog)]


def add_distractors(state: WorldState, n: int, seed: int | str, *, exclude: Iterable[str] = (),
                    catalog: Catalog | None = None) -> list[str]:
    """Add `n` distractors to `state` in place; returns their ids (deterministic from `seed`).

    Cells are drawn among the walkable cells other than the agent's (several objects may share a
    cell); classes uniformly from `distractor_classes(exclude)`.
    """
    if n <= 0:
        return []
    catalog = catalog or load_catalog()
    classes = distractor_classes(exclude, catalog)
    if not classes:
        raise ValueError("no distractor class is left once the task's classes are excluded")
    cells = [(i, j) for i in range(state.width) for j in range(state.depth)
             if state.walkable((i, j)) and (i, j) != state.agent.cell]
    if not cells:
        raise ValueError("the scene has no free floor cell for distractors")
    rng = random.Random(f"distractors:{seed}")
    added: list[str] = []
    for _ in range(n):
        otype = rng.choice(classes)
        x, z = state.cell_center(rng.choice(cells))
        # Jitter within the cell so that ids (which encode the position) rarely need nudging.
        x += rng.uniform(-0.1, 0.1)
        z += rng.uniform(-0.1, 0.1)
        obj = add_object(state.objects, otype, (x, 0.05, z))
        added.append(obj.object_id)
    return added
