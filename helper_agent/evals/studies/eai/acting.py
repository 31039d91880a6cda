"""What the EAI adapters of P-RAG and EmbodiedRAG share: one constrained LLM call with a
bounded retry, one action in the VirtualHome environment, and the record an episode leaves.

An action goes to `VirtualHomeEnv.step`, which executes it exactly as EAI's evaluator does. A step
the simulator calls an additional step (already satisfied) changes nothing and is not part of the
executed sequence, as EAI's evaluator skips it; any other failure is reported to the agent with the
simulator's error type and message (ids dropped), and the agent goes on as its method says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from helper_agent.envs.virtualhome import VirtualHomeEnv
from helper_agent.evals.studies.eai.grammar import Step, render
from helper_agent.evals.studies.eai.steps import DONE, parse_action
from helper_agent.llm import UsageRecorder, grammar_decoding, invoke_with_retry

T = TypeVar("T")
_IDS = re.compile(r"<([^>]+)> \(\d+\)")
_TAIL = re.compile(r'\s*when executing ".*$', re.S)


@dataclass
class EaiEpisode:
    """What one method did on one task; `record()` is its line of `results.jsonl`."""

    answer: list[Step] = field(default_factory=list)  # open loop: the written plan; closed: executed steps
    last_failed: Step | None = None
    failures: list[str] = field(default_factory=list)
    trajectory: list[dict[str, str]] = field(default_factory=list)  # per step: scene_graph, action, observation
    attempts: int = 0
    replans: int = 0
    steps: int = 0  # decisions taken (plans for LLM-Planner, actions for the step-wise methods)
    rejected: int = 0  # answers refused by the parser
    example_ids: list[str] = field(default_factory=list)
    outcome: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The response EAI scores: the executed steps, else the step last tried, else `{}`."""
        if self.answer:
            return render(self.answer)
        return render([self.last_failed]) if self.last_failed else "{}"


def ask(chat: Any, messages: list[BaseMessage], grammar: str, parse: Callable[[str], T], recorder: UsageRecorder, *,
        retries: int = 1, seed: int = 0, run_name: str = "eai") -> tuple[T | None, str, int, str]:
    """One answer under `grammar`, parsed; an answer the parser refuses is asked again with the
    reason (temperature 0.7), `retries` times. Returns (parsed or None, last text, attempts, reason)."""
    reason, text = "", ""
    for attempt in range(1, retries + 2):
        kwargs = grammar_decoding(chat, grammar, temperature=0.0 if attempt == 1 else 0.7, seed=seed + attempt - 1)
        model = chat.bind(**kwargs) if kwargs else chat
        reply = invoke_with_retry(model, messages, config={"callbacks": [recorder], "run_name": run_name})
        text = str(reply.content).strip()
        try:
            return parse(text), text, attempt, ""
        except ValueError as exc:
            reason = str(exc)
            messages = [*messages, AIMessage(text), HumanMessage(f"That answer was rejected: {reason}. Answer again.")]
    return None, text, retries + 1, reason


def short_error(error: str) -> str:
    """The simulator's message without graph ids or the script line (`soap is not close to ...`)."""
    return _IDS.sub(r"\1", _TAIL.sub("", error)).strip()


def execute(env: VirtualHomeEnv, step: Step) -> tuple[str, str]:
    """Run `step`; (status, observation): status is "ok", "skipped" (an additional step) or "failed"."""
    outcome = env.step(step[0], "|".join(step[1]))
    if outcome.result.success:
        return "ok", "ok"
    if env.last_error_type == "additional_step":
        return "skipped", "nothing to do: " + short_error(outcome.result.error)
    return "failed", "failed: " + short_error(outcome.result.error)


def act_on(env: VirtualHomeEnv, episode: EaiEpisode, entry: dict[str, str], objects: Sequence[str], number: int,
           max_steps: int) -> tuple[bool, bool]:
    """A step-wise method's `act` node: run the answer `entry["action"]` (a step, `done()` or
    "(none)" for a refused answer), write its observation into `entry`, keep the episode's record;
    (executed, finished): whether the state changed, and whether the episode is over."""
    episode.steps = number
    executed = finished = False
    if entry["action"] == DONE:
        entry["observation"] = "finished"
        finished, episode.outcome = True, "done"
    elif entry["action"] != "(none)":
        step = parse_action(entry["action"], objects)
        assert step is not None
        status, entry["observation"] = execute(env, step)
        if status == "ok":
            episode.answer.append(step)
            executed = True
        elif status == "failed":
            episode.failures.append(f"{entry['action']}: {entry['observation']}")
            episode.last_failed = step
    if not finished and number >= max_steps:
        finished, episode.outcome = True, "max_steps"
    return executed, finished


def tried_here(history: Sequence[dict[str, str]], state: str, objects: Sequence[str]) -> list[Step]:
    """The steps already taken from the state `state` (each history entry keeps the `state` key it
    acted from, `scene.state_key`). From the same state the same step ends as it did: it failed again,
    changed nothing again, or leads round the same loop, so `refuse_futile` leaves them out of the
    step's grammar. `done()` is never among them: ending the episode stays the agent's choice."""
    tried: list[Step] = []
    for entry in history:
        if entry.get("state") != state or entry.get("action") in (DONE, "(none)", None):
            continue
        step = parse_action(str(entry["action"]), objects)
        assert step is not None  # only done() parses to None, and it was skipped above
        if step not in tried:
            tried.append(step)
    return tried


def refused_here(on: bool, history: Sequence[dict[str, str]], state: str, objects: Sequence[str],
                 episode: EaiEpisode, nameable: Sequence[str] | None = None) -> list[Step]:
    """The steps `refuse_futile` leaves out of this step's grammar: those `tried_here` that name only
    objects the step can name (`nameable`, all `objects` when omitted). Counts them in the episode's
    `refused_steps`, so a record says how much the switch withheld. Empty when the switch is off."""
    if not on:
        return []
    allowed = set(objects if nameable is None else nameable)
    refused = [s for s in tried_here(history, state, objects) if set(s[1]) <= allowed]
    episode.extra["refused_steps"] = episode.extra.get("refused_steps", 0) + len(refused)
    return refused


def refusing(parse: Callable[[str], T], refused: Sequence[Step], step_of: Callable[[T], Step | None]) -> Callable[[str], T]:
    """`parse`, also refusing an answer whose step is in `refused` (with the reason the model gets
    back): a model without grammar decoding can still name one."""
    def checked(text: str) -> T:
        answer = parse(text)
        step = step_of(answer)
        if step is not None and step in refused:
            raise ValueError(f"{step[0]}({', '.join(step[1])}) was already done from this same state; choose another action")
        return answer
    return checked
