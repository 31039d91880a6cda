"""HELPER as a method of the registry: the graph of `graphs/helper` with the run's memories."""

from __future__ import annotations

from typing import TYPE_CHECKING

from helper_agent.evals.methods import check_known

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from helper_agent.evals.agents import HelperAgent
    from helper_agent.evals.runner import EvalSpec


def build(spec: EvalSpec, chat_model: BaseChatModel) -> HelperAgent:
    from helper_agent.evals.agents import HelperAgent
    from helper_agent.evals.runner import run_memories
    from helper_agent.graphs.helper import HelperConfig

    check_known(spec.agent_options, (), "helper")  # HELPER's switches are --ablate and --feedback
    config = HelperConfig.ablated(spec.ablate, spec.feedback)
    config.seed = spec.seed
    return HelperAgent(chat_model, run_memories(spec), config)
