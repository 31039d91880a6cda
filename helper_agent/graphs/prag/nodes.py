"""The P-RAG graph's nodes, one function each, and the routing between them.

    observe   the current observation as scene-graph text, and the ids an action may name; at the
              first step, what the agent saw turning once in place
    retrieve  the top K stored episodes by goal + max scene-graph similarity (or goal only)
    choose    one LLM call: the next action, constrained to the action space and the shown ids,
              minus the actions already done from this observation that changed nothing
    act       run it on the environment; loop, or finish at done() / the step cap / a limit
"""

from __future__ import annotations

import time
from typing import Any

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
from helper_agent.graphs.object_actions import (
    answer_step,
    known_state_fingerprint,
    observation_fingerprint,
    step_refusals,
)
from helper_agent.graphs.prag.actions import (
    ACTIONS,
    StepAction,
    StepParseError,
    out_of_view,
    parse_step,
    step_grammar,
)
from helper_agent.graphs.prag.context import PRAGContext
from helper_agent.graphs.prag.prompts import render_experience, step_messages
from helper_agent.graphs.prag.state import PRAGState
from helper_agent.graphs.steps import Step
from helper_agent.llm import grammar_decoding, invoke_with_retry
from helper_agent.tools.errors import EpisodeLimit


def observe(state: PRAGState, runtime: Runtime[PRAGContext]) -> dict[str, Any]:
    ctx = PRAGContext.of(runtime)
    world = ctx.episode_world()
    first = "step" not in state
    update: dict[str, Any] = {}
    if first:
        update.update(step=0, history=[], finished=False, log=[], experience_ids=[], experience="")
    if first and ctx.config.look_around:
        try:
            view = world.look_around(ctx.config.max_objects, ctx.config.max_remembered)
        except EpisodeLimit as limit:
            return {**update, "finished": True, "outcome": limit.reason, "log": [f"stopped: {limit.reason}"]}
    else:
        view = world.scene(ctx.config.max_objects, ctx.config.max_remembered)
    update.update(scene_graph=view.text, shown_ids=view.ids, remembered_ids=view.remembered, held=view.held)
    return update


def retrieve(state: PRAGState, runtime: Runtime[PRAGContext]) -> dict[str, Any]:
    ctx = PRAGContext.of(runtime)
    cfg = ctx.config
    memory = ctx.experience
    if memory is None:
        return {"experience": render_experience([], cfg.experience_steps, cfg.goal_chars), "experience_ids": []}
    if cfg.retrieval == "goal" and state.get("step", 0) > 0 and state.get("experience"):
        return {}  # goal-only retrieval gives the same episodes every step
    began = time.perf_counter()
    scene = state.get("scene_graph", "") if cfg.retrieval == "goal+scene" else None
    hits = memory.retrieve(state["request"], cfg.k, scene_graph=scene)
    ctx.meter.retrieve_seconds.append(time.perf_counter() - began)
    ids = [h.id for h in hits]
    if ids == state.get("experience_ids") and state.get("experience"):
        return {}
    if state.get("experience_ids"):
        ctx.meter.experience_changes += 1
    text = render_experience([h.record for h in hits], cfg.experience_steps, cfg.goal_chars)
    return {"experience": text, "experience_ids": ids}


def _ask(ctx: PRAGContext, config: RunnableConfig, messages: list[Any], grammar: str, attempt: int) -> str:
    chat: Any = ctx.chat()
    temperature = 0.0 if attempt <= 1 else ctx.config.retry_temperature
    decoding = grammar_decoding(chat, grammar, temperature=temperature, seed=ctx.config.seed + attempt - 1)
    if decoding:
        chat = chat.bind(**decoding)
    reply = invoke_with_retry(chat, messages, config=ctx.llm_config(config, "prag:step"))
    return str(reply.content)


