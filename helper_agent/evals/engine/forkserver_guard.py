"""Imported by an evaluation pool's forkserver (its first preload): the forkserver dies with the run.

The forkserver ends by itself once it notices that the run is gone, but a forkserver busy importing
its preloads, or slow to be scheduled on a loaded machine, noticed it seconds late, and its workers
(which die with it) stayed as long. So on Linux the forkserver asks the kernel to kill it when the
thread that started it, the run's, exits (`prctl(PR_SET_PDEATHSIG, SIGKILL)`), and ends at once if
the run is already gone.

Importing this module has that effect on the importing process, so it acts only inside a
multiprocessing forkserver (`python -c "from multiprocessing.forkserver import main; ..."`), and
nothing else imports it.
"""

from __future__ import annotations

import os
import signal
import sys

from helper_agent.evals.engine.workers import set_parent_death_signal


def in_forkserver() -> bool:
    """Whether this process is a multiprocessing forkserver (it runs `-c` code that imported it)."""
    return sys.argv[:1] == ["-c"] and "multiprocessing.forkserver" in sys.modules


if in_forkserver():
    _run = os.getppid()
    if set_parent_death_signal(signal.SIGKILL) and _run == 1:
        os._exit(0)  # re-parented to init before the signal was set: the run is gone
