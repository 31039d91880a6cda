"""Random derivations of a `cfg.Grammar`, for property tests of what the grammar lets an LLM write.

Each `Alt` picks an option uniformly, each `Repeat` a count (mostly small, sometimes its maximum), each
character class a character from a pool of ASCII and some non-ASCII characters. A caller can steer a
rule (`choose`: return the text for it, or None to derive it as usual) and watch what was derived for a
rule (`seen`), which is how a test keeps names bound the way a program would; a chosen text must still
be one the rule derives (the caller's tests check that with `cfg_match`).
"""

from __future__ import annotations

import random
import string
import sys
from collections.abc import Callable, Mapping

from helper_agent.program.cfg import Alt, Chars, Expr, Grammar, Lit, Ref, Repeat, Seq

_POOL = string.printable + "éß€→“”ｍ\u00a0\u200b"
_DEPTH = 20_000


class Sampler:
    """Derives random strings from `grammar`'s rules."""

    def __init__(
        self,
        grammar: Grammar,
        rng: random.Random,
        *,
        choose: Mapping[str, Callable[[], str | None]] | None = None,
        seen: Callable[[str, str], None] | None = None,
    ) -> None:
        self.grammar = grammar
        self.rng = rng
        self.choose = dict(choose or {})
        self.seen = seen

    def sample(self, rule: str | None = None) -> str:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, _DEPTH))
        try:
            out: list[str] = []
            self._rule(rule or self.grammar.root, out)
            return "".join(out)
        finally:
            sys.setrecursionlimit(limit)

    def _rule(self, name: str, out: list[str]) -> None:
        chooser = self.choose.get(name)
        chosen = chooser() if chooser is not None else None
        if chosen is not None:
            out.append(chosen)
            text = chosen
        else:
            start = len(out)
            self._expr(self.grammar.rules[name], out)
            text = "".join(out[start:])
        if self.seen is not None:
            self.seen(name, text)

    def _expr(self, expr: Expr, out: list[str]) -> None:
        if isinstance(expr, Lit):
            out.append(expr.text)
        elif isinstance(expr, Chars):
            out.append(self._char(expr))
        elif isinstance(expr, Ref):
            self._rule(expr.name, out)
        elif isinstance(expr, Seq):
            for item in expr.items:
                self._expr(item, out)
        elif isinstance(expr, Alt):
            self._expr(self.rng.choice(expr.options), out)
        else:
            assert isinstance(expr, Repeat)
            for _ in range(self._count(expr)):
                self._expr(expr.item, out)

    def _count(self, expr: Repeat) -> int:
        if self.rng.random() < 0.1:
            return expr.high
        return self.rng.randint(expr.low, min(expr.high, expr.low + 3))

    def _char(self, expr: Chars) -> str:
        if not expr.negated:
            lo, hi = self.rng.choice(expr.ranges)
            return chr(self.rng.randint(ord(lo), ord(hi)))
        pool = [c for c in _POOL if c in expr]
        return self.rng.choice(pool)
