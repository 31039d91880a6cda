"""The tools each kind of step needs: one table shared by the agent (which reads a request's steps
from its words, `understanding/scope.py`) and the requests benchmark (which reads them
from a case's goal, `evals/studies/requests/scope.py`), so that "needed by a step the request
implies" means the same thing on both sides.

| step    | tools it may change                              |
|---------|--------------------------------------------------|
| slice   | a knife (`Knife`, `ButterKnife`)                 |
| crack   | a knife                                          |
| clean   | the sink (`Sink`, `SinkBasin`) and its `Faucet`  |
| toast   | the `Toaster`                                    |
| cook    | `Microwave`, `StoveBurner`, `StoveKnob`, `Pan`   |
| boil    | `Pot`, `StoveBurner`, `StoveKnob`, sink, faucet  |
| coffee  | the `CoffeeMachine`                              |
| water   | sink, faucet, and a vessel to carry the water    |
| fill    | sink, faucet                                     |
| toggle, place | nothing                                    |

(The vessels are the catalog's pickupable types that hold liquid: `vessels()`.) Nothing here reads
English or a goal; the callers say which steps there are.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from helper_agent.world.catalog import load_catalog

__all__ = ["KNIVES", "SINK", "STEP_TOOLS", "STOVE", "tools_for", "vessels"]

KNIVES = ("Knife", "ButterKnife")
SINK = ("Sink", "SinkBasin", "Faucet")
STOVE = ("StoveBurner", "StoveKnob")


@cache
def vessels() -> tuple[str, ...]:
    """The catalog's pickupable types that hold liquid (a mug, a cup, a bowl, a pot, ...)."""
    catalog = load_catalog()
    return tuple(sorted(name for name, kind in catalog.types.items() if kind.pickupable and kind.can_fill_with_liquid))


STEP_TOOLS: dict[str, tuple[str, ...]] = {
    "slice": KNIVES,
    "crack": KNIVES,
    "clean": SINK,
    "toast": ("Toaster",),
    "cook": ("Microwave", *STOVE, "Pan"),
    "boil": ("Pot", *STOVE, *SINK),
    "coffee": ("CoffeeMachine",),
    "water": SINK,  # and the vessels, added in `tools_for`
    "fill": SINK,
    "toggle": (),
    "place": (),
}
"""The tools each step kind may change (the table of the module docstring)."""


def tools_for(steps: Iterable[str]) -> set[str]:
    """The tool classes the step kinds need (`STEP_TOOLS`; watering adds the vessels)."""
    tools: set[str] = set()
    for step in steps:
        tools.update(STEP_TOOLS[step])
        if step == "water":
            tools.update(vessels())
    return tools
