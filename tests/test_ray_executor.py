"""Episodes as Ray tasks on a local Ray cluster the tests start and stop (skipped without the `ray` extra).

- a gold-planner run through the Ray executor writes the same metrics.json as the local pool;
- a Ray worker killed mid-episode: the task runs again, the run's metrics equal an uninterrupted run;
  with no retries left the episode is recorded as an error, not lost;
- `kill -9` of `helper eval ... --executor ray`: the same command resumes and ends equal to a clean run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from helper_agent.evals.benchmark import generate_benchmark  # noqa: E402
from helper_agent.evals.engine import runner  # noqa: E402
from helper_agent.evals.engine.executor_factory import make_executor  # noqa: E402
from helper_agent.evals.engine.executors import ExecutorUnavailable  # noqa: E402
from helper_agent.evals.engine.ray_executor import RayExecutor  # noqa: E402
from helper_agent.evals.engine.runner import run_episode, run_eval  # noqa: E402
from helper_agent.evals.engine.spec import EvalSpec  # noqa: E402
from helper_agent.evals.engine.store import ResultStore  # noqa: E402

# The killing job below is shipped to the workers by value (they cannot import this test module).
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

EPISODES = 40  # enough that a kill lands mid-run: gold episodes take a few hundredths of a second


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    generate_benchmark(out, seed=7, sizes={"train": 2, "valid_unseen": EPISODES})
    return out


@pytest.fixture(autouse=True)
def fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash")


# Before the cluster fixture starts a cluster in this process (connect() joins a running one).
def test_an_address_nobody_listens_at_fails_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(ExecutorUnavailable, match="no Ray cluster at --ray-address 127.0.0.1:1"):
        RayExecutor(address="127.0.0.1:1").connect()
    assert time.monotonic() - started < 10 and not ray.is_initialized()


@pytest.fixture(scope="module")
def cluster() -> Any:
    """One local two-CPU Ray cluster for the in-process tests, stopped at the end."""
    executor = RayExecutor(local_workers=2)
    executor.connect()
    try:
        yield executor
    finally:
        executor.close()
        assert not ray.is_initialized()


def _comparable(metrics: dict[str, Any]) -> dict[str, Any]:
    """metrics.json without what differs between two runs of the same episodes: the run folder and
    wall-clock seconds."""
    out = json.loads(json.dumps(metrics))
    out["run"].pop("out")
    out["per_episode"].pop("seconds")
    return out


def _gold(bench: Path, out: Path, **extra: Any) -> EvalSpec:
    return EvalSpec(mode="tfd", data=str(bench), split="valid_unseen", planner="gold", workers=2, out=str(out), **extra)


@pytest.fixture(scope="module")
def local_metrics(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The uninterrupted reference: the local process pool."""
    os.environ.setdefault("HELPER_EMBEDDINGS", "hash")
    return run_eval(_gold(bench, tmp_path_factory.mktemp("local") / "run"))


def test_ray_executor_writes_the_same_metrics_as_the_local_pool(bench: Path, tmp_path: Path, cluster: RayExecutor,
                                                                 local_metrics: dict[str, Any]) -> None:
    metrics = run_eval(_gold(bench, tmp_path / "ray"), executor=cluster)
    assert metrics["overall"]["SR"] == 100.0 and metrics["episodes"] == EPISODES
    assert _comparable(metrics) == _comparable(local_metrics)
    on_disk = json.loads((tmp_path / "ray" / "metrics.json").read_text())
    assert _comparable(on_disk) == _comparable(local_metrics)
    ids = [r["instance_id"] for r in ResultStore(tmp_path / "ray" / "results.jsonl")]
    assert len(ids) == len(set(ids)) == EPISODES


def _first_attempt_hangs(spec: dict[str, Any], path: str, chat_model: Any = None) -> dict[str, Any]:
    """`runner._job` for one chosen episode (named in `<out>/../victim`): every attempt appends its
    worker's pid to `<out>/../attempts`; the first one then hangs until the test kills its worker."""
    folder = Path(spec["out"]).parent
    if path == (folder / "victim").read_text():
        with (folder / "attempts").open("a") as fh:
            fh.write(f"{os.getpid()}\n")
        if len((folder / "attempts").read_text().split()) == 1:
            time.sleep(600)
    return run_episode(EvalSpec(**spec), path, chat_model)


def _kill_first_attempt(folder: Path, killed: list[int]) -> None:
    attempts = folder / "attempts"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (attempts.exists() and attempts.read_text().strip()):
        time.sleep(0.05)
    if attempts.exists() and attempts.read_text().strip():
        pid = int(attempts.read_text().split()[0])
        os.kill(pid, signal.SIGKILL)  # the Ray worker process running the victim's first attempt
        killed.append(pid)


