"""P-RAG (Xu et al., 2024) as a LangGraph state machine: step-wise actions chosen with the episodes
of its own past retrieved from a progressive experience database (no ground truth anywhere)."""

from helper_agent.graphs.prag.configuration import PRAGConfig
from helper_agent.graphs.prag.context import PRAGContext
from helper_agent.graphs.prag.graph import build_graph, recursion_limit
from helper_agent.graphs.prag.state import PRAGState

__all__ = ["PRAGConfig", "PRAGContext", "PRAGState", "build_graph", "recursion_limit"]
