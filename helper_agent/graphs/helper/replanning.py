"""HELPER's replan after a correction: the person said what is still missing, and the request goes on.

The replan runs in the household the last program left (the executor's bindings kept across the
request's rounds), so it only has to add what is missing and keep what was right. Two writers:

- **The missing part, read from the person's words** (`missing.read_missing`, written by
  `program/edits/part.py`): "no, you didn't toast the bread slice and you didn't put the bread
  slice on the plate" is `toast BreadSliced; place BreadSliced in Plate`, two statements on the
  objects the last program already bound. On the calibration suite (main 58a7598, the default
  0.5B model) every correction's replan by the planner repeated the program it was about or the
  part of it that had worked; no correction fixed a request.
- **The planner**, when some clause that asks for something is not read ("there's no bread
  slice"), with the three things a correction is checked against (`prompts.replanner_messages`).

What ran before joins `ran_programs`, so a routine this request teaches is the whole request as
done across its rounds (`teaching.whole_program`), not the last part.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from helper_agent.graphs.helper.context import HelperContext
from helper_agent.graphs.helper.household import household_lines, object_states
from helper_agent.graphs.helper.nodes import _ask, _compiled_here, _present, _program_decoding
from helper_agent.graphs.helper.prompts import replanner_messages
from helper_agent.graphs.helper.scoping import out_of_scope, scope_of
from helper_agent.graphs.helper.state import HelperState, subgoals_from_data
from helper_agent.graphs.helper.teaching import round_done
from helper_agent.program import ProgramError
from helper_agent.program.edits.part import part_program
from helper_agent.program.extract import parse_code
from helper_agent.understanding.missing import for_household, put_back, read_missing, undo_other_kinds

__all__ = ["achieved", "replan", "untitled"]


def _syntax_tree(program: str) -> str | None:
    """What a program would do, without its comments, layout, fence or prose: its syntax tree from
    `parse_code` (only parsed, never run); None when it does not parse."""
    try:
        return ast.dump(parse_code(program)[0])
    except ProgramError:
        return None


def achieved(state: HelperState) -> list[str]:
    """What the last program already did: its subgoals that ran to their end (the moves between
    them left out), each once, in order. The replan is told to keep them and not do them again: a
    replan once wrote `tomato.slice()` again after the tomato was sliced and searched 650 steps for a
    whole tomato."""
    subgoals = subgoals_from_data(state.get("subgoals") or [])
    execution = state.get("execution") or {}
    done = len(subgoals) if execution.get("status") == "done" else int(execution.get("completed") or 0)
    steps = [s.describe() for s in subgoals[:done] if s.kind.value != "Navigate"]
    return list(dict.fromkeys(steps))


def untitled(program: str, feedback: str) -> str:
    """`program` without leading comment lines that only repeat the person's words: a replan once
    came back titled `# no coffee` (the correction, not what the program does)."""
    said = set(re.findall(r"[a-z']+", feedback.lower()))
    lines = program.splitlines()
    start = 0
    while start < len(lines) and (not lines[start].strip() or lines[start].lstrip().startswith(("#", "```"))):
        line = lines[start].strip()
        if line.startswith("#") and set(re.findall(r"[a-z']+", line.lower())) <= said:
            lines[start] = ""
        start += 1
    return "\n".join(lines) if start else program


def replan(state: HelperState, runtime: Runtime[HelperContext], config: RunnableConfig) -> dict[str, Any]:
    """Write a program for what the feedback says is missing; it runs in the household the last
    program left (the bindings kept), so it only has to add the missing part.

    First from the person's words (`_missing_part`), without a model call. Only when that cannot
    stand for the correction does the planner write it: its prompt carries the three things a correction is checked against: what the person says is
    missing (their own words), what the household shows about the objects named (`object_states`:
    "Tomato: sliced (7 slices); Plate: clean, empty", then the other household lines) and what the
    last program already did (`achieved`), so "you didn't put a tomato slice on the plate" is read
    against a sliced tomato and the slicing is kept, not redone.

    A replan that repeats the program the feedback was about, statement for statement, would only
    fail the same way: it is sent back with that reason and sampled again (a new seed), within the
    planner's attempt budget; if every attempt repeats it, it is not run again (`repeated`; the
    request ends "repeated_program"). (On held-out train episodes, calibration split, the greedy
    replan of the 0.5B model often came back unchanged; a chat once ran it and spent 780 steps.)

    What the round the feedback was about did joins `ran_programs` (`teaching.round_done`), so a
    routine this request teaches is the whole request as done across its rounds
    (`teaching.whole_program`), not the last replan."""
    ctx = HelperContext.of(runtime)
    failed = state.get("program", "")
    failed_tree = _syntax_tree(failed)
    feedback = state["feedback"]
    objects = ctx.environment().objects_metadata()
    ran = [*(state.get("ran_programs") or []), round_done(state)]
    part = _missing_part(ctx, state, objects, failed_tree, ran) if ctx.config.missing_parts else None
    if part is not None:
        program, said = part
        return {"program": program, "plan_attempts": 0, "plan_error": "", "resume_index": 0, "ran_subgoals": [], "corrections": 0,
                "locate_attempts": 0, "repeated": False, "ran_programs": ran,
                "log": [f"replan: from feedback: {feedback}", f"replan: the missing part, read from the feedback: {said}"]}
    household = household_lines(objects, mentioned=f"{failed} {feedback}", limit=12)
    states = object_states(objects, mentioned=f"{feedback} {state['request']} {failed}")
    done = achieved(state)
    error, text, log = "", "", [f"replan: from feedback: {feedback}"]
    repeated = False
    for attempt in range(1, max(1, ctx.config.max_plan_attempts) + 1):
        messages = replanner_messages(state["request"], failed, feedback, state.get("examples") or [],
                                      error=error, previous=text, household=household, states=states, achieved=done)
        text = untitled(_ask(ctx, config, messages, "replan", _program_decoding(ctx, attempt, "plan")), feedback)
        repeated = failed_tree is not None and _syntax_tree(text) == failed_tree
        if not repeated:
            break
        error = ("it is the program that did not finish the task, unchanged; keep what it did and write only "
                 f"what the person says is missing: {feedback}")
        log.append(f"replan: attempt {attempt} repeated the failed program")
    if repeated:
        again = int(state.get("feedback_rounds", 0)) < ctx.config.feedback_rounds
        log.append("replan: every attempt repeated the failed program; it is not run again"
                   + ("; asking what is missing" if again else ""))
        return {"program": failed, "plan_attempts": 0, "plan_error": "", "resume_index": 0, "ran_subgoals": [], "corrections": 0,
                "locate_attempts": 0, "repeated": True, "log": log}
    return {"program": text, "plan_attempts": 0, "plan_error": "", "resume_index": 0, "ran_subgoals": [], "corrections": 0,
            "locate_attempts": 0, "repeated": False, "ran_programs": ran, "log": log}


def _missing_part(ctx: HelperContext, state: HelperState, objects: list[dict[str, Any]],
                  failed_tree: str | None, done: list[str]) -> tuple[str, str] | None:
    """The correction's missing part, written from the person's words (`missing.read_missing`,
    `program/edits/part.py`), and the steps read, or None: a clause that asks for something was not
    read, the part would not compile or would change what the request's scope does not allow (the
    planner then writes the replan), or it is the program the feedback was about (it would only
    end the same way). A switch an earlier round (`done`) made on another kind of the class the
    person names is switched back (`missing.undo_other_kinds`: the desk lamp of "the lamp" when
    the person says the floor lamp)."""
    reading = read_missing(state["feedback"], str(state.get("request") or ""))
    if not reading.complete:
        return None
    missing = for_household(reading, objects, str(state.get("request") or ""))
    missing = undo_other_kinds(missing, done, f"{state.get('request') or ''}\n{state['feedback']}")
    if reading.back:
        back = put_back(reading.back, objects, state.get("places_at_start") or {})
        if back is None:
            return None
        missing = [*missing, *back]
    program = part_program(missing)
    try:
        compiled, _ = _compiled_here(ctx, program)
    except ProgramError:
        return None
    if _syntax_tree(program) == failed_tree or out_of_scope(compiled, scope_of(state, _present(ctx))):
        return None
    return program, "; ".join(m.describe() for m in missing)
