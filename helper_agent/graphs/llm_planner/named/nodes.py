"""The named-action planner's nodes: retrieve, plan, execute, re-plan, finish (LLM-Planner's flow).

The prompt is LLM-Planner's (`graphs/llm_planner/prompts.PlanQuery`): "Task description:", then
"Completed plans:" and "Visible objects are" when re-planning, then "Next plans:"; the k examples
the benchmark lends go in as user/assistant turns, and the system turn explains the plan form and
shows the vocabulary (`graphs/named_actions.vocabulary_text`). A first plan may name every object the
environment offers; a re-plan only those seen so far (`ActionVocabulary.seen`): LLM-Planner's
grounding. A step whose effect already held changes nothing and is passed over; at the first other
failure the planner re-plans from what is completed and visible, at most `max_replans` times.

With `goal_check` (issue 53's closed loop on the task's own goal conditions; off by default) a plan
that has run, or whose failures used up the re-plans, is followed by `check`: the goal conditions
the task states are compared with what the environment shows and the actions executed
(`graphs/goal_conditions.py`), and while some are unmet the planner re-plans for them, at most
`goal_rounds` times. Every re-plan then says which are unmet ("Goals not met yet: ...") and may
name the objects they name as well as those seen (the task names them, so they are no guess).
With `achievers` each unmet condition comes with the step that makes it true by the environment's
effects (`goal_conditions.achieving_steps`). With `goal_steps` the query's and each example's
"Step-by-step instructions" are the steps that make its stated conditions true
(`goal_conditions.goal_instructions`): for the task, those not met yet; for an example, those its
plan took. With `preconditions`, a step that fails is tried once more after approaching its object
(`graphs/approach.py`, HELPER's pre-condition check) before it counts as failed; with
`preconditions=reported`, first after the steps that make true what the environment says it lacked;
a step the environment says its object can never take is then passed over like one whose effect
already held, the rest of the plan going on (the closed loop is scored on the steps executed).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from helper_agent.envs.base import ActionVocabulary, brief_error, impossible_step, redundant_step
from helper_agent.graphs.action_sequences import Step
from helper_agent.graphs.declarations import (
    example_instructions,
    example_subgoals,
    open_subgoals,
    pending,
    step_lines,
    take_step,
    task_instructions,
)
from helper_agent.graphs.goal_conditions import achieving_steps, stated_goals
from helper_agent.graphs.llm_planner.named.context import NamedPlanContext
from helper_agent.graphs.llm_planner.named.plans import parse_plan, plan_rules, plan_text
from helper_agent.graphs.llm_planner.named.state import NamedPlanState
from helper_agent.graphs.llm_planner.prompts import PlanQuery
from helper_agent.graphs.named_actions import vocabulary_text
from helper_agent.llm import grammar_decoding, invoke_with_retry

#: LLM-Planner's task explanation (`graphs/llm_planner/prompts.EXPLANATION`), for actions of any arity.
EXPLANATION = ("Create a high-level plan for completing a household task using the allowed actions and visible objects. "
               "A plan is a comma-separated list of steps; each step is an action followed by its objects "
               "(none, one or two, as the action takes).")


def plan_messages(vocabulary: ActionVocabulary, examples: list[dict[str, Any]], query: PlanQuery) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(f"{EXPLANATION}\n\n{vocabulary_text(vocabulary)}")]
    for example in examples:
        messages.append(HumanMessage(PlanQuery(example["task"], steps=example.get("steps", ()),
                                               visible=example["visible"]).text()))
        messages.append(AIMessage(example["plan"]))
    messages.append(HumanMessage(query.text()))
    return messages


def _ask(ctx: NamedPlanContext, config: RunnableConfig, messages: list[BaseMessage], vocabulary: ActionVocabulary,
         objects: list[str], only: list[Step] | None = None) -> tuple[list[Step] | None, int, str]:
    """One plan under the grammar; a plan the parser refuses is asked again with the reason. With
    `only` (`subgoals=on`) the plan is over those steps alone, at most one each."""
    settings = ctx.settings()
    bound = settings.max_plan_steps if only is None else min(settings.max_plan_steps, len(only))
    grammar = plan_rules(vocabulary, objects, bound, only).to_gbnf()
    reason = ""
    for attempt in range(1, settings.retries + 2):
        chat: Any = ctx.chat()
        decoding = grammar_decoding(chat, grammar, temperature=0.0 if attempt == 1 else settings.retry_temperature,
                                    seed=settings.seed + attempt - 1)
        if decoding:
            chat = chat.bind(**decoding)
        reply = invoke_with_retry(chat, messages, config=ctx.llm_config(config, "llm-planner:plan"))
        text = str(reply.content).strip()
        try:
            return parse_plan(text, vocabulary, objects, only), attempt, ""
        except ValueError as exc:
            reason = str(exc)
            messages = [*messages, AIMessage(text), HumanMessage(f"That answer was rejected: {reason}. Answer again.")]
    return None, settings.retries + 1, reason


def _planned(state: NamedPlanState, steps: list[Step] | None, attempts: int, reason: str, name: str) -> dict[str, Any]:
    update: dict[str, Any] = {"plan": [[a, list(args)] for a, args in steps or []],
                              "attempts": int(state.get("attempts", 0)) + attempts,
                              "decisions": int(state.get("decisions", 0)) + 1,
                              "log": [f"{name}: {plan_text(steps or [])}"]}
    if steps is None:
        update["rejected"] = int(state.get("rejected", 0)) + 1
        update["failures"] = [*state.get("failures", []), f"plan rejected: {reason}"]
    return update


# ---------------------------------------------------------------------------------- nodes
def retrieve(state: NamedPlanState, runtime: Runtime[NamedPlanContext]) -> dict[str, Any]:
    """The k examples the benchmark lends for this episode, as LLM-Planner's example blocks."""
    ctx = NamedPlanContext.of(runtime)
    k = ctx.settings().k
    found = ctx.examples(state.get("instance_id", ""), state["request"], k) if ctx.examples and k > 0 else []
    examples = [{"id": e.id, "task": e.request, "visible": list(e.objects), "plan": plan_text(e.steps)} for e in found]
    aids = ctx.settings().aids
    if aids.goal_steps or aids.subgoals:
        vocabulary = ctx.vocabulary()
        for example, solved in zip(examples, found, strict=True):
            if aids.subgoals:  # the example as the subgoals its plan took, the form the planner answers in
                taken = example_subgoals(solved.request, solved.steps, solved.objects, vocabulary) or list(solved.steps)
                example["plan"], example["steps"] = plan_text(taken), step_lines(taken)
            else:
                example["steps"] = example_instructions(solved.request, solved.steps, solved.objects, vocabulary)
    return {"examples": examples, "completed": [], "failures": [], "attempts": 0, "decisions": 0, "rejected": 0,
            "replans": 0, "status": "", "impossible": [], "log": [f"retrieved {len(examples)} examples"]}


