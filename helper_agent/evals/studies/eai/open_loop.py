"""Open-loop action sequencing (EAI's protocol): one answer per task, written once under the grammar.

HELPER's planner on EAI: the prompt is EAI's task input, with the k most similar other tasks' gold
sequences (HELPER's retrieval-augmented examples, cross-task: `pool.py`) between EAI's instructions and the
task's input. The answer is decoded under `response_grammar` where the model takes a grammar; from
a model that does not, an answer EAI would reject (unknown action, wrong arity, unknown object) gets
a bounded retry with the reasons. The answer text is EAI's response (`llm_output`) unchanged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from helper_agent.evals.studies.eai.grammar import (
    DEFAULT_MAX_STEPS,
    Step,
    parse_steps,
    problems,
    render,
    response_grammar,
)
from helper_agent.evals.studies.eai.memory import Example, GoldMemory
from helper_agent.evals.studies.eai.pool import check_examples
from helper_agent.evals.studies.eai.tasks import EaiTask
from helper_agent.llm import UsageRecorder, grammar_decoding, invoke_with_retry

SYSTEM = ("You control a household robot in VirtualHome. Answer with the action commands only, "
          "as the JSON object the task asks for.")


def example_block(examples: list[Example]) -> str:
    """Retrieved examples in the prompt's own terms: the goals, then a correct answer."""
    if not examples:
        return ""
    parts = ["Here are examples of other tasks: their goals and an action sequence that achieved them.\n"]
    for number, example in enumerate(examples, 1):
        parts.append(f"Example {number}:\n{example.task.goal_text}\nOutput:\n{render(example.steps)}\n")
    return "\n".join(parts) + "\n"


def build_prompt(task: EaiTask, examples: list[Example]) -> str:
    """EAI's prompt with the examples inserted before its `Input:` section (its instructions, which
    are the same for every task, stay first so a local model reuses their KV cache)."""
    cut = task.prompt.rfind("\nInput:\n")
    if cut < 0 or not examples:
        return task.prompt if not examples else example_block(examples) + task.prompt
    return task.prompt[:cut] + "\n\n" + example_block(examples) + task.prompt[cut:]


@dataclass
class Answer:
    """One written sequence: EAI's response text, its parsed steps, and what it cost."""

    text: str
    steps: list[Step]
    attempts: int
    problems: list[str] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=dict)
    prompt_chars: int = 0
    seconds: float = 0.0
    example_ids: list[str] = field(default_factory=list)


class HelperSequencer:
    """HELPER's open-loop writer: retrieval-augmented prompt, grammar-constrained answer."""

    name = "helper"

    def __init__(self, chat: Any, memory: GoldMemory | None, *, k: int = 3, max_steps: int = DEFAULT_MAX_STEPS,
                 retries: int = 1, grammar: bool = True) -> None:
        self.chat, self.memory, self.k = chat, memory, k
        self.max_steps, self.retries, self.grammar = max_steps, retries, grammar

    def examples(self, task: EaiTask) -> list[Example]:
        """The memory's examples for `task`, checked against the pool rule whatever memory was handed in."""
        found = self.memory.retrieve(task, self.k) if self.memory is not None and self.k > 0 else []
        check_examples(task, [e.task for e in found])
        return found

    def messages(self, task: EaiTask, examples: list[Example], extra: str = "") -> list[BaseMessage]:
        return [SystemMessage(SYSTEM), HumanMessage(build_prompt(task, examples) + extra)]

    def ask(self, task: EaiTask, messages: list[BaseMessage], recorder: UsageRecorder, *,
            max_steps: int | None = None) -> tuple[str, list[Step], int, list[str]]:
        """One answer with a bounded retry when it would fail EAI's grammar checks."""
        found: list[str] = []
        text = ""
        steps: list[Step] = []
        for attempt in range(1, self.retries + 2):
            kwargs = grammar_decoding(self.chat, response_grammar(task, max_steps or self.max_steps),
                                      temperature=0.0 if attempt == 1 else 0.7, seed=attempt) if self.grammar else {}
            reply = self._invoke(messages, recorder, kwargs)
            text = str(reply.content).strip()
            steps = parse_steps(text)
            found = problems(steps, task)
            if not found:
                return text, steps, attempt, []
            messages = [*messages, AIMessage(text), HumanMessage(
                "That answer cannot be executed: " + "; ".join(found[:5]) + ". Write the whole JSON again.")]
        return text, steps, self.retries + 1, found

    def _invoke(self, messages: list[BaseMessage], recorder: UsageRecorder, kwargs: dict[str, Any]) -> AIMessage:
        config = {"callbacks": [recorder], "run_name": "eai_sequence"}
        if kwargs:
            return invoke_with_retry(self.chat.bind(**kwargs), messages, config=config)
        return invoke_with_retry(self.chat, messages, config=config)

    def write(self, task: EaiTask) -> Answer:
        """The whole action sequence for `task`, once (EAI's open-loop protocol)."""
        started = time.perf_counter()
        recorder = UsageRecorder()
        examples = self.examples(task)
        messages = self.messages(task, examples)
        text, steps, attempts, found = self.ask(task, messages, recorder)
        return Answer(text, steps, attempts, found, recorder.summary(), sum(len(str(m.content)) for m in messages),
                      round(time.perf_counter() - started, 3), [e.task.identifier for e in examples])

