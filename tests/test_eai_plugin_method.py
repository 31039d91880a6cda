"""A method added from outside runs `helper eval eai`: the toy package of `tests/plugins` (one entry
point in the group `helper_agent.methods`, no file of helper-agent edited) acts in VirtualHome
through the one harness, and EAI's goal check, not the toy, scores what it did."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("virtualhome_eval")

from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import helper_agent.llm as llm  # noqa: E402
from helper_agent.cli import app  # noqa: E402
from helper_agent.config import get_settings  # noqa: E402
from helper_agent.envs.virtualhome import VirtualHomeEnv  # noqa: E402
from helper_agent.evals.studies.eai.grammar import render  # noqa: E402
from helper_agent.evals.studies.eai.progressive import EaiProgressiveSpec, run_eai_progressive  # noqa: E402
from helper_agent.evals.studies.eai.runner import EaiRunSpec, run_tasks  # noqa: E402
from helper_agent.evals.studies.eai.tasks import select_tasks  # noqa: E402
from helper_agent.graphs import registry  # noqa: E402
from helper_agent.graphs.base import AgentResult, EpisodeSetup  # noqa: E402
from helper_agent.graphs.registry import BuildRequest, ExperienceUse, Method, register_method  # noqa: E402
from helper_agent.memory.embeddings import HashEmbedder  # noqa: E402
from helper_agent.memory.experience import ExperienceMemory  # noqa: E402

PLUGINS = Path(__file__).resolve().parent / "plugins"
IDS = ["11_1", "478_1"]  # two tasks with node, edge and action goals (as tests/test_eai_methods.py)


@pytest.fixture()
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The toy distribution on sys.path, a scripted chat model that answers one EAI action."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    monkeypatch.setenv("HELPER_MEMORY_DIR", str(tmp_path / "memory"))
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:256")
    get_settings.cache_clear()
    replies = ["STANDUP"]
    monkeypatch.setattr(llm, "make_chat_model", lambda *a, **k: FakeListChatModel(responses=replies))
    yield replies
    for name in [m for m in sys.modules if m == "toy_method" or m.startswith("toy_method.")]:
        del sys.modules[name]
    get_settings.cache_clear()


def test_the_toy_runs_helper_eval_eai_through_the_harness(toy: list[str], tmp_path: Path) -> None:
    out = tmp_path / "run"
    ids = [t.identifier for t in select_tasks(2)]
    result = CliRunner().invoke(app, ["eval", "eai", "--agent", "toy", "-o", "times=2", "--mode", "closed-loop",
                                      "--limit", "2", "--no-peers", "--llm", "scripted", "--out", str(out)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["identifier"] for r in records] == ids
    for record in records:
        # What the environment says the two STANDUPs did, replayed on a fresh one: the record is the
        # environment's account, scored by EAI's goal check, not the toy's own.
        env = VirtualHomeEnv(record["identifier"])
        done = [env.step("STANDUP").result.success for _ in range(2)]
        executed = [["STANDUP", []]] * sum(done)
        assert record["steps"] == executed
        assert record["outcome"] == ("done" if all(done) else "failed")
        assert record["log"] == ["act: STANDUP x2"] and record["usage"]["llm_calls"] == 1
        assert record["decisions"] == 2 and record["sequence_success"] is False
        assert record["llm_output"] == ('{\n' + ",\n".join('  "STANDUP": []' for _ in executed) + '\n}' if executed else "{}")
    assert json.loads((out / "spec.json").read_text())["agent"] == "toy"
    assert (out / "report.md").exists()


def test_eai_refuses_an_unknown_method_and_a_bad_switch_before_the_run(toy: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "eai", "--agent", "nobody", "--mode", "closed-loop", "--limit", "1",
                                      "--no-peers", "--llm", "scripted", "--out", str(tmp_path / "a")], env={"COLUMNS": "200"})
    assert result.exit_code != 0 and "--agent takes helper, llm-planner, prag, embodiedrag, toy" in result.output
    result = CliRunner().invoke(app, ["eval", "eai", "--agent", "toy", "-o", "colour=red", "--mode", "closed-loop",
                                      "--limit", "1", "--no-peers", "--llm", "scripted", "--out", str(tmp_path / "b")],
                                env={"COLUMNS": "200"})
    assert result.exit_code != 0 and "agent 'toy' has no option colour; it takes times" in result.output
    result = CliRunner().invoke(app, ["eval", "eai", "--agent", "toy", "--mode", "open-loop", "--limit", "1",
                                      "--no-peers", "--llm", "scripted", "--out", str(tmp_path / "c")], env={"COLUMNS": "200"})
    assert result.exit_code != 0 and "acts on the environment: it has only --mode closed-loop" in result.output
    assert not any((tmp_path / name).exists() for name in ("a", "b", "c"))


class Walker:
    """A method's agent that acts through the environment's vocabulary: it walks to every object an
    action may name (`action_vocabulary().objects`), `times` of them, and reports its trajectory as
    a method with an experience memory does (`[action, observation, scene graph]` per step)."""

    name = "walker"
    oracle = False

    def __init__(self, request: BuildRequest) -> None:
        self.times = int(request.options.get("times", "2"))
        self.journals: list[str | None] = []

    def run(self, setup: EpisodeSetup) -> AgentResult:
        vocabulary = setup.env.action_vocabulary()
        assert vocabulary.actions["WALK"] == 1 and vocabulary.problem("WALK", ("nothing",)) is not None
        trace = []
        for name in vocabulary.objects[: self.times]:
            outcome = setup.env.step("WALK", name)
            trace.append([f"WALK({name})", "ok" if outcome.result.success else "failed", f"near {name}"])
        return AgentResult(outcome="done", log=[f"walked to {len(trace)}"], trace=trace, usage={"llm_calls": 0})


@pytest.fixture()
def walker(monkeypatch: pytest.MonkeyPatch) -> list[Walker]:
    built: list[Walker] = []

    def build(request: BuildRequest) -> Walker:
        built.append(Walker(request))
        built[-1].journals.append(request.options.get("journal"))
        return built[-1]

    monkeypatch.setattr(registry.METHODS, "registered", {})
    register_method(Method(name="walker", summary="walks", build=build, options=("times", "journal"),  # type: ignore[arg-type]
                           experience=ExperienceUse(option="journal", retrieval_options=())))
    return built


def test_a_registered_method_acts_by_the_environments_vocabulary_and_is_scored_by_eai(walker, tmp_path: Path) -> None:
    tasks = select_tasks(ids=IDS)
    records = run_tasks(EaiRunSpec(agent="walker", mode="closed-loop", agent_options={"times": "2"}), None,
                        tmp_path / "run", tasks=tasks)
    assert len(walker) == 1  # built once per run, as `helper eval tfd` builds it
    for task, record in zip(tasks, records, strict=True):
        env = VirtualHomeEnv(task.identifier)
        names = env.action_vocabulary().objects[:2]
        assert names == task.arguments[:2]  # the vocabulary's objects are the names EAI's prompt lists
        done = [env.step("WALK", n).result.success for n in names]
        walked = [("WALK", (n,)) for n, ok in zip(names, done, strict=True) if ok]
        assert walked  # a walk to a task's object succeeds from its initial graph
        assert record["steps"] == [[a, list(args)] for a, args in walked]
        assert record["llm_output"] == render(walked)
        assert record["trajectory"] == [{"scene_graph": f"near {n}", "action": f"WALK({n})",
                                         "observation": "ok" if ok else "failed"} for n, ok in zip(names, done, strict=True)]
        assert record["sequence_success"] == env.success() and record["decisions"] == 2
        assert (record["outcome"], record["log"]) == ("done", ["walked to 2"])


def test_a_registered_method_with_an_experience_memory_iterates_on_eai(walker, tmp_path: Path) -> None:
    tasks = select_tasks(ids=IDS)
    spec = EaiProgressiveSpec(out=str(tmp_path / "prog"), iterations=2, agent="walker", agent_options={"times": "1"})
    metrics = run_eai_progressive(spec, None, tasks=tasks, embedder=HashEmbedder())
    assert [r["database_records"] for r in metrics["iterations"]] == [0, 2]
    assert [w.journals for w in walker] == [[None], [str((tmp_path / "prog" / "iter_1" / "database").resolve())]]
    stored = ExperienceMemory(path=str(tmp_path / "prog" / "iter_1" / "database"), embedder=HashEmbedder()).list()
    assert sorted((r.goal, [s.action for s in r.steps]) for r in stored) == sorted(
        (t.goal_text, [f"WALK({t.arguments[0]})"]) for t in tasks)