def plan(state: NamedPlanState, runtime: Runtime[NamedPlanContext], config: RunnableConfig) -> dict[str, Any]:
    """The first plan, over every object the environment offers."""
    ctx = NamedPlanContext.of(runtime)
    vocabulary = ctx.vocabulary()
    objects = list(vocabulary.objects)
    aids = ctx.settings().aids
    still_open = _unmet(state, ctx) if aids.goal_steps else None
    only = _subgoals(state, ctx)
    if only is not None and not only:
        return {"plan": [], "written": [], "status": "met", "log": ["plan: no open subgoal"]}
    instructions = _instructions(state, ctx, vocabulary, still_open) if only is None else step_lines(only)
    query = PlanQuery(state["request"], steps=instructions, visible=objects)
    steps, attempts, reason = _ask(ctx, config, plan_messages(vocabulary, state.get("examples", []), query),
                                   vocabulary, objects, only)
    update = _planned(state, steps, attempts, reason, "plan")
    update["written"] = update["plan"]
    return update


def execute(state: NamedPlanState, runtime: Runtime[NamedPlanContext]) -> dict[str, Any]:
    """Run the plan's steps until it ends or one fails."""
    ctx = NamedPlanContext.of(runtime)
    env = ctx.environment()
    completed = list(state.get("completed", []))
    log = []
    aids = ctx.settings().aids
    vocabulary = ctx.vocabulary()
    impossible = list(state.get("impossible") or [])
    for action, args in state.get("plan", []):
        taken = take_step(env, vocabulary, (action, tuple(args)), aids.checks)
        outcome = taken.outcome
        for walk, objects in taken.approached:
            log.append(f"{walk} {' '.join(objects)}: ok (precondition)")
            completed.append([walk, list(objects)])
        if outcome.result.success:
            status, observation = "ok", "ok"
        elif redundant_step(env):  # its effect already held: passed over, as EAI's evaluator does
            status, observation = "skipped", "nothing to do: " + brief_error(env, outcome.result.error)
        elif aids.checks == "reported" and impossible_step(env):  # nothing can make it possible: passed over
            status, observation = "skipped", "impossible: " + brief_error(env, outcome.result.error)
            impossible.append([action, list(args)])
        else:
            status, observation = "failed", "failed: " + brief_error(env, outcome.result.error)
        log.append(f"{action} {' '.join(args)}: {observation}")
        if status == "ok":
            completed.append([action, list(args)])
        elif status == "failed":
            return {"completed": completed, "status": "failed", "last_tried": [action, list(args)], "log": log,
                    "impossible": impossible,
                    "failures": [*state.get("failures", []), f"{action} {list(args)}: {observation}"]}
    return {"completed": completed, "status": "done", "log": log, "impossible": impossible}


def _unmet(state: NamedPlanState, ctx: NamedPlanContext) -> list[str] | None:
    """The task's stated goal conditions the environment does not show yet (None: nothing to check)."""
    executed = [str(a) for a, _ in state.get("completed", [])]
    return pending(ctx.environment(), state["request"], executed)


