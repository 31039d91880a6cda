"""P-RAG in an environment it acts in by names (`envs/base.ActsByName`: VirtualHome's EAI tasks).

    observe --> retrieve --> choose --> act --(more)--> observe
                                          '--(done(), step cap)--> finish -> END

The same method as this package's graph over the embedded world, on the vocabulary the environment
hands it (`action_vocabulary()`: its actions, their meanings, the names an action may take). Each
step shows the instruction, the retrieved episodes (`prompts.render_experience`: done flag, goal,
first actions with their outcomes), the environment's scene graph (`scene_text()`), what the agent
holds and its last steps, and the model answers one line `Action: ACTION(object, ...)` or
`Action: done()` under a grammar over the vocabulary (`named_actions.step_rules`).

Switches the paper's agent does not have (all off by default here, which is the paper's agent, and
how P-RAG's EAI rows were measured): `answer=thought` asks for a one-line thought before the
action (`named_actions.react_rules`), as EmbodiedRAG's ReAct step does; `refuse_futile=on` leaves
out of the step's grammar the steps already taken from the same state (`named_steps.tried_here`);
and what the environment declares (`graphs/declarations.py`, issue 62): `goal_steps=on` puts the
steps that make the stated conditions not met yet true into each step's prompt,
`preconditions=on|reported` takes each step with HELPER's pre-condition check, and `subgoals=on`
makes the step a choice among the subgoals open now (the achieving steps of the unmet stated
conditions and the action goals not done, `declarations.subgoal_steps`), each taken with the
pre-condition check on the reported lacks; the agent ends when its own check finds none open (`done()`
is not offered while one is), and a lone open subgoal is taken without asking the model. The paper's agent chooses a primitive action; choosing a subgoal is ours.

Retrieval is the paper's: a stored episode scores cos(goal) + max over its steps of cos(scene graph)
("goal+scene"), or cos(goal) alone ("goal", the ablation; the same episodes every step). The agent
only reads the database; `helper eval progressive` writes it from the agent's trajectories and the
environment's done signal. A failed action does not end the episode: its error is the step's
observation; the episode ends at `done()` or after `max_steps` actions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from helper_agent.envs.base import ActionVocabulary
from helper_agent.graphs.declarations import Aids, open_instructions
from helper_agent.graphs.named_actions import (
    parse_react_answer,
    parse_step_answer,
    react_rules,
    step_rules,
    step_text,
    vocabulary_text,
)
from helper_agent.graphs.named_steps import (
    NONE,
    NamedContext,
    NamedEpisode,
    Subgoals,
    act_on,
    ask,
    choice_rules,
    forced_choice,
    open_subgoals,
    parse_choice,
    refused_here,
    refusing,
    subgoal_lines,
)
from helper_agent.graphs.prag.configuration import Retrieval
from helper_agent.graphs.prag.prompts import FUTILE_LINE, render_experience
from helper_agent.memory.experience import ExperienceMemory

Answer = Literal["action", "thought"]

SYSTEM = (
    "You are a household robot in {world} acting step by step. Each step you see the goals, "
    "episodes you lived before on similar tasks (what you did and whether the task got done), the "
    "scene graph of the current state ('object: states; inside/on other; in room'), what you hold, "
    "and your last steps. Choose the one next action. {answer}\n\n{vocabulary}\n\n"
    "{rule}Learn from past episodes: repeat "
    "what worked in episodes that got done, avoid what failed. Say done() when all goals are satisfied."
)
ACTION_LINE = "Action: ACTION(object) or ACTION(object, object) or ACTION() or done()"
ANSWERS = {"action": "Answer exactly one line:\n" + ACTION_LINE,
           "thought": "Answer exactly:\nThought: <what you do next and why, one line>\n" + ACTION_LINE}


@dataclass
class NamedPRAGConfig:
    """P-RAG's switches where it acts by names; the defaults are the paper's agent, as measured on EAI."""

    retrieval: Retrieval = "goal+scene"
    k: int = 3
    max_steps: int = 20
    history: int = 8
    experience_steps: int = 12
    goal_chars: int = 400
    retries: int = 1
    answer: Answer = "action"
    refuse_futile: bool = False
    aids: Aids = field(default_factory=Aids)  # what the environment declares (`graphs/declarations.py`)


@dataclass
class NamedPRAGContext(NamedContext):
    graph_name = "P-RAG"

    database: ExperienceMemory | None = None
    config: NamedPRAGConfig = field(default_factory=NamedPRAGConfig)
    episode: NamedEpisode = field(default_factory=NamedEpisode)
    retrieve_seconds: list[float] = field(default_factory=list)


class NamedPRAGState(TypedDict, total=False):
    request: str
    scene_graph: str
    state_key: str
    held: str | None
    experience: str
    experience_ids: list[str]
    history: list[dict[str, str]]
    step: int
    finished: bool
    outcome: str


def step_messages(vocabulary: ActionVocabulary, request: str, experience: str, scene_graph: str, held: str | None,
                  history: list[dict[str, str]], keep: int, step: int, max_steps: int, *,
                  answer: Answer = "action", refused: list[str] | None = None,
                  instructions: list[str] | None = None, subgoals: Subgoals | None = None) -> list[BaseMessage]:
    """P-RAG's step prompt (the layout of `prompts.step_messages`, the environment's vocabulary);
    with `goal_steps` the task's step-by-step instructions after it, with `subgoals` what is unmet
    and the subgoals to choose among before the question."""
    lines = [f"Instruction:\n{request}"]
    if instructions:
        lines.append("Step-by-step instructions: " + " ".join(instructions))
    lines += ["", "Past episodes:", experience, "", "Scene graph:", scene_graph, f"Holding: {held or 'nothing'}"]
    recent = history[-keep:] if keep > 0 else []
    if recent:
        lines += ["", "Your last steps:", *(f"{s['action']} -> {s['observation']}" for s in recent)]
    if refused:
        lines += ["", FUTILE_LINE + ", ".join(refused)]
    if subgoals is not None:
        lines += ["", *subgoal_lines(subgoals)]
    lines += ["", f"Step {step + 1} of {max_steps}. Next action:"]
    system = SYSTEM.format(world=vocabulary.world or "a house", answer=ANSWERS[answer],
                           vocabulary=vocabulary_text(vocabulary), rule=f"{vocabulary.rule} " if vocabulary.rule else "")
    return [SystemMessage(system), HumanMessage("\n".join(lines))]


def observe(state: NamedPRAGState, runtime: Runtime[NamedPRAGContext]) -> dict[str, Any]:
    env = NamedPRAGContext.of(runtime).world()
    update: dict[str, Any] = {"scene_graph": env.scene_text(), "held": ", ".join(env.held_names()) or None,
                              "state_key": env.state_key()}
    if "step" not in state:
        update.update(step=0, history=[], finished=False, experience="", experience_ids=[])
    return update


def retrieve(state: NamedPRAGState, runtime: Runtime[NamedPRAGContext]) -> dict[str, Any]:
    ctx = NamedPRAGContext.of(runtime)
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


def choose(state: NamedPRAGState, runtime: Runtime[NamedPRAGContext]) -> dict[str, Any]:
    ctx = NamedPRAGContext.of(runtime)
    cfg, vocabulary = ctx.config, ctx.vocabulary()
    objects = list(vocabulary.objects)
    key = state.get("state_key", "")
    history = state.get("history", [])
    subgoals = (open_subgoals(ctx.world(), vocabulary, state["request"], ctx.episode, history, key)
                if cfg.aids.subgoals else None)
    forced = forced_choice(subgoals)
    if forced is not None:  # no subgoal open (the agent's own check), or one: nothing to choose
        return {"history": [*history, {"scene_graph": state.get("scene_graph", ""), "state": key, "observation": "",
                                       **forced}]}
    refused = [] if subgoals is not None else refused_here(cfg.refuse_futile, history, key, vocabulary, ctx.episode)
    instructions = (open_instructions(ctx.world(), state["request"], vocabulary, ctx.episode.executed)
                    if cfg.aids.goal_steps else None)
    messages = step_messages(vocabulary, state["request"], state.get("experience", ""), state.get("scene_graph", ""),
                             state.get("held"), history, cfg.history, state.get("step", 0),
                             cfg.max_steps, answer=cfg.answer, refused=[step_text(s) for s in refused],
                             instructions=instructions, subgoals=subgoals)
    thought = cfg.answer == "thought"
    if subgoals is not None:
        steps = subgoals.steps
        grammar = choice_rules(steps, thought).to_gbnf()
        parse: Any = lambda text: parse_choice(text, steps, vocabulary, thought)  # noqa: E731
    else:
        rules, parser = (react_rules, parse_react_answer) if thought else (step_rules, parse_step_answer)
        grammar = rules(vocabulary, objects, refuse=refused).to_gbnf()
        parse = refusing(lambda text: parser(text, vocabulary, objects), refused, lambda a: a.step)
    answer, _, attempts, reason = ask(ctx.chat(), messages, grammar, parse, ctx.usage, retries=cfg.retries,
                                      seed=state.get("step", 0), run_name="prag:step")
    ctx.episode.attempts += attempts
    entry = {"scene_graph": state.get("scene_graph", ""), "state": key, "action": NONE,
             "observation": f"invalid answer: {reason}"}
    if answer is None:
        ctx.episode.rejected += 1
    else:
        entry.update(action=step_text(answer.step), observation="")
        if answer.thought:
            entry["thought"] = answer.thought
    return {"history": [*history, entry]}


def act(state: NamedPRAGState, runtime: Runtime[NamedPRAGContext]) -> dict[str, Any]:
    ctx = NamedPRAGContext.of(runtime)
    history = [dict(s) for s in state.get("history", [])]
    number = state.get("step", 0) + 1
    _, finished = act_on(ctx.world(), ctx.vocabulary(), ctx.episode, history[-1], number, ctx.config.max_steps,
                         ctx.config.aids.checks)
    ctx.episode.trajectory = [{k: s[k] for k in ("scene_graph", "action", "observation")} for s in history]
    return {"history": history, "step": number, "finished": finished, "outcome": ctx.episode.outcome}


def after_act(state: NamedPRAGState) -> str:
    return "finish" if state.get("finished") else "observe"


def build_named_graph() -> Any:
    builder = StateGraph(NamedPRAGState, context_schema=NamedPRAGContext)
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
    return builder.compile(name="prag-named")
