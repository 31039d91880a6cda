"""The HELPER graph's nodes, one function each, and the routing functions between them.

Each node reads the state, does one job, and returns the keys it changed. The nodes that act
(`execute`, `locate`) act on the environment of the runtime context; the program is compiled once
in `validate` (and a corrective program once in `correct`) and the subgoals travel in the state.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import Overwrite, interrupt

from helper_agent.envs.base import Snapshotting
from helper_agent.graphs.helper.context import HelperContext
from helper_agent.graphs.helper.examples import examples_for
from helper_agent.graphs.helper.feedback import read_feedback
from helper_agent.graphs.helper.prompts import (
    corrector_messages,
    explanation_of,
    planner_messages,
    routine_messages,
)
from helper_agent.graphs.helper.reading import check_request, household_names, outcome_statement, vocabulary
from helper_agent.graphs.helper.scoping import example_note, fit_to_request, routine_in_scope, scope_of
from helper_agent.graphs.helper.state import HelperState, subgoals_from_data, subgoals_to_data
from helper_agent.graphs.helper.teaching import (
    confirmation_question,
    describe_routine,
    is_yes,
    portable,
    round_done,
    whole_program,
)
from helper_agent.graphs.helper.tracing import SubgoalSpans
from helper_agent.llm import grammar_decoding, invoke_with_retry, program_decoding, prompt_kind
from helper_agent.memory.corrections import correction_query
from helper_agent.program import CompiledProgram, ProgramError, compile_program
from helper_agent.program.edits.instances import absent_walks, fit_instances
from helper_agent.program.edits.loops import fit_loops
from helper_agent.program.edits.trim import trim_classes
from helper_agent.program.subgoals import ObjectRef
from helper_agent.tools.executor import (
    EpisodeLimit,
    ExecutionListener,
    ExecutionResult,
    Executor,
    ExecutorConfig,
    Prechecks,
)
from helper_agent.tools.locator import LLMLocator, RandomLocator
from helper_agent.understanding.in_household import household_classes, in_household
from helper_agent.understanding.missing import places_of
from helper_agent.understanding.requests import is_unchanged_recall, teach_request

FEEDBACK_QUESTION = "Is the task completed to your satisfaction? Did I miss anything?"
CONFIRM_KIND = "confirm_routine"
"""The `kind` of the `interrupt` payload that asks the person to confirm a routine before it is stored."""
LIMITS = ("step_limit", "failure_limit")

__all__ = ["CONFIRM_KIND", "FEEDBACK_QUESTION"]


def _ask(ctx: HelperContext, config: RunnableConfig, messages: list[BaseMessage], name: str,
         decoding: dict[str, Any] | None = None) -> str:
    chat: Any = ctx.chat()
    if decoding:
        chat = chat.bind(**decoding)
    reply = invoke_with_retry(chat, messages, config=ctx.llm_config(config, name))
    text = str(reply.content)
    if (getattr(reply, "response_metadata", None) or {}).get("finish_reason") == "length":
        # Cut off by the token limit (small models sometimes repeat themselves until then): the
        # last line is incomplete, so keep the complete lines and let validation judge the rest.
        text = text[: text.rfind("\n")] if "\n" in text else ""
    return text


def _program_decoding(ctx: HelperContext, attempt: int, kind: str, agent_moves: bool = False) -> dict[str, Any]:
    """How to decode a program on attempt `attempt` (1-based): constrained where the model allows
    it; greedy first, then sampled with a new seed, so a retry is not the same rejected answer.

    `kind` keeps a prompt kind's prefix cached apart from the others: plans and replans share
    their system text, examples and dialogue; the corrector and the locator would evict them."""
    temperature = 0.0 if attempt <= 1 else ctx.config.retry_temperature
    return program_decoding(ctx.chat(), max_lines=ctx.config.max_program_lines, temperature=temperature,
                            seed=ctx.config.seed + attempt - 1, agent_moves=agent_moves, kind=kind)


def _executor(ctx: HelperContext, state: HelperState, listener: ExecutionListener | None = None) -> Executor:
    # The limits are per request: the executor compares the household's running counts, so each
    # request's limit is its budget on top of the counts when it started (0 in an evaluation, whose
    # episode is one request; a chat's household keeps counting across requests).
    config = ExecutorConfig(
        prechecks=Prechecks() if ctx.config.prechecks else Prechecks.off(),
        max_steps=int(state.get("steps_at_start", 0)) + ctx.config.max_steps,
        max_failures=int(state.get("failures_at_start", 0)) + ctx.config.max_failures,
        search_unseen=False,
        seed=ctx.config.seed,
    )
    return Executor(ctx.environment(), config=config, diagnoser=ctx.failure_diagnoser(), bindings=state.get("bindings") or {},
                    listener=listener)


def _acted(ctx: HelperContext, executor: Executor) -> dict[str, Any]:
    """What a node that acted writes back: the bindings and, for checkpointed chats, the household."""
    update: dict[str, Any] = {"bindings": dict(executor.bindings)}
    env = ctx.environment()
    if ctx.keep_snapshots and isinstance(env, Snapshotting):
        update["world"] = env.snapshot()
    return update


def counting_usage(node: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """`node`, also writing the LLM calls it made (from the context's usage recorder) into the
    state's `usage`, so a request's LLM use is in its checkpoint (summed across resumes)."""
    wants = inspect.signature(node).parameters

    def counted(state: HelperState, runtime: Runtime[HelperContext], config: RunnableConfig) -> dict[str, Any]:
        ctx = HelperContext.of(runtime)
        mark = len(ctx.usage.calls)
        extra = {name: value for name, value in (("runtime", runtime), ("config", config)) if name in wants}
        update = node(state, **extra)
        calls = ctx.usage.calls[mark:]
        if calls:
            update = {**update, "usage": {
                "llm_calls": len(calls), "prompt_tokens": sum(c.prompt_tokens for c in calls),
                "completion_tokens": sum(c.completion_tokens for c in calls),
                "llm_seconds": round(sum(c.seconds for c in calls), 3)}}
        return update

    counted.__name__ = node.__name__
    counted.__doc__ = node.__doc__
    return counted


# ---------------------------------------------------------------------------------- nodes
def retrieve(state: HelperState, runtime: Runtime[HelperContext]) -> dict[str, Any]:
    """Find prompt examples (memory-augmented or fixed) and, for a user, a matching routine."""
    ctx = HelperContext.of(runtime)
    request = state["request"]
    env = ctx.environment()
    update: dict[str, Any] = {"plan_attempts": 0, "plan_error": "", "corrections": 0, "locate_attempts": 0,
                              "feedback_rounds": 0, "resume_index": 0, "correction_subgoals": None, "feedback": "",
                              "ran_subgoals": [],
                              "subgoals": [], "bindings": {}, "execution": {}, "outcome": "", "stored": None, "repeated": False,
                              "ran_programs": [],
                              "program": "", "steps_at_start": env.steps, "failures_at_start": env.failures,
                              "usage": Overwrite({})}
    teach = teach_request(request)
    update["teach_name"] = teach.name if teach else None
    log: list[str] = []
    update["said"] = ""
    words = vocabulary(ctx) if ctx.config.refuse_absent else None  # one reading of the request's words
    if words is not None and ctx.feedback is None:
        # A person's everyday name for a thing the household has is read as its name ("the telly":
        # the television) for retrieval and planning; the reply keeps the person's words.
        named, read = household_names(words, env, request)
        if read:
            update.update(request=named, said=request)
            log.append("retrieve: read " + ", ".join(f"'{word}' as the {name}" for word, name in read))
            request = named
    examples = examples_for(ctx, request)
    update["examples"] = examples
    update["routine"] = None
    update["adaptation"] = None
    user = state.get("user")
    if user and not teach:
        hits = ctx.routine_memory().recall(request, user=user, k=1, min_score=ctx.config.routine_min_score)
        named = ctx.routine_memory().named_in(request, user=user) if not hits else []
        if hits:
            hit = hits[0]
            update["routine"] = {"name": hit.record.name, "program": hit.record.program, "request": hit.record.request,
                                 "score": round(hit.score, 3), "version": hit.details.get("versions")}
        elif len(named) == 1:  # the person said the routine's name, in words the similarity weighed less
            update["routine"] = {"name": named[0].name, "program": named[0].program, "request": named[0].request,
                                 "score": "named", "version": named[0].version}
    names = ", ".join(e["id"] for e in examples)
    routine = f"; routine '{update['routine']['name']}' ({update['routine']['score']})" if update["routine"] else ""
    log.insert(0, f"retrieve: examples {names}{routine}")
    # A routine's name is the person's own word, not a thing to find: a recalled routine is never refused.
    update["refusal"] = ""
    update["unasked_kept"] = []
    # Where things were, for a correction that puts one back (`missing.put_back`): kept only where the
    # household's snapshot is kept in the state anyway (a chat); an evaluation keeps the household
    # out of the state and its traces (a traced episode grew by a tenth with it).
    update["places_at_start"] = places_of(env.objects_metadata()) if ctx.keep_snapshots else {}
    update["opened_looking"] = []
    update["unsure"] = []
    update["unmet"] = []
    if words is not None and not update["routine"]:
        checked = check_request(words, env, request, ask=ctx.feedback is None)
        log += checked.pop("log", [])
        update.update(checked)
    return {**update, "log": Overwrite(log)}


def plan(state: HelperState, runtime: Runtime[HelperContext], config: RunnableConfig) -> dict[str, Any]:
    """Write the program: the LLM adapts a recalled routine to the request (or reuses it as is
    when the request asks for nothing but the routine), else writes one from the examples."""
    ctx = HelperContext.of(runtime)
    routine = state.get("routine")
    attempts = int(state.get("plan_attempts", 0)) + 1
    if (routine and ctx.config.routine_fast_path and not state.get("plan_error")
            and is_unchanged_recall(state["request"], routine["name"], routine.get("request") or "")):
        return {"program": routine["program"], "plan_attempts": attempts, "log": [f"plan: recalled routine '{routine['name']}'"]}
    examples = list(state.get("examples") or [])
    error, previous = state.get("plan_error", ""), state.get("program", "")
    if routine:
        messages = routine_messages(state["request"], routine, examples, error, previous)
    else:
        note = example_note(scope_of(state, _present(ctx)), examples)
        messages = planner_messages(state["request"], examples, error, previous, note=note)
    text = _ask(ctx, config, messages, "plan", _program_decoding(ctx, attempts, "plan"))
    adapting = f" adapting routine '{routine['name']}'" if routine else ""
    return {"program": text, "plan_attempts": attempts, "log": [f"plan: attempt {attempts}{adapting}"]}


def validate(state: HelperState, runtime: Runtime[HelperContext]) -> dict[str, Any]:
    """Parse and compile the program once (a class the household lacks written as the kind of it the
    household has, then compiled again); a rejection is kept as the message for the next attempt.

    The program is then fitted to the request (`scoping.fit_to_request`): what it changes that the
    request neither names nor needs for a step it implies is removed, noted in the log, and a first
    plan gets what the words ask it to end with and it left out; only when nothing asked would
    remain is it rejected the same way, with that reason."""
    ctx = HelperContext.of(runtime)
    try:
        compiled, moved = _compiled_here(ctx, state.get("program", ""))
    except ProgramError as err:
        return {"plan_error": str(err), "subgoals": [], "log": [f"validate: rejected: {err}"]}
    last = int(state.get("plan_attempts", 0)) >= ctx.config.max_plan_attempts
    counts = Counter(str(o.get("objectType", "")) for o in ctx.environment().objects_metadata())
    fitted = fit_to_request(compiled, state, _present(ctx), lambda text: _compiled_here(ctx, text)[0], last, counts)
    if fitted.compiled is None:
        return {"plan_error": fitted.reason, "subgoals": [], "log": [f"validate: rejected: {fitted.reason}"]}
    notes = [*_moved_notes(moved), *compiled.notes, *fitted.notes]
    compiled = fitted.compiled
    detail = f" ({'; '.join(notes)})" if notes else ""
    kept = list(dict.fromkeys([*(state.get("unasked_kept") or []), *fitted.kept]))
    return {"plan_error": "", "program": compiled.source, "subgoals": subgoals_to_data(compiled.subgoals),
            "unasked_kept": kept, "log": [f"validate: {len(compiled.subgoals)} subgoals{detail}"]}


def _present(ctx: HelperContext) -> frozenset[str]:
    """The object classes the household of the runtime context holds."""
    return household_classes(ctx.environment().objects_metadata())


def _compiled_here(ctx: HelperContext, program: str) -> tuple[CompiledProgram, dict[str, str]]:
    """The program compiled, each class it makes that the household lacks written as the household's
    kind of it ("Lamp" -> the FloorLamp there: `understanding/in_household.py`), and what was
    written for what; a loop that makes a new object each round cut to the household's count of
    them (`program/edits/loops.py`: "wash all the pots" as three rounds with two pots searched 300
    steps for a third), and a class constructed more often than the household holds it made into
    the objects made before (`program/edits/instances.py`), and a walk to a class the household
    holds none of left out (`instances.absent_walks`), noted among the compiler's notes."""
    compiled = compile_program(program, class_mapper=ctx.mapper())
    compiled, moved = in_household(compiled, _present(ctx), ctx.mapper())
    counts = Counter(str(o.get("objectType", "")) for o in ctx.environment().objects_metadata())
    source, cut = fit_loops(compiled.source, counts)
    source, merged = fit_instances(source, counts)
    cut = [*cut, *merged]
    if nowhere := absent_walks(source, counts):
        walked = trim_classes(source, (), unvisited=nowhere)
        if walked.removed and walked.program.strip():
            source = walked.program
            cut.append(f"no {', '.join(nowhere)} in the household: the walk{'s' if len(nowhere) > 1 else ''} to it left out")
    if cut:
        recompiled = compile_program(source, class_mapper=ctx.mapper())
        compiled = replace(recompiled, notes=[*recompiled.notes, *cut])
    return compiled, moved


def _moved_notes(moved: dict[str, str]) -> list[str]:
    """The validator's note on each class written as the household's ("Lamp is the household's FloorLamp")."""
    return [f"{old} is the household's {new}" for old, new in moved.items()]


def execute(state: HelperState, runtime: Runtime[HelperContext], config: RunnableConfig) -> dict[str, Any]:
    """Run a pending corrective program, then the plan from where it stopped; each subgoal is a
    child span of this node in traces."""
    ctx = HelperContext.of(runtime)
    executor = _executor(ctx, state, SubgoalSpans(config))
    log: list[str] = []
    trace = list((state.get("execution") or {}).get("trace") or [])
    ran = list(state.get("ran_subgoals") or [])
    pending = state.get("correction_subgoals")
    if pending:
        correction = executor.run(subgoals_from_data(pending))
        trace += _trace(correction)
        ran += pending[:correction.completed]
        log.append(f"execute: correction {correction.status}")
        if correction.status in LIMITS:
            return {**_acted(ctx, executor), "correction_subgoals": None, "ran_subgoals": ran,
                    "execution": _summary(correction, trace), "log": log}
    subgoals = subgoals_from_data(state.get("subgoals") or [])
    start = int(state.get("resume_index", 0))
    result = executor.run(subgoals, start=start)
    ran += (state.get("subgoals") or [])[start:result.completed]
    trace += _trace(result)
    env = ctx.environment()
    used = env.steps - int(state.get("steps_at_start", 0))
    log.append(f"execute: {result.status} after {result.completed}/{len(subgoals)} subgoals, {used} steps this request"
               + (f": {result.error}" if result.error else ""))
    return {**_acted(ctx, executor), "correction_subgoals": None, "execution": _summary(result, trace),
            "resume_index": result.completed, "ran_subgoals": ran, "log": log}


def _trace(result: ExecutionResult) -> list[list[Any]]:
    return [[t.subgoal, t.status, len(t.actions)] for t in result.trace]


def _summary(result: ExecutionResult, trace: list[list[Any]]) -> dict[str, Any]:
    return {
        "status": result.status,
        "error": result.error,
        "failure": result.diagnosis.description if result.diagnosis else result.error,
        "failed_subgoal": result.failed_subgoal.describe() if result.failed_subgoal else "",
        "missing": result.missing,
        "missing_key": result.missing_key,
        "missing_sliced": result.missing_sliced,
        "completed": result.completed,
        "trace": trace,
    }


def locate(state: HelperState, runtime: Runtime[HelperContext], config: RunnableConfig) -> dict[str, Any]:
    """Search for an object not seen yet: LLM-suggested places (or random order), then exploration."""
    ctx = HelperContext.of(runtime)
    executor = _executor(ctx, state)
    missing = state["execution"].get("missing") or ""
    if ctx.config.locator == "llm":
        chat: Any = ctx.chat()
        chat = chat.bind(**prompt_kind(chat, "locate")).with_config(ctx.llm_config(config, "locate"))
        locator: Any = LLMLocator(chat, dialogue=state["request"])
    else:
        locator = RandomLocator(ctx.config.seed + int(state.get("locate_attempts", 0)))
    closed = _closed(ctx.environment())
    try:
        # Search as the program object that needed it, so objects bound to other program objects
        # (the first of two cups) do not count as found.
        key = state["execution"].get("missing_key") or "__locate"
        # For a slice, its pieces are found too: the step is then done without a whole one.
        sliced = ("sliced",) if state["execution"].get("missing_sliced") else ()
        found = bool(locator(executor, ObjectRef(key, missing, attributes=sliced)))
    except EpisodeLimit as limit:
        return {**_acted(ctx, executor), "execution": {**state["execution"], "status": limit.reason},
                "opened_looking": _opened_looking(state, ctx.environment(), closed, missing),
                "log": [f"locate: stopped by {limit.reason}"]}
    return {**_acted(ctx, executor), "locate_attempts": int(state.get("locate_attempts", 0)) + 1,
            "opened_looking": _opened_looking(state, ctx.environment(), closed, missing),
            "log": [f"locate: {missing} {'found' if found else 'not found'}"]}


def _closed(env: Any) -> set[str]:
    """The ids of the household's closed things that open (a search may open them)."""
    return {str(obj.get("objectId")) for obj in env.objects_metadata() if obj.get("openable") and not obj.get("isOpen")}


def _opened_looking(state: HelperState, env: Any, closed: set[str], missing: str) -> list[list[str]]:
    """This request's `opened_looking` with what the search just opened (closed before it, open now):
    a side effect nobody asked for, which the reply names (a drawer left open showed only in the
    app's picture legend)."""
    opened = [[str(obj.get("objectType")), missing] for obj in env.objects_metadata()
              if obj.get("isOpen") and str(obj.get("objectId")) in closed]
    return [*(state.get("opened_looking") or []), *opened]


def correct(state: HelperState, runtime: Runtime[HelperContext], config: RunnableConfig) -> dict[str, Any]:
    """Retrieve correction examples for the diagnosed failure and ask for a corrective program."""
    ctx = HelperContext.of(runtime)
    execution = state["execution"]
    failure = execution.get("failure") or execution.get("error", "")
    failed = execution.get("failed_subgoal", "")
    hits = ctx.correction_memory().retrieve(correction_query(failed, failure, state["request"]), k=2)
    examples = [h.record.model_dump() for h in hits]
    corrections = int(state.get("corrections", 0)) + 1
    text = _ask(ctx, config, corrector_messages(state["request"], state["program"], failed, failure, examples), "correct",
                _program_decoding(ctx, corrections, "correct", agent_moves=True))
    try:
        compiled, _ = _compiled_here(ctx, text)
    except ProgramError as err:
        return {"corrections": corrections, "correction_subgoals": None,
                "log": [f"correct: corrective program rejected ({err}); retrying the failed step"]}
    why = explanation_of(compiled.source)
    return {"corrections": corrections, "correction_subgoals": subgoals_to_data(compiled.subgoals),
            "log": [f"correct: {why or 'corrective program'} (examples {', '.join(h.id for h in hits)})"]}


REPEATED_NOTE = "I couldn't work out what to change from that, so I did nothing more."
"""Said before the question when the replan only repeated the program it was about (`repeated`)."""


def ask_feedback(state: HelperState, runtime: Runtime[HelperContext], config: RunnableConfig) -> dict[str, Any]:
    """Ask whether the task is done: the context's feedback source answers (an evaluation hands
    the graph one: the checker's sentence, "" when nothing is missing), else a person through
    `interrupt`, whose answer the chat model reads under a grammar (`feedback.read_feedback`):
    "no", "not yet" and "you forgot the salt" are not satisfied; "yes" and "thanks, that's it" are."""
    ctx = HelperContext.of(runtime)
    rounds = int(state.get("feedback_rounds", 0))
    # What the request asked that the household does not show is said before the question
    # (`reading.outcome_statement`): "Not done yet: the pillow is not in the vase."
    lacks, remarks, statement = outcome_statement(state, ctx.environment())
    # Logged where it is said (to a person, with the question); an evaluation's feedback source is
    # asked nothing, so its log keeps one line per node as before.
    seen = [f"outcome: {statement}"] if statement and ctx.feedback is None else []
    if ctx.feedback is not None:
        feedback = ctx.feedback().strip()
        log = f"feedback: {feedback or 'satisfied'}"
    else:
        # `round`/`last`: the question's number, and whether an answer now can still be replanned
        # (the config bounds the replans; the question after the last replan is the last).
        # a replan that only repeated the program ran nothing: the person hears that, not the same question alone
        said = " ".join(x for x in (REPEATED_NOTE if state.get("repeated") else "", statement, FEEDBACK_QUESTION) if x)
        answer = interrupt({"question": said,
                            "unmet": lacks, "others": remarks, "program": state.get("program", ""),
                            "execution": state.get("execution", {}), "round": rounds + 1,
                            "last": rounds >= ctx.config.feedback_rounds})
        text = str(answer or "").strip()

        def ask(messages: list[BaseMessage], grammar: str) -> str:
            return _ask(ctx, config, messages, "read_feedback",
                        {**grammar_decoding(ctx.chat(), grammar, kind="feedback"), "max_tokens": 32})

        reading = read_feedback(text, ask)
        # The person's own words drive the replan and are what the log shows: the 0.5B model's summary
        # of what is missing copies its few-shot turns for a bare "no" ("the bread isn't toasted").
        feedback = "" if reading.satisfied else text
        log = "feedback: satisfied" if reading.satisfied else f"feedback: not satisfied ({text})"
    return {"feedback": feedback, "feedback_rounds": rounds + 1, "unmet": lacks, "log": [*seen, log]}


def _routine_to_store(state: HelperState) -> tuple[str, bool] | None:
    """The routine this request may store, and whether it is an update: the routine it teaches
    ("Perform the Kim breakfast: ..."), or the recalled routine once a correction changed what it
    did (the person was not satisfied at least once before saying yes); None otherwise."""
    if state.get("teach_name"):
        return str(state["teach_name"]), False
    routine = state.get("routine")
    if routine and int(state.get("feedback_rounds", 0)) > 1:
        return str(routine["name"]), True
    return None


def memorize(state: HelperState, runtime: Runtime[HelperContext]) -> dict[str, Any]:
    """The person is satisfied. It is a success only if the execution also finished by the agent's
    own account; only then is a routine stored for the user: the one the request taught, or the
    recalled one a correction changed (a new version). A request that teaches a routine is the one
    exception: the person's yes to what it did is the teaching, so the steps that ran are stored
    even when a later step found nothing (calibration suite: "put the remote on the sofa" looped
    for a second remote the room did not have, the person was satisfied, and nothing was stored).

    What is stored is the whole request as done across its rounds (`teaching.whole_program` over
    `teaching.round_done`), without the teaching household's landmarks (`teaching.portable`). A
    person reads it first, in words (`teaching.describe_routine`), through `interrupt` ("I'll
    remember the Kim breakfast as: coffee in the mug; a toasted bread slice on the plate. Store
    it?"), and only a clear yes stores it. An evaluation's feedback source cannot be asked: there
    the routine a request taught is stored as confirmed by the satisfied answer, as before, and a
    recalled routine is not changed."""
    ctx = HelperContext.of(runtime)
    target = _routine_to_store(state)
    user = state.get("user")
    finished = (state.get("execution") or {}).get("status") == "done"
    if not finished and not (target and not target[1] and user):
        return {"outcome": "incomplete", "log": ["memorize: the execution did not finish; nothing stored"]}
    if target is None or not user or (target[1] and ctx.feedback is not None):
        return {"outcome": "success", "log": ["memorize: nothing to store"]}
    name, update = target
    request = ((state.get("routine") or {}).get("request") or state["request"]) if update else state["request"]
    program = portable(whole_program([*(state.get("ran_programs") or []), round_done(state)]), request)
    dropped: list[str] = []
    if not update:  # what the teaching request never asked for is no part of its routine
        program, dropped = routine_in_scope(program, state, _present(ctx))
    left_out = [f"memorize: left out of the routine: {', '.join(dropped)} (the request did not ask for them)"] if dropped else []
    if not program.strip():
        return {"outcome": "incomplete" if not finished else "success",
                "log": ["memorize: no step ran to its end; nothing stored"]}
    if ctx.feedback is None:
        description = describe_routine(program)
        answer = interrupt({"kind": CONFIRM_KIND, "question": confirmation_question(name, description, update),
                            "routine": name, "description": description, "program": program, "update": update})
        said = str(answer or "").strip()
        heard = [*left_out, f"confirm: {said}"]  # the person's words, for a conversation rebuilt from the checkpoints
        if not is_yes(said):
            return {"outcome": "success",
                    "log": [*heard, f"memorize: routine '{name}' not stored (the person said: {said or 'nothing'})"]}
    else:
        heard = left_out
    routine = ctx.routine_memory().teach(name, program, request, user=user, source="confirmed_success")
    version = getattr(routine, "version", None)
    stored = {"name": routine.name, "version": version, "user": user}
    return {"outcome": "success", "stored": stored,
            "log": [*heard, f"memorize: routine '{routine.name}' v{version if version is not None else '?'} for {user}"]}


def finish(state: HelperState) -> dict[str, Any]:
    execution = state.get("execution") or {}
    if state.get("refusal"):
        outcome = "refused"
    elif state.get("repeated"):
        outcome = "repeated_program"
    elif state.get("plan_error"):
        outcome = "invalid_program"
    elif execution.get("status") in LIMITS:
        outcome = execution["status"]
    elif execution.get("status") == "done" and not state.get("feedback"):
        outcome = "done"
    else:
        outcome = "incomplete"
    return {"outcome": outcome, "log": [f"finish: {outcome}"]}


# ---------------------------------------------------------------------------------- routing
def after_retrieve(state: HelperState, runtime: Runtime[HelperContext]) -> str:
    """A request about nothing the household has ends (`understanding/absent.py`); a recalled routine
    is adapted by edits (adapt.py) unless the configuration says otherwise."""
    if state.get("refusal"):
        return "finish"
    if state.get("unsure"):
        return "clarify"
    return "understand" if state.get("routine") and HelperContext.of(runtime).config.routine_edits else "plan"


def after_validate(state: HelperState, runtime: Runtime[HelperContext]) -> str:
    if not state.get("plan_error"):
        return "execute"
    return "plan" if int(state.get("plan_attempts", 0)) < HelperContext.of(runtime).config.max_plan_attempts else "finish"


def after_execute(state: HelperState, runtime: Runtime[HelperContext]) -> str:
    ctx = HelperContext.of(runtime)
    status = state["execution"]["status"]
    if status == "done":
        return "ask_feedback" if ctx.config.feedback_rounds > 0 else "finish"
    if status in LIMITS:
        return "finish"
    if status == "not_found" and int(state.get("locate_attempts", 0)) < ctx.config.max_locate_attempts:
        return "locate"
    if ctx.config.correction and int(state.get("corrections", 0)) < ctx.config.max_corrections:
        return "correct"
    return "ask_feedback" if ctx.config.feedback_rounds > 0 else "finish"


def after_locate(state: HelperState) -> str:
    return "finish" if state["execution"]["status"] in LIMITS else "execute"


def after_replan(state: HelperState, runtime: Runtime[HelperContext]) -> str:
    """A replan that only repeated the failed program is not run again: the person is asked again
    while feedback rounds remain (a bare "no" gives the replan nothing to change; what they say next
    may), else the request ends."""
    if not state.get("repeated"):
        return "validate"
    return "ask_feedback" if int(state.get("feedback_rounds", 0)) < HelperContext.of(runtime).config.feedback_rounds else "finish"


def after_feedback(state: HelperState, runtime: Runtime[HelperContext]) -> str:
    if not state.get("feedback"):
        return "memorize"
    # `feedback_rounds` in the state counts questions asked; the config bounds the replans.
    if int(state.get("feedback_rounds", 0)) <= HelperContext.of(runtime).config.feedback_rounds:
        # After an adapted routine the answer is read as more changes to it first (adapt.py).
        return "understand" if state.get("adaptation") else "replan"
    return "finish"
