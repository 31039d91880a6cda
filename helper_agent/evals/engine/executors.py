"""Where a run's episodes execute: in the driver's process, in a local process pool, or on a Ray cluster.

An executor only runs episodes; it never writes. `runner.run_eval` (the driver) hands it a job (a
module-level function of a spec dict and an instance path that returns the episode's record) and the
paths still to run, and appends each outcome to `results.jsonl` as it arrives, in completion order.
So resuming, reports and metrics do not depend on the executor, and a run started on one executor
can be resumed on another.

- `SerialExecutor`: one episode after another in this process (the only choice for an in-process
  chat model handed to `run_eval`).
- `PoolExecutor`: `--workers N` processes on this machine (forked from a forkserver where there is
  one, else spawned); each ends itself when the driver is killed (`workers.watch_parent`).
- `RayExecutor` (`ray_executor.py`, the `ray` extra): each episode is a Ray task on a cluster.

`executor_factory.make_executor` picks one by name (`--executor`); it lives apart so that this module,
which `ray_executor` builds on, never imports `ray_executor` back (issue 53's import circle).

An outcome is either the job's record or, when the executor lost the episode (a Ray worker or node
died more often than the task's retries allow), the reason; the driver turns the latter into an
error record. An exception the job itself raises (the memory store or the simulator is down) stops
the run, as it does in the driver's own process.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.context import BaseContext
from typing import Any

from helper_agent.config import get_settings
from helper_agent.evals.engine.workers import FORKSERVER_GUARD, set_parent_death_signal, watch_parent

Job = Callable[[dict[str, Any], str], dict[str, Any]]
"""One episode: (the run's spec as a dict, an instance path) -> its record. A module-level function,
so that a process pool or Ray can ship it by reference."""


class ExecutorUnavailable(RuntimeError):
    """The executor a run asks for cannot be used here: Ray is not installed, or its cluster cannot be
    reached; the message says which and what to do."""


@dataclass(frozen=True)
class Outcome:
    """One finished episode: its record, or why the executor lost it (`record` is None then)."""

    path: str
    record: dict[str, Any] | None = None
    lost: str | None = None


class Executor:
    """Runs episodes somewhere and yields their outcomes as they finish (any order). `close()` lets go
    of what it holds (a Ray cluster it started); `with` closes it."""

    name = "local"

    def run(self, job: Job, spec: dict[str, Any], paths: list[str]) -> Iterator[Outcome]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SerialExecutor(Executor):
    """Every episode in this process, one after another."""

    def run(self, job: Job, spec: dict[str, Any], paths: list[str]) -> Iterator[Outcome]:
        for path in paths:
            yield Outcome(path, job(spec, path))


def worker_init(parent: int | None = None, environ: dict[str, str] | None = None) -> None:
    """Set up an evaluation worker process: end it with the run that spawned it (`parent`, the pid
    the run passed in), run with the run's environment (`environ`, as it was when the pool started),
    and keep the tokenizer and torch to one thread each (the run's parallelism is its workers).

    The environment is handed over because a forkserver's child inherits the forkserver's, which is
    the run's when the forkserver started (the first pool of the process), not when this pool did: a
    second run in one process with another HELPER_LLM_GRAMMAR got the first run's. The settings the
    forkserver may have read are dropped for the same reason."""
    if environ is not None:
        os.environ.clear()
        os.environ.update(environ)
        get_settings.cache_clear()
    # A worker forked by the forkserver dies with it (the kernel's signal: the forkserver has one
    # thread, so the signal's thread caveat does not apply), and the forkserver dies with the run
    # (`forkserver_guard`); the watch below covers a spawned worker and any gap.
    if parent is not None and os.getppid() != parent:
        set_parent_death_signal(signal.SIGKILL)
    watch_parent(parent=parent)  # end this worker when the run that spawned it is killed
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import torch  # deferred: a worker that never embeds need not pay for importing torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass


def pool_context() -> BaseContext:
    """The pool's start method: a forkserver that has imported the driver's main module and this one,
    where the platform has one; else spawn.

    A spawned worker imports the driver's main module (`helper_agent.cli`: seconds on a loaded
    machine) before its initializer runs, so a driver killed in those seconds left workers that
    learnt of it only seconds later. Forked from the forkserver, a worker reaches its initializer in
    milliseconds, and the forkserver itself ends when the driver does."""
    if "forkserver" not in get_all_start_methods():
        return get_context("spawn")
    main = getattr(getattr(sys.modules.get("__main__"), "__spec__", None), "name", None)
    context = get_context("forkserver")
    context.set_forkserver_preload([FORKSERVER_GUARD, "__main__", __name__,
                                    *([main] if main and not main.endswith("__main__") else [])])
    return context


class PoolExecutor(Executor):
    """`workers` spawned processes on this machine, at most two episodes queued per worker (so that a
    killed run has little in flight and the results file fills in roughly the split's order)."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.workers = workers

    def run(self, job: Job, spec: dict[str, Any], paths: list[str]) -> Iterator[Outcome]:
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=pool_context(), initializer=worker_init,
                                 initargs=(os.getpid(), dict(os.environ))) as pool:
            queue = list(paths)
            pending: dict[Future, str] = {}

            def submit() -> None:
                while queue and len(pending) < 2 * self.workers:
                    path = queue.pop(0)
                    pending[pool.submit(job, spec, path)] = path

            submit()
            while pending:
                completed, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in completed:
                    yield Outcome(pending.pop(future), future.result())
                submit()


def local_executor(workers: int) -> SerialExecutor | PoolExecutor:
    """The default: this process for one worker, a process pool for more."""
    return SerialExecutor() if workers <= 1 else PoolExecutor(workers)
