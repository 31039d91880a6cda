"""The HELPER graph's routine adaptation: a recalled routine, the request's changes, one edit each.

    retrieve --(routine recalled)--> understand -> adapt -> validate -> execute ...
    ask_feedback --(more to do, routine adapted)--> understand -> adapt --(no edit)--> replan

`understand` reads the changes the request makes to the recalled routine (the model, under a
grammar that only lets it copy the request's words; see `adaptation.py`); `adapt` asks for one edit
of the edit language per change (`helper_agent.program.edits`), applies it to the program's syntax
tree and checks it by compiling, sending a rejected edit back with its reason. No change means the
routine's program, byte for byte. A feedback answer after an adapted routine ("no, I said two
bowls") goes through the same two nodes, as changes to the adapted program; when it yields no edit
the ordinary `replan` writes a program from the feedback.

In a trace, `understand` holds a span for the recalled routine and the call that lists the changes;
`adapt` holds one span per change, with its edit call(s) and the edit it applied.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.callbacks import CallbackManager
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_callback_manager_for_config
from langgraph.runtime import Runtime

from helper_agent.graphs.helper.adaptation import (
    MAX_CHANGES,
    change_messages,
    changes_grammar,
    edit_messages,
    first_line,
    parse_changes,
    request_words,
)
from helper_agent.graphs.helper.context import HelperContext
from helper_agent.graphs.helper.prompts import planner_messages
from helper_agent.graphs.helper.state import HelperState
from helper_agent.llm import grammar_decoding, invoke_with_retry, program_decoding
from helper_agent.program import ProgramError, compile_program
from helper_agent.program.edits.append import append_program
from helper_agent.program.edits.apply import apply_edit, in_form, poured_into, replaced_steps
from helper_agent.program.edits.grammar import edit_grammar
from helper_agent.program.edits.language import Edit, EditError, class_words, parse_edit
from helper_agent.program.edits.tree import (
    liquid_holders,
    program_classes,
    program_roles,
    program_steps,
    served,
)
from helper_agent.understanding.clauses import Clauses
from helper_agent.understanding.grounding import Grounding
from helper_agent.understanding.in_household import household_classes
from helper_agent.understanding.part_check import PartLacks, part_lacks
from helper_agent.understanding.requests import is_unchanged_recall
from helper_agent.world.effects import COFFEE, WATER

__all__ = ["adapt", "after_adapt", "describe_adaptation", "understand"]

MAX_EDIT_ATTEMPTS = 3
MAX_PART_ATTEMPTS = 2  # a new part that makes none of an object its words name is written once more


@contextmanager
def _span(manager: CallbackManager, name: str, inputs: dict[str, Any]) -> Iterator[tuple[CallbackManager, dict[str, Any]]]:
    """A child run of the node (a chain span); yields the callbacks for calls inside it and the
    dict its outputs are written to."""
    run = manager.on_chain_start({"name": name}, inputs, name=name)
    outputs: dict[str, Any] = {}
    try:
        yield run.get_child(), outputs
    except BaseException as exc:
        run.on_chain_error(exc)
        raise
    run.on_chain_end(outputs)


def _ask(ctx: HelperContext, callbacks: CallbackManager, messages: list[BaseMessage], name: str,
         decoding: dict[str, Any]) -> str:
    """One LLM call inside a span, counted by the context's usage recorder."""
    chat: Any = ctx.chat()
    if decoding:
        chat = chat.bind(**decoding)
    if not any(h is ctx.usage for h in callbacks.handlers):
        callbacks.add_handler(ctx.usage, inherit=True)
    config = {"run_name": name, "tags": [*ctx.tags, name], "metadata": dict(ctx.metadata), "callbacks": callbacks}
    return str(invoke_with_retry(chat, messages, config=config).content)


def _household(ctx: HelperContext) -> frozenset[str]:
    """The classes the household holds: a class a change names is read as the household's kind of it
    ("the lamp": the FloorLamp there; `understanding/in_household.py`)."""
    return household_classes(ctx.environment().objects_metadata())


def _feedback_pass(state: HelperState) -> bool:
    return bool(state.get("feedback")) and bool(state.get("adaptation"))


