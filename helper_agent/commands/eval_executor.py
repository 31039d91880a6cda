"""The `--executor` options `helper eval tfd|edh|progressive` share, and the executor they name."""

from __future__ import annotations

import typer

from helper_agent.evals.engine.executor_factory import EXECUTORS, make_executor
from helper_agent.evals.engine.executors import Executor

EXECUTOR = typer.Option("local", "--executor", help="Where episodes run: local (this machine, --workers "
                        "processes) or ray (one Ray task per episode; pip install 'helper-agent\\[ray]').")
RAY_ADDRESS = typer.Option(None, "--ray-address", help="With --executor ray: a running cluster (auto, HOST:6379 "
                           "or ray://HOST:10001); default: start a local one that runs --workers episodes at once.")
RAY_NUM_CPUS = typer.Option(1.0, "--ray-num-cpus", help="With --executor ray: CPUs each episode's task reserves.")
RAY_NUM_GPUS = typer.Option(0.0, "--ray-num-gpus", help="With --executor ray: GPUs each episode's task reserves "
                            "(e.g. 0.25: four AI2-THOR episodes share a GPU).")


def executor_from_options(executor: str, workers: int, ray_address: str | None, ray_num_cpus: float,
                          ray_num_gpus: float) -> Executor:
    """The executor the options name; a `--ray-*` option without `--executor ray` is a usage error."""
    if executor not in EXECUTORS:
        raise typer.BadParameter(f"--executor takes {' or '.join(EXECUTORS)}")
    if executor != "ray" and (ray_address or ray_num_cpus != 1.0 or ray_num_gpus):
        raise typer.BadParameter("--ray-address, --ray-num-cpus and --ray-num-gpus need --executor ray")
    try:
        return make_executor(executor, workers, ray_address=ray_address, ray_num_cpus=ray_num_cpus,
                             ray_num_gpus=ray_num_gpus)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
