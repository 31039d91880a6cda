"""Evaluation workers end when their run is killed (`kill -9` of `helper eval ... --workers 2`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helper_agent.evals.engine import workers

RUN = textwrap.dedent(
    """
    import os, sys, time
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from helper_agent.evals.engine.executors import worker_init as _worker_init

    def job(folder):
        with open(os.path.join(folder, f"{os.getpid()}.pid"), "w") as fh:
            fh.write(str(os.getppid()))
        time.sleep(300)  # a long episode

    if __name__ == "__main__":
        pool = ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn"), initializer=_worker_init)
        futures = [pool.submit(job, sys.argv[1]) for _ in range(2)]
        time.sleep(300)
    """
)


def _alive(pid: int) -> bool:
    """A running process (a zombie waiting for a reaper counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_for(predicate, seconds: float) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_exit_after_their_parent_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text(RUN)
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    parent = subprocess.Popen([sys.executable, str(script), str(pids_dir)], cwd=tmp_path)
    worker_pids: list[int] = []
    try:
        assert _wait_for(lambda: len(list(pids_dir.glob("*.pid"))) == 2, 90), "the two workers never started"
        worker_pids = [int(p.stem) for p in pids_dir.glob("*.pid")]
        assert all(int((pids_dir / f"{pid}.pid").read_text()) == parent.pid for pid in worker_pids)
        assert all(_alive(pid) for pid in worker_pids)

        parent.send_signal(signal.SIGKILL)
        assert parent.wait(10) == -signal.SIGKILL
        killed_at = time.monotonic()
        # watch_parent polls every second: allow that plus scheduling slack on a busy machine.
        assert _wait_for(lambda: not any(_alive(pid) for pid in worker_pids), 10), (
            f"workers still running: {[pid for pid in worker_pids if _alive(pid)]}"
        )
        assert time.monotonic() - killed_at < 10
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for pid in worker_pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_watch_parent_refuses_a_non_positive_poll() -> None:
    with pytest.raises(ValueError, match="poll_seconds"):
        workers.watch_parent(poll_seconds=0)
