"""Evaluation worker processes that do not outlive their run.

A `ProcessPoolExecutor` worker whose parent is killed with SIGKILL (`kill -9` of `helper eval`) is
not told: it keeps running its episode, and its model, until the episode ends or forever if it
blocks. `watch_parent()`, called from the pool's initializer, starts a daemon thread that polls
whether the run that started the pool still runs (its pid, handed to the initializer); when it is gone
it ends the worker with `os._exit`, without running cleanup that could block on the dead parent's pipes.

On Linux, `pdeathsig=True` also asks the kernel (`prctl(PR_SET_PDEATHSIG, SIGKILL)`) to kill the
worker as soon as its parent dies. The kernel sends that signal when the *thread* that spawned the
worker exits, not the process, so it is off by default: a pool created from a short-lived thread
would lose its workers early.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from pathlib import Path

FORKSERVER_GUARD = "helper_agent.evals.engine.forkserver_guard"
"""Preloaded by the pool's forkserver first: ties the forkserver's life to the run's."""

PARENT_GONE_EXIT_CODE = 75
"""The exit status of a worker that ended itself because its parent died."""

_PR_SET_PDEATHSIG = 1
_watcher: threading.Thread | None = None
_lock = threading.Lock()


def watch_parent(poll_seconds: float = 1.0, *, parent: int | None = None, pdeathsig: bool = False) -> threading.Thread:
    """Exit this process (status `PARENT_GONE_EXIT_CODE`) within about `poll_seconds` after its
    parent dies. Starts one daemon thread per process (later calls return the same thread).

    `parent` is the pid of the process that spawned this one, as that process read it (pass it in
    the pool's `initargs`). Read here with `os.getppid()` instead, it was read too late: a spawned
    worker runs its initializer only after seconds of imports, and a run killed in those seconds left
    a worker already re-parented, whose watcher then took init for its parent and never fired (6 of 6
    kills right after the workers started left both running). A worker whose `parent` is already
    gone exits at once."""
    global _watcher
    if poll_seconds <= 0:
        raise ValueError("poll_seconds must be positive")
    with _lock:
        if _watcher is not None and _watcher.is_alive():
            return _watcher
        parent = os.getppid() if parent is None else parent
        if not running(parent):
            _parent_gone(parent)
        if pdeathsig:
            set_parent_death_signal(signal.SIGKILL)
        _watcher = threading.Thread(
            target=_watch, args=(parent, poll_seconds), name="helper-watch-parent", daemon=True
        )
        _watcher.start()
        return _watcher


def _watch(parent: int, poll_seconds: float) -> None:
    while True:
        if not running(parent):
            _parent_gone(parent)
        time.sleep(poll_seconds)


def running(pid: int) -> bool:
    """Whether process `pid` runs (a killed one not yet reaped by its own parent, a zombie, does not).

    Asked of the pid itself, not of `os.getppid()`: a pool's worker may be a grandchild of its run (a
    forkserver's child), and a killed run stays a zombie until whoever started it reaps it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):  # no /proc (not Linux): ask the kernel whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _parent_gone(parent: int) -> None:
    try:
        sys.stderr.write(f"helper worker {os.getpid()}: parent {parent} is gone, exiting\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - stderr may be a closed pipe; exit regardless
        pass
    os._exit(PARENT_GONE_EXIT_CODE)


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Linux only: have the kernel send `sig` to this process when its parent thread exits.
    Returns whether it was set (False elsewhere or if the call failed)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    return True
