"""LLM-Planner (Song et al., ICCV 2023) as a LangGraph state machine: kNN few-shot high-level plans
of (action, object) subgoals, executed by a low-level controller, with grounded re-planning."""

from helper_agent.graphs.llm_planner.configuration import LLMPlannerConfig
from helper_agent.graphs.llm_planner.context import LLMPlannerContext
from helper_agent.graphs.llm_planner.graph import build_graph
from helper_agent.graphs.llm_planner.plans import PlanVocabulary
from helper_agent.graphs.llm_planner.state import LLMPlannerState

__all__ = ["LLMPlannerConfig", "LLMPlannerContext", "LLMPlannerState", "PlanVocabulary", "build_graph"]
