"""`helper eval progressive` takes any registered method with an experience memory (the method says
so in its `Method.experience`), not P-RAG by name: the iteration reads the switch that names its
database and the switches that act only through retrieval from the method, and refuses a method
without one with an error that names the methods that have one."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from helper_agent.cli import app
from helper_agent.evals.studies import progressive as teach_progressive
from helper_agent.evals.studies.eai import progressive as eai_progressive
from helper_agent.graphs import registry
from helper_agent.graphs.registry import ExperienceUse, Method, experience_use, register_method


def _never_built(request: object) -> None:
    raise AssertionError("the iteration's settings are worked out without building the method")


@pytest.fixture()
def diary(monkeypatch: pytest.MonkeyPatch) -> str:
    """A method registered at run time that reads its experience from `-o journal=PATH`."""
    monkeypatch.setattr(registry.METHODS, "registered", {})
    register_method(Method(name="diary", summary="remembers", build=_never_built,  # type: ignore[arg-type]
                           options=("journal", "top", "pace"),
                           experience=ExperienceUse(option="journal", retrieval_options=("top",))))
    return "diary"


def test_prag_declares_its_experience_and_helper_has_none() -> None:
    assert experience_use("prag") == ExperienceUse(option="database", retrieval_options=("retrieval", "k"))
    with pytest.raises(ValueError, match=r"^helper has no experience memory to iterate on; methods that have one: prag$"):
        experience_use("helper")


def test_the_teach_iteration_uses_the_methods_own_switches(diary: str, tmp_path: Path) -> None:
    spec = teach_progressive.ProgressiveSpec(data=".", out=str(tmp_path), agent=diary,
                                             agent_options={"top": "2", "pace": "slow"})
    spec.check()
    run = teach_progressive.pass_spec(spec, 1, "eval")
    assert run.planner == "diary"
    assert run.agent_options == {"top": "2", "pace": "slow", "journal": str((tmp_path / "iter_1" / "database").resolve())}
    assert teach_progressive.retrieval_switches(diary) == {"top"}
    with pytest.raises(ValueError, match="do not pass journal="):
        teach_progressive.ProgressiveSpec(data=".", out=".", agent=diary, agent_options={"journal": "x"}).check()


def test_the_eai_iteration_uses_the_methods_own_switches(diary: str, tmp_path: Path) -> None:
    spec = eai_progressive.EaiProgressiveSpec(out=str(tmp_path), agent=diary, agent_options={"top": "2", "pace": "slow"})
    spec.check()
    first, second = eai_progressive.pass_spec(spec, 0), eai_progressive.pass_spec(spec, 1)
    assert (first.agent, first.mode, first.agent_options) == ("diary", "closed-loop", {"pace": "slow"})
    assert second.agent_options == {"top": "2", "pace": "slow",
                                    "journal": str((tmp_path / "iter_1" / "database").resolve())}
    assert spec.label() == "diary/EAI self-iteration/pace=slow/top=2"
    with pytest.raises(ValueError, match="do not pass journal="):
        eai_progressive.EaiProgressiveSpec(out=".", agent=diary, agent_options={"journal": "x"}).check()


def test_prag_on_eai_keeps_its_iteration_settings() -> None:
    """P-RAG's passes are as before the capability: iteration 0 drops retrieval and k, later ones add database."""
    spec = eai_progressive.EaiProgressiveSpec(out="/tmp/x", agent_options={"retrieval": "goal", "k": "2", "max_steps": "9"})
    assert eai_progressive.pass_spec(spec, 0).agent_options == {"max_steps": "9"}
    assert eai_progressive.pass_spec(spec, 2).agent_options == {"retrieval": "goal", "k": "2", "max_steps": "9",
                                                                "database": "/tmp/x/iter_2/database"}


@pytest.mark.parametrize("benchmark", ["teach", "eai"])
def test_the_cli_refuses_a_method_without_experience_memory(benchmark: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "progressive", "--benchmark", benchmark, "--agent", "llm-planner",
                                      "--data", str(tmp_path), "--out", str(tmp_path / "o")], env={"COLUMNS": "200"})
    assert result.exit_code != 0
    assert "llm-planner has no experience memory to iterate on; methods that have one: prag" in " ".join(result.output.split())
    assert not (tmp_path / "o").exists()
