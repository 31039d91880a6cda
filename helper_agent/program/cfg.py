"""A small grammar data model, and its rendering as GBNF (llama.cpp's grammar format).

The program grammar (`grammar.py`) is built as data from the API tables, never written by hand, and
the same data is rendered three ways: as GBNF text for grammar-constrained decoding, as a recognizer
(`cfg_match.py`) and as a sampler of random derivations (`cfg_sample.py`), so the tests check the
very rules the LLM is constrained by.

Every repetition is bounded and no rule refers to itself, directly or not (`Grammar` checks this),
so the language is finite: a constrained model must stop.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Lit:
    """A literal string."""

    text: str


@dataclass(frozen=True)
class Chars:
    """One character from a set of inclusive ranges (or, `negated`, one not in them)."""

    ranges: tuple[tuple[str, str], ...]
    negated: bool = False

    def __contains__(self, char: object) -> bool:
        if not isinstance(char, str) or len(char) != 1:
            return False
        inside = any(lo <= char <= hi for lo, hi in self.ranges)
        return inside != self.negated


@dataclass(frozen=True)
class Ref:
    """The rule called `name`."""

    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Expr, ...]


@dataclass(frozen=True)
class Repeat:
    """`item` between `low` and `high` times (both inclusive; always bounded)."""

    item: Expr
    low: int
    high: int


Expr = Lit | Chars | Ref | Seq | Alt | Repeat

_RULE_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


def lit(text: str) -> Lit:
    return Lit(text)


def seq(*items: Expr | str) -> Expr:
    """A sequence; adjacent literals are joined ("go_to" "()" is "go_to()")."""
    parts: list[Expr] = []
    for item in items:
        part = Lit(item) if isinstance(item, str) else item
        if isinstance(part, Lit) and parts and isinstance(parts[-1], Lit):
            parts[-1] = Lit(parts[-1].text + part.text)
        else:
            parts.append(part)
    return parts[0] if len(parts) == 1 else Seq(tuple(parts))  # Seq(()) is the empty string


def alt(*options: Expr | str) -> Expr:
    parts = tuple(Lit(o) if isinstance(o, str) else o for o in options)
    return parts[0] if len(parts) == 1 else Alt(parts)


def opt(item: Expr | str) -> Repeat:
    return Repeat(Lit(item) if isinstance(item, str) else item, 0, 1)


def chars(spec: str, *, negated: bool = False) -> Chars:
    """A character class from a compact spec: "a-z0-9_" is [a-z0-9_] (a '-' between two characters
    is a range; at either end it is itself)."""
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            ranges.append((spec[i], spec[i + 2]))
            i += 3
        else:
            ranges.append((spec[i], spec[i]))
            i += 1
    return Chars(tuple(ranges), negated)


def refs(expr: Expr) -> Iterable[str]:
    """The rule names `expr` refers to."""
    if isinstance(expr, Ref):
        yield expr.name
    elif isinstance(expr, Seq):
        for item in expr.items:
            yield from refs(item)
    elif isinstance(expr, Alt):
        for option in expr.options:
            yield from refs(option)
    elif isinstance(expr, Repeat):
        yield from refs(expr.item)


class Grammar:
    """Named rules with a root; checked to be complete, well named, bounded and non-recursive."""

    def __init__(self, rules: Mapping[str, Expr], root: str = "root") -> None:
        self.rules = dict(rules)
        self.root = root
        self._check()

    def _check(self) -> None:
        if self.root not in self.rules:
            raise ValueError(f"the grammar has no root rule {self.root!r}")
        for name, expr in self.rules.items():
            if not _RULE_NAME.match(name):
                raise ValueError(f"rule name {name!r} is not valid in GBNF (lower-case letters, digits, '-')")
            for ref in refs(expr):
                if ref not in self.rules:
                    raise ValueError(f"rule {name!r} refers to the undefined rule {ref!r}")
            for node in _walk(expr):
                if isinstance(node, Repeat) and not 0 <= node.low <= node.high:
                    raise ValueError(f"rule {name!r} has a repetition {{{node.low},{node.high}}}")
        # no cycles: a topological order exists (finite language, terminating recognizer and sampler)
        state: dict[str, int] = {}
        for start in self.rules:
            if state.get(start) == 2:
                continue
            state[start] = 1
            stack = [(start, iter(sorted(set(refs(self.rules[start])))))]
            while stack:
                name, children = stack[-1]
                child = next(children, None)
                if child is None:
                    state[name] = 2
                    stack.pop()
                elif state.get(child) == 1:
                    raise ValueError(f"rule {child!r} refers to itself (through {name!r})")
                elif state.get(child) is None:
                    state[child] = 1
                    stack.append((child, iter(sorted(set(refs(self.rules[child]))))))

    def reachable(self) -> list[str]:
        """The rules reachable from the root, root first, then in the order they were defined."""
        seen = {self.root}
        todo = [self.root]
        while todo:
            for ref in refs(self.rules[todo.pop()]):
                if ref not in seen:
                    seen.add(ref)
                    todo.append(ref)
        return [self.root] + [n for n in self.rules if n in seen and n != self.root]

    def to_gbnf(self, header: str = "") -> str:
        """The grammar as GBNF text (only the rules reachable from the root)."""
        lines = [f"# {line}".rstrip() for line in header.split("\n")] if header else []
        lines += [f"{name} ::= {render(self.rules[name])}" for name in self.reachable()]
        return "\n".join(lines) + "\n"


def _walk(expr: Expr) -> Iterable[Expr]:
    yield expr
    if isinstance(expr, Seq):
        for item in expr.items:
            yield from _walk(item)
    elif isinstance(expr, Alt):
        for option in expr.options:
            yield from _walk(option)
    elif isinstance(expr, Repeat):
        yield from _walk(expr.item)


_LIT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_CLASS_ESCAPES = {"]": "\\]", "[": "\\[", "\\": "\\\\", "-": "\\-", "^": "\\x5E", "\n": "\\n", "\r": "\\r",
                  "\t": "\\t"}


def _escape(char: str, table: Mapping[str, str]) -> str:
    if char in table:
        return table[char]
    if ord(char) < 0x20 or ord(char) == 0x7F:
        return f"\\x{ord(char):02X}"
    return char


def render(expr: Expr) -> str:
    """One expression in GBNF syntax."""
    if isinstance(expr, Lit):
        return '"' + "".join(_escape(c, _LIT_ESCAPES) for c in expr.text) + '"'
    if isinstance(expr, Chars):
        body = "".join(
            _escape(lo, _CLASS_ESCAPES) if lo == hi else f"{_escape(lo, _CLASS_ESCAPES)}-{_escape(hi, _CLASS_ESCAPES)}"
            for lo, hi in expr.ranges
        )
        return f"[{'^' if expr.negated else ''}{body}]"
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, Seq):
        if not expr.items:
            return '""'
        return " ".join(_grouped(item, within_seq=True) for item in expr.items)
    if isinstance(expr, Alt):
        return " | ".join(render(option) for option in expr.options)
    item = _grouped(expr.item, within_seq=False)
    if (expr.low, expr.high) == (0, 1):
        return f"{item}?"
    if expr.low == expr.high:
        return f"{item}{{{expr.low}}}"
    return f"{item}{{{expr.low},{expr.high}}}"


def _grouped(expr: Expr, *, within_seq: bool) -> str:
    if isinstance(expr, Alt) or (isinstance(expr, Seq | Repeat) and not within_seq):
        return f"({render(expr)})"
    return render(expr)
