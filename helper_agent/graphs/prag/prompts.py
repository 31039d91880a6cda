"""P-RAG's step prompt. The fixed part (instructions, action space) comes first and the goal next,
so llama.cpp reuses the cached prefix across an episode's steps; what changes every step (the
scene graph, the agent's last steps) comes last."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from helper_agent.graphs.prag.actions import action_help
from helper_agent.graphs.steps import Step
from helper_agent.memory.experience import Experience

SYSTEM = (
    "You are a household robot acting step by step. Each step you see the instruction, episodes "
    "you lived before on similar tasks (what you did and whether the task got done), the scene "
    "graph of what you see now ('id: states; in other_id'), what you saw before and out of view, "
    "and your last steps. Choose the one "
    "next action. Answer exactly one line:\nAction: <action>\n\n"
    "Actions (ID is an object id from the scene graph, ObjectClass a type such as Mug):\n{actions}\n\n"
    "Learn from past episodes: repeat what worked in episodes that got done, avoid what failed. "
    "If something you need is not in the scene graph, search for its class. "
    "Say done() when the task is finished."
)

# Before the actions `refuse_futile` leaves out of the step's grammar (here and on EAI: `evals/studies/eai`).
FUTILE_LINE = "Done from here already, nothing new would come of it (not allowed now): "


def render_experience(records: Sequence[Experience], steps: int, goal_chars: int) -> str:
    """Retrieved episodes, compactly: done flag, goal, first `steps` actions with short outcomes."""
    if not records:
        return "(none yet)"
    blocks = []
    for n, record in enumerate(records, 1):
        flag = "task done" if record.done else "task NOT done"
        goal = " ".join(record.goal.split())[:goal_chars]
        actions = []
        for step in record.steps[:steps]:
            outcome = step.observation.split(";", 1)[0][:60]
            actions.append(f"{step.action} -> {outcome}")
        more = f" (+{len(record.steps) - steps} more)" if len(record.steps) > steps else ""
        blocks.append(f"Episode {n} ({flag}): {goal}\nActions: " + "; ".join(actions) + more)
    return "\n".join(blocks)


def render_remembered(ids: Sequence[str]) -> str:
    """Ids seen before, most recent first, with a class's consecutive numbers as one range
    (`BreadSliced_2-9`): slicing a loaf makes ten ids, and the line stays a few tokens long."""
    groups: dict[str, list[int]] = {}
    for i in ids:
        cls, _, n = i.rpartition("_")
        groups.setdefault(cls, []).append(int(n))
    parts = []
    for cls, numbers in groups.items():
        numbers.sort()
        start = prev = numbers[0]
        for n in [*numbers[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            parts.append(f"{cls}_{start}" if start == prev else f"{cls}_{start}-{prev}")
            if n is not None:
                start = prev = n
    return ", ".join(parts)


def step_messages(request: str, goal_chars: int, experience: str, scene_graph: str, held: str | None,
                  history: list[Step], keep: int, step: int, max_steps: int,
                  retry_reason: str | None = None, futile: Sequence[str] = (),
                  remembered: Sequence[str] = (), subgoals: Sequence[str] = ()) -> list[BaseMessage]:
    """The step's messages; `subgoals`: the open parts' lines (`declarations.part_lines`) before the question."""
    goal = " ".join(request.split())[: max(goal_chars * 4, 1)]
    lines = [f"Instruction:\n{goal}", "", "Past episodes:", experience, "",
             "Scene graph:", scene_graph, f"Holding: {held or 'nothing'}"]
    if remembered:
        lines.append("Seen before, out of view (goto only): " + render_remembered(remembered))
    recent = history[-keep:] if keep > 0 else []
    if recent:
        lines += ["", "Your last steps:"]
        lines += [f"{s.get('action', '')} -> {s.get('observation', '')}" for s in recent]
    if futile:
        lines += ["", FUTILE_LINE + ", ".join(futile)]
    if subgoals:
        lines += ["", *subgoals]
    lines += ["", f"Step {step + 1} of {max_steps}. Next action:"]
    messages: list[BaseMessage] = [SystemMessage(content=SYSTEM.format(actions=action_help())),
                                   HumanMessage(content="\n".join(lines))]
    if retry_reason:
        messages.append(HumanMessage(content=f"Your last answer was rejected: {retry_reason}. Answer again."))
    return messages
