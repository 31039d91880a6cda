"""P-RAG's switches (what `--agent-option` sets through `graphs/prag/agent.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Retrieval = Literal["goal+scene", "goal"]


@dataclass
class PRAGConfig:
    """How the agent retrieves its experience and how long it may act.

    - `retrieval`: "goal+scene" scores a stored episode by cos(goal) + the max over its steps of
      cos(scene graph) (the paper); "goal" is the ablation that retrieves by the goal only.
    - `k`: stored episodes shown in every step's prompt.
    - `max_steps`: LLM steps (one action each) before the episode stops.
    - `history`: the agent's own last steps (action -> observation) kept in the prompt.
    - `max_objects`: objects of the current view shown (nearest first): the prompt stays compact.
    - `max_remembered`: ids seen earlier in the episode and out of view now, listed (most recently
      seen first) for `goto` to name, as ALFWorld offers `go to` every receptacle; 0 lists none, and
      the agent can only walk to what it sees (an ablation; `scene.py` says why it is not enough).
    - `experience_steps`: actions shown per retrieved episode (its first ones).
    - `look_around`: the agent starts by turning once in place, and the first step's scene graph
      is everything it saw meanwhile (every method's agent starts so); off, the view it starts
      with, which can be empty.
    - `refuse_futile`: leave out of the step's grammar the actions already done from the current
      observation that changed nothing (`object_actions.futile_actions`), the actions taken before
      from the same known state, which would go round the same loop (`recurrent_actions`), and a
      search that found nothing, with only walking since (`failed_searches`); off is the paper's agent.
    - `admissible`: offer only the actions the environment can accept, as ALFWorld's admissible
      commands do: an action on the objects whose type affords it (pickup on the pickupable, toggle
      on the toggleable, ...: `object_actions.unafforded_actions`), with the hands it needs
      (`hand_refusals`) and on objects not already in the state it makes (no `open` of what is
      open: `state_refusals`); off offers every action on every shown id.
    - `subgoals`: each step chooses among the request's open parts (`graphs/declarations.py`,
      `choose_part`), each acted out by the shared executor; the primitive actions when none is open.
    """

    retrieval: Retrieval = "goal+scene"
    subgoals: bool = False  # `-o subgoals=on`: each step chooses among the request's open parts
    k: int = 3
    max_steps: int = 30
    history: int = 8
    max_objects: int = 25
    max_remembered: int = 60
    experience_steps: int = 12
    goal_chars: int = 400
    parse_retries: int = 1
    refuse_futile: bool = True
    look_around: bool = True
    admissible: bool = True
    retry_temperature: float = 0.7
    seed: int = 0
