"""Where episodes run, side by side: the local process pool against Ray tasks, and a served model under
concurrent workers.

Part `gold` (no LLM): the gold planner (an ORACLE) on the built-in benchmark's valid_unseen split,
`--episodes` (200) TfD episodes with `--workers` (2) episodes at a time, once on the local process
pool and once as Ray tasks on a local Ray cluster this script starts (`ray.init(num_cpus=workers)`).
Figures: seconds of each (Ray's with and without starting the cluster), the overhead ratio
ray/local (target: at most 1.3), and whether the two runs' metrics are equal (they must be).

Part `served` (the real LLM; hold `flock /tmp/llm.lock` around it): the local Qwen2.5-Coder-0.5B
served by llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`), with the
program grammar sent in each request (`HELPER_LLM_GRAMMAR=llama.cpp`); HELPER runs `--served-episodes`
(10) TfD episodes for each `--workers-list` value (1, 2, 4) against that one server. Figures per
worker count: episodes per minute and SR (SR must not change with concurrency). Each
`--slots-list` value names a server configuration with that many parallel slots: llama-cpp-python's
server has no such setting up to its current 0.3.x (one model object behind one lock: requests are
served one at a time), so only 1 can be run with it; `--server-command` takes another server
(`llama-server -np {slots} ...`) where one is installed.

Run: `python benchmarks/cluster_bench.py --part gold [--episodes 200] [--workers 2] [--json PATH]`
     `flock /tmp/llm.lock python benchmarks/cluster_bench.py --part served [--served-episodes 10]`
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from helper_agent.config import get_settings
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.executors import local_executor
from helper_agent.evals.engine.runner import run_eval
from helper_agent.evals.engine.spec import EvalSpec


def _comparable(metrics: dict[str, Any]) -> dict[str, Any]:
    """metrics.json less the run folder and wall-clock seconds (which differ between equal runs)."""
    out = json.loads(json.dumps(metrics))
    out["run"].pop("out", None)
    out["per_episode"].pop("seconds", None)
    out.pop("code", None)
    return out


# ------------------------------------------------------------------------------------ gold: local vs ray
def gold(data: Path, scratch: Path, episodes: int, workers: int) -> dict[str, float]:
    from helper_agent.evals.engine.ray_executor import RayExecutor  # deferred: the `ray` extra

    def spec(name: str) -> EvalSpec:
        return EvalSpec(mode="tfd", data=str(data), split="valid_unseen", limit=episodes, planner="gold",
                        workers=workers, feedback=1, out=str(scratch / name))

    start = time.perf_counter()
    with local_executor(workers) as pool:
        local = run_eval(spec("local"), executor=pool)
    local_seconds = time.perf_counter() - start

    start = time.perf_counter()
    with RayExecutor(local_workers=workers) as cluster:
        cluster.connect()
        connected = time.perf_counter()
        ray_metrics = run_eval(spec("ray"), executor=cluster)
        finished = time.perf_counter()
    ray_seconds, ray_start = finished - start, connected - start
    return {
        "gold_episodes": float(local["episodes"]),
        "gold_workers": float(workers),
        "local_seconds": round(local_seconds, 2),
        "ray_seconds": round(ray_seconds, 2),
        "ray_cluster_start_seconds": round(ray_start, 2),
        "ray_episodes_seconds": round(finished - connected, 2),
        "local_episodes_per_s": round(local["episodes"] / local_seconds, 2),
        "ray_episodes_per_s": round(ray_metrics["episodes"] / ray_seconds, 2),
        "overhead_ratio": round(ray_seconds / local_seconds, 3),
        "overhead_ratio_without_cluster_start": round((finished - connected) / local_seconds, 3),
        "local_SR": local["overall"]["SR"],
        "ray_SR": ray_metrics["overall"]["SR"],
        "metrics_equal": float(_comparable(local) == _comparable(ray_metrics)),
    }


# ------------------------------------------------------------------------------------ served: slots x workers
def free_port() -> int:
    """A free TCP port on 127.0.0.1 (tests/test_llm_server.py uses these server helpers too)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_serving(proc: subprocess.Popen, url: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the model server exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"the model server did not serve {url} within {seconds:g} s")


def stop_server(proc: subprocess.Popen, log: Any) -> None:
    """Stop the server (kill it if it does not stop within 15 s) and close its log."""
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


def server_command(template: str | None, model: Path, port: int, slots: int, n_ctx: int) -> list[str]:
    """The command that serves `model` on `port` with `slots` parallel slots."""
    if template:
        return template.format(model=model, port=port, slots=slots, n_ctx=n_ctx).split()
    if slots != 1:
        raise ValueError("llama-cpp-python's server has no parallel slots; pass --server-command for another server")
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
            "--n_threads", "2", "--n_ctx", str(n_ctx), "--model_alias", "qwen", "--verbose", "False",
            "--interrupt_requests", "False"]  # a streamed reply must not be cut when another worker asks


