"""The errors the program layer raises: `ProgramError`, whose text goes back to the LLM, and two kinds
of it that a caller (or a test) may want to tell apart from a program outside the language.

* `ProgramError` itself: the text is not a program in the language (syntax, a construct the API
  does not have, an odd character).
* `SemanticError`: the text is in the language, but it does not make sense: a name used before it
  is defined, an object used as something it is not (an agent move on an object), an object placed
  in itself, an action the object's type does not afford (picking up a CoffeeMachine), a program
  that does nothing. A context-free grammar cannot rule these out, so grammar-constrained output
  can still meet them.
* `LimitError`: the program is in the language and makes sense, but is bigger than one program may
  be (objects, actions, loop runs, subgoals, characters).

All three carry the same fields and print the same way, so a caller that only wants the message for
the retry prompt catches `ProgramError` and uses `str(error)`.
"""

from __future__ import annotations

SNIPPET_CHARS = 70


class ProgramError(ValueError):
    """A program was rejected.

    `line` is the 1-based line of the submitted text (None when the problem is not tied to a line),
    `col` the 1-based column (None when the whole line is meant), `reason` the explanation without
    the location, `snippet` the offending source text. `str(error)` is the LLM-facing message, e.g.
    ``line 3: 'import os' is not allowed: programs may only create InteractionObject(...) values and
    call their methods``.
    """

    def __init__(
        self,
        reason: str,
        *,
        line: int | None = None,
        col: int | None = None,
        snippet: str | None = None,
    ) -> None:
        self.reason = reason
        self.line = line
        self.col = col
        self.snippet = snippet
        super().__init__(self.message)

    @property
    def message(self) -> str:
        if self.line is None:
            return self.reason
        where = f"line {self.line}"
        if self.col is not None and self.col > 1:
            where += f", col {self.col}"
        return f"{where}: {self.reason}"

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # so copy.copy and exception transport between processes keep class and fields
        return (_rebuild, (type(self), self.reason, self.line, self.col, self.snippet))


def clip(text: str) -> str:
    """The first line of `text`, cut to `SNIPPET_CHARS`: a snippet short enough to quote in a message."""
    text = text.split("\n", 1)[0]
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 3] + "..."


class SemanticError(ProgramError):
    """A program in the language that does not make sense (see the module docstring)."""


class LimitError(ProgramError):
    """A program in the language that is bigger than the limits in `helper_agent.program.api`."""


def _rebuild(
    cls: type[ProgramError], reason: str, line: int | None, col: int | None, snippet: str | None
) -> ProgramError:
    return cls(reason, line=line, col=col, snippet=snippet)
