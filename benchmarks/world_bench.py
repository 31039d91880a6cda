"""World speed: low-level actions per second and scene generation time, on one core.

Targets (issue 2): at least 5,000 actions/s and under 50 ms per generated scene.
Run: `python benchmarks/world_bench.py [--json figures.json]`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.world.actions import NAVIGATION_ACTIONS
from helper_agent.world.catalog import load_catalog
from helper_agent.world.generator import generate_scene

ROOMS = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")


def bench_generation(scenes: int) -> dict[str, float]:
    load_catalog()
    times = []
    for seed in range(scenes):
        start = time.perf_counter()
        generate_scene(seed, ROOMS[seed % 4])
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {
        "scene_gen_ms_mean": statistics.fmean(times),
        "scene_gen_ms_p50": times[len(times) // 2],
        "scene_gen_ms_p95": times[int(len(times) * 0.95) - 1],
    }


def bench_actions(actions: int, seed: int = 0, observe: bool = False) -> dict[str, float]:
    """A random mix: 80% navigation, 20% interactions; with `observe`, each step's observation is read."""
    rng = random.Random(seed)
    env = SymbolicEnv()
    env.reset(seed, room_type="Kitchen")
    sim = env.sim
    interactions = ("Pickup", "Place", "Open", "Close", "ToggleOn", "ToggleOff", "Slice", "Pour")
    ids = sorted(env.state.objects)
    nav_count = interact_count = 0
    start = time.perf_counter()
    for n in range(actions):
        if rng.random() < 0.8:
            outcome = env.step(rng.choice(NAVIGATION_ACTIONS))
            nav_count += 1
        else:
            oid = rng.choice(ids)
            if oid not in env.state.objects:
                ids = sorted(env.state.objects)
                oid = rng.choice(ids)
            outcome = env.step(rng.choice(interactions), oid)
            interact_count += 1
        if observe:
            _ = outcome.observation
        if n % 500 == 499:
            ids = sorted(env.state.objects)
    elapsed = time.perf_counter() - start
    # Perception separately: a full observation (all visible objects with distances).
    start = time.perf_counter()
    for _ in range(500):
        sim.visible_objects()
    observe_ms = (time.perf_counter() - start) / 500 * 1000
    return {
        "actions_per_s": actions / elapsed,
        "actions": float(actions),
        "navigation_actions": float(nav_count),
        "interaction_actions": float(interact_count),
        "observe_ms": observe_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--actions", type=int, default=50_000)
    parser.add_argument("--scenes", type=int, default=200)
    parser.add_argument("--json", dest="json_path", default=None, help="write the figures here as a flat JSON object")
    args = parser.parse_args()
    figures = {**bench_actions(args.actions), **bench_generation(args.scenes)}
    observed = bench_actions(args.actions // 5, observe=True)
    figures["actions_with_observation_per_s"] = observed["actions_per_s"]
    for key, value in figures.items():
        print(f"{key:24s} {value:12.2f}")
    print(f"targets: actions_with_observation_per_s >= 5000 "
          f"({'met' if figures['actions_with_observation_per_s'] >= 5000 else 'NOT met'}), actions_per_s >= 5000 ({'met' if figures['actions_per_s'] >= 5000 else 'NOT met'}), "
          f"scene_gen_ms_mean < 50 ({'met' if figures['scene_gen_ms_mean'] < 50 else 'NOT met'})")
    if args.json_path:
        with open(args.json_path, "w") as fh:
            json.dump(figures, fh, indent=1)


if __name__ == "__main__":
    main()