def _instructions(state: NamedPlanState, ctx: NamedPlanContext, vocabulary: ActionVocabulary,
                  still_open: list[str] | None) -> list[str]:
    """With `goal_steps`: the steps that make the stated conditions not met yet (`pending`, from
    `_unmet`) true (`declarations.task_instructions`); all of them when the environment shows no facts."""
    if not ctx.settings().aids.goal_steps:
        return []
    return task_instructions(state["request"], vocabulary, still_open)


def _subgoals(state: NamedPlanState, ctx: NamedPlanContext) -> list[Step] | None:
    """With `subgoals=on`, the subgoals open now (`declarations.open_subgoals`) less those the
    environment said can never succeed; None when off or nothing could be checked (the plan is then
    over the whole vocabulary)."""
    if not ctx.settings().aids.subgoals:
        return None
    found = open_subgoals(ctx.environment(), state["request"], ctx.vocabulary(),
                          [str(a) for a, _ in state.get("completed", [])],
                          closed=[(str(a), tuple(o)) for a, o in state.get("impossible") or []])
    return None if found is None else found[1]


def with_achievers(unmet: list[str], vocabulary: ActionVocabulary) -> list[str]:
    """Each unmet condition followed by the step that makes it true, where the environment's
    effects name one: "computer is ON (SWITCHON computer)"."""
    steps = achieving_steps(unmet, vocabulary.effects, vocabulary.actions, vocabulary.objects)
    return [f"{c} ({steps[c][0]} {' '.join(steps[c][1])})" if c in steps else c for c in unmet]


def replan(state: NamedPlanState, runtime: Runtime[NamedPlanContext], config: RunnableConfig) -> dict[str, Any]:
    """Grounded re-planning: what is completed, and only the objects seen so far (with the goal
    check: the unmet goal conditions too, and the objects they name)."""
    ctx = NamedPlanContext.of(runtime)
    vocabulary = ctx.vocabulary()
    visible = list(vocabulary.seen if vocabulary.seen is not None else vocabulary.objects)
    completed = [(a, " ".join(args)) for a, args in state.get("completed", [])]
    settings = ctx.settings()
    still_open = _unmet(state, ctx) if settings.goal_check or settings.aids.goal_steps else None  # read once for both
    unmet = still_open if settings.goal_check else None
    if unmet:
        named = set(stated_goals(state["request"]).objects)
        visible += [o for o in vocabulary.objects if o in named and o not in visible]
        if settings.achievers:
            unmet = with_achievers(unmet, vocabulary)
    only = _subgoals(state, ctx)
    instructions = _instructions(state, ctx, vocabulary, still_open) if only is None else step_lines(only)
    query = PlanQuery(state["request"], steps=instructions, completed=completed, visible=visible, unmet=unmet or None)
    if only is not None and not only:  # no subgoal left to take: nothing to ask
        steps, attempts, reason = [], 0, ""
    else:
        steps, attempts, reason = _ask(ctx, config, plan_messages(vocabulary, state.get("examples", []), query),
                                       vocabulary, visible, only)
    update = _planned(state, steps, attempts, reason, "replan")
    if state.get("status") == "unmet":
        update["goal_rounds"] = int(state.get("goal_rounds", 0)) + 1
    else:
        update["replans"] = int(state.get("replans", 0)) + 1
    return update


def check(state: NamedPlanState, runtime: Runtime[NamedPlanContext]) -> dict[str, Any]:
    """The closed loop's own goal check: which stated goal conditions the environment does not show."""
    unmet = _unmet(state, NamedPlanContext.of(runtime))
    if unmet is None:
        return {"unmet": [], "log": ["check: no stated goal conditions to check"]}
    return {"unmet": unmet, "status": "unmet" if unmet else "met",
            "log": [f"check: {len(unmet)} goal condition(s) unmet" + (f": {'; '.join(unmet)}" if unmet else "")]}


def finish(state: NamedPlanState) -> dict[str, Any]:
    outcome = state.get("status") or ("planned" if state.get("plan") else "no plan")
    return {"outcome": outcome, "log": [f"finish: {outcome}"]}


# ---------------------------------------------------------------------------------- routing
def after_plan(state: NamedPlanState, runtime: Runtime[NamedPlanContext]) -> str:
    return "execute" if state.get("plan") and NamedPlanContext.of(runtime).settings().closed_loop else "finish"


def after_execute(state: NamedPlanState, runtime: Runtime[NamedPlanContext]) -> str:
    ctx = NamedPlanContext.of(runtime)
    if state.get("status") == "failed" and int(state.get("replans", 0)) < ctx.settings().max_replans:
        return "replan"
    return "check" if ctx.settings().goal_check else "finish"


def after_check(state: NamedPlanState, runtime: Runtime[NamedPlanContext]) -> str:
    ctx = NamedPlanContext.of(runtime)
    return "replan" if state.get("status") == "unmet" and int(state.get("goal_rounds", 0)) < ctx.settings().goal_rounds else "finish"
