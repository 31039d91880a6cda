"""Evaluation worker processes that do not outlive their run.

A `ProcessPoolExecutor` worker whose parent is killed with SIGKILL (`kill -9` of `helper eval`) is
not told: it keeps running its episode, and its model, until the episode ends or forever if it
blocks. `watch_parent()`, called from the pool's initializer, starts a daemon thread that polls
`os.getppid()`; when the parent is gone (the worker was re-parented to init or a subreaper) it ends
the worker with `os._exit`, without running cleanup that could block on the dead parent's pipes.

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

PARENT_GONE_EXIT_CODE = 75
"""The exit status of a worker that ended itself because its parent died."""

_PR_SET_PDEATHSIG = 1
_watcher: threading.Thread | None = None
_lock = threading.Lock()


def watch_parent(poll_seconds: float = 1.0, *, pdeathsig: bool = False) -> threading.Thread:
    """Exit this process (status `PARENT_GONE_EXIT_CODE`) within about `poll_seconds` after its
    parent dies. Starts one daemon thread per process (later calls return the same thread)."""
    global _watcher
    if poll_seconds <= 0:
        raise ValueError("poll_seconds must be positive")
    with _lock:
        if _watcher is not None and _watcher.is_alive():
            return _watcher
        parent = os.getppid()
        if pdeathsig:
            set_parent_death_signal(signal.SIGKILL)
        _watcher = threading.Thread(
            target=_watch, args=(parent, poll_seconds), name="helper-watch-parent", daemon=True
        )
        _watcher.start()
        return _watcher


def _watch(parent: int, poll_seconds: float) -> None:
    while True:
        if os.getppid() != parent:
            try:
                sys.stderr.write(f"helper worker {os.getpid()}: parent {parent} is gone, exiting\n")
                sys.stderr.flush()
            except Exception:  # noqa: BLE001 - stderr may be a closed pipe; exit regardless
                pass
            os._exit(PARENT_GONE_EXIT_CODE)
        time.sleep(poll_seconds)


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
