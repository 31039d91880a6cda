"""HELPER's sequence prompt: the task as the benchmark words it, with the k retrieved examples
(their tasks and the sequences that did them) before its `Input:` section, and the correction
request of the closed loop.

The examples go between the benchmark's instructions and the task's input: the instructions are the
same for every task, so a local model reuses their KV cache. Where a benchmark gives no wording of
its own, the prompt is the request and the answer form.
"""

from __future__ import annotations

from collections.abc import Sequence

from helper_agent.envs.base import ActionVocabulary
from helper_agent.graphs.action_sequences import Step, render
from helper_agent.graphs.registry import ActionExample

INPUT = "\nInput:\n"
OUTPUT = "Output:"


def system_prompt(vocabulary: ActionVocabulary) -> str:
    where = f" in {vocabulary.world}" if vocabulary.world else ""
    return (f"You control a household robot{where}. Answer with the action commands only, "
            "as the JSON object the task asks for.")


def task_prompt(request: str, vocabulary: ActionVocabulary) -> str:
    """The prompt when the benchmark words none: the request, the vocabulary and the answer form."""
    actions = ", ".join(f"{a} ({n} object{'s' if n != 1 else ''})" for a, n in vocabulary.actions.items())
    return (f"Actions: {actions}\nObjects: {', '.join(vocabulary.objects)}\n{INPUT}{request.strip()}\n"
            'Output the actions as one JSON object, one "ACTION": [objects] pair per line, in order.')


SUBGOALS = "Subgoals open now (write only these, each once, in the order to do them)"


def instructions_line(steps: Sequence[str], label: str = "Step-by-step instructions") -> str:
    """Step-by-step instructions on one line, as LLM-Planner's prompt has them ("" for none); with
    `label` SUBGOALS, the subgoals a writer chooses among (`subgoals=on`)."""
    shown = " ".join(s.strip() for s in steps if s.strip())
    return f"{label}: {shown}\n" if shown else ""


def example_block(examples: Sequence[ActionExample], instructions: Sequence[Sequence[str]] = ()) -> str:
    """Retrieved examples in the prompt's own terms: the task, its step-by-step instructions where
    given (`goal_steps`: the achieving steps its sequence took), then a sequence that did it."""
    if not examples:
        return ""
    parts = ["Here are examples of other tasks: their goals and an action sequence that achieved them.\n"]
    for number, example in enumerate(examples, 1):
        steps = instructions[number - 1] if number <= len(instructions) else ()
        parts.append(f"Example {number}:\n{example.request}\n{instructions_line(steps)}Output:\n{render(example.steps)}\n")
    return "\n".join(parts) + "\n"


def build_prompt(prompt: str, examples: Sequence[ActionExample], instructions: Sequence[Sequence[str]] = (),
                 task_steps: Sequence[str] = (), label: str = "Step-by-step instructions") -> str:
    """`prompt` with the examples inserted before its last `Input:` section (first when it has none),
    and the task's step-by-step instructions (`goal_steps`) before its closing `Output:` line (at
    the end when it has none)."""
    line = instructions_line(task_steps, label)
    if line:
        end = prompt.rstrip()
        if end.endswith(OUTPUT):
            prompt = end[: -len(OUTPUT)] + line + "\n" + OUTPUT + "\n"
        else:
            prompt = prompt.rstrip("\n") + "\n" + line
    block = example_block(examples, instructions)
    cut = prompt.rfind(INPUT)
    if cut < 0 or not examples:
        return prompt if not examples else block + prompt
    return prompt[:cut] + "\n\n" + block + prompt[cut:]


def correction_request(executed: Sequence[Step], failed: Step, error: str) -> str:
    """What the closed loop adds to the prompt after a failure: what ran, what failed and why."""
    done = render(executed) if executed else "(nothing yet)"
    action, args = failed
    return (f"\n\nYou have executed these actions, which succeeded:\n{done}\n"
            f"The next action {action} {list(args)} failed: {error}\n"
            "Output, in the same JSON format, only the actions that remain to be done from the current state "
            "so that all the node goals, edge goals and action goals are satisfied.")


def goal_request(executed: Sequence[Step], unmet: Sequence[str], steps: Sequence[str] = (),
                 label: str = "Step-by-step instructions") -> str:
    """What the closed loop adds after its own goal check: what ran, which stated goal conditions
    the environment does not show yet (HELPER's "did I miss anything?", answered by the check), and
    with `goal_steps` the steps that make them true."""
    done = render(executed) if executed else "(nothing yet)"
    return (f"\n\nYou have executed these actions, which succeeded:\n{done}\n"
            "These goals are not satisfied yet:\n" + "\n".join(unmet) + "\n" + instructions_line(steps, label) +
            "Output, in the same JSON format, only the actions that remain to be done from the current state "
            "so that all the node goals, edge goals and action goals are satisfied.")
