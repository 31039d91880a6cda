"""Each record says which code ran it, and the reports say when runs or records differ."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine import provenance
from helper_agent.evals.engine.report import load_run, methods_table
from helper_agent.evals.engine.runner import run_eval
from helper_agent.evals.engine.spec import EvalSpec


@pytest.fixture(autouse=True)
def fresh_version() -> None:
    provenance.code_version.cache_clear()


def test_a_checkout_gives_its_commit_and_whether_the_package_differs_from_it() -> None:
    if not (provenance.PACKAGE_DIR.parent / ".git").exists():
        pytest.skip("not run from a checkout")
    version = provenance.code_version()
    last = subprocess.run(["git", "-C", str(provenance.PACKAGE_DIR.parent), "log", "-1", "--format=%h", "--abbrev=7",
                           "--", "helper_agent"], capture_output=True, text=True, check=True).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{7,}(\+dirty)?", version) and version.startswith(last)


def _commit(repo: Path, path: str, text: str) -> str:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", path], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-q", "-m", path], check=True, capture_output=True)
    return subprocess.run([*git, "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_commits_outside_the_package_do_not_change_the_version(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, capture_output=True)
    package = tmp_path / "helper_agent"
    monkeypatch.setattr(provenance, "PACKAGE_DIR", package)
    changed_package = _commit(tmp_path, "helper_agent/agent.py", "A = 1\n")
    _commit(tmp_path, "results/run/results.jsonl", "{}\n")
    assert provenance.code_version() == changed_package  # a results commit is not new code
    (package / "agent.py").write_text("A = 2\n")
    provenance.code_version.cache_clear()
    assert provenance.code_version() == changed_package + "+dirty"
    changed_again = _commit(tmp_path, "helper_agent/agent.py", "A = 2\n")
    provenance.code_version.cache_clear()
    assert provenance.code_version() == changed_again


def test_without_git_or_a_checkout_the_package_version_is_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def no_git(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError("git")

    monkeypatch.setattr(provenance.subprocess, "run", no_git)
    assert provenance.code_version() == "helper-agent 0.1.0"
    provenance.code_version.cache_clear()
    monkeypatch.setattr(provenance, "PACKAGE_DIR", tmp_path / "site-packages" / "helper_agent")
    assert provenance.code_version() == "helper-agent 0.1.0"


def test_code_counts_and_the_note_for_a_table() -> None:
    counts = provenance.code_counts([{"code": "abc1234"}, {"code": "abc1234"}, {"code": "def5678"}, {}])
    assert counts == {"abc1234": 2, "def5678": 1, "unknown": 1}
    assert provenance.code_note([("a", {"abc1234": 3}), ("b", {"abc1234": 1})]) == "Agent code: abc1234."
    assert provenance.code_note([("a", {"unknown": 3})]) == ""
    mixed = provenance.code_note([("helper", {"abc1234": 50}), ("prag", {"abc1234": 30, "def5678": 20})])
    assert mixed == ("**Agent code differs**: helper abc1234; prag abc1234 (30), def5678 (20); "
                     "prag mixes code versions.")


def test_a_run_keeps_the_code_of_each_record_and_a_table_says_when_runs_differ(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = tmp_path / "bench"
    generate_benchmark(bench, seed=0, sizes={"valid_unseen": 2})
    monkeypatch.setattr(provenance, "code_version", lambda: "aaaaaaa")
    monkeypatch.setattr("helper_agent.evals.engine.runner.code_version", lambda: "aaaaaaa")
    first = run_eval(EvalSpec(mode="tfd", data=str(bench), planner="gold", out=str(tmp_path / "a"), limit=1))
    assert first["code"] == {"aaaaaaa": 1}
    # The run resumes under other code: its second record says so, and so does its report.
    monkeypatch.setattr("helper_agent.evals.engine.runner.code_version", lambda: "bbbbbbb")
    resumed = run_eval(EvalSpec(mode="tfd", data=str(bench), planner="gold", out=str(tmp_path / "a"), limit=2))
    records = [json.loads(line) for line in (tmp_path / "a" / "results.jsonl").read_text().splitlines()]
    assert [r["code"] for r in records] == ["aaaaaaa", "bbbbbbb"]
    assert resumed["code"] == {"aaaaaaa": 1, "bbbbbbb": 1}
    assert "**Agent code differs**" in (tmp_path / "a" / "report.md").read_text()
    run_eval(EvalSpec(mode="tfd", data=str(bench), planner="gold", out=str(tmp_path / "b"), limit=2))
    table = methods_table([load_run(tmp_path / "a"), load_run(tmp_path / "b")])
    assert "gold ORACLE aaaaaaa (1), bbbbbbb (1); gold ORACLE bbbbbbb; gold ORACLE mixes code versions." in table
    # A run written before records kept their code: read from its records, said as unknown.
    for folder in ("a", "b"):
        metrics = json.loads((tmp_path / folder / "metrics.json").read_text())
        metrics.pop("code")
        (tmp_path / folder / "metrics.json").write_text(json.dumps(metrics))
    bare = [json.loads(line) for line in (tmp_path / "b" / "results.jsonl").read_text().splitlines()]
    (tmp_path / "b" / "results.jsonl").write_text("".join(json.dumps({k: v for k, v in r.items() if k != "code"}) + "\n"
                                                          for r in bare))
    table = methods_table([load_run(tmp_path / "a"), load_run(tmp_path / "b")])
    assert "gold ORACLE unknown" in table and "aaaaaaa (1), bbbbbbb (1)" in table
