"""LLM-Planner on EAI: its kNN few-shot high-level plan, and grounded re-planning in the closed loop.

    retrieve -> plan --(open loop, or no plan)--> finish -> END
                  '--(closed loop)--> execute --(done)--> finish
                                         '--(a step failed, re-plans left)--> replan --> execute

The method's own prompt (`graphs/llm_planner/prompts.PlanQuery`): "Task description:" (here EAI's
node, edge and action goals), "Completed plans:" and "Visible objects are" when re-planning, then
"Next plans:"; the k nearest other tasks (by goal text, cross-task: from tasks 101-342, never one
that shares the task's goal or task name, `pool.py`) as user/assistant turns. A plan is `ACTION object[ object], ...` over EAI's vocabulary
(`steps.plan_rules`): the first plan may name every object EAI's prompt lists for the task, as every
model is given them; a re-plan only the objects seen so far (the rooms, the relevant objects in the
rooms the robot has been in, what it has been close to), LLM-Planner's grounding.

Open loop, the first plan is the answer EAI scores. Closed loop, its steps run in VirtualHome; at
the first failure (an additional step is skipped, as EAI's evaluator skips it) the planner re-plans
from what is completed and visible, at most `max_replans` times, and the executed steps are the
answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from helper_agent.envs.virtualhome import VirtualHomeEnv
from helper_agent.envs.virtualhome_scene import visible_names, where
from helper_agent.evals.studies.eai.acting import EaiEpisode, ask, execute
from helper_agent.evals.studies.eai.grammar import Step
from helper_agent.evals.studies.eai.memory import GoldMemory
from helper_agent.evals.studies.eai.pool import check_examples
from helper_agent.evals.studies.eai.steps import parse_plan, plan_rules, plan_text, vocabulary_text
from helper_agent.evals.studies.eai.tasks import EaiTask
from helper_agent.graphs.llm_planner.prompts import PlanQuery
from helper_agent.llm import UsageRecorder

MAX_PLAN_STEPS = 40
#: LLM-Planner's task explanation (`graphs/llm_planner/prompts.EXPLANATION`), with EAI's arities.
EXPLANATION = ("Create a high-level plan for completing a household task using the allowed actions and visible objects. "
               "A plan is a comma-separated list of steps; each step is an action followed by its objects "
               "(none, one or two, as the action takes).")


@dataclass
class LLMPlannerEaiContext:
    task: EaiTask
    chat: Any
    env: VirtualHomeEnv | None = None  # None: open loop (the plan is never executed)
    pool: GoldMemory | None = None
    k: int = 3
    max_replans: int = 2
    recorder: UsageRecorder = field(default_factory=UsageRecorder)
    episode: EaiEpisode = field(default_factory=EaiEpisode)
    seen_rooms: set[int] = field(default_factory=set)
    been_close: set[int] = field(default_factory=set)


class LLMPlannerEaiState(TypedDict, total=False):
    request: str
    examples: list[dict[str, Any]]
    plan: list[list[Any]]
    completed: list[list[Any]]
    status: str
    log: list[str]


def _query(step: Step) -> tuple[str, str]:
    """A step as `PlanQuery` holds one: (action, the objects joined by spaces)."""
    return step[0], " ".join(step[1])


def plan_messages(examples: list[dict[str, Any]], query: PlanQuery, error: str = "", previous: str = "") -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(f"{EXPLANATION}\n\n{vocabulary_text()}")]
    for example in examples:
        messages.append(HumanMessage(PlanQuery(example["task"], visible=example["visible"]).text()))
        messages.append(AIMessage(example["plan"]))
    messages.append(HumanMessage(query.text()))
    if error:
        messages += [AIMessage(previous or "(no plan)"), HumanMessage(f"That plan was rejected: {error}\nWrite the plan again.\nNext plans:")]
    return messages


def retrieve(state: LLMPlannerEaiState, runtime: Runtime[LLMPlannerEaiContext]) -> dict[str, Any]:
    ctx = runtime.context
    hits = ctx.pool.retrieve(ctx.task, ctx.k) if ctx.pool is not None and ctx.k > 0 else []
    check_examples(ctx.task, [h.task for h in hits])  # whatever memory was handed in
    ctx.episode.example_ids = [h.task.identifier for h in hits]
    examples = [{"task": h.task.goal_text, "visible": list(h.task.arguments), "plan": plan_text(h.steps)} for h in hits]
    return {"examples": examples, "completed": [], "log": [f"retrieved {len(examples)} examples"]}


def _plan(ctx: LLMPlannerEaiContext, examples: list[dict[str, Any]], query: PlanQuery, objects: list[str]) -> list[Step] | None:
    grammar = plan_rules(objects, MAX_PLAN_STEPS).to_gbnf()
    steps, _, attempts, reason = ask(ctx.chat, plan_messages(examples, query), grammar,
                                     lambda text: parse_plan(text, objects), ctx.recorder, run_name="eai:llm-planner")
    ctx.episode.attempts += attempts
    ctx.episode.steps += 1
    if steps is None:
        ctx.episode.rejected += 1
        ctx.episode.failures.append(f"plan rejected: {reason}")
    return steps


def plan(state: LLMPlannerEaiState, runtime: Runtime[LLMPlannerEaiContext]) -> dict[str, Any]:
    ctx = runtime.context
    query = PlanQuery(state["request"], visible=list(ctx.task.arguments))
    steps = _plan(ctx, state.get("examples", []), query, list(ctx.task.arguments))
    if ctx.env is None and steps:
        ctx.episode.answer = list(steps)
    return {"plan": [[a, list(args)] for a, args in steps or []], "log": [f"plan: {plan_text(steps or [])}"]}


def execute_plan(state: LLMPlannerEaiState, runtime: Runtime[LLMPlannerEaiContext]) -> dict[str, Any]:
    ctx = runtime.context
    env, episode = ctx.env, ctx.episode
    assert env is not None
    completed = list(state.get("completed", []))
    log = []
    for action, args in state.get("plan", []):
        step: Step = (action, tuple(args))
        status, observation = execute(env, step)
        room, close = where(env)
        if room is not None:
            ctx.seen_rooms.add(room)
        ctx.been_close.update(close)
        log.append(f"{action} {' '.join(args)}: {observation}")
        if status == "ok":
            episode.answer.append(step)
            completed.append([action, list(args)])
        elif status == "failed":
            episode.failures.append(f"{action} {list(args)}: {observation}")
            episode.last_failed = step
            return {"completed": completed, "status": "failed", "log": log}
    return {"completed": completed, "status": "done", "log": log}


def replan(state: LLMPlannerEaiState, runtime: Runtime[LLMPlannerEaiContext]) -> dict[str, Any]:
    ctx = runtime.context
    assert ctx.env is not None
    ctx.episode.replans += 1
    visible = visible_names(ctx.env, ctx.seen_rooms, ctx.been_close)
    completed = [_query((a, tuple(args))) for a, args in state.get("completed", [])]
    query = PlanQuery(state["request"], completed=completed, visible=visible)
    steps = _plan(ctx, state.get("examples", []), query, visible)
    return {"plan": [[a, list(args)] for a, args in steps or []], "log": [f"replan: {plan_text(steps or [])}"]}


def finish(state: LLMPlannerEaiState, runtime: Runtime[LLMPlannerEaiContext]) -> dict[str, Any]:
    runtime.context.episode.outcome = state.get("status") or ("planned" if state.get("plan") else "no plan")
    return {}


def after_plan(state: LLMPlannerEaiState, runtime: Runtime[LLMPlannerEaiContext]) -> str:
    return "execute" if state.get("plan") and runtime.context.env is not None else "finish"


def after_execute(state: LLMPlannerEaiState, runtime: Runtime[LLMPlannerEaiContext]) -> str:
    ctx = runtime.context
    return "replan" if state.get("status") == "failed" and ctx.episode.replans < ctx.max_replans else "finish"


def build_graph() -> Any:
    builder = StateGraph(LLMPlannerEaiState, context_schema=LLMPlannerEaiContext)
    builder.add_node("retrieve", retrieve)
    builder.add_node("plan", plan)
    builder.add_node("execute", execute_plan)
    builder.add_node("replan", replan)
    builder.add_node("finish", finish)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "plan")
    builder.add_conditional_edges("plan", after_plan, ["execute", "finish"])
    builder.add_conditional_edges("execute", after_execute, ["replan", "finish"])
    builder.add_conditional_edges("replan", after_plan, ["execute", "finish"])
    builder.add_edge("finish", END)
    return builder.compile(name="llm-planner-eai")


GRAPH = build_graph()


def run_llm_planner(task: EaiTask, chat: Any, *, closed_loop: bool, pool: GoldMemory | None, k: int,
                    max_replans: int) -> tuple[EaiEpisode, VirtualHomeEnv | None, UsageRecorder]:
    """One task; the environment is returned for the full-sequence check (closed loop)."""
    env = VirtualHomeEnv(task.identifier) if closed_loop else None
    ctx = LLMPlannerEaiContext(task, chat, env, pool, k, max_replans)
    GRAPH.invoke({"request": task.goal_text}, context=ctx, config={"recursion_limit": 8 * (max_replans + 2)})
    return ctx.episode, env, ctx.recorder
