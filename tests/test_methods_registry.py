"""The method registry behind `--agent`: names, switches, and the HELPER entry (`graphs/registry.py`)."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.evals.engine.methods import build_request
from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.graphs.llm_planner.agent import config_from
from helper_agent.graphs.options import check_known, option, parse_agent_options
from helper_agent.graphs.registry import BuildRequest, UnknownAgent, build_agent, method_names


def test_the_four_methods_are_registered() -> None:
    assert method_names() == ["helper", "llm-planner", "prag", "embodiedrag"]


def test_agent_options_parse_key_value_pairs() -> None:
    assert parse_agent_options(["k=9", " replan = off "]) == {"k": "9", "replan": "off"}
    assert parse_agent_options(None) == {}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_agent_options(["k9"])


def test_an_option_outside_its_allowed_values_or_unknown_is_rejected() -> None:
    assert option({"replan": "off"}, "replan", "on", ("on", "off")) == "off"
    assert option({}, "k", 9) == "9"
    with pytest.raises(ValueError, match="choose from"):
        option({"replan": "maybe"}, "replan", "on", ("on", "off"))
    with pytest.raises(ValueError, match="no option kk"):
        check_known({"kk": "3"}, ("k",), "llm-planner")


def test_build_agent_gives_helper_and_rejects_unknown_names(tmp_path) -> None:
    chat = FakeListChatModel(responses=["x"])
    spec = EvalSpec(mode="tfd", data="", out=str(tmp_path), planner="helper")
    agent = build_agent("helper", build_request(spec, chat))
    assert agent.name == "helper" and not agent.oracle
    with pytest.raises(ValueError, match="no option"):
        build_agent("helper", BuildRequest(chat, {"colour": "red"}, memory_dir=str(tmp_path)))
    with pytest.raises(UnknownAgent, match="choose from helper, llm-planner"):
        build_agent("nobody", BuildRequest(chat))


def test_a_run_builds_its_method_from_its_own_folder_and_switches(tmp_path) -> None:
    """The one rule for a run's memory folder: `--memory-dir`, else `<out>/memory`; the train
    split is read only when the method asks for it."""
    chat = FakeListChatModel(responses=["x"])
    spec = EvalSpec(mode="tfd", data="", out=str(tmp_path / "run"), planner="prag", seed=7, feedback=2,
                    agent_options={"k": "2"})
    request = build_request(spec, chat)
    assert request.memory_dir == str(tmp_path / "run" / "memory") and request.training is None
    assert (request.options, request.seed, request.feedback, request.chat_model) == ({"k": "2"}, 7, 2, chat)
    spec.memory_dir = str(tmp_path / "mine")
    assert build_request(spec, chat).memory_dir == str(tmp_path / "mine")


def test_an_interactive_request_feeds_back_only_when_the_task_is_known() -> None:
    chat = FakeListChatModel(responses=["x"])
    plain = BuildRequest.interactive(chat, {"k": "2"})
    known = BuildRequest.interactive(chat, {"k": "2"}, task_known=True)
    assert (plain.feedback, known.feedback) == (0, 1)
    assert plain.memory_dir is None and known.memory_dir is None and plain.data == known.data == ""
    assert known.options == {"k": "2"} and known.training is None


def test_agent_options_are_part_of_the_run_label() -> None:
    spec = EvalSpec(mode="tfd", data="", planner="llm-planner", agent_options={"replan": "off"})
    assert spec.label().endswith("replan=off")


@pytest.mark.parametrize("switch", ["k", "replan_steps", "max_replans"])
def test_llm_planner_whole_number_switches_reject_zero_and_words(switch: str) -> None:
    assert getattr(config_from({switch: "4"}), switch) == 4
    with pytest.raises(ValueError, match=f"llm-planner: agent option {switch}='0'"):
        config_from({switch: "0"})
    with pytest.raises(ValueError, match="whole number"):
        config_from({switch: "many"})
