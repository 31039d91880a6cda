"""Each of HELPER's pre-condition checks, turned off, makes a specific scripted case fail that it
makes pass when on."""

from __future__ import annotations

import pytest

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.program import compile_program
from helper_agent.tools.executor import Executor, ExecutorConfig, Prechecks

CASES = {
    "knife_before_slice": (
        'tomato = InteractionObject("Tomato")\ntomato.slice()\n',
        "must be holding a knife",
    ),
    "open_before_place": (
        'apple = InteractionObject("Apple")\ncabinet = InteractionObject("Microwave")\napple.pickup_and_place(cabinet)\n',
        "must be open",
    ),
    "put_down_before_pickup": (
        'apple = InteractionObject("Apple")\napple.pickup()\npotato = InteractionObject("Potato")\npotato.pickup()\n',
        "already holding",
    ),
    # The faucet was left running and the fridge left open before the request.
    "skip_redundant_toggle": (
        'faucet = InteractionObject("Faucet")\nfaucet.toggle_on()\n',
        "already on",
    ),
    "skip_redundant_open": (
        'fridge = InteractionObject("Fridge")\nfridge.open()\n',
        "already open",
    ),
    "slice_before_sliced": (
        'tomato_slice = InteractionObject("TomatoSliced")\ntomato_slice.pickup()\n',
        "could not find",
    ),
}
SEEDS = (0, 1, 2)


def _run(program: str, seed: int, prechecks: Prechecks):
    env = SymbolicEnv()
    env.reset(seed, room_type="Kitchen")
    for obj in env.state.objects.values():
        if obj.object_type == "Faucet":
            obj.is_toggled = True
        if obj.object_type == "Fridge":
            obj.is_open = True
    config = ExecutorConfig(prechecks=prechecks, corrective_moves=False, retry_other_instance=False)
    return Executor(env, config=config).run(compile_program(program).subgoals)


@pytest.mark.parametrize("check", sorted(CASES))
@pytest.mark.parametrize("seed", SEEDS)
def test_precheck_is_what_makes_the_case_pass(check: str, seed: int) -> None:
    program, error_fragment = CASES[check]
    on = _run(program, seed, Prechecks())
    assert on.status == "done", f"{check} on: {on.error}"
    off = _run(program, seed, Prechecks(**{check: False}))
    assert off.status in ("failed", "not_found"), f"{check} off still succeeded"
    assert error_fragment in off.error


def test_all_checks_off_still_runs_a_program_without_traps() -> None:
    program = 'apple = InteractionObject("Apple")\ncounter = InteractionObject("CounterTop")\napple.pickup_and_place(counter)\n'
    for seed in SEEDS:
        assert _run(program, seed, Prechecks.off()).status == "done"
