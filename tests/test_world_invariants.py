"""Property-based checks: the simulator's invariants hold under random action sequences."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.world.actions import ACTIONS, INTERACTION_ACTIONS
from helper_agent.world.metadata import export_state
from helper_agent.world.state import occupancy

ROOMS = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")


def _snapshot(env: SymbolicEnv) -> str:
    return json.dumps(export_state(env.state), sort_keys=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), room=st.sampled_from(ROOMS), data=st.data())
def test_random_actions_keep_invariants(seed: int, room: str, data: st.DataObject) -> None:
    env = SymbolicEnv()
    env.reset(seed, room_type=room)
    sim = env.sim
    for _ in range(data.draw(st.integers(20, 120), label="length")):
        action = data.draw(st.sampled_from(ACTIONS), label="action")
        object_id = None
        if action in INTERACTION_ACTIONS:
            nearby = [v.object_id for v in sim.visible_objects()]
            pool = nearby if nearby and data.draw(st.booleans(), label="near") else sorted(env.state.objects)
            object_id = data.draw(st.sampled_from(pool), label="object")
        before = _snapshot(env)
        steps, failures = env.steps, env.failures
        outcome = env.step(action, object_id)
        assert env.steps == steps + 1
        assert env.failures == failures + (0 if outcome.result.success else 1)
        if not outcome.result.success:
            assert _snapshot(env) == before, f"failed {action} changed the state: {outcome.result.error}"
        assert env.state.check_invariants() == []
        state = env.state
        # Nothing inside a closed receptacle is ever perceived.
        for view in outcome.observation.visible:
            assert not sim.is_hidden(view.object_id)
        # A held object is in no receptacle; every loose object is in exactly one place.
        if state.held_id is not None:
            assert state.objects[state.held_id].parent_id is None
            assert all(state.held_id not in o.contents for o in state.objects.values())
        if outcome.result.success and action == "Place":
            receptacle = state.objects[object_id]
            assert occupancy(receptacle.contents) <= max(env.catalog.get(receptacle.object_type).capacity, 1)
        assert env.steps >= 0 and env.failures >= 0 and env.failures <= env.steps
