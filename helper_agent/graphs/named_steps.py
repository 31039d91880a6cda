"""The step loop P-RAG and EmbodiedRAG share in an environment they act in by names (`envs/base.ActsByName`,
VirtualHome): one constrained LLM call with a bounded retry, one action, the episode's account, the
`refuse_futile` switch, and the `subgoals` switch (`graphs/declarations.py`: each step chooses among
the achieving steps of the stated conditions not met yet, taken with the pre-condition check).

An action goes to `env.act_by_name`. A step the environment calls skipped (it had nothing to do)
changes nothing and is not part of the executed sequence; a failure is the step's observation (the
environment's words), and the agent goes on as its method says. The account (`NamedEpisode`) is
what the agent reports of itself: its decisions, the answers refused, the retrieved episodes, its
trajectory; the benchmark scores the environment, never this account.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from helper_agent.envs.base import ActionVocabulary, ActsByName, brief_error, impossible_step, redundant_step
from helper_agent.graphs.base import RunContext
from helper_agent.graphs.declarations import Preconditions, take_step
from helper_agent.graphs.declarations import open_subgoals as declared_open_subgoals
from helper_agent.graphs.named_actions import (
    DONE,
    THOUGHT,
    Step,
    StepAnswer,
    parse_action,
    parse_react_answer,
    parse_step_answer,
    step_text,
)
from helper_agent.llm import UsageRecorder, grammar_decoding, invoke_with_retry
from helper_agent.program.cfg import Grammar, Ref, alt, seq

T = TypeVar("T")
NONE = "(none)"  # the action of a step whose answer was refused


@dataclass
class NamedContext(RunContext):
    """The run context of a step loop that acts by name: the environment it was handed, checked to
    act by names, and its vocabulary, asked for once per episode (both step-wise methods use it)."""

    _vocabulary: ActionVocabulary | None = None

    def world(self) -> ActsByName:
        env = self.environment()
        if not isinstance(env, ActsByName):
            raise TypeError(f"{type(env).__name__} does not act by names (envs/base.ActsByName)")
        return env

    def vocabulary(self) -> ActionVocabulary:
        if self._vocabulary is None:
            self._vocabulary = self.world().action_vocabulary()
        return self._vocabulary


@dataclass
class NamedEpisode:
    """What a step-wise method did in one episode, in its own words (`details()` is what it reports)."""

    failures: list[str] = field(default_factory=list)  # "ACTION(args): failed: ..." per failed step
    trajectory: list[dict[str, str]] = field(default_factory=list)  # per step: what it saw, did, was told
    attempts: int = 0  # LLM answers asked for (retries included)
    steps: int = 0  # decisions taken (one action or done() each)
    rejected: int = 0  # answers refused by the parser
    example_ids: list[str] = field(default_factory=list)  # stored episodes retrieved into a prompt
    outcome: str = ""  # "done" (its own done()) or "max_steps"
    executed: list[str] = field(default_factory=list)  # the actions executed, in order (approaches included)
    impossible: list[Step] = field(default_factory=list)  # steps the environment said can never succeed
    extra: dict[str, Any] = field(default_factory=dict)  # the method's own per-episode figures

    def details(self) -> dict[str, Any]:
        """The account a benchmark keeps as it is (`AgentResult.details`)."""
        return {"attempts": self.attempts, "replans": 0, "failures": list(self.failures),
                "examples": list(self.example_ids), "decisions": self.steps, "rejected": self.rejected,
                "trajectory": [dict(s) for s in self.trajectory], **self.extra}


def ask(chat: Any, messages: list[BaseMessage], grammar: str, parse: Callable[[str], T], recorder: UsageRecorder, *,
        retries: int = 1, seed: int = 0, run_name: str = "step") -> tuple[T | None, str, int, str]:
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


def act_on(env: ActsByName, vocabulary: ActionVocabulary, episode: NamedEpisode, entry: dict[str, str],
           number: int, max_steps: int, preconditions: Preconditions = "off") -> tuple[bool, bool]:
    """A step-wise method's `act` node: run the answer `entry["action"]` (a step, `done()` or
    `NONE` for a refused answer), write its observation into `entry`, keep the episode's account;
    (executed, finished): whether the state changed, and whether the episode is over. With
    `preconditions` (`graphs/declarations.py`) the step is taken with the pre-condition check, and
    the approach steps it took are named in the observation."""
    episode.steps = number
    executed = finished = False
    if entry["action"] == DONE:
        entry["observation"] = "finished"
        finished, episode.outcome = True, "done"
    elif entry["action"] != NONE:
        step = parse_action(entry["action"], vocabulary, vocabulary.objects)
        assert step is not None
        status, entry["observation"] = _take(env, vocabulary, episode, step, preconditions)
        if status == "ok":
            executed = True
        elif status == "failed":
            episode.failures.append(f"{entry['action']}: {entry['observation']}")
    if not finished and number >= max_steps:
        finished, episode.outcome = True, "max_steps"
    return executed, finished


def _take(env: ActsByName, vocabulary: ActionVocabulary, episode: NamedEpisode, step: Step,
          preconditions: Preconditions) -> tuple[str, str]:
    """One step: (status, observation), "ok", "skipped" or "failed" as `ActsByName.act_by_name` says;
    the executed actions go into the episode's account."""
    if preconditions == "off":
        outcome = env.act_by_name(*step)
        if outcome.status == "ok":
            episode.executed.append(step[0])
        return outcome.status, outcome.observation
    taken = take_step(env, vocabulary, step, preconditions)
    episode.executed += [a for a, _ in taken.approached]
    before = "".join(f"{step_text(s)} first; " for s in taken.approached)
    if taken.outcome.result.success:
        episode.executed.append(step[0])
        return "ok", before + "ok"
    error = brief_error(env, taken.outcome.result.error)
    if redundant_step(env):
        return "skipped", before + "nothing to do: " + error
    if impossible_step(env):
        episode.impossible.append(step)
        return "failed", before + "impossible: " + error
    return "failed", before + "failed: " + error


