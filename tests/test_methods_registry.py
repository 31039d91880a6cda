"""The method registry behind `--agent`: names, switches, and the HELPER entry."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.evals.methods import (
    METHODS,
    UnknownAgent,
    build_agent,
    check_known,
    option,
    parse_agent_options,
)
from helper_agent.evals.runner import EvalSpec


def test_the_four_methods_are_registered() -> None:
    assert list(METHODS) == ["helper", "llm-planner", "prag", "embodiedrag"]


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
    agent = build_agent(spec, chat)
    assert agent.name == "helper" and not agent.oracle
    with pytest.raises(ValueError, match="no option"):
        build_agent(EvalSpec(mode="tfd", data="", out=str(tmp_path), planner="helper", agent_options={"k": "3"}), chat)
    with pytest.raises(UnknownAgent):
        build_agent(EvalSpec(mode="tfd", data="", out=str(tmp_path), planner="nobody"), chat)


def test_agent_options_are_part_of_the_run_label() -> None:
    spec = EvalSpec(mode="tfd", data="", planner="llm-planner", agent_options={"replan": "off"})
    assert spec.label().endswith("replan=off")


@pytest.mark.parametrize("switch", ["k", "replan_steps", "max_replans"])
def test_llm_planner_whole_number_switches_reject_zero_and_words(switch: str) -> None:
    from helper_agent.evals.methods.llm_planner import config_from

    assert getattr(config_from({switch: "4"}), switch) == 4
    with pytest.raises(ValueError, match=f"llm-planner: agent option {switch}='0'"):
        config_from({switch: "0"})
    with pytest.raises(ValueError, match="whole number"):
        config_from({switch: "many"})
