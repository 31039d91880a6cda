"""HELPER (Sarch et al.) as a LangGraph state machine: retrieve, plan, execute, locate, diagnose,
correct, ask for feedback, replan, memorize."""

from helper_agent.graphs.helper.configuration import HelperConfig
from helper_agent.graphs.helper.context import HelperContext
from helper_agent.graphs.helper.graph import FEEDBACK_QUESTION, build_graph
from helper_agent.graphs.helper.state import HelperState

__all__ = ["FEEDBACK_QUESTION", "HelperConfig", "HelperContext", "HelperState", "build_graph"]
