"""EmbodiedRAG in an environment it acts in by names (`envs/base.ActsByName`: VirtualHome's EAI tasks):
self-query, retrieve a subgraph of the environment's scene graph, ReAct steps.

    start --(subgraph)--> self_query --> retrieve --> think --> act --(more)--> retrieve
          '--(full)------------------------^                      '--(done(), step cap)--> finish

The same method as this package's graph over the embedded world, on what the environment hands it:
its whole scene graph (`scene_entities()`: about 290 nodes in VirtualHome's scene 1, rooms,
furniture, walls, appliances and the task's objects), kept in the vector store
(`memory/scene_graph.SceneGraphMemory`, one graph per episode, re-synced after every action: only
what changed is re-embedded), and its vocabulary (`action_vocabulary()`). The LLM first names the
objects the goals need (the method's self-query prompt and grammar); each step the subgraph of
those objects, of the objects the last thought mentions, of what is held and what the last action
named, plus the objects they are inside or on, enters the ReAct prompt. `graph="full"` is the
paper's baseline: the whole graph in every prompt. Actions may name the vocabulary's objects that
the shown graph contains; the answer is `Thought: ...` then `Action: ACTION(object, ...)` or
`Action: done()` (`named_actions.react_rules`). `refuse_futile=on` (off by default here, the paper's
agent, as its EAI rows were measured) leaves out of a step's grammar the steps already taken from
the same state (`named_steps.tried_here`). What the environment declares (`graphs/declarations.py`,
issue 62; off by default): `goal_steps=on` puts the steps that make the stated conditions not met
yet true into each step's prompt, `preconditions=on|reported` takes each step with HELPER's
pre-condition check, and `subgoals=on` makes the ReAct step's action a choice among the subgoals open
now (`declarations.subgoal_steps`), each taken with the pre-condition check on the reported lacks,
ending when the agent's own check finds none open (`done()` is not offered while one is; a lone
open subgoal is taken without asking the model). With either of the first and the last, the
subgraph retrieval also queries the objects the stated goals name. The paper's step chooses a
primitive action; choosing a subgoal is ours.

Per step the episode records the entities shown and the prompt's characters, and the run's usage
gives prompt tokens and seconds: the subgraph-vs-full comparison the paper makes.
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
from helper_agent.graphs.embodiedrag.actions import ReactParseError, parse_self_query, self_query_grammar
from helper_agent.graphs.embodiedrag.prompts import self_query_messages
from helper_agent.graphs.goal_conditions import stated_goals
from helper_agent.graphs.named_actions import (
    parse_action,
    parse_react_answer,
    react_rules,
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
from helper_agent.graphs.prag.prompts import FUTILE_LINE
from helper_agent.memory.scene_graph import ALL_ATTRIBUTES, SceneGraphMemory

GraphMode = Literal["subgraph", "full"]
ATTRIBUTES = ["state"]

SYSTEM = (
    "You are a household robot in {world} acting step by step. Each step, think in one line, then "
    "choose one action. Answer exactly:\nThought: <what you do next and why>\n"
    "Action: ACTION(object) or ACTION(object, object) or ACTION() or done()\n\n{vocabulary}\n\n"
    "The scene graph lists the objects that matter now: 'object: states; inside/on other'. {rule}"
    "Say done() when all goals are satisfied."
)


@dataclass
class NamedEmbodiedRAGConfig:
    """EmbodiedRAG's switches where it acts by names; the defaults are the paper's agent, as measured on EAI."""

    graph: GraphMode = "subgraph"
    k: int = 3
    threshold: float | None = None
    max_steps: int = 20
    history: int = 6
    max_self_query_items: int = 6
    retries: int = 1
    refuse_futile: bool = False
    aids: Aids = field(default_factory=Aids)  # what the environment declares (`graphs/declarations.py`)


@dataclass
class NamedEmbodiedRAGContext(NamedContext):
    graph_name = "EmbodiedRAG"

    memory: SceneGraphMemory | None = None  # the subgraph mode's vector store (one graph per episode)
    config: NamedEmbodiedRAGConfig = field(default_factory=NamedEmbodiedRAGConfig)
    episode: NamedEpisode = field(default_factory=NamedEpisode)
    entities: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> entity, as last synced
    edges: set[tuple[str, str, str]] = field(default_factory=set)
    shown: list[int] = field(default_factory=list)  # entities per step's prompt
    prompt_chars: list[int] = field(default_factory=list)
    retrieve_seconds: list[float] = field(default_factory=list)

    def sync(self) -> None:
        """Make the local graph (and, for the subgraph mode, the vector store) the current state."""
        entities, edges = self.world().scene_entities()
        fresh = {e["id"]: e for e in entities}
        new_edges = set(edges)
        if self.memory is not None:
            gone = [i for i in self.entities if i not in fresh]
            if gone:
                self.memory.remove_entities(gone)
            changed = [e for i, e in fresh.items() if self.entities.get(i) != e]
            if changed:
                self.memory.upsert_entities(changed)
            if self.edges - new_edges:
                self.memory.remove_edges(sorted(self.edges - new_edges))
            if new_edges - self.edges:
                self.memory.add_edges(sorted(new_edges - self.edges))
        self.entities, self.edges = fresh, new_edges


class NamedEmbodiedRAGState(TypedDict, total=False):
    request: str
    queries: list[list[Any]]
    thought_queries: list[str]
    graph_text: str
    shown_ids: list[str]
    history: list[dict[str, str]]
    step: int
    finished: bool
    outcome: str


def render(ids: list[str], entities: dict[str, dict[str, Any]], edges: set[tuple[str, str, str]]) -> str:
    """One line per entity, `washing_machine: closed, off; on basket_for_clothes; inside dining_room`,
    with the edges among the shown entities only (the induced subgraph)."""
    shown = set(ids)
    out: dict[str, list[str]] = {}
    for source, relation, target in sorted(edges):
        if source in shown and target in shown:
            out.setdefault(source, []).append(f"{relation} {target}")
    lines = []
    for i in ids:
        parts = [str(entities[i]["attributes"]["state"])] if entities[i]["attributes"].get("state") else []
        parts += out.get(i, [])
        lines.append(f"{i}: {'; '.join(parts)}" if parts else i)
    return "\n".join(lines) if lines else "(nothing retrieved)"


def react_messages(vocabulary: ActionVocabulary, request: str, graph_text: str, held: list[str], history: list[dict[str, str]],
                   keep: int, refused: list[str] | None = None, instructions: list[str] | None = None,
                   subgoals: Subgoals | None = None) -> list[BaseMessage]:
    """The ReAct step's prompt; with `goal_steps` the task's step-by-step instructions after it,
    with `subgoals` what is unmet and the subgoals to choose among before the question."""
    lines = [f"Instruction:\n{request}"]
    if instructions:
        lines.append("Step-by-step instructions: " + " ".join(instructions))
    lines += ["", "Scene graph:", graph_text, "", f"Holding: {', '.join(held) or 'nothing'}"]
    recent = history[-keep:] if keep > 0 else []
    if recent:
        lines += ["", "Previous steps:"]
        for s in recent:
            lines += [f"Thought: {s['thought']}", f"Action: {s['action']}", f"Observation: {s['observation']}"]
    if refused:
        lines += ["", FUTILE_LINE + ", ".join(refused)]
    if subgoals is not None:
        lines += ["", *subgoal_lines(subgoals)]
    lines += ["", "Next step:"]
    system = SYSTEM.format(world=vocabulary.world or "a house", vocabulary=vocabulary_text(vocabulary),
                           rule=f"{vocabulary.rule} " if vocabulary.rule else "")
    return [SystemMessage(system), HumanMessage("\n".join(lines))]


def _holding_ids(ctx: NamedEmbodiedRAGContext) -> list[str]:
    return ctx.world().held_names()


def start(state: NamedEmbodiedRAGState, runtime: Runtime[NamedEmbodiedRAGContext]) -> dict[str, Any]:
    ctx = NamedEmbodiedRAGContext.of(runtime)
    ctx.sync()
    return {"step": 0, "history": [], "queries": [], "thought_queries": [], "finished": False}


def self_query(state: NamedEmbodiedRAGState, runtime: Runtime[NamedEmbodiedRAGContext]) -> dict[str, Any]:
    ctx = NamedEmbodiedRAGContext.of(runtime)
    cfg = ctx.config
    items, _, attempts, _ = ask(ctx.chat(), self_query_messages(state["request"], ATTRIBUTES, cfg.max_self_query_items),
                                self_query_grammar(ATTRIBUTES, cfg.max_self_query_items),
                                lambda text: _self_query(text, cfg.max_self_query_items), ctx.usage,
                                retries=cfg.retries, run_name="embodiedrag:self_query")
    ctx.episode.attempts += attempts
    return {"queries": [[label, attrs] for label, attrs in items or []]}


def _self_query(text: str, max_items: int) -> list[tuple[str, list[str]]]:
    try:
        return parse_self_query(text, ATTRIBUTES, max_items)
    except ReactParseError as exc:
        raise ValueError(str(exc)) from None


def _mentioned(text: str, labels: set[str]) -> list[str]:
    low = text.lower()
    return sorted(label for label in labels if label in low or label.replace("_", " ") in low)


def retrieve(state: NamedEmbodiedRAGState, runtime: Runtime[NamedEmbodiedRAGContext]) -> dict[str, Any]:
    ctx = NamedEmbodiedRAGContext.of(runtime)
    cfg = ctx.config
    began = time.perf_counter()
    if cfg.graph == "full" or ctx.memory is None:
        ids = sorted(ctx.entities)
    else:
        labels = [str(label) for label, _ in state.get("queries", [])]
        if cfg.aids.subgoals or cfg.aids.goal_steps:  # the objects the stated goals name are wanted too
            labels += stated_goals(state["request"]).objects
        labels += state.get("thought_queries", [])
        queries = [(label, [ALL_ATTRIBUTES]) for label in dict.fromkeys(labels)]
        chosen = [n.id for n in ctx.memory.retrieve_subgraph(queries, k=cfg.k, threshold=cfg.threshold).nodes] if queries else []
        chosen += _holding_ids(ctx)
        for s in state.get("history", [])[-1:]:
            chosen += list(_args(s["action"], ctx.vocabulary()))
        chosen = [i for i in dict.fromkeys(chosen) if i in ctx.entities]
        parents = [t for s, r, t in ctx.edges if s in set(chosen)]
        ids = list(dict.fromkeys([*chosen, *parents]))
    ctx.retrieve_seconds.append(time.perf_counter() - began)
    ctx.shown.append(len(ids))
    return {"graph_text": render(ids, ctx.entities, ctx.edges), "shown_ids": ids}


def _args(action: str, vocabulary: ActionVocabulary) -> tuple[str, ...]:
    try:
        step = parse_action(action, vocabulary, vocabulary.objects)
    except ValueError:
        return ()
    return step[1] if step else ()


def think(state: NamedEmbodiedRAGState, runtime: Runtime[NamedEmbodiedRAGContext]) -> dict[str, Any]:
    ctx = NamedEmbodiedRAGContext.of(runtime)
    cfg, vocabulary = ctx.config, ctx.vocabulary()
    nameable = [n for n in vocabulary.objects if n in set(state.get("shown_ids", [])) | set(_holding_ids(ctx))]
    key = ctx.world().state_key()
    history = state.get("history", [])
    subgoals = (open_subgoals(ctx.world(), vocabulary, state["request"], ctx.episode, history, key)
                if cfg.aids.subgoals else None)
    forced = forced_choice(subgoals)
    if forced is not None:  # no subgoal open (the agent's own check), or one: nothing to choose
        return {"history": [*history, {"state": key, "observation": "", **forced}], "thought_queries": []}
    refused = [] if subgoals is not None else refused_here(cfg.refuse_futile, history, key, vocabulary, ctx.episode,
                                                           nameable)
    instructions = (open_instructions(ctx.world(), state["request"], vocabulary, ctx.episode.executed)
                    if cfg.aids.goal_steps else None)
    messages = react_messages(vocabulary, state["request"], state.get("graph_text", ""), _holding_ids(ctx),
                              history, cfg.history, [step_text(s) for s in refused], instructions, subgoals)
    ctx.prompt_chars.append(sum(len(str(m.content)) for m in messages))
    if subgoals is not None:
        steps = subgoals.steps
        grammar = choice_rules(steps, thought=True).to_gbnf()
        parse: Any = lambda text: parse_choice(text, steps, vocabulary, thought=True)  # noqa: E731
    else:
        grammar = react_rules(vocabulary, nameable, refuse=refused).to_gbnf()
        parse = refusing(lambda text: parse_react_answer(text, vocabulary, nameable), refused, lambda a: a.step)
    answer, _, attempts, reason = ask(ctx.chat(), messages, grammar, parse, ctx.usage, retries=cfg.retries,
                                      seed=state.get("step", 0), run_name="embodiedrag:step")
    ctx.episode.attempts += attempts
    if answer is None:
        ctx.episode.rejected += 1
        entry = {"thought": "", "state": key, "action": NONE, "observation": f"invalid answer: {reason}"}
    else:
        entry = {"thought": answer.thought, "state": key, "action": step_text(answer.step), "observation": ""}
    labels = {str(e["label"]) for e in ctx.entities.values()}
    return {"history": [*history, entry], "thought_queries": _mentioned(entry["thought"], labels)}


def act(state: NamedEmbodiedRAGState, runtime: Runtime[NamedEmbodiedRAGContext]) -> dict[str, Any]:
    ctx = NamedEmbodiedRAGContext.of(runtime)
    history = [dict(s) for s in state.get("history", [])]
    number = state.get("step", 0) + 1
    executed, finished = act_on(ctx.world(), ctx.vocabulary(), ctx.episode, history[-1], number, ctx.config.max_steps,
                                ctx.config.aids.checks)
    if executed:
        ctx.sync()
    ctx.episode.trajectory = [{k: s[k] for k in ("thought", "action", "observation")} for s in history]
    return {"history": history, "step": number, "finished": finished, "outcome": ctx.episode.outcome}


def after_start(state: NamedEmbodiedRAGState, runtime: Runtime[NamedEmbodiedRAGContext]) -> str:
    return "retrieve" if NamedEmbodiedRAGContext.of(runtime).config.graph == "full" else "self_query"


def after_act(state: NamedEmbodiedRAGState) -> str:
    return "finish" if state.get("finished") else "retrieve"


def build_named_graph() -> Any:
    builder = StateGraph(NamedEmbodiedRAGState, context_schema=NamedEmbodiedRAGContext)
    builder.add_node("start", start)
    builder.add_node("self_query", self_query)
    builder.add_node("retrieve", retrieve)
    builder.add_node("think", think)
    builder.add_node("act", act)
    builder.add_node("finish", lambda state: {})
    builder.add_edge(START, "start")
    builder.add_conditional_edges("start", after_start, ["self_query", "retrieve"])
    builder.add_edge("self_query", "retrieve")
    builder.add_edge("retrieve", "think")
    builder.add_edge("think", "act")
    builder.add_conditional_edges("act", after_act, ["retrieve", "finish"])
    builder.add_edge("finish", END)
    return builder.compile(name="embodiedrag-named")
