"""The EmbodiedRAG graph's nodes, one function each, and the routing between them.

    start       look around once; the scene graph memory gets what was seen
    self_query  the LLM names the task-relevant objects and attributes (subgraph mode only)
    retrieve    subgraph of the self-query + the last thought's needs + neighbours (or the full graph)
    think       one ReAct answer: a thought and an action (constrained to the shown ids)
    act         run the action on the environment, observe, sync the memory; loop or finish
"""

from __future__ import annotations

import re
import time
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from helper_agent.graphs.declarations import (
    OpenParts,
    Part,
    PartChoice,
    choose_part,
    part_lines,
    part_rules,
    run_part,
)
from helper_agent.graphs.embodiedrag.actions import (
    ACTIONS,
    ReactAnswer,
    ReactParseError,
    parse_react,
    parse_self_query,
    react_grammar,
    self_query_grammar,
)
from helper_agent.graphs.embodiedrag.context import EmbodiedRAGContext
from helper_agent.graphs.embodiedrag.prompts import react_messages, self_query_messages
from helper_agent.graphs.embodiedrag.scene import THOR_ATTRIBUTES
from helper_agent.graphs.embodiedrag.state import EmbodiedRAGState
from helper_agent.graphs.object_actions import answer_step, observation_fingerprint, step_refusals
from helper_agent.graphs.steps import Step
from helper_agent.llm import grammar_decoding, invoke_with_retry
from helper_agent.memory.scene_graph import humanize_label
from helper_agent.tools.errors import EpisodeLimit

SELF_QUERY_ATTRIBUTES = [a for a in THOR_ATTRIBUTES if a != "isPickedUp"]
_ALIAS = re.compile(r"\b[A-Z][A-Za-z]*_\d+\b")
_CONTEXT_OVERFLOW = re.compile(r"context (window|length)|context_length|maximum context|too many tokens", re.I)


class ContextOverflow(RuntimeError):
    """The prompt does not fit the model's context (the full-graph baseline in large homes)."""


def _ask(ctx: EmbodiedRAGContext, config: RunnableConfig, messages: list[BaseMessage], name: str,
         grammar: str, attempt: int) -> str:
    chat: Any = ctx.chat()
    temperature = 0.0 if attempt <= 1 else ctx.config.retry_temperature
    decoding = grammar_decoding(chat, grammar, temperature=temperature, seed=ctx.config.seed + attempt - 1, kind=name)
    if decoding:
        chat = chat.bind(**decoding)
    try:
        reply = invoke_with_retry(chat, messages, config=ctx.llm_config(config, name))
    except Exception as exc:
        if _CONTEXT_OVERFLOW.search(str(exc)):
            raise ContextOverflow(str(exc)) from exc
        raise
    return str(reply.content)


def _classes(ctx: EmbodiedRAGContext) -> list[str]:
    return sorted(ctx.episode_scene().catalog.types)


# ------------------------------------------------------------------------------------ nodes
def start(state: EmbodiedRAGState, runtime: Runtime[EmbodiedRAGContext]) -> dict[str, Any]:
    ctx = EmbodiedRAGContext.of(runtime)
    ctx.memory().clear()  # this episode's graph starts empty: the agent knows only what it sees
    scene = ctx.episode_scene()
    try:
        scene.look_around()
    except EpisodeLimit as limit:
        return {"finished": True, "outcome": limit.reason, "log": [f"stopped: {limit.reason}"]}
    n = scene.sync()
    return {"step": 0, "history": [], "queries": [], "thought_queries": [], "finished": False,
            "feedback_left": ctx.config.feedback_rounds, "log": [f"start: {n} objects seen"]}


def self_query(state: EmbodiedRAGState, runtime: Runtime[EmbodiedRAGContext], config: RunnableConfig) -> dict[str, Any]:
    ctx = EmbodiedRAGContext.of(runtime)
    cfg = ctx.config
    grammar = self_query_grammar(SELF_QUERY_ATTRIBUTES, cfg.max_self_query_items)
    messages = self_query_messages(state["request"], SELF_QUERY_ATTRIBUTES, cfg.max_self_query_items)
    log = list(state.get("log", []))
    items: list[tuple[str, list[str]]] = []
    for attempt in range(1, cfg.parse_retries + 2):
        try:
            text = _ask(ctx, config, messages, "embodiedrag:self_query", grammar, attempt)
        except ContextOverflow as exc:
            return {"finished": True, "outcome": "context_overflow", "log": [*log, f"self-query: {exc}"]}
        try:
            items = parse_self_query(text, SELF_QUERY_ATTRIBUTES, cfg.max_self_query_items)
            break
        except ReactParseError as err:
            log.append(f"self-query rejected: {err}")
    log.append("self-query: " + "; ".join(f"{label} [{', '.join(attrs)}]" for label, attrs in items))
    return {"queries": [[label, attrs] for label, attrs in items], "log": log}


