"""LLM-Planner's prompt: task explanation, allowed actions, k in-context examples, then the query.

The layout follows the paper (Song et al. 2023, Fig. 2 and Algorithm 1): each block reads

    Task description: <goal instruction>
    Step-by-step instructions: <steps>          (when the run uses them)
    Completed plans: <subgoals done>             (re-planning only)
    Goals not met yet: <conditions>              (re-planning with the goal check, `named/`)
    Visible objects are <objects seen>           (re-planning, or when the run shows them)
    Next plans:

and an example's answer is its plan. Examples go in as user/assistant turns, which small chat models
follow better than one long completion prompt; the system turn holds the explanation and the list
of allowed actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from helper_agent.graphs.llm_planner.plans import Step, format_plan

#: Characters a prompt may take: the local model has a 4096-token window and keeps 384 for the answer;
#: at no fewer than 3 characters a token, 10500 characters fit.
MAX_PROMPT_CHARS = 10500

EXPLANATION = ("Create a high-level plan for completing a household task using the allowed actions and visible objects. "
               "A plan is a comma-separated list of steps; each step is an action followed by one object.")


@dataclass
class PlanQuery:
    """One block of the prompt (an example's or the query's)."""

    task: str
    steps: Sequence[str] = ()
    completed: Sequence[Step] | None = None
    visible: Sequence[str] | None = None
    plan: Sequence[Step] = field(default_factory=list)  # an example's answer
    unmet: Sequence[str] | None = None  # stated goal conditions the agent's own check finds unmet

    def text(self) -> str:
        lines = [f"Task description: {self.task.strip()}"]
        if self.steps:
            lines.append("Step-by-step instructions: " + " ".join(s.strip() for s in self.steps if s.strip()))
        if self.completed is not None:
            lines.append(f"Completed plans: {format_plan(self.completed) or 'none'}")
        if self.unmet:
            lines.append("Goals not met yet: " + "; ".join(self.unmet))
        if self.visible is not None:
            lines.append("Visible objects are " + (", ".join(sorted({v.lower() for v in self.visible})) or "none"))
        lines.append("Next plans:")
        return "\n".join(lines)


def planner_messages(actions: Sequence[str], examples: Sequence[PlanQuery], query: PlanQuery,
                     error: str = "", previous: str = "") -> list[BaseMessage]:
    """The chat messages of one planning call (first plan or re-plan); `error` asks for a fix of
    `previous` after the parser rejected it."""
    system = f"{EXPLANATION}\n\nAllowed actions: {', '.join(actions)}"
    messages: list[BaseMessage] = [SystemMessage(content=system)]
    for example in examples:
        messages.append(HumanMessage(content=example.text()))
        messages.append(AIMessage(content=format_plan(example.plan)))
    messages.append(HumanMessage(content=query.text()))
    if error:
        messages.append(AIMessage(content=previous.strip() or "(no plan)"))
        messages.append(HumanMessage(content=f"That plan was rejected: {error}\nWrite the plan again.\nNext plans:"))
    return messages


def fit_examples(actions: Sequence[str], examples: Sequence[PlanQuery], query: PlanQuery,
                 max_chars: int = MAX_PROMPT_CHARS) -> list[PlanQuery]:
    """The leading examples (nearest first) whose prompt fits in `max_chars`; the rest are dropped,
    so long dialogues never overflow the model's window."""
    kept = list(examples)
    while kept and sum(len(str(m.content)) for m in planner_messages(actions, kept, query)) > max_chars:
        kept.pop()
    return kept
