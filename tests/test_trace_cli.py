"""`helper trace RUN_DIR INSTANCE`: an episode node by node from the run's own results.jsonl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helper_agent.cli import app
from helper_agent.evals.benchmark import generate_benchmark

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real `helper eval` run: the oracle-graph planner on two generated episodes."""
    tmp = tmp_path_factory.mktemp("trace")
    generate_benchmark(tmp / "bench", seed=4, sizes={"valid_unseen": 2})
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
           "HELPER_HOME": str(tmp / "home"), "HELPER_EMBEDDINGS": "hash", "COLUMNS": "200"}
    result = subprocess.run([sys.executable, "-m", "helper_agent.cli", "eval", "tfd", "--data", str(tmp / "bench"),
                             "--split", "valid_unseen", "--planner", "oracle-graph", "--out", str(tmp / "run")],
                            env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return tmp / "run"


def trace(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["trace", *args], env={"COLUMNS": "200"})
    return result.exit_code, result.output


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_trace_prints_the_episode_node_by_node(run: Path) -> None:
    record = records(run)[0]
    code, out = trace(str(run), record["instance_id"])
    assert code == 0, out
    assert record["instance_id"] in out and "ORACLE" in out and "tfd/valid_unseen/oracle-graph" in out
    # every log line, in order, split into node and detail
    positions = [out.index(line.partition(": ")[2][:40]) for line in record["log"]]
    assert positions == sorted(positions)
    for node in ("retrieve", "plan", "validate", "execute"):
        assert f"│ {node}" in out
    first_line = next(line for line in record["program"].splitlines() if line.strip())
    assert first_line.strip() in out  # the program
    assert "subgoals (every execute segment)" in out and "done" in out  # the harness records them
    assert f"LLM: {record['llm_calls']} calls" in out
    assert f"goal conditions {record['completed_goal_conditions']}/{record['total_goal_conditions']}" in out


def test_an_instance_is_found_by_file_name_path_or_prefix(run: Path) -> None:
    record = records(run)[1]
    instance_file = next((run.parent / "bench" / "tfd_instances" / "valid_unseen").glob(f"{record['instance_id']}*"))
    for name in (str(instance_file), instance_file.name, record["instance_id"].removesuffix(".tfd")):
        code, out = trace(str(run), name)
        assert code == 0 and record["instance_id"] in out, (name, out)


def test_recorded_subgoals_and_errors_are_shown(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    lines = [
        {"instance_id": "a.tfd", "agent": "helper", "log": ["plan: attempt 1", "execute: failed after 1/3 subgoals, 9 steps: no Mug"],
         "program": 'mug = InteractionObject("Mug")\nmug.pickup()', "llm_calls": 3, "prompt_tokens": 900,
         "completion_tokens": 120, "llm_seconds": 4.5, "success": 0, "completed_goal_conditions": 0,
         "total_goal_conditions": 2, "ended_by": "done", "outcome": "incomplete",
         "subgoals": [["Navigate(Mug)", "done", 7], ["Pickup(Mug)", "failed", 1], ["Pickup(Mug)", "done", 1]]},
        {"instance_id": "b.tfd", "agent": "helper", "log": [], "program": "", "ended_by": "error",
         "error_message": "LLMBadResponse: the server returned an empty message", "traceback": "Traceback ..."},
    ]
    (run / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, out = trace(str(run), "a.tfd")
    assert code == 0, out
    assert "subgoals (every execute segment)" in out
    assert "Pickup(Mug)" in out and "failed" in out and "│       7 │" in out
    assert "LLM: 3 calls, 900 prompt + 120 completion tokens, 4.5 s" in out
    code, out = trace(str(run), "b")
    assert code == 0 and "LLMBadResponse: the server returned an empty message" in out


def test_unknown_episodes_and_folders_are_one_line_errors(run: Path, tmp_path: Path) -> None:
    code, out = trace(str(run), "no-such-episode")
    assert code == 2 and "no episode 'no-such-episode'" in out and "valid_unseen_0000.tfd" in out
    code, out = trace(str(run), "valid_unseen")  # a prefix of both episodes
    assert code == 2 and "names 2 episodes" in out
    code, out = trace(str(tmp_path), "x")
    assert code == 2 and "no results.jsonl" in out
