"""EmbodiedRAG (Booker et al., 2024) as a LangGraph state machine: self-query, retrieve a scene
subgraph from the vector store, ReAct steps over it, the subgraph refreshed every step."""

from helper_agent.graphs.embodiedrag.configuration import EmbodiedRAGConfig
from helper_agent.graphs.embodiedrag.context import EmbodiedRAGContext
from helper_agent.graphs.embodiedrag.graph import build_graph, recursion_limit
from helper_agent.graphs.embodiedrag.state import EmbodiedRAGState

__all__ = ["EmbodiedRAGConfig", "EmbodiedRAGContext", "EmbodiedRAGState", "build_graph", "recursion_limit"]