@dataclass(frozen=True)
class Subgoals:
    """The task's stated conditions not met yet, and the subgoals (achieving steps) open now."""

    unmet: list[str]
    steps: list[Step]


def open_subgoals(env: Any, vocabulary: ActionVocabulary, request: str, episode: NamedEpisode,
                  history: Sequence[dict[str, str]], state: str) -> Subgoals | None:
    """`declarations.open_subgoals` for the state now, less the steps already tried from this same
    state (`tried_here`: they would end as they did) and those the environment said can never
    succeed; None when the step is chosen over the whole vocabulary, as without the switch."""
    found = declared_open_subgoals(env, request, vocabulary, episode.executed,
                                   closed=[*tried_here(history, state, vocabulary), *episode.impossible])
    return None if found is None else Subgoals(*found)


def subgoal_lines(subgoals: Subgoals) -> list[str]:
    """The prompt's lines for `subgoals=on`: what is unmet, and the subgoals to choose among."""
    return ["Goals not met yet: " + ("; ".join(subgoals.unmet) or "none"),
            "Subgoals you can take now (each is done with the steps it needs; choose the one to do next): "
            + ("; ".join(step_text(s) for s in subgoals.steps) or "none")]


def choice_rules(steps: Sequence[Step], thought: bool = False) -> Grammar:
    """`Action: ` one of `steps` (after `Thought: <one line>` with `thought`). `done()` is not among
    them: while a subgoal is open the episode goes on, and it ends when none is (`open_subgoals`)."""
    action = alt(*(step_text(s) for s in steps))
    if not thought:
        return Grammar({"root": seq("Action: ", Ref("action")), "action": action})
    return Grammar({"root": seq("Thought: ", Ref("thought"), "\nAction: ", Ref("action")),
                    "thought": THOUGHT, "action": action})


def parse_choice(text: str, steps: Sequence[Step], vocabulary: ActionVocabulary, thought: bool = False) -> StepAnswer:
    """The answer to `choice_rules`: a step of `steps`; a `ValueError` says what is wrong."""
    answer = (parse_react_answer if thought else parse_step_answer)(text, vocabulary, vocabulary.objects)
    if answer.step not in steps:
        raise ValueError(f"{step_text(answer.step)} is not one of the subgoals open now; choose one of "
                         + ", ".join(step_text(s) for s in steps))
    return answer


def forced_choice(subgoals: Subgoals | None) -> dict[str, str] | None:
    """The step's decision when the model has none to make (`subgoals=on`): `done()` when no subgoal
    is open (the agent's own check), the one subgoal when only one is; None when the model chooses."""
    if subgoals is None or len(subgoals.steps) > 1:
        return None
    if not subgoals.steps:
        return {"action": DONE, "thought": "no open subgoal: " + ("; ".join(subgoals.unmet) or "every goal met")}
    return {"action": step_text(subgoals.steps[0]), "thought": "the one open subgoal"}


def tried_here(history: Sequence[dict[str, str]], state: str, vocabulary: ActionVocabulary) -> list[Step]:
    """The steps already taken from the state `state` (each history entry keeps the `state` key it
    acted from, `ActsByName.state_key`). From the same state the same step ends as it did: it failed
    again, changed nothing again, or leads round the same loop, so `refuse_futile` leaves them out of
    the step's grammar. `done()` is never among them: ending the episode stays the agent's choice."""
    tried: list[Step] = []
    for entry in history:
        if entry.get("state") != state or entry.get("action") in (DONE, NONE, None):
            continue
        step = parse_action(str(entry["action"]), vocabulary, vocabulary.objects)
        assert step is not None  # only done() parses to None, and it was skipped above
        if step not in tried:
            tried.append(step)
    return tried


def refused_here(on: bool, history: Sequence[dict[str, str]], state: str, vocabulary: ActionVocabulary,
                 episode: NamedEpisode, nameable: Sequence[str] | None = None) -> list[Step]:
    """The steps `refuse_futile` leaves out of this step's grammar: those `tried_here` that name only
    objects the step can name (`nameable`, all the vocabulary's objects when omitted). Counts them in
    the episode's `refused_steps`, so a record says how much the switch withheld. Empty when off."""
    if not on:
        return []
    allowed = set(vocabulary.objects if nameable is None else nameable)
    refused = [s for s in tried_here(history, state, vocabulary) if set(s[1]) <= allowed]
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