# ---------------------------------------------------------------------------------- nodes
def understand(state: HelperState, runtime: Runtime[HelperContext], config: RunnableConfig) -> dict[str, Any]:
    """The changes the request (or, after an adapted routine, the feedback) makes to the routine."""
    ctx = HelperContext.of(runtime)
    routine = state["routine"] or {}
    again = _feedback_pass(state)
    base = state.get("program", "") if again else routine["program"]
    text = state["feedback"] if again else state["request"]
    manager = get_callback_manager_for_config(config)
    with _span(manager, "routine", {"name": routine["name"], "version": routine.get("version"),
                                    "score": routine.get("score")}) as (_, out):
        out["program"] = base
    words = request_words(text, routine["name"])
    notes: list[str] = []
    if not again and ctx.config.routine_fast_path and is_unchanged_recall(text, routine["name"], routine.get("request") or ""):
        changes: list[str] = []
    elif not any(words):
        changes = []  # nothing but the routine's name
    else:
        with _span(manager, "changes", {"request": text}) as (callbacks, out):
            reply = _ask(ctx, callbacks, change_messages(routine["name"], routine.get("request") or "", text), "read_changes",
                         grammar_decoding(ctx.chat(), changes_grammar(words), kind="changes"))
            read = parse_changes(reply, words)
            changes, notes = Clauses.of(text, words).refine(read)
            changes = changes[:MAX_CHANGES]
            out.update(read=read, changes=changes, notes=notes)
    rounds = int((state.get("adaptation") or {}).get("round", 0)) + 1 if again else 1
    adaptation = {"routine": routine["name"], "base": base, "source": text, "changes": changes, "edits": [],
                  "round": rounds}
    listed = "; ".join(changes) if changes else "none"
    return {"adaptation": adaptation, "log": [*(f"understand: {n}" for n in notes),
                                              f"understand: routine '{routine['name']}', changes: {listed}"]}


def adapt(state: HelperState, runtime: Runtime[HelperContext], config: RunnableConfig) -> dict[str, Any]:
    """One edit per change, applied to the program's syntax tree and checked; the adapted program."""
    ctx = HelperContext.of(runtime)
    adaptation = dict(state["adaptation"] or {})
    program = adaptation["base"]
    manager = get_callback_manager_for_config(config)
    edits: list[dict[str, Any]] = []
    for change in adaptation.get("changes") or []:
        with _span(manager, "change", {"change": change}) as (callbacks, out):
            record, program = _edit_for(ctx, callbacks, state, program, change)
            out.update(record)
        edits.append(record)
    adaptation["edits"] = edits
    adaptation["program"] = program
    adaptation["summary"] = describe_adaptation(adaptation)
    lines = [_edit_line(e) for e in edits]
    update: dict[str, Any] = {"adaptation": adaptation, "program": program, "plan_attempts": 1, "plan_error": "",
                              "log": [*lines, f"adapt: {adaptation['summary']}"]}
    if _feedback_pass(state):  # like replan: the new program runs from a fresh start
        update.update({"resume_index": 0, "ran_subgoals": [], "corrections": 0, "locate_attempts": 0})
        if any(e.get("applied") for e in edits):  # the adapted routine whole, not a part after the last program
            update["ran_programs"] = []
    return update


def _edit_line(record: dict[str, Any]) -> str:
    """One change's edit in the log: what was applied, after which rejected tries and why."""
    tried = "".join(f"; rejected '{r['edit']}': {r['reason']}" for r in record.get("rejected") or [])
    state = "applied" if record.get("applied") else "no effect" if record.get("edit") != "none" else "none found"
    return f"edit: '{record['change']}' -> '{record.get('edit', 'none')}' ({state}){tried}"