def retrieve(state: EmbodiedRAGState, runtime: Runtime[EmbodiedRAGContext]) -> dict[str, Any]:
    ctx = EmbodiedRAGContext.of(runtime)
    cfg = ctx.config
    scene = ctx.episode_scene()
    began = time.perf_counter()
    if cfg.graph == "full":
        view = scene.full()
    else:
        queries = [(str(label), list(attrs)) for label, attrs in state.get("queries", [])]
        have = {label for label, _ in queries}
        queries += [(label, []) for label in state.get("thought_queries", []) if label not in have]
        focus = [scene.held] if scene.held else []
        for step in state.get("history", [])[-1:]:
            for key in ("thought", "action", "observation"):
                focus += _ALIAS.findall(step.get(key, ""))
        view = scene.retrieve(queries, cfg.k, cfg.threshold, focus=focus, all_attributes=cfg.attributes == "all")
    ctx.meter.retrieve_seconds.append(time.perf_counter() - began)
    ctx.meter.shown.append(len(view.nodes))
    ctx.meter.known.append(len(scene.objects))
    return {"graph_text": view.render(), "shown_ids": view.ids}


def think(state: EmbodiedRAGState, runtime: Runtime[EmbodiedRAGContext], config: RunnableConfig) -> dict[str, Any]:
    ctx = EmbodiedRAGContext.of(runtime)
    cfg = ctx.config
    scene = ctx.episode_scene()
    ids = list(state.get("shown_ids", []))
    classes = _classes(ctx)
    history = list(state.get("history", []))
    log = list(state.get("log", []))
    # What the agent sees now, as the step will record it. Actions known to change nothing from
    # here (done from here already to no effect, or a walk to an object in reach) and inadmissible
    # ones (the object's type does not afford it, it needs other hands, or the object is already in
    # the state it would make) are left out of the grammar; those done from here are named in the
    # prompt. A model without a grammar that writes one anyway is refused and asked again.
    now = observation_fingerprint(scene.env.observe())
    if cfg.subgoals:
        decided = _part_step(state, ctx, config, history, log)
        if decided is not None:
            chosen: Step = {"before": now, **decided.step_fields()}  # type: ignore[typeddict-item]
            return {"history": [*history, chosen], "log": log}
    refusals = step_refusals(ACTIONS, history, now, scene.shown_types(ids), scene.catalog,
                             lambda i: scene.executor.in_reach(scene.env_id[i]),
                             scene.held, scene.type_of.get(scene.held or ""),
                             refuse_futile=cfg.refuse_futile, admissible=cfg.admissible,
                             state_of=lambda i: scene.executor.tracked_attributes(scene.env_id[i]))
    grammar = react_grammar(ids, classes, refusals.excluded)

    def ask(reason: str | None, attempt: int) -> str:
        messages = react_messages(state["request"], state.get("graph_text", ""), scene.held, history, cfg.history,
                                  reason, refusals.tried)
        return _ask(ctx, config, messages, "embodiedrag:react", grammar, attempt)

    def refused(why: str, futile_action: bool) -> None:
        if futile_action:
            ctx.meter.futile_rejections += 1
        log.append(f"step {state.get('step', 0) + 1} rejected: {why}")

    try:
        answer, reason = answer_step(cfg.parse_retries + 1, ask, lambda text: parse_react(text, ids, classes),
                                     ReactParseError, refusals.futile, refused, refusals.inadmissible)
    except ContextOverflow as exc:
        ctx.meter.context_overflow = True
        return {"finished": True, "outcome": "context_overflow", "log": [*log, f"step {state.get('step', 0)}: {exc}"]}
    if answer is None:
        step: Step = {"thought": "", "action": "(none)", "observation": f"invalid answer: {reason}"}
        return {"history": [*history, step], "log": log}
    step = {"thought": answer.thought, "action": answer.render(), "before": now}
    return {"history": [*history, step], "log": log}


