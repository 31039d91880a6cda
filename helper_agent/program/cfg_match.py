"""Recognize text with a `cfg.Grammar`: does the grammar derive exactly this string?

It computes, for each (rule, position), the set of positions where a derivation of the rule starting
there can end, memoized, so alternatives are all explored (this is CFG recognition, not a PEG's first
match). The grammar is acyclic and bounded, so it terminates; the recursion depth grows with the
chains of rules (one link per program line), so it is raised for the duration of a match.
"""

from __future__ import annotations

import sys
from functools import cache

from helper_agent.program.cfg import Alt, Chars, Expr, Grammar, Lit, Ref, Repeat, Seq

_DEPTH = 20_000


class Matcher:
    """`Matcher(grammar).matches(text)`: whether the root rule (or another) derives all of `text`."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar

    def matches(self, text: str, rule: str | None = None) -> bool:
        return len(text) in self.ends(text, rule or self.grammar.root, 0)

    def ends(self, text: str, rule: str, start: int) -> frozenset[int]:
        """The positions where a derivation of `rule` from `start` can end."""
        rules = self.grammar.rules

        @cache
        def rule_ends(name: str, pos: int) -> frozenset[int]:
            return frozenset(expr_ends(rules[name], pos))

        def expr_ends(expr: Expr, pos: int) -> set[int]:
            if isinstance(expr, Lit):
                return {pos + len(expr.text)} if text.startswith(expr.text, pos) else set()
            if isinstance(expr, Chars):
                return {pos + 1} if pos < len(text) and text[pos] in expr else set()
            if isinstance(expr, Ref):
                return set(rule_ends(expr.name, pos))
            if isinstance(expr, Seq):
                current = {pos}
                for item in expr.items:
                    current = {end for p in current for end in expr_ends(item, p)}
                    if not current:
                        break
                return current
            if isinstance(expr, Alt):
                return {end for option in expr.options for end in expr_ends(option, pos)}
            assert isinstance(expr, Repeat)
            found: set[int] = set()
            current = {pos}
            for count in range(expr.high + 1):
                if count >= expr.low:
                    found |= current
                if count == expr.high:
                    break
                current = {end for p in current for end in expr_ends(expr.item, p)}
                if not current:
                    break
            return found

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, _DEPTH))
        try:
            return rule_ends(rule, start)
        finally:
            sys.setrecursionlimit(limit)