def _edit_for(ctx: HelperContext, callbacks: CallbackManager, state: HelperState, program: str,
              change: str) -> tuple[dict[str, Any], str]:
    """Ask for this change's edit (again with the reason when it is rejected) and apply it."""
    rejected: list[tuple[str, str]] = []
    banned: list[Edit] = []  # rejected edits are not offered again
    record: dict[str, Any] = {"change": change, "edit": "none", "applied": False, "rejected": []}
    grounding = Grounding.of(change, program, _household(ctx))
    for attempt in range(1, MAX_EDIT_ATTEMPTS + 1):
        movers, doers = program_roles(program)
        grammar = edit_grammar(program_classes(program), grounding=grounding, movers=movers, doers=doers,
                               rejected=banned, steps=program_steps(program))
        decoding = grammar_decoding(ctx.chat(), grammar, temperature=0.0 if attempt == 1 else ctx.config.retry_temperature,
                                    seed=ctx.config.seed + attempt - 1, kind="edit")
        line = first_line(_ask(ctx, callbacks, edit_messages(program, change, rejected), "edit", decoding))
        try:
            written = parse_edit(line)
            banned.append(written)
            edit = grounding.placed(in_form(written))
            grounding.check(edit, program)
            poured, refused = None, ""
            if edit.kind == "add_task":
                new = _add_task(ctx, callbacks, state, program, change)
            else:
                try:
                    new = apply_edit(program, edit)
                except EditError as err:  # "a cup instead of the mug": the coffee machine takes no cup
                    poured = poured_into(program, edit)
                    if poured is None:
                        raise
                    new, refused = poured, str(err)
            if new == program and edit.kind != "none":  # "step Mug clean" for "wash two mugs": the routine does that
                raise EditError(f"'{edit.text()}' changes nothing: the routine does that already; write the edit "
                                "that makes the change")
        except EditError as err:
            rejected.append((line, str(err)))
            record["rejected"] = [{"edit": e, "reason": r} for e, r in rejected]
            continue
        steps = []
        for extra in grounding.follow_up(edit, new):  # "a cooked potato slice instead of ...": cook it too
            try:
                new = apply_edit(new, extra)
                steps.append(extra)
            except EditError:
                continue
        record.update(edit="; ".join(e.text() for e in (edit, *steps)), applied=new != program,
                      words=_describe(edit, program, change, steps))
        if poured is not None:
            record.update(edit=f"{edit.text()} (poured)", words=_describe_poured(edit, program, refused))
        return record, new
    return _fallback(ctx, callbacks, program, grounding, record)


def _fallback(ctx: HelperContext, callbacks: CallbackManager, program: str, grounding: Grounding,
              record: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A replacement no edit could make ("a pillow instead of the toast") is the old object removed
    and the new one written by the planner from the words before "instead of", rather than a change
    dropped as not understood."""
    plan = grounding.fallback(program)
    if plan is None:
        return record, program
    remove, wanted = plan
    try:
        part = _write_part(ctx, callbacks, wanted)
        if lacks := part_lacks(wanted, part, _household(ctx)).classes:
            # the new part brewed in a mug again for "a cup instead of the mug" (a helper chat
            # session): a part without the object asked for is no replacement, whatever it does
            raise EditError(f"the part written for '{wanted}' makes no {lacks[0]}")
        new = append_program(apply_edit(program, remove), part)
    except EditError as err:
        record["rejected"] = [*record["rejected"], {"edit": f"{remove.text()}; add task", "reason": str(err)}]
        return record, program
    record.update(edit=f"{remove.text()}; add task", applied=True, words=f"{wanted} ({remove.describe()})")
    return record, new


def _add_task(ctx: HelperContext, callbacks: CallbackManager, state: HelperState, program: str, change: str) -> str:
    """A new part for the change, written by the ordinary planner from retrieved examples."""
    return append_program(program, _write_part(ctx, callbacks, change))


def _write_part(ctx: HelperContext, callbacks: CallbackManager, words: str) -> str:
    """The planner's program for `words`, asked again (with the reason) while it does not parse or
    makes none of an object the words name (`part_lacks`); after `MAX_PART_ATTEMPTS`, the best answer."""
    hits = ctx.example_memory().retrieve(words, k=ctx.config.k)
    examples = [{"id": h.id, "dialogue": h.record.dialogue, "program": h.record.program} for h in hits]
    error = previous = ""
    written: list[tuple[int, int, str]] = []  # (parses? 0 : 1, how much it lacks, the part)
    for attempt in range(1, MAX_PART_ATTEMPTS + 1):
        decoding = program_decoding(ctx.chat(), max_lines=ctx.config.max_program_lines, kind="plan",
                                    temperature=0.0 if attempt == 1 else ctx.config.retry_temperature,
                                    seed=ctx.config.seed + attempt - 1)
        part = _ask(ctx, callbacks, planner_messages(words, examples, error, previous), "plan", decoding)
        try:
            lacks = part_lacks(words, part, _household(ctx))
        except EditError:
            written.append((1, 0, part))
            error = "the program does not parse"
        else:
            if not lacks:
                return part
            written.append((0, len(lacks), part))
            error = _lacking(lacks)
        previous = part
    # the best answer: one that parses, lacking the least (the first on a tie: a retry at a higher
    # temperature once wrote `from = InteractionObject("Mug")` for "make a plate of toast")
    return min(written, key=lambda w: w[:2])[2]


def _describe_poured(edit: Edit, program: str, refused: str) -> str:
    """A replacement served by pouring (`poured_into`), in words, with why the plain replacement was
    refused when a holder could not take the new object: "coffee poured from the mug into a cup (the
    coffee machine cannot hold a cup)"."""
    liquid = COFFEE if edit.target in liquid_holders(program, {COFFEE}) else WATER
    new = class_words(in_form(edit).value)
    holder = next((c for c in program_classes(program) if f"a {c} cannot hold" in refused), "")
    why = f" (the {class_words(holder)} cannot hold a {new})" if holder else ""
    return f"{liquid} poured from the {class_words(edit.target)} into a {new}{why}"


