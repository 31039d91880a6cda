"""Executor overhead per subgoal, excluding the environment, and actions per episode.

Runs every task family's gold program in seeded scenes through the compiler and executor, timing
the environment's `step` separately (it is subtracted), so the figure is the executor's own work:
binding objects, pre-condition checks, path planning, tracking. Target (issue 3): under 1 ms per
subgoal. Run: `python benchmarks/executor_bench.py [--per-family 10] [--json figures.json]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.benchmark.episodes import prepare
from helper_agent.evals.benchmark.families import FAMILIES
from helper_agent.program import compile_program
from helper_agent.tools.executor import Executor


class TimedEnv(SymbolicEnv):
    """SymbolicEnv that accumulates the time spent inside step() and observe()."""

    env_seconds = 0.0

    def step(self, action, object_id=None):  # noqa: ANN001, ANN201
        start = time.perf_counter()
        outcome = super().step(action, object_id)  # its observation is timed in observe()
        TimedEnv.env_seconds += time.perf_counter() - start
        return outcome

    def observe(self, result=None):  # noqa: ANN001, ANN201
        start = time.perf_counter()
        obs = super().observe(result)
        TimedEnv.env_seconds += time.perf_counter() - start
        return obs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--per-family", type=int, default=10)
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()
    per_subgoal: list[float] = []
    actions: list[int] = []
    subgoals_total = 0
    successes = episodes = 0
    for family in sorted(FAMILIES):
        found, seed = 0, 0
        while found < args.per_family and seed < 500:
            seed += 1
            scene = prepare(family, seed)
            if scene is None:
                continue
            found += 1
            subgoals = compile_program(scene.instance.program).subgoals
            env = TimedEnv()
            env.reset(scene.state)
            TimedEnv.env_seconds = 0.0
            start = time.perf_counter()
            result = Executor(env).run(subgoals)
            total = time.perf_counter() - start
            own = total - TimedEnv.env_seconds
            per_subgoal.append(own / max(len(subgoals), 1) * 1000)
            actions.append(env.steps)
            subgoals_total += len(subgoals)
            episodes += 1
            successes += result.status == "done"
    figures = {
        "episodes": float(episodes),
        "subgoals": float(subgoals_total),
        "executor_ms_per_subgoal_mean": round(statistics.fmean(per_subgoal), 3),
        "executor_ms_per_subgoal_p95": round(sorted(per_subgoal)[int(0.95 * len(per_subgoal)) - 1], 3),
        "actions_per_episode_mean": round(statistics.fmean(actions), 1),
        "actions_per_episode_max": float(max(actions)),
        "executions_done": float(successes),
    }
    for key, value in figures.items():
        print(f"{key:32s} {value}")
    print(f"target: executor overhead < 1 ms per subgoal ({'met' if figures['executor_ms_per_subgoal_mean'] < 1 else 'NOT met'})")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
