"""Failure diagnosis: simulator error texts map to the right failure description (real embeddings)."""

from __future__ import annotations

import pytest

from helper_agent.memory.embeddings import get_embedder
from helper_agent.perception.diagnosis import FAILURE_KINDS, TextDiagnoser

MUG = "Mug|+1.25|+0.90|-0.50"
FRIDGE = "Fridge|+0.25|+0.80|+0.75"
CASES = [
    (f"{FRIDGE} is already on", "already_on"),
    ("Faucet|+2.62|+1.02|+0.25 is already off", "already_off"),
    (f"{FRIDGE} is blocked from opening: the agent is in the way of the door", "blocked_open"),
    (f"{FRIDGE} is blocked from closing: the agent is in the way of the door", "blocked_open"),
    (f"{MUG} is too far away to interact with (2.10 m > 1.5 m)", "too_far"),
    (f"No valid positions to place object found: {FRIDGE} is full", "no_space"),
    ("Agent was blocked from moving: collided with CounterTop|+1.00|+0.90|-1.25", "blocked_move"),
    ("Agent was blocked from moving: a wall is in the way", "blocked_move"),
    ("Agent must be holding a knife to slice", "needs_knife"),
    (f"Agent's hand is already holding {MUG}", "hands_full"),
    (f"{FRIDGE} must be open to place objects in it", "receptacle_closed"),
    ("Mug cannot be placed in Toaster", "wrong_receptacle"),
    (f"{MUG} is not visible from the current viewpoint", "not_visible"),
]


@pytest.fixture(scope="module")
def diagnoser() -> TextDiagnoser:
    return TextDiagnoser(get_embedder("local").embed)


@pytest.mark.parametrize(("error", "kind"), CASES)
def test_error_text_maps_to_failure_kind(diagnoser: TextDiagnoser, error: str, kind: str) -> None:
    result = diagnoser.diagnose(error)
    assert result.kind == kind, f"{error!r} -> {result.kind} ({result.score:.2f})"
    assert result.description == next(k.description for k in FAILURE_KINDS if k.key == kind)


def test_helpers_seven_kinds_are_all_present() -> None:
    keys = {k.key for k in FAILURE_KINDS}
    assert {"already_on", "already_off", "blocked_open", "blocks_interaction", "too_far", "no_space", "blocked_move"} <= keys