def served(data: Path, scratch: Path, episodes: int, workers_list: list[int], slots_list: list[int],
           template: str | None, n_ctx: int) -> dict[str, float]:
    from helper_agent.llm import assemble_local_model  # deferred: only this part needs the model

    model = assemble_local_model("0.5b")
    if get_settings().llm_grammar != "llama.cpp":
        raise ValueError("the served part sends each request the program grammar: HELPER_LLM_GRAMMAR=llama.cpp")
    figures: dict[str, float] = {"served_episodes": float(episodes)}
    for slots in slots_list:
        port = free_port()
        log = (scratch / f"server-{slots}.log").open("wb")
        proc = subprocess.Popen(server_command(template, model, port, slots, n_ctx), stdout=log, stderr=subprocess.STDOUT)
        try:
            # llama-server answers /v1/models while it still loads the model (then 503 to completions);
            # its /health is 200 only once it serves. llama-cpp-python's server has no /health.
            probe = "/health" if template else "/v1/models"
            wait_until_serving(proc, f"http://127.0.0.1:{port}{probe}", 180)
            for workers in workers_list:
                run = EvalSpec(mode="tfd", data=str(data), split="valid_unseen", limit=episodes, planner="helper",
                               llm=f"http://127.0.0.1:{port}/v1#qwen", workers=workers, feedback=1,
                               out=str(scratch / f"served-s{slots}-w{workers}"))
                start = time.perf_counter()
                with local_executor(workers) as pool:
                    metrics = run_eval(run, executor=pool)
                seconds = time.perf_counter() - start
                key = f"slots{slots}_workers{workers}"
                figures[f"{key}_episodes_per_min"] = round(60 * metrics["episodes"] / seconds, 2)
                figures[f"{key}_SR"] = metrics["overall"]["SR"]
                figures[f"{key}_errors"] = float(metrics["ended_by"]["error"])
                figures[f"{key}_llm_calls_per_episode"] = metrics["per_episode"]["llm_calls"]
                figures[f"{key}_seconds"] = round(seconds, 1)
                print(f"{key}: {figures[f'{key}_episodes_per_min']} episodes/min, SR {figures[f'{key}_SR']}, "
                      f"errors {metrics['ended_by']['error']}", flush=True)
        finally:
            stop_server(proc, log)
    srs = {v for k, v in figures.items() if k.endswith("_SR")}
    figures["served_SR_equal"] = float(len(srs) == 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=["gold", "served", "all"], default="gold")
    parser.add_argument("--data", default=None, help="A TEACh-layout folder (default: generate the built-in benchmark)")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--served-episodes", type=int, default=10)
    parser.add_argument("--workers-list", default="1,2,4")
    parser.add_argument("--slots-list", default="1")
    parser.add_argument("--server-command", default=None,
                        help="A server with parallel slots, e.g. 'llama-server -m {model} --port {port} -np {slots} "
                        "-c {n_ctx}' (the context is shared by the slots)")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--json", dest="json_path", default=None)
    parser.add_argument("--keep", default=None,
                        help="Keep the run folders (results.jsonl, metrics.json, server logs) in this folder "
                        "instead of a temporary one")
    args = parser.parse_args()
    if args.part in ("served", "all"):
        # Set before anything reads the settings (they are read once per process): each request
        # carries the program grammar, and a server that answers one request at a time keeps 3 of 4
        # workers' requests waiting, so a request's time includes its wait (120 s would cut it).
        os.environ.setdefault("HELPER_LLM_GRAMMAR", "llama.cpp")
        os.environ.setdefault("HELPER_LLM_TIMEOUT", "900")
    scratch = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="cluster-bench-"))
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        data = Path(args.data) if args.data else scratch / "bench"
        if not args.data:  # not timed
            size = max(args.episodes if args.part != "served" else 0, args.served_episodes if args.part != "gold" else 0)
            generate_benchmark(data, seed=0, sizes={"valid_unseen": size})
        figures: dict[str, float] = {"load_before": round(os.getloadavg()[0], 2)}
        if args.part in ("gold", "all"):
            figures.update(gold(data, scratch, args.episodes, args.workers))
        if args.part in ("served", "all"):
            figures.update(served(data, scratch, args.served_episodes, [int(w) for w in args.workers_list.split(",")],
                                  [int(s) for s in args.slots_list.split(",")], args.server_command, args.n_ctx))
        figures["load_after"] = round(os.getloadavg()[0], 2)
        for key, value in figures.items():
            print(f"{key:40s} {value}")
        if "overhead_ratio" in figures:
            met = figures["overhead_ratio"] <= 1.3
            print(f"target: Ray within 1.3x of the local pool ({'met' if met else 'NOT met'}); the gold planner is an ORACLE")
        if args.json_path:
            Path(args.json_path).write_text(json.dumps(figures, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
