"""What an EAI run records of a step-wise method's settings (`runner.acting`, the run's `spec.json`).

Every method runs its registry graph through the one harness (`registered.py`) with its own
switches (`--agent-option`; `graphs/prag/agent.py`, `graphs/embodiedrag/agent.py`). P-RAG and
EmbodiedRAG act step by step (closed loop only) and never re-plan; a run records the `k` and the
step cap they acted with, their switches or else the defaults of their loops where they act by names
(`graphs/prag/named.NamedPRAGConfig`, `graphs/embodiedrag/named.NamedEmbodiedRAGConfig`; a test
keeps the two equal).
"""

from __future__ import annotations

STEPWISE = ("prag", "embodiedrag")
STEPWISE_DEFAULTS = {"k": 3, "max_steps": 20}  # a step-wise method's `k` and step cap when its switches are not given


def stepwise_setting(options: dict[str, str], key: str) -> int:
    """A step-wise method's `k` or `max_steps`: its switch, else the default."""
    return int(options.get(key, STEPWISE_DEFAULTS[key]))
