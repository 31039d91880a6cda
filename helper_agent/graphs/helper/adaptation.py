"""What the model is asked when a recalled routine is adapted: the request's changes, then one edit
per change. Two small decisions, each under a grammar, instead of one whole program.

1. **Changes.** The model lists the request's changes, each copied from the request: the grammar
   (`changes_grammar`) admits "none" or up to `MAX_CHANGES` lines, each a run of consecutive words
   of the request outside the routine's name. Nothing else can be written, so a change is always
   the person's own words, and "no change" is the model's decision under that grammar (no word list).
   A request with no words besides the routine's name needs no call at all.
2. **Edits.** For each change the model writes one line of the edit language
   (`helper_agent.program.edits`) under a grammar that admits only the program's own classes where
   an object of the routine is meant. A rejected edit goes back with its reason.

Both prompts put their fixed part first (instructions, then worked examples from
`prompts/examples/edits.jsonl`: invented routines, none from either personalization suite), so the
llama.cpp prefix cache serves it; only the last turn differs between calls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from helper_agent.memory.base import iter_jsonl_objects
from helper_agent.memory.errors import InvalidRecordError
from helper_agent.program.edits.apply import apply_edit
from helper_agent.program.edits.language import EditError, parse_edit
from helper_agent.program.edits.tree import program_classes
from helper_agent.prompts import load_template

__all__ = [
    "MAX_CHANGES",
    "EditExample",
    "change_messages",
    "changes_grammar",
    "edit_messages",
    "first_line",
    "load_edit_examples",
    "parse_changes",
    "request_words",
]

MAX_CHANGES = 4
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")


class EditExample(BaseModel):
    """A taught routine, a later request, its changes (copied from the request) and one edit each."""

    model_config = ConfigDict(extra="forbid")

    id: str
    routine_name: str
    routine_request: str
    routine_program: str
    request: str
    changes: list[str] = Field(default_factory=list)
    edits: list[str] = Field(default_factory=list)


@cache
def load_edit_examples() -> tuple[EditExample, ...]:
    """The packaged worked examples (errors name the file and line; every edit must apply)."""
    path = resources.files("helper_agent.prompts").joinpath("examples", "edits.jsonl")
    out = []
    for lineno, obj in iter_jsonl_objects(str(path)):
        try:
            example = EditExample.model_validate(obj)
        except ValueError as exc:
            raise InvalidRecordError(f"{path}:{lineno}: {exc}") from None
        if len(example.changes) != len(example.edits):
            raise InvalidRecordError(f"{path}:{lineno}: one edit per change")
        out.append(example)
    return tuple(out)


# ------------------------------------------------------------------------------------------ changes
def request_words(request: str, routine_name: str) -> list[str | None]:
    """The request's words in order, with the routine's name (without its article) blanked to None:
    a change cannot include or cross it."""
    words: list[str | None] = list(_WORD.findall(request))
    name = [w.lower() for w in _WORD.findall(re.sub(r"^\s*the\s+", "", routine_name, flags=re.I))]
    if name:
        lowered = [w.lower() if w else None for w in words]
        for i in range(len(words) - len(name) + 1):
            if lowered[i:i + len(name)] == name:
                words[i:i + len(name)] = [None] * len(name)
    return words


def changes_grammar(words: Sequence[str | None], max_changes: int = MAX_CHANGES) -> str:
    """GBNF: "none", or 1..max_changes lines "- <consecutive words of the request>"."""
    rules = []
    starts = []
    for i, word in enumerate(words):
        if word is None:
            continue
        literal = word.replace("\\", "\\\\").replace('"', '\\"')
        more = f' (" " w{i + 1})?' if i + 1 < len(words) and words[i + 1] is not None else ""
        rules.append(f'w{i} ::= "{literal}"{more}')
        starts.append(f"w{i}")
    if not starts:
        return 'root ::= "none"\n'
    items = " | ".join(" ".join(["item"] * n) for n in range(1, max_changes + 1))
    return "\n".join([f'root ::= "none" | {items}', 'item ::= "- " span "\\n"', f"span ::= {' | '.join(starts)}", *rules]) + "\n"


def parse_changes(text: str, words: Sequence[str | None] | None = None) -> list[str]:
    """The change lines of an answer ("- ..."), without repeats; with `words`, only lines made of
    the request's words (a model without a grammar may write anything)."""
    allowed = {w.lower() for w in words or [] if w}
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("-"):
            continue
        change = " ".join(line.lstrip("- ").split()).strip(" .,;")
        if not change or change.lower() in (c.lower() for c in out):
            continue
        if words is not None and not all(w.lower() in allowed for w in _WORD.findall(change)):
            continue
        out.append(change)
    return out[:MAX_CHANGES]


def _changes_answer(changes: Sequence[str]) -> str:
    return "".join(f"- {c}\n" for c in changes) if changes else "none"


def change_messages(name: str, taught: str, request: str) -> list[BaseMessage]:
    """Fixed instructions and examples, then this routine and request."""
    messages: list[BaseMessage] = [SystemMessage(content=load_template("changes_system.txt").strip())]
    template = load_template("changes_user.txt")
    for ex in load_edit_examples():
        messages.append(HumanMessage(content=template.format(name=ex.routine_name, taught=ex.routine_request,
                                                             request=ex.request).strip()))
        messages.append(AIMessage(content=_changes_answer(ex.changes)))
    messages.append(HumanMessage(content=template.format(name=name, taught=taught or name, request=request).strip()))
    return messages


# ------------------------------------------------------------------------------------------ edits
def _edit_turn(program: str, change: str) -> HumanMessage:
    classes = ", ".join(program_classes(program))
    return HumanMessage(content=load_template("edit_user.txt").format(program=program.strip(), classes=classes,
                                                                      change=change).strip())


@cache
def _edit_shots() -> tuple[tuple[str, str, str], ...]:
    """(program, change, edit) for every change of the examples, each program as the earlier edits
    of its request left it."""
    shots = []
    for ex in load_edit_examples():
        program = ex.routine_program
        for change, line in zip(ex.changes, ex.edits, strict=True):
            shots.append((program, change, line))
            edit = parse_edit(line)
            if edit.kind != "add_task":
                try:
                    program = apply_edit(program, edit)
                except EditError as err:
                    raise ValueError(f"edits.jsonl {ex.id}: '{line}' does not apply: {err}") from None
    return tuple(shots)


def edit_messages(program: str, change: str, rejected: Sequence[tuple[str, str]] = ()) -> list[BaseMessage]:
    """Fixed instructions and examples, then this program and change; then each rejected edit of
    this change with its reason."""
    messages: list[BaseMessage] = [SystemMessage(content=load_template("edit_system.txt").strip())]
    for shot_program, shot_change, line in _edit_shots():
        messages.append(_edit_turn(shot_program, shot_change))
        messages.append(AIMessage(content=line))
    messages.append(_edit_turn(program, change))
    for line, reason in rejected:
        messages.append(AIMessage(content=line))
        messages.append(HumanMessage(content=f"That edit was rejected: {reason}\nWrite another edit for the same change."))
    return messages


def first_line(reply: Any) -> str:
    """The first non-empty line of a reply (a model without a grammar may add prose after it)."""
    for line in str(reply).splitlines():
        if line.strip():
            return line.strip().strip("`").strip()
    return ""
