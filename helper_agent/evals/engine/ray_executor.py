"""Episodes as Ray tasks: `helper eval ... --executor ray` (the `ray` extra).

Each episode is one task, `episode_task(job, spec, path)`, with the resources the run asks for
(`--ray-num-cpus`, `--ray-num-gpus`: an AI2-THOR episode wants a GPU share). The driver submits a
window of tasks (twice what the cluster can run at once), collects records as tasks finish and writes
them itself (`runner.run_eval`), so a cluster run resumes, reports and scores like a local one.

Faults:
- A worker process or node that dies mid-episode: Ray runs the task again elsewhere (`max_retries`,
  system failures only; an episode's own errors are records, not exceptions, so they are never
  retried). Retries exhausted, the episode is handed back as lost and recorded as an error.
- The driver killed (`kill -9`): a local cluster it started dies with it (Ray ties its processes to
  the driver's life), a remote cluster drops the job's tasks; results written so far stay, and the
  same command resumes.

Connecting: `address=None` starts a local cluster sized for `local_workers` episodes at a time and
stops it on `close()`; `--ray-address auto` (or `ray://host:10001`, or `host:6379`) joins a running
one (`ray start --head` / `ray start --address`) and leaves it running. Every node needs this package
installed (`pip install helper-agent[ray]`) and the dataset, and the run folder's memory (or a Chroma
server, `HELPER_CHROMA_HOST`), at the same paths; the driver's `HELPER_*` settings go to the workers
with the job (`runtime_env`), so they use the model, grammar and embeddings it was started with.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from typing import Any

import ray
from ray.exceptions import RayError, RayTaskError

from helper_agent.evals.engine.executors import Executor, ExecutorUnavailable, Job, Outcome

MAX_RETRIES = 3
"""Times a task is run again after its worker or node died (Ray's default for tasks)."""

LOCAL_START_ATTEMPTS = 3
"""Tries to start a local cluster (see `RayExecutor._start_local`)."""


@ray.remote
def episode_task(job: Job, spec: dict[str, Any], path: str) -> dict[str, Any]:
    """One episode on a Ray worker (workers are reused, so models and memories load once per worker)."""
    return job(spec, path)


def forwarded_env() -> dict[str, str]:
    """The driver's settings that workers must share: every `HELPER_*` variable (model, grammar,
    embeddings, Chroma server, budgets), and tokenizers kept to one thread per worker."""
    env = {key: value for key, value in os.environ.items() if key.startswith("HELPER_")}
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    return env


class RayExecutor(Executor):
    name = "ray"

    def __init__(self, address: str | None = None, *, num_cpus: float = 1.0, num_gpus: float = 0.0,
                 local_workers: int = 1, max_retries: int = MAX_RETRIES) -> None:
        if num_cpus <= 0 or num_gpus < 0:
            raise ValueError("--ray-num-cpus must be positive and --ray-num-gpus not negative")
        self.address = address
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        self.local_workers = max(local_workers, 1)
        self.max_retries = max_retries
        self._started = False  # this executor started the cluster (and stops it on close)

    def connect(self) -> None:
        """Join the cluster at `address`, or start a local one; once per executor."""
        if ray.is_initialized():
            return
        options: dict[str, Any] = {"runtime_env": {"env_vars": forwarded_env()}, "logging_level": "WARNING",
                                   "include_dashboard": False}
        if self.address:
            _check_reachable(self.address)
            try:
                ray.init(address=self.address, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorUnavailable(f"no Ray cluster at --ray-address {self.address}: {_first_line(exc)} "
                                          "(start one with `ray start --head`, or leave --ray-address out "
                                          "for a local one)") from None
        else:
            self._start_local(options)
            self._started = True

    def _start_local(self, options: dict[str, Any], attempts: int = LOCAL_START_ATTEMPTS) -> None:
        """Start a local cluster. Ray waits a fixed 30 s for its raylet to register, which a busy
        machine can miss (a 2-core machine under load 15 did): a start that timed out is tried again."""
        for attempt in range(1, attempts + 1):
            try:
                ray.init(num_cpus=self.local_workers * self.num_cpus, num_gpus=None if self.num_gpus else 0,
                         object_store_memory=100 * 1024**2, **options)
                return
            except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for this timeout
                ray.shutdown()
                if "timed out during startup" not in str(exc):
                    raise
                if attempt == attempts:
                    raise ExecutorUnavailable(f"the local Ray cluster did not start ({attempts} tries): "
                                              f"{_first_line(exc)}") from None

    def slots(self) -> int:
        """Episodes the cluster can run at once with the per-task resources (at least 1)."""
        resources = ray.cluster_resources()
        fits = [resources.get("CPU", 0.0) / self.num_cpus]
        if self.num_gpus:
            fits.append(resources.get("GPU", 0.0) / self.num_gpus)
        return max(int(min(fits)), 1)

    def run(self, job: Job, spec: dict[str, Any], paths: list[str]) -> Iterator[Outcome]:
        self.connect()
        task = episode_task.options(num_cpus=self.num_cpus, num_gpus=self.num_gpus, max_retries=self.max_retries,
                                    retry_exceptions=False)
        window = 2 * self.slots()
        queue = list(paths)
        pending: dict[ray.ObjectRef, str] = {}
        try:
            while queue or pending:
                while queue and len(pending) < window:
                    path = queue.pop(0)
                    pending[task.remote(job, spec, path)] = path
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    path = pending.pop(ref)
                    try:
                        record = ray.get(ref)
                    except RayTaskError as exc:  # the episode's job raised (a store or simulator down):
                        raise exc.cause from exc  # stop with its own error, as a local run does
                    except RayError as exc:  # its worker or node died more often than the retries allow
                        yield Outcome(path, lost=f"{type(exc).__name__}: {_first_line(exc)}")
                        continue
                    yield Outcome(path, record)
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        if self._started and ray.is_initialized():
            ray.shutdown()
        self._started = False


def _check_reachable(address: str, seconds: float = 5.0) -> None:
    """Fail fast on a cluster address nobody listens at: `ray.init` would keep retrying it for minutes.
    (`auto` is looked up by Ray itself, which says at once when there is no cluster.)"""
    if address == "auto":
        return
    hostport = address.split("://", 1)[-1].rsplit("/", 1)[0]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ExecutorUnavailable(f"--ray-address {address}: give HOST:PORT, ray://HOST:PORT or auto")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as exc:
        raise ExecutorUnavailable(f"no Ray cluster at --ray-address {address}: {exc.strerror or exc} "
                                  "(start one with `ray start --head`, or leave --ray-address out for a local one)") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
