"""Evaluation workers end when their run is killed (`kill -9` of `helper eval ... --workers 2`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from helper_agent.evals.engine import workers

ROOT = Path(__file__).resolve().parents[1]

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


def _marked(mark: str) -> list[int]:
    """Running processes whose environment holds `mark` (a run and everything it started)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if mark.encode() in (proc / "environ").read_bytes() and _alive(int(proc.name)):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "?"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helper_agent.evals.benchmark import generate_benchmark

    out = tmp_path_factory.mktemp("bench")
    generate_benchmark(out, seed=1, sizes={"valid_unseen": 8})
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("delay", [0.0, 0.5, 2.0])
def test_kill_9_of_an_eval_right_after_its_workers_start_leaves_no_process(bench: Path, tmp_path: Path,
                                                                          delay: float) -> None:
    """Issue 52: `kill -9` of `helper eval tfd --workers 2` right after its workers started left both
    workers and the resource tracker running (6 of 6 tries). Now nothing the run started is alive 5 s
    after the kill."""
    mark = f"helper-orphan-test-{uuid.uuid4().hex}"
    env = {**os.environ, "HELPER_ORPHAN_MARK": mark, "HELPER_EMBEDDINGS": "hash", "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen([sys.executable, "-m", "helper_agent.cli", "eval", "tfd", "--data", str(bench), "--agent",
                            "gold", "--workers", "2", "--out", str(tmp_path / "run")], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The workers: processes of the run beyond the driver, its resource tracker and its forkserver.
        assert _wait_for(lambda: len(_marked(mark)) >= 4 or run.poll() is not None, 300), "no workers started"
        assert run.poll() is None, "the run ended before it could be killed"
        time.sleep(delay)
        started = _marked(mark)
        run.send_signal(signal.SIGKILL)
        run.wait(10)
        time.sleep(5)
        left = {pid: _cmdline(pid) for pid in _marked(mark)}
        assert left == {}, f"alive 5 s after kill -9: {left} (of {started})"
    finally:
        for pid in _marked(mark):
            os.kill(pid, signal.SIGKILL)