def _lacking(lacks: PartLacks) -> str:
    """Why a new part is written again: the objects (classes) and steps (written as calls, "toast()")
    it lacks."""
    calls = [f"{m}()" for m in lacks.steps]
    why = []
    if lacks.classes:
        why.append(f"the request names {', '.join(lacks.classes)}, and this program makes no {lacks.classes[0]}")
    if calls:
        why.append(f"the request asks for {', '.join(lacks.steps)}, and this program never calls {calls[0]}")
    return "; ".join(why) + f": write the program with {' and '.join([*lacks.classes, *calls])}"


def _describe(edit: Edit, program: str, change: str, steps: list[Edit] | None = None) -> str:
    """The edit in words, with what the routine had (how many, where it went, what a replacement
    cannot take) and the steps added after it."""
    if edit.kind == "add_task":
        return f"also: {change}"
    if edit.kind == "replace":
        done = {e.value for e in steps or []}
        words = edit.describe(dropped=[m for m in replaced_steps(program, edit) if m not in done])
        return words + "".join(f", {e.describe()}" for e in steps or [])
    if edit.kind == "move_all":
        return edit.describe(items=served(program))
    if edit.kind == "count":
        return edit.describe(before=_how_many(program, edit.target))
    if edit.kind == "move":
        return edit.describe(destination=_destination(program, edit.target))
    return edit.describe()


def _compiled(program: str) -> Any:
    try:
        return compile_program(program)
    except ProgramError:
        return None


def _how_many(program: str, cls: str) -> int | None:
    compiled = _compiled(program)
    return len({ref.instance_key for ref in compiled.objects if ref.object_class == cls}) or None if compiled else None


def _destination(program: str, cls: str) -> str | None:
    compiled = _compiled(program)
    for sub in compiled.subgoals if compiled else []:
        if sub.target is not None and sub.target.object_class == cls and sub.receptacle is not None:
            return sub.receptacle.object_class
    return None


def describe_adaptation(adaptation: dict[str, Any]) -> str:
    """"the Mary cleaning, with: bowl instead of cup; 1 plate instead of 2" (what a person sees
    before the robot acts); changes no edit was found for are named as not understood."""
    name = adaptation.get("routine", "the routine")
    done = [e["words"] for e in adaptation.get("edits") or [] if e.get("applied")]
    missed = [e["change"] for e in adaptation.get("edits") or [] if not e.get("applied") and e.get("rejected")]
    if not done and not missed:
        return f"{name}, unchanged" if not adaptation.get("changes") else f"{name}, unchanged (no edit needed)"
    text = f"{name}, with: {'; '.join(done)}" if done else f"{name}, unchanged"
    if missed:
        text += f" (not understood: {'; '.join(missed)})"
    return text


# ---------------------------------------------------------------------------------- routing
def after_adapt(state: HelperState) -> str:
    """Validate the adapted program; after feedback that yielded no edit, replan from the feedback."""
    adaptation = state.get("adaptation") or {}
    if _feedback_pass(state) and not any(e.get("applied") for e in adaptation.get("edits") or []):
        return "replan"
    return "validate"
