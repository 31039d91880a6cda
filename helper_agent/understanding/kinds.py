"""A class and its kinds: which class of a household stands for a class a program (or a person) names.

The catalog has generic classes beside the kinds a household really holds: a `Lamp` beside the
`FloorLamp` and `DeskLamp`, a `Knife` beside the `ButterKnife`, a `Chair` beside the `ArmChair`. A
person says "turn on the lamp", the planner writes `InteractionObject("Lamp")`, and in a living room
whose only lamp is a FloorLamp the executor searched for a `Lamp` five times (issue 54, in the app).

The rule, one for every class and read from the catalog's own names (no table fitted to a suite):

- a **kind** of a class is a catalog class whose name ends in that class's name, word for word in
  its CamelCase words: FloorLamp and DeskLamp are kinds of Lamp, ButterKnife of Knife, SoapBottle of
  Bottle, HandTowelHolder of TowelHolder; Clamp would not be a kind of Lamp;
- a class the household has stands for itself; a class it lacks stands for the kind of it the
  household has; with several kinds there (a DeskLamp and a FloorLamp), the first by name, so the
  choice is the same on every run; with none, the class stays as it is (the executor's search and
  its refusal are what follows then).

Nothing here reads English: the words of a request become classes in the rest of this package
(`words`, `absent`), and `in_household`, `scope`, `asked` and `grounding` call this with the
household's classes.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterable, Mapping

from helper_agent.program import api
from helper_agent.program.extract import parse_code
from helper_agent.world.catalog import load_catalog

__all__ = ["household_class", "kinds_of", "with_classes"]

_CAMEL_WORD = re.compile(r"[A-Z][a-z]*|[a-z]+|[0-9]+")


def _camel_words(name: str) -> list[str]:
    return _CAMEL_WORD.findall(name)


def kinds_of(cls: str, names: Iterable[str] | None = None) -> list[str]:
    """The classes of `names` (default: the catalog's) whose name ends in `cls`'s CamelCase words,
    `cls` itself left out, sorted: kinds_of("Lamp") == ["DeskLamp", "FloorLamp"]."""
    words = _camel_words(cls)
    if not words:
        return []
    pool = load_catalog().names() if names is None else names
    return sorted({n for n in pool if n != cls and _camel_words(n)[-len(words):] == words})


def household_class(cls: str, present: Collection[str]) -> str:
    """The class that stands for `cls` in a household holding `present` classes: `cls` if present,
    else the first (by name) present kind of it (`kinds_of`), else `cls`."""
    if cls in present:
        return cls
    kinds = kinds_of(cls, present)
    return kinds[0] if kinds else cls


def with_classes(program: str, classes: Mapping[str, str]) -> str:
    """The program's code with each class string of `classes` replaced by its value, where a class
    is written: the class and the landmark of `InteractionObject(...)`, and the class names a loop
    goes over (`for c in ["Cup", "Mug"]`). Everything else (comments, layout, variable names) stays
    as written. `program` as the compiler reads it (an answer's fences and prose are dropped)."""
    tree, code = parse_code(program)
    spans: list[tuple[int, int, int, str]] = []  # (line, start byte, end byte, new class)

    def take(node: ast.AST | None) -> None:
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in classes
                and node.end_lineno == node.lineno and node.end_col_offset is not None):
            spans.append((node.lineno, node.col_offset, node.end_col_offset, classes[node.value]))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == api.OBJECT_CONSTRUCTOR:
            take(node.args[0] if node.args else None)
            for kw in node.keywords:
                if kw.arg in ("object_class", "landmark"):
                    take(kw.value)
            if len(node.args) > 1:
                take(node.args[1])
        elif isinstance(node, ast.For) and isinstance(node.iter, (ast.List, ast.Tuple)):
            for elt in node.iter.elts:
                take(elt)
    lines = code.text.split("\n")
    for line, start, end, new in sorted(spans, reverse=True):  # from the end, so earlier spans keep their place
        raw = lines[line - 1].encode("utf-8")  # ast's columns count UTF-8 bytes
        literal = raw[start:end].decode("utf-8")
        old = literal.strip("\"'").lstrip("rRbBuU").strip("\"'")
        at = literal.index(old)  # past the quote and any prefix: r"Lamp"
        lines[line - 1] = (raw[:start].decode("utf-8") + literal[:at] + new + literal[at + len(old):]
                           + raw[end:].decode("utf-8"))
    return "\n".join(lines)
