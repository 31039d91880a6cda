"""P-RAG on EAI: step-wise actions chosen with its own past episodes retrieved from its database.

    observe --> retrieve --> choose --> act --(more)--> observe
                                          '--(done(), step cap)--> finish -> END

The method's step loop (`graphs/prag`) over VirtualHome: each step shows the instruction (EAI's node,
edge and action goals), the retrieved episodes (`graphs/prag/prompts.render_experience`: done flag,
goal, first actions with their outcomes), the scene graph of the current state in the compact form
P-RAG has on our world (`scene.compact_scene`), what the robot holds and its last steps, and the
model answers one line `Action: ACTION(object, ...)` or `Action: done()` under a grammar over EAI's
vocabulary and the task's objects (`steps.step_rules`).

Two switches the paper's agent does not have (both off by default, which is the paper's agent):
`answer=thought` asks for a one-line thought before the action (`steps.react_rules`), as EmbodiedRAG's
ReAct step does; `refuse_futile=on` leaves out of the step's grammar the steps already taken from the
same simulator state (`acting.tried_here`), as P-RAG's `refuse_futile` does on our world.

Retrieval is the paper's: a stored episode scores cos(goal) + max over its steps of cos(scene graph)
("goal+scene"), or cos(goal) alone ("goal", the ablation; the same episodes every step). The agent
only reads the database (`memory/experience.ExperienceMemory`); the progressive runner
(`eai/progressive.py`) writes it from the agent's own trajectories and the environment's done
signal. A failed action does not end the episode: its error is the step's observation, as the
environment's feedback is on our world; the episode ends at `done()` or after `max_steps` actions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from helper_agent.envs.virtualhome import VirtualHomeEnv
from helper_agent.evals.studies.eai.acting import EaiEpisode, act_on, ask, refused_here, refusing
from helper_agent.evals.studies.eai.scene import compact_scene, holding, state_key
from helper_agent.evals.studies.eai.steps import (
    parse_react_answer,
    parse_step_answer,
    react_rules,
    step_rules,
    step_text,
    vocabulary_text,
)
from helper_agent.evals.studies.eai.tasks import EaiTask
from helper_agent.graphs.prag.prompts import FUTILE_LINE, render_experience
from helper_agent.llm import UsageRecorder
from helper_agent.memory.experience import ExperienceMemory

Retrieval = Literal["goal+scene", "goal"]
Answer = Literal["action", "thought"]

SYSTEM = (
    "You are a household robot in VirtualHome acting step by step. Each step you see the goals, "
    "episodes you lived before on similar tasks (what you did and whether the task got done), the "
    "scene graph of the current state ('object: states; inside/on other; in room'), what you hold, "
    "and your last steps. Choose the one next action. {answer}\n\n{vocabulary}\n\n"
    "You must be close to an object (WALK to it) before acting on it. Learn from past episodes: repeat "
    "what worked in episodes that got done, avoid what failed. Say done() when all goals are satisfied."
)
ACTION_LINE = "Action: ACTION(object) or ACTION(object, object) or ACTION() or done()"
ANSWERS = {"action": "Answer exactly one line:\n" + ACTION_LINE,
           "thought": "Answer exactly:\nThought: <what you do next and why, one line>\n" + ACTION_LINE}


@dataclass
class PRAGEaiConfig:
    retrieval: Retrieval = "goal+scene"
    k: int = 3
    max_steps: int = 20
    history: int = 8
    experience_steps: int = 12
    goal_chars: int = 400
    retries: int = 1
    answer: Answer = "action"
    refuse_futile: bool = False


@dataclass
class PRAGEaiContext:
    task: EaiTask
    chat: Any
    env: VirtualHomeEnv
    database: ExperienceMemory | None = None
    config: PRAGEaiConfig = field(default_factory=PRAGEaiConfig)
    recorder: UsageRecorder = field(default_factory=UsageRecorder)
    episode: EaiEpisode = field(default_factory=EaiEpisode)
    retrieve_seconds: list[float] = field(default_factory=list)


class PRAGEaiState(TypedDict, total=False):
    request: str
    scene_graph: str
    state_key: str
    held: str | None
    experience: str
    experience_ids: list[str]
    history: list[dict[str, str]]
    step: int
    finished: bool


def step_messages(request: str, experience: str, scene_graph: str, held: str | None,
                  history: list[dict[str, str]], keep: int, step: int, max_steps: int, *,
                  answer: Answer = "action", refused: list[str] | None = None) -> list[BaseMessage]:
    """P-RAG's step prompt (the layout of `graphs/prag/prompts.step_messages`, EAI's vocabulary)."""
    lines = [f"Instruction:\n{request}", "", "Past episodes:", experience, "",
             "Scene graph:", scene_graph, f"Holding: {held or 'nothing'}"]
    recent = history[-keep:] if keep > 0 else []
    if recent:
        lines += ["", "Your last steps:", *(f"{s['action']} -> {s['observation']}" for s in recent)]
    if refused:
        lines += ["", FUTILE_LINE + ", ".join(refused)]
    lines += ["", f"Step {step + 1} of {max_steps}. Next action:"]
    return [SystemMessage(SYSTEM.format(answer=ANSWERS[answer], vocabulary=vocabulary_text())),
            HumanMessage("\n".join(lines))]


def observe(state: PRAGEaiState, runtime: Runtime[PRAGEaiContext]) -> dict[str, Any]:
    env = runtime.context.env
    update: dict[str, Any] = {"scene_graph": compact_scene(env), "held": holding(env), "state_key": state_key(env)}
    if "step" not in state:
        update.update(step=0, history=[], finished=False, experience="", experience_ids=[])
    return update


def retrieve(state: PRAGEaiState, runtime: Runtime[PRAGEaiContext]) -> dict[str, Any]:
    ctx = runtime.context
    cfg = ctx.config
    if ctx.database is None:
        return {"experience": render_experience([], cfg.experience_steps, cfg.goal_chars), "experience_ids": []}
    if cfg.retrieval == "goal" and state.get("experience"):
        return {}  # goal-only retrieval gives the same episodes every step
    began = time.perf_counter()
    scene = state.get("scene_graph", "") if cfg.retrieval == "goal+scene" else None
    hits = ctx.database.retrieve(state["request"], cfg.k, scene_graph=scene)
    ctx.retrieve_seconds.append(time.perf_counter() - began)
    ids = [h.id for h in hits]
    if ids == state.get("experience_ids") and state.get("experience"):
        return {}
    ctx.episode.example_ids = list(dict.fromkeys([*ctx.episode.example_ids, *ids]))
    return {"experience": render_experience([h.record for h in hits], cfg.experience_steps, cfg.goal_chars),
            "experience_ids": ids}


def choose(state: PRAGEaiState, runtime: Runtime[PRAGEaiContext]) -> dict[str, Any]:
    ctx = runtime.context
    cfg, objects = ctx.config, list(ctx.task.arguments)
    key = state.get("state_key", "")
    refused = refused_here(cfg.refuse_futile, state.get("history", []), key, objects, ctx.episode)
    messages = step_messages(state["request"], state.get("experience", ""), state.get("scene_graph", ""),
                             state.get("held"), state.get("history", []), cfg.history, state.get("step", 0), cfg.max_steps,
                             answer=cfg.answer, refused=[step_text(s) for s in refused])
    rules, parse = (react_rules, parse_react_answer) if cfg.answer == "thought" else (step_rules, parse_step_answer)
    answer, _, attempts, reason = ask(ctx.chat, messages, rules(objects, refuse=refused).to_gbnf(),
                                      refusing(lambda text: parse(text, objects), refused, lambda a: a.step), ctx.recorder,
                                      retries=cfg.retries, seed=state.get("step", 0), run_name="eai:prag:step")
    ctx.episode.attempts += attempts
    entry = {"scene_graph": state.get("scene_graph", ""), "state": key, "action": "(none)",
             "observation": f"invalid answer: {reason}"}
    if answer is None:
        ctx.episode.rejected += 1
    else:
        entry.update(action=step_text(answer.step), observation="")
        if answer.thought:
            entry["thought"] = answer.thought
    return {"history": [*state.get("history", []), entry]}


def act(state: PRAGEaiState, runtime: Runtime[PRAGEaiContext]) -> dict[str, Any]:
    ctx = runtime.context
    history = [dict(s) for s in state.get("history", [])]
    number = state.get("step", 0) + 1
    _, finished = act_on(ctx.env, ctx.episode, history[-1], ctx.task.arguments, number, ctx.config.max_steps)
    ctx.episode.trajectory = [{k: s[k] for k in ("scene_graph", "action", "observation")} for s in history]
    return {"history": history, "step": number, "finished": finished}


def after_act(state: PRAGEaiState) -> str:
    return "finish" if state.get("finished") else "observe"


def build_graph() -> Any:
    builder = StateGraph(PRAGEaiState, context_schema=PRAGEaiContext)
    builder.add_node("observe", observe)
    builder.add_node("retrieve", retrieve)
    builder.add_node("choose", choose)
    builder.add_node("act", act)
    builder.add_node("finish", lambda state: {})
    builder.add_edge(START, "observe")
    builder.add_edge("observe", "retrieve")
    builder.add_edge("retrieve", "choose")
    builder.add_edge("choose", "act")
    builder.add_conditional_edges("act", after_act, ["observe", "finish"])
    builder.add_edge("finish", END)
    return builder.compile(name="prag-eai")


GRAPH = build_graph()


def run_prag(task: EaiTask, chat: Any, *, database: ExperienceMemory | None,
             config: PRAGEaiConfig) -> tuple[EaiEpisode, VirtualHomeEnv, UsageRecorder]:
    env = VirtualHomeEnv(task.identifier)
    ctx = PRAGEaiContext(task, chat, env, database, config)
    GRAPH.invoke({"request": task.goal_text}, context=ctx, config={"recursion_limit": 4 * config.max_steps + 10})
    ctx.episode.extra["retrieve_seconds"] = round(sum(ctx.retrieve_seconds), 3)
    return ctx.episode, env, ctx.recorder
