"""The one error the program layer raises: `ProgramError`, whose text goes back to the LLM."""

from __future__ import annotations


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

    def __reduce__(self):  # so copy.copy and exception transport between processes keep the fields
        return (_rebuild, (self.reason, self.line, self.col, self.snippet))


def _rebuild(reason: str, line: int | None, col: int | None, snippet: str | None) -> ProgramError:
    return ProgramError(reason, line=line, col=col, snippet=snippet)