def _part_step(state: EmbodiedRAGState, ctx: EmbodiedRAGContext, config: RunnableConfig, history: list[Step],
               log: list[str]) -> PartChoice | None:
    """`subgoals=on`: the ReAct step chosen among the request's open parts
    (`declarations.choose_part`), with EmbodiedRAG's own prompt (the retrieved subgraph, its last
    thoughts and observations) and the parts' lines; None when it takes its own primitive step."""
    cfg = ctx.config
    scene = ctx.episode_scene()

    def ask(offered: OpenParts, reason: str | None, attempt: int) -> str:
        messages = react_messages(state["request"], state.get("graph_text", ""), scene.held, history, cfg.history,
                                  reason, subgoals=part_lines(offered))
        return _ask(ctx, config, messages, "embodiedrag:react", part_rules(offered.parts, thought=True).to_gbnf(),
                    attempt)

    def rejected(why: str) -> None:
        log.append(f"step {state.get('step', 0) + 1} rejected: {why}")

    return choose_part(scene.env, state["request"], [s.get("action", "") for s in history],
                       cfg.parse_retries + 1, ask, rejected)


def act(state: EmbodiedRAGState, runtime: Runtime[EmbodiedRAGContext]) -> dict[str, Any]:
    ctx = EmbodiedRAGContext.of(runtime)
    scene = ctx.episode_scene()
    history = list(state.get("history", []))
    log = list(state.get("log", []))
    number = state.get("step", 0) + 1
    last = dict(history[-1]) if history else {}
    if "observation" in last:  # the think node already recorded an invalid answer
        return _after(state, ctx, number, log, history, done=False)
    name, _, rest = last.get("action", "").partition("(")
    answer = ReactAnswer(name, rest.rstrip(")") or None, last.get("thought", ""))
    done = False
    if name == "done":
        done = True
        observation = "finished"
        if state.get("feedback_left", 0) > 0 and ctx.feedback is not None:
            missing = ctx.feedback().strip()
            state = {**state, "feedback_left": state.get("feedback_left", 0) - 1}
            if missing:
                done = False
                observation = f"not finished: {missing}"
    else:
        try:
            if last.get("program"):
                observation = run_part(scene.executor, Part(answer.arg or "", last["program"], ""))
                scene.sync()
            else:
                observation = scene.act(answer)
        except EpisodeLimit as limit:
            last["observation"] = f"stopped: {limit.reason}"
            history[-1] = last
            return {"history": history, "step": number, "finished": True, "outcome": limit.reason,
                    "log": [*log, f"step {number}: {answer.render()} -> {limit.reason}"]}
        last["changed"] = observation_fingerprint(scene.env.observe()) != last.get("before")
    last["observation"] = observation
    history[-1] = last
    log.append(f"step {number}: {answer.render()} -> {observation}")
    update = _after(state, ctx, number, log, history, done)
    update["thought_queries"] = _needs(answer.thought, scene.catalog.types)
    return update


def _after(state: EmbodiedRAGState, ctx: EmbodiedRAGContext, number: int, log: list[str], history: list[Step],
           done: bool) -> dict[str, Any]:
    update: dict[str, Any] = {"history": history, "step": number, "log": log,
                              "feedback_left": state.get("feedback_left", 0)}
    if done:
        update.update(finished=True, outcome="done")
    elif number >= ctx.config.max_steps:
        update.update(finished=True, outcome="max_steps")
    return update


def _needs(thought: str, classes: Any) -> list[str]:
    """The object classes the thought names ("I need the knife" -> "knife"): retrieved next step."""
    text = " " + " ".join(re.sub(r"[^a-z]+", " ", humanize_label(thought)).split()) + " "
    found = []
    for cls in classes:
        label = humanize_label(cls)
        if f" {label} " in text or f" {label}s " in text:
            found.append(label)
    # A longer name contains a shorter one ("butter knife" / "knife"): keep both, they retrieve alike.
    return sorted(set(found))


def finish(state: EmbodiedRAGState) -> dict[str, Any]:
    return {"outcome": state.get("outcome") or "done"}


# ------------------------------------------------------------------------------------ routing
def after_start(state: EmbodiedRAGState, runtime: Runtime[EmbodiedRAGContext]) -> str:
    if state.get("finished"):
        return "finish"
    return "retrieve" if EmbodiedRAGContext.of(runtime).config.graph == "full" else "self_query"


def after_self_query(state: EmbodiedRAGState) -> str:
    return "finish" if state.get("finished") else "retrieve"


def after_think(state: EmbodiedRAGState) -> str:
    return "finish" if state.get("finished") else "act"


def after_act(state: EmbodiedRAGState) -> str:
    return "finish" if state.get("finished") else "retrieve"
