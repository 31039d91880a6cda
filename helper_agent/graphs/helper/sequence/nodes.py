"""The sequence graph's nodes: retrieve examples, write the sequence, act on it, correct, finish.

`write` and `correct` make one LLM call each (plus a bounded retry when the answer could not be
executed as written: an unknown action or object, a wrong number of objects), decoded under the
grammar of the environment's vocabulary where the model takes one. `act` executes the queued steps
one by one; a step whose effect already held changes nothing and is passed over (EAI's evaluator
skips it too); at any other failure the loop asks for the rest from the current state with what ran
and what failed, at most `max_replans` times. With `goal_check`, when the queue has run (or the
corrections are used up) `check` compares the goal conditions the task states with what the
environment shows (`graphs/goal_conditions.py`), and `correct` asks for the unmet ones, at most
`goal_rounds` times: HELPER's feedback question answered by the agent's own check, never the
benchmark's. What the environment declares comes through `graphs/declarations.py` (issue 62): with
`preconditions`, a step that fails is tried once more after approaching its object (HELPER's
pre-condition check), with `preconditions=reported` first after the steps that make true what the
environment says it lacked, a step it says can never succeed being passed over; with `goal_steps`
the prompt gives the steps that make the stated conditions true (the task's not met yet, each
example's that its sequence took), and a goal round's correction those of the unmet ones.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from helper_agent.envs.base import impossible_step, redundant_step
from helper_agent.graphs.action_sequences import Step, parse_steps, problems, sequence_grammar
from helper_agent.graphs.declarations import (
    example_instructions,
    example_subgoals,
    open_instructions,
    pending,
    step_lines,
    take_step,
    task_instructions,
)
from helper_agent.graphs.declarations import open_subgoals as declared_open_subgoals
from helper_agent.graphs.helper.sequence.context import SequenceContext
from helper_agent.graphs.helper.sequence.prompts import (
    SUBGOALS,
    build_prompt,
    correction_request,
    goal_request,
    instructions_line,
    system_prompt,
    task_prompt,
)
from helper_agent.graphs.helper.sequence.state import SequenceState
from helper_agent.graphs.registry import ActionExample
from helper_agent.llm import grammar_decoding, invoke_with_retry


def _steps(items: list[Any]) -> list[Step]:
    return [(str(a), tuple(args)) for a, args in items]


def _items(steps: list[Step]) -> list[list[Any]]:
    return [[a, list(args)] for a, args in steps]


def ask(ctx: SequenceContext, config: RunnableConfig, messages: list[BaseMessage],
        only: list[Step] | None = None) -> tuple[str, list[Step], int, list[str]]:
    """One answer, asked again (temperature `retry_temperature`, a new seed) with the reasons when it
    could not be executed as written; (text, steps, attempts, problems of the last answer). With
    `only` (`subgoals=on`) the answer is written over those steps alone, at most one each."""
    settings = ctx.settings()
    vocabulary = ctx.vocabulary()
    bound = settings.max_steps if only is None else min(settings.max_steps, len(only))
    grammar = sequence_grammar(vocabulary, bound, only=only)
    text, steps, found = "", [], []
    for attempt in range(1, settings.retries + 2):
        chat: Any = ctx.chat()
        decoding = grammar_decoding(chat, grammar, temperature=0.0 if attempt == 1 else settings.retry_temperature,
                                    seed=attempt)
        if decoding:
            chat = chat.bind(**decoding)
        reply = invoke_with_retry(chat, messages, config=ctx.llm_config(config, "helper:sequence"))
        text = str(reply.content).strip()
        steps = parse_steps(text)
        found = problems(steps, vocabulary, only)
        if not found:
            return text, steps, attempt, []
        messages = [*messages, AIMessage(text), HumanMessage(
            "That answer cannot be executed: " + "; ".join(found[:5]) + ". Write the whole JSON again.")]
    return text, steps, settings.retries + 1, found


def _messages(ctx: SequenceContext, prompt_text: str) -> list[BaseMessage]:
    return [SystemMessage(system_prompt(ctx.vocabulary())), HumanMessage(prompt_text)]


def open_subgoals(ctx: SequenceContext, state: SequenceState) -> list[Step] | None:
    """With `subgoals=on`, the subgoals open now (`declarations.open_subgoals`), less the steps the
    environment said can never succeed; None when off, or when the task states no goal the
    environment can be checked against (the writer then writes over the whole vocabulary)."""
    if not ctx.settings().aids.subgoals:
        return None
    found = declared_open_subgoals(ctx.environment(), state["request"], ctx.vocabulary(),
                                   [str(a) for a, _ in state.get("executed") or []],
                                   closed=_steps(state.get("impossible") or []))
    return None if found is None else found[1]


# ---------------------------------------------------------------------------------- nodes
def retrieve(state: SequenceState, runtime: Runtime[SequenceContext]) -> dict[str, Any]:
    """The k examples the benchmark lends for this episode (none without a source or with k = 0)."""
    ctx = SequenceContext.of(runtime)
    k = ctx.settings().k
    found = ctx.examples(state.get("instance_id", ""), state["request"], k) if ctx.examples and k > 0 else []
    examples = [{"id": e.id, "request": e.request, "steps": _items(list(e.steps))} for e in found]
    lent = [ActionExample(e["id"], e["request"], tuple(_steps(e["steps"]))) for e in examples]
    prompt = state.get("prompt") or task_prompt(state["request"], ctx.vocabulary())
    instructions: list[list[str]] = []
    task_steps: list[str] = []
    aids, vocabulary = ctx.settings().aids, ctx.vocabulary()
    if aids.goal_steps:  # what the environment declares (`graphs/declarations.py`)
        instructions = [example_instructions(e.request, e.steps, e.objects or vocabulary.objects, vocabulary)
                        for e in found]
        if not aids.subgoals:  # with subgoals the task's own are given when the sequence is written (`write`)
            task_steps = open_instructions(ctx.environment(), state["request"], vocabulary, [])
    if aids.subgoals:  # each example as the subgoals its sequence took, the form the writer answers in
        lent = [ActionExample(e.id, e.request, tuple(example_subgoals(e.request, e.steps, e.objects or vocabulary.objects,
                                                                      vocabulary)) or e.steps) for e in found]
    return {"examples": examples, "prompt_text": build_prompt(prompt, lent, instructions, task_steps), "impossible": [],
            "executed": [], "failures": [],
            "replans": 0, "attempts": 0, "problems": [], "failed": [], "error": "", "status": "",
            "log": [f"retrieve: {len(examples)} examples {', '.join(e['id'] for e in examples)}".rstrip()]}


def write(state: SequenceState, runtime: Runtime[SequenceContext], config: RunnableConfig) -> dict[str, Any]:
    """The whole sequence, once (in the open loop, the answer)."""
    ctx = SequenceContext.of(runtime)
    only = open_subgoals(ctx, state)
    if only is not None and not only:  # no subgoal open: nothing to write
        return {"answer": "{}", "queue": [], "attempts": 0, "problems": [], "log": ["write: no open subgoal"]}
    prompt_text = state["prompt_text"]
    if only is not None:
        prompt_text = build_prompt(prompt_text, [], task_steps=step_lines(only), label=SUBGOALS)
    text, steps, attempts, found = ask(ctx, config, _messages(ctx, prompt_text), only)
    return {"answer": text, "queue": _items(steps), "attempts": attempts, "problems": found,
            "log": [f"write: {len(steps)} steps in {attempts} attempt(s)" + (f"; {'; '.join(found[:3])}" if found else "")]}


def act(state: SequenceState, runtime: Runtime[SequenceContext]) -> dict[str, Any]:
    """Execute the queue until it ends, a step fails, or the loop has taken `max_actions` steps."""
    ctx = SequenceContext.of(runtime)
    env = ctx.environment()
    queue = _steps(state.get("queue") or [])
    executed = list(state.get("executed") or [])
    failures = list(state.get("failures") or [])
    aids = ctx.settings().aids
    vocabulary = ctx.vocabulary()
    impossible = list(state.get("impossible") or [])
    while queue and env.steps < ctx.settings().max_actions:
        step = queue.pop(0)
        taken = take_step(env, vocabulary, (step[0], tuple(step[1])), aids.checks)
        outcome = taken.outcome
        executed += [[walk, list(objects)] for walk, objects in taken.approached]
        if outcome.result.success:
            executed.append([step[0], list(step[1])])
            continue
        if redundant_step(env):
            continue  # its effect already held: nothing to do
        if aids.checks == "reported" and impossible_step(env):
            impossible.append([step[0], list(step[1])])
            continue  # the environment says nothing can make it possible: passed over, the rest goes on
        failures.append(f"{step[0]} {list(step[1])}: {outcome.result.error}")
        return {"queue": _items(queue), "executed": executed, "failures": failures, "status": "failed",
                "impossible": impossible,
                "failed": [step[0], list(step[1])], "error": outcome.result.error,
                "log": [f"act: {step[0]} {' '.join(step[1])} failed: {outcome.result.error}"]}
    status = "max_actions" if queue else "done"
    return {"queue": _items(queue), "executed": executed, "failures": failures, "status": status,
            "impossible": impossible,
            "log": [f"act: {status} ({len(executed)} steps executed)"]}


def correct(state: SequenceState, runtime: Runtime[SequenceContext], config: RunnableConfig) -> dict[str, Any]:
    """The rest of the sequence from the current state, told what ran and what failed (or, after the
    goal check, which stated goal conditions are unmet)."""
    ctx = SequenceContext.of(runtime)
    executed = _steps(state.get("executed") or [])
    goal_round = state.get("status") == "unmet"
    only = open_subgoals(ctx, state)
    if goal_round:
        unmet = state.get("unmet") or []
        if only is not None:
            request = goal_request(executed, unmet, step_lines(only), label=SUBGOALS)
        else:
            steps_for = (task_instructions(state["request"], ctx.vocabulary(), unmet)
                         if ctx.settings().aids.goal_steps else [])
            request = goal_request(executed, unmet, steps_for)
    else:
        request = correction_request(executed, _steps([state["failed"]])[0], state.get("error", ""))
        if only:
            request += "\n" + instructions_line(step_lines(only), SUBGOALS)
    if only is not None and not only:  # no subgoal left to take: nothing to ask
        steps, used, found = [], 0, []
    else:
        _, steps, used, found = ask(ctx, config, _messages(ctx, state["prompt_text"] + request), only)
    update: dict[str, Any] = {"queue": _items(steps), "attempts": int(state.get("attempts", 0)) + used, "problems": found}
    if goal_round:
        rounds = int(state.get("goal_rounds", 0)) + 1
        return {**update, "goal_rounds": rounds, "log": [f"correct goals {rounds}: {len(steps)} steps"]}
    replans = int(state.get("replans", 0)) + 1
    return {**update, "replans": replans, "log": [f"correct {replans}: {len(steps)} steps"]}


def check(state: SequenceState, runtime: Runtime[SequenceContext]) -> dict[str, Any]:
    """The closed loop's own goal check: which stated goal conditions the environment does not show."""
    ctx = SequenceContext.of(runtime)
    executed = [str(a) for a, _ in state.get("executed") or []]
    unmet = pending(ctx.environment(), state["request"], executed)
    if unmet is None:
        return {"unmet": [], "log": ["check: no stated goal conditions to check"]}
    return {"unmet": unmet, "status": "unmet" if unmet else "met",
            "log": [f"check: {len(unmet)} goal condition(s) unmet" + (f": {'; '.join(unmet)}" if unmet else "")]}


def finish(state: SequenceState, runtime: Runtime[SequenceContext]) -> dict[str, Any]:
    outcome = state.get("status") or ("written" if state.get("queue") else "no sequence")
    return {"outcome": outcome, "log": [f"finish: {outcome}"]}


# ---------------------------------------------------------------------------------- routing
def after_write(state: SequenceState, runtime: Runtime[SequenceContext]) -> str:
    return "act" if SequenceContext.of(runtime).settings().closed_loop else "finish"


def after_act(state: SequenceState, runtime: Runtime[SequenceContext]) -> str:
    ctx = SequenceContext.of(runtime)
    if state.get("status") == "failed" and int(state.get("replans", 0)) < ctx.settings().max_replans:
        return "correct"
    if ctx.settings().goal_check and state.get("status") != "max_actions":
        return "check"
    return "finish"


def after_check(state: SequenceState, runtime: Runtime[SequenceContext]) -> str:
    ctx = SequenceContext.of(runtime)
    return "correct" if state.get("status") == "unmet" and int(state.get("goal_rounds", 0)) < ctx.settings().goal_rounds else "finish"
