"""What interpreting a program produces: its objects and its API calls in execution order.

Kept apart from the interpreter so the compiler and the semantic checks can depend on the result
without depending on how it was obtained.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ObjectDecl:
    """One evaluation of `InteractionObject(...)`: a distinct object instance."""

    index: int  # construction order, from 0
    object_class: str  # as written by the program
    landmark: str | None
    attributes: tuple[str, ...]  # canonical attribute names, in the order written, no repeats
    line: int
    variable: str | None = None  # the name it was assigned to, if any


@dataclass(frozen=True)
class Action:
    """One API call, in execution order. `obj`/`arg` index `ParsedProgram.objects`."""

    method: str
    obj: int | None  # None for agent moves
    arg: int | None = None  # receptacle (place, pickup_and_place) or target (pour)
    line: int = 0
    col: int = 0  # 1-based column of the call in the submitted text (0: unknown)


Step = ObjectDecl | Action


@dataclass
class ParsedProgram:
    """A validated program: its objects and its steps with loops unrolled."""

    text: str  # as submitted
    source: str  # the code that was parsed; same line numbers as `text`
    objects: list[ObjectDecl] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def actions(self) -> list[Action]:
        return [s for s in self.steps if isinstance(s, Action)]

    def line_text(self, line: int) -> str:
        """The source line `line` (1-based) without its indentation, or "" outside the source."""
        lines = self.source.split("\n")
        return lines[line - 1].strip() if 1 <= line <= len(lines) else ""
