"""`--executor NAME` -> an executor: this process or a local pool (`executors.py`), or Ray (`ray_executor.py`).

Apart from `executors.py` because `ray_executor` builds on that module: choosing Ray there closed the
import circle `executors <-> ray_executor` (issue 53). Here both are imported from above.
"""

from __future__ import annotations

from helper_agent.evals.engine.executors import Executor, ExecutorUnavailable, local_executor

EXECUTORS = ("local", "ray")


def make_executor(name: str, workers: int = 1, *, ray_address: str | None = None, ray_num_cpus: float = 1.0,
                  ray_num_gpus: float = 0.0) -> Executor:
    """The executor `--executor NAME` names. For `ray`, `workers` sizes the local cluster started when no
    `ray_address` is given (episodes at a time = its CPUs / `ray_num_cpus`)."""
    if name == "local":
        return local_executor(workers)
    if name == "ray":
        try:  # deferred: Ray is an optional extra, imported only by runs that ask for it
            from helper_agent.evals.engine.ray_executor import RayExecutor
        except ModuleNotFoundError as exc:
            if exc.name != "ray":
                raise
            raise ExecutorUnavailable("--executor ray needs Ray: pip install 'helper-agent[ray]'") from None
        return RayExecutor(address=ray_address, num_cpus=ray_num_cpus, num_gpus=ray_num_gpus, local_workers=workers)
    raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {name!r}")
