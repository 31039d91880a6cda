"""The LLM-Planner graph's nodes: retrieve examples, plan, execute subgoals, re-plan, finish.

`plan` and `replan` make one LLM call each (plus a bounded retry when the answer does not parse),
constrained by a grammar over the allowed actions and objects: the environment's object classes for
the first plan, the objects observed so far for a re-plan. `execute` runs the current plan's
subgoals with the low-level controller until the plan ends or a subgoal fails or gets stuck.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from helper_agent.graphs.llm_planner.context import LLMPlannerContext
from helper_agent.graphs.llm_planner.plans import (
    PlanParseError,
    PlanVocabulary,
    Step,
    format_plan,
    parse_plan,
    plan_grammar,
)
from helper_agent.graphs.llm_planner.prompts import PlanQuery, fit_examples, planner_messages
from helper_agent.graphs.llm_planner.state import LLMPlannerState
from helper_agent.llm import grammar_decoding, invoke_with_retry

LIMITS = ("step_limit", "failure_limit")


def ask_plan(ctx: LLMPlannerContext, config: RunnableConfig, examples: list[PlanQuery], query: PlanQuery,
             vocabulary: PlanVocabulary, name: str) -> tuple[list[Step], str, list[str]]:
    """One planning call under the grammar, retried with the parser's reason; (plan, error, log)."""
    actions = list(vocabulary.actions)
    grammar = plan_grammar(vocabulary)
    error, previous, log = "", "", []
    fitted = fit_examples(actions, examples, query, ctx.config.max_prompt_chars)
    if len(fitted) < len(examples):
        log.append(f"{name}: {len(fitted)} of {len(examples)} examples fit the prompt")
    examples = fitted
    for attempt in range(1, ctx.config.max_plan_attempts + 1):
        temperature = 0.0 if attempt == 1 else ctx.config.retry_temperature
        chat: Any = ctx.chat()
        decoding = grammar_decoding(chat, grammar, temperature=temperature, seed=ctx.config.seed + attempt - 1)
        if decoding:
            chat = chat.bind(**decoding)
        messages = planner_messages(actions, examples, query, error=error, previous=previous)
        reply = invoke_with_retry(chat, messages, config=ctx.llm_config(config, name))
        previous = str(reply.content)
        try:
            plan = parse_plan(previous, vocabulary)
            log.append(f"{name}: {format_plan(plan)}")
            return plan, "", log
        except PlanParseError as exc:
            error = str(exc)
            log.append(f"{name}: rejected ({error})")
    return [], error, log


def _examples(state: LLMPlannerState, visible: bool) -> list[PlanQuery]:
    return [PlanQuery(task=e["instruction"], steps=e.get("steps") or (), plan=[tuple(s) for s in e["plan"]],  # type: ignore[misc]
                      visible=(e.get("visible") or []) if visible else None) for e in state.get("examples") or []]


# ---------------------------------------------------------------------------------- nodes
def retrieve(state: LLMPlannerState, runtime: Runtime[LLMPlannerContext]) -> dict[str, Any]:
    """k in-context examples for the request (kNN by instruction, or random)."""
    ctx = LLMPlannerContext.of(runtime)
    records = ctx.retrieve(state["request"])
    examples = [{"id": r.id, "instruction": r.instruction, "plan": [list(s) for s in r.hlp()],
                 "steps": list(r.step_instructions) if state.get("step_instructions") else [],
                 "visible": list(r.visible_objects) or sorted({o for _, o in r.hlp()})} for r in records]
    return {"examples": examples, "completed": [], "replans": 0, "trace": [], "plan": [], "plan_error": "",
            "status": "", "error": "", "outcome": "",
            "log": [f"retrieve: {ctx.config.retriever} k={ctx.config.k}: {', '.join(e['id'] for e in examples)}"]}


def plan(state: LLMPlannerState, runtime: Runtime[LLMPlannerContext], config: RunnableConfig) -> dict[str, Any]:
    """The first high-level plan, over the environment's object vocabulary."""
    ctx = LLMPlannerContext.of(runtime)
    query = PlanQuery(task=state["request"], steps=state.get("step_instructions") or ())
    steps, error, log = ask_plan(ctx, config, _examples(state, visible=False), query, ctx.first_vocabulary(), "plan")
    return {"plan": [list(s) for s in steps], "plan_error": error, "log": log}


def execute(state: LLMPlannerState, runtime: Runtime[LLMPlannerContext]) -> dict[str, Any]:
    """Run the current plan's subgoals until it ends, one fails or gets stuck, or a limit is hit."""
    ctx = LLMPlannerContext.of(runtime)
    controller = ctx.controller()
    completed = [list(s) for s in state.get("completed") or []]
    trace = [list(t) for t in state.get("trace") or []]
    log: list[str] = []
    status, error = "done", ""
    for step in state.get("plan") or []:
        action, obj = step[0], step[1]
        outcome = controller.run_step((action, obj))
        trace.append([f"{action} {obj}", outcome.status, outcome.actions])
        if outcome.status != "done":
            status, error = outcome.status, outcome.error
            log.append(f"execute: {action} {obj}: {outcome.status} ({outcome.error})")
            break
        completed.append([action, obj])
    else:
        log.append(f"execute: plan finished ({len(completed)} subgoals done)")
    return {"completed": completed, "trace": trace, "status": status, "error": error, "log": log}


def replan(state: LLMPlannerState, runtime: Runtime[LLMPlannerContext], config: RunnableConfig) -> dict[str, Any]:
    """Algorithm 1's grounded re-planning: completed subgoals and the objects seen so far go into
    the prompt, and the continuation is constrained to those objects."""
    ctx = LLMPlannerContext.of(runtime)
    seen = ctx.seen_objects()
    completed: list[Step] = [(s[0], s[1]) for s in state.get("completed") or []]
    query = PlanQuery(task=state["request"], steps=state.get("step_instructions") or (), completed=completed, visible=seen)
    vocabulary = ctx.first_vocabulary().restricted(seen)
    steps, error, log = ask_plan(ctx, config, _examples(state, visible=True), query, vocabulary, "replan")
    replans = int(state.get("replans", 0)) + 1
    return {"plan": [list(s) for s in steps], "plan_error": error, "replans": replans,
            "log": [f"replan {replans}: after {state.get('status')} ({state.get('error', '')}); seen {len(seen)} object classes", *log]}


def finish(state: LLMPlannerState, runtime: Runtime[LLMPlannerContext]) -> dict[str, Any]:
    """The episode's outcome: the plan ran to its end (done), or how it stopped."""
    if not state.get("plan") and state.get("plan_error") and not state.get("completed"):
        outcome = "invalid_plan"
    else:
        outcome = state.get("status") or "invalid_plan"
    return {"outcome": outcome, "log": [f"finish: {outcome}"]}


# ---------------------------------------------------------------------------------- routing
def after_plan(state: LLMPlannerState) -> str:
    return "execute" if state.get("plan") else "finish"


def after_execute(state: LLMPlannerState, runtime: Runtime[LLMPlannerContext]) -> str:
    ctx = LLMPlannerContext.of(runtime)
    status = state.get("status", "")
    if status == "done" or status in LIMITS:
        return "finish"
    if ctx.config.replan and int(state.get("replans", 0)) < ctx.config.max_replans:
        return "replan"
    return "finish"