def _run_with_a_killed_worker(bench: Path, folder: Path, executor: RayExecutor,
                              monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], list[int]]:
    victim = sorted((bench / "tfd_instances" / "valid_unseen").glob("*.json"))[3]
    (folder / "victim").write_text(str(victim))
    monkeypatch.setattr(runner, "_job", _first_attempt_hangs)
    killed: list[int] = []
    killer = threading.Thread(target=_kill_first_attempt, args=(folder, killed), daemon=True)
    killer.start()
    metrics = run_eval(_gold(bench, folder / "run"), executor=executor)
    killer.join(5)
    return metrics, killed


def test_a_killed_worker_is_retried_and_the_metrics_equal_an_uninterrupted_run(
        bench: Path, tmp_path: Path, cluster: RayExecutor, local_metrics: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    metrics, killed = _run_with_a_killed_worker(bench, tmp_path, cluster, monkeypatch)
    attempts = [int(p) for p in (tmp_path / "attempts").read_text().split()]
    assert killed and attempts[0] == killed[0]
    assert len(attempts) == 2 and attempts[1] != attempts[0]  # run again, in another worker process
    assert _comparable(metrics) == _comparable(local_metrics)
    ids = [r["instance_id"] for r in ResultStore(tmp_path / "run" / "results.jsonl")]
    assert len(ids) == len(set(ids)) == EPISODES


def test_an_episode_whose_retries_are_spent_is_recorded_as_an_error(
        bench: Path, tmp_path: Path, cluster: RayExecutor, monkeypatch: pytest.MonkeyPatch) -> None:
    no_retries = RayExecutor(local_workers=2, max_retries=0)  # joins the cluster the fixture started
    metrics, killed = _run_with_a_killed_worker(bench, tmp_path, no_retries, monkeypatch)
    assert killed and len((tmp_path / "attempts").read_text().split()) == 1
    # an errored episode is not a result: it is counted beside the scored ones (and retried on resume)
    assert metrics["episodes"] == EPISODES - 1 and metrics["errors"] == metrics["ended_by"]["error"] == 1
    victim = Path((tmp_path / "victim").read_text()).name[: -len(".json")]
    record = ResultStore(tmp_path / "run" / "results.jsonl").records()[victim]
    assert record["ended_by"] == "error" and "lost by the executor" in record["error_message"]
    assert "WorkerCrashedError" in record["error_message"]


def test_make_executor_names_the_ray_executor() -> None:
    executor = make_executor("ray", 3, ray_num_cpus=0.5, ray_num_gpus=0.25)
    assert isinstance(executor, RayExecutor)
    assert (executor.local_workers, executor.num_cpus, executor.num_gpus) == (3, 0.5, 0.25)
    with pytest.raises(ValueError, match="executor must be one of"):
        make_executor("dask")


# ------------------------------------------------------------------------------------ kill -9 of the driver
def _descendants(pid: int) -> set[int]:
    """Every live process below `pid` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:80]
    except OSError:
        return "?"


def _lines(path: Path) -> int:
    return sum(1 for _ in path.open()) if path.exists() else 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_a_ray_driver_then_the_same_command_resumes(bench: Path, tmp_path: Path,
                                                               local_metrics: dict[str, Any]) -> None:
    args = [sys.executable, "-m", "helper_agent.cli", "eval", "tfd", "--data", str(bench), "--split", "valid_unseen",
            "--planner", "gold", "--workers", "2", "--executor", "ray", "--out", str(tmp_path / "run")]
    env = {**os.environ, "HELPER_EMBEDDINGS": "hash"}
    results = tmp_path / "run" / "results.jsonl"
    driver = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    cluster: set[int] = set()
    try:
        deadline = time.monotonic() + 180
        while _lines(results) < 2 and time.monotonic() < deadline and driver.poll() is None:
            cluster |= _descendants(driver.pid)
            time.sleep(0.02)
        cluster |= _descendants(driver.pid)
        driver.send_signal(signal.SIGKILL)
        assert driver.wait(10) == -signal.SIGKILL
        partial = _lines(results)
        assert 2 <= partial < EPISODES, f"the kill should land mid-run ({partial} of {EPISODES} written)"
        # The cluster the driver started goes with it: GCS, raylet and the episode workers at once.
        # (Ray's dashboard and runtime-env agents notice too, but wait up to 60 s on the dead GCS.)
        core = {pid for pid in cluster if "Agent" not in _name(pid)}
        deadline = time.monotonic() + 20
        while any(_alive(pid) for pid in core) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [(_name(pid), pid) for pid in core if _alive(pid)]

        resumed = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
    finally:
        for pid in cluster | _descendants(driver.pid):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert _comparable(metrics) == _comparable(local_metrics)
    ids = [json.loads(line)["instance_id"] for line in results.open()]
    assert len(ids) == len(set(ids)) == EPISODES  # nothing ran twice
