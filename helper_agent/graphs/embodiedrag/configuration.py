"""EmbodiedRAG's switches (what `--agent-option` sets through `graphs/embodiedrag/agent.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GraphMode = Literal["subgraph", "full"]


@dataclass
class EmbodiedRAGConfig:
    """How the planner sees the scene and how long it may act.

    - `graph`: "subgraph" is EmbodiedRAG (self-query, retrieve, refresh every step); "full" is the
      paper's baseline: the whole scene graph the agent knows goes into every planning prompt.
    - `k`: entities kept per query; `threshold`: minimum similarity (None: the memory settings').
    - `attributes`: "all" shows every observed state attribute of a retrieved entity (at most a few
      per class); "named" only those the self-query named, as the paper's attribute filtering does.
    - `max_steps`: ReAct steps (one LLM call each) before the episode stops.
    - `history`: the last thought/action/observation triples kept in the prompt.
    - `feedback_rounds`: after `done()`, how many times to ask the feedback source whether something
      is missing and continue on its answer (0: stop at `done()`, as the paper's agent does).
    - `refuse_futile`: leave out of the step's grammar the actions already done from the current
      observation that changed nothing (`object_actions.futile_actions`); off is the paper's agent.
    - `admissible`: offer only the actions the environment can accept, as ALFWorld's admissible
      commands do: an action on the objects whose type affords it (pickup on the pickupable, toggle
      on the toggleable, ...: `object_actions.unafforded_actions`), with the hands it needs
      (`hand_refusals`) and on objects not already in the state it makes (no `open` of what is
      open: `state_refusals`); off offers every action on every shown id.
    - `subgoals`: each ReAct step chooses among the request's open parts (`graphs/declarations.py`,
      `choose_part`), each acted out by the shared executor; the primitive actions when none is open.
    """

    graph: GraphMode = "subgraph"
    subgoals: bool = False
    k: int = 3
    threshold: float | None = None
    attributes: Literal["all", "named"] = "all"
    max_steps: int = 30
    history: int = 6
    feedback_rounds: int = 0
    parse_retries: int = 1
    refuse_futile: bool = True
    admissible: bool = True
    max_self_query_items: int = 6
    retry_temperature: float = 0.7
    seed: int = 0