def choose(state: PRAGState, runtime: Runtime[PRAGContext], config: RunnableConfig) -> dict[str, Any]:
    ctx = PRAGContext.of(runtime)
    cfg = ctx.config
    ids = list(state.get("shown_ids", []))
    remembered = list(state.get("remembered_ids", []))  # never the shown ids (`EpisodeWorld._remembered`)
    classes = ctx.episode_world().classes()
    history = list(state.get("history", []))
    log = list(state.get("log", []))
    # What the agent sees now, as the step will record it. Actions known to change nothing from
    # here (done from here already to no effect, or a walk to an object in reach) and inadmissible
    # ones (the object's type does not afford it, it needs other hands, or the object is already in
    # the state it would make) are left out of the grammar; those done from here are named in the
    # prompt, and so are the actions taken before from this same known state (they would go round
    # the same loop) and searches that found nothing. Objects seen before and out of view now may
    # only be walked to. A model without a grammar that writes any of these is refused and asked again.
    world = ctx.episode_world()
    obs = world.env.observe()
    now = observation_fingerprint(obs)
    known = known_state_fingerprint(obs, world.executor.tracker.objects.values())
    if cfg.subgoals:
        decided = _part_step(state, ctx, config, history, log)
        if decided is not None:
            step_taken: Step = {"scene_graph": state.get("scene_graph", ""), "before": now, "state": known,
                                **decided.step_fields()}  # type: ignore[typeddict-item]
            return {"history": [*history, step_taken], "log": log}
    refusals = step_refusals(ACTIONS, history, now, world.shown_types(ids), world.catalog,
                             lambda i: world.executor.in_reach(world.env_id[i]),
                             state.get("held"), world.type_of.get(state.get("held") or ""),
                             refuse_futile=cfg.refuse_futile, admissible=cfg.admissible,
                             state_of=lambda i: world.executor.tracked_attributes(world.env_id[i]),
                             known_state=known)
    refusals.inadmissible.update(out_of_view(remembered))
    nameable = ids + remembered
    grammar = step_grammar(nameable, classes, refusals.excluded)

    def ask(reason: str | None, attempt: int) -> str:
        messages = step_messages(state["request"], cfg.goal_chars, state.get("experience", ""),
                                 state.get("scene_graph", ""), state.get("held"), history, cfg.history,
                                 state.get("step", 0), cfg.max_steps, reason, [*refusals.tried, *refusals.repeated],
                                 remembered)
        return _ask(ctx, config, messages, grammar, attempt)

    def refused(why: str, futile_action: bool) -> None:
        if futile_action:
            ctx.meter.futile_rejections += 1
        else:
            ctx.meter.parse_rejections += 1
        log.append(f"step {state.get('step', 0) + 1} rejected: {why}")

    answer, reason = answer_step(cfg.parse_retries + 1, ask, lambda text: parse_step(text, nameable, classes),
                                 StepParseError, refusals.futile, refused, refusals.inadmissible)
    step: Step = {"scene_graph": state.get("scene_graph", ""), "before": now, "state": known}
    if answer is None:
        step.update(action="(none)", observation=f"invalid answer: {reason}")
    else:
        step["action"] = answer.render()
    return {"history": [*history, step], "log": log}


def _part_step(state: PRAGState, ctx: PRAGContext, config: RunnableConfig, history: list[Step],
               log: list[str]) -> PartChoice | None:
    """`subgoals=on`: the step chosen among the request's open parts (`declarations.choose_part`),
    with P-RAG's own prompt (its retrieved experience, the scene graph, its last steps) and the
    parts' lines; None when the method takes its own primitive step."""
    cfg = ctx.config

    def ask(offered: OpenParts, reason: str | None, attempt: int) -> str:
        messages = step_messages(state["request"], cfg.goal_chars, state.get("experience", ""),
                                 state.get("scene_graph", ""), state.get("held"), history, cfg.history,
                                 state.get("step", 0), cfg.max_steps, reason, subgoals=part_lines(offered))
        return _ask(ctx, config, messages, part_rules(offered.parts).to_gbnf(), attempt)

    def rejected(why: str) -> None:
        ctx.meter.parse_rejections += 1
        log.append(f"step {state.get('step', 0) + 1} rejected: {why}")

    return choose_part(ctx.episode_world().env, state["request"], [s.get("action", "") for s in history],
                       cfg.parse_retries + 1, ask, rejected)


def act(state: PRAGState, runtime: Runtime[PRAGContext]) -> dict[str, Any]:
    ctx = PRAGContext.of(runtime)
    history = list(state.get("history", []))
    log = list(state.get("log", []))
    number = state.get("step", 0) + 1
    last: Step = dict(history[-1]) if history else {}  # type: ignore[assignment]
    update: dict[str, Any] = {"step": number}
    if "observation" not in last:
        name, _, rest = last.get("action", "").partition("(")
        action = StepAction(name, rest.rstrip(")") or None)
        if name == "done":
            last["observation"] = "finished"
            update.update(finished=True, outcome="done")
        else:
            began = time.perf_counter()
            world = ctx.episode_world()
            try:
                last["observation"] = (run_part(world.executor, Part(rest.rstrip(")"), last.get("program", ""), ""))
                                       if last.get("program") else world.act(action))
            except EpisodeLimit as limit:
                last["observation"] = f"stopped: {limit.reason}"
                update.update(finished=True, outcome=limit.reason)
            last["changed"] = observation_fingerprint(ctx.episode_world().env.observe()) != last.get("before")
            ctx.meter.act_seconds.append(time.perf_counter() - began)
        history[-1] = last
    log.append(f"step {number}: {last.get('action', '')} -> {last.get('observation', '')}")
    if not update.get("finished") and number >= ctx.config.max_steps:
        update.update(finished=True, outcome="max_steps")
    update.update(history=history, log=log)
    return update


def finish(state: PRAGState) -> dict[str, Any]:
    return {"outcome": state.get("outcome") or "done"}


def after_observe(state: PRAGState) -> str:
    return "finish" if state.get("finished") else "retrieve"


def after_act(state: PRAGState) -> str:
    return "finish" if state.get("finished") else "observe"
