"""Compile a validated program to the flat subgoal list the executor runs.

Rewrite rules (HELPER's, made explicit):

* Navigation: an object action is preceded by `Navigate(object)` unless the agent is already there
  (its last Navigate/Pickup/action was on that object) or holds it. `go_to()` is just that Navigate;
  `pickup()` -> Navigate + Pickup; `place(r)` -> Navigate(r) + Place. Macros (Clean, Cook, Toast,
  FillUp, Empty) navigate by themselves in the executor, so none is added, and after one (and after
  an agent move) the agent's position and hands are unknown.
* Duplicates: a subgoal identical to the one just before it (same kind, object and receptacle) is
  dropped, except agent moves (two MoveBacks mean two moves). A `pickup()` of the object already
  held is dropped.
* `pickup_and_place(r)` -> the `pickup()` rules, then the `place(r)` rules.
* `place(r)` / `pour(t)` of an object not known to be in hand -> Navigate + Pickup of it are
  inserted first (line 0, noted).
* `put_down()` of an object known not to be in hand is dropped (noted).
* `open()` / `close()` on a class that cannot be opened is dropped (noted); this only happens with a
  catalog without affordance flags (a list of names), since with flags `semantics.py` rejects it.
* Before any of this, `semantics.check_program` rejects calls that cannot make sense for the
  resolved classes (picking up a CoffeeMachine, placing a Pot in a Toaster, an object in itself).
* Attributes (desired end states) become the matching method: "sliced" -> Navigate + Slice,
  "clean" -> Clean, "cooked" -> Cook, "toasted" -> Toast, "filled" -> FillUp, in that order. They
  are emitted just before the first statement that uses the object (as the object or as the
  receptacle/target); for an object the program never uses, where it is constructed. An attribute
  is left out when the program calls the matching method on that object itself, and "sliced" is
  left out for a piece (BreadSliced) that cannot be sliced again.
* Classes: a class the catalog does not know is mapped to the closest known one by the
  `class_mapper`; the first subgoal on that object says so in its note. A closest class scoring
  under the mapper's `min_score` (default `classes.MIN_CLASS_SCORE`) is no match: the program is
  rejected with "did you mean ...", so a hallucinated object never silently becomes a real one. Landmarks are mapped the same
  way and kept on the ObjectRef.
* Instance keys: each construction gets `<class in lower case>#<n>` (mug#1, mug#2, ...).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from helper_agent.program import api
from helper_agent.program.classes import (
    MIN_CLASS_SCORE,
    CatalogView,
    ClassMapper,
    LexicalClassMapper,
    default_catalog,
    did_you_mean,
)
from helper_agent.program.errors import LimitError, SemanticError
from helper_agent.program.parser import Action, ObjectDecl, ParsedProgram, parse_program
from helper_agent.program.semantics import check_program
from helper_agent.program.subgoals import ObjectRef, Subgoal, SubgoalKind

_UNKNOWN = -2  # position/hands after a macro or an agent move
_AGENT_KINDS = frozenset(api.AGENT_METHODS.values())


@dataclass
class CompiledProgram:
    """The subgoals of a program, the compiler's notes, and the code they came from."""

    subgoals: list[Subgoal]
    notes: list[str]
    source: str
    objects: list[ObjectRef] = field(default_factory=list)
    parsed: ParsedProgram | None = field(default=None, repr=False, compare=False)

    def signature(self) -> list[str]:
        """One compact line per subgoal, with instance keys: 'Place mug#1 -> coffeemachine#1'."""
        return [subgoal_signature(s) for s in self.subgoals]

    def describe(self) -> str:
        """A stable printable form: numbered `Subgoal.describe()` lines with instance keys."""
        width = len(str(len(self.subgoals)))
        lines = []
        for n, s in enumerate(self.subgoals, 1):
            keys = ""
            if s.target is not None:
                keys = s.target.instance_key
                if s.receptacle is not None:
                    keys += f" -> {s.receptacle.instance_key}"
                keys = f" <{keys}>"
            line = f"line {s.line}" if s.line else "inserted"
            lines.append(f"{n:>{width}}. {s.describe()}{keys}  ({line})")
        return "\n".join(lines)


def subgoal_signature(s: Subgoal) -> str:
    text = s.kind.value
    if s.target is not None:
        text += f" {s.target.instance_key}"
        if s.receptacle is not None:
            text += f" -> {s.receptacle.instance_key}"
    return text


class _Compiler:
    def __init__(self, parsed: ParsedProgram, view: CatalogView | None, mapper: ClassMapper | None) -> None:
        self.parsed = parsed
        self.view = view
        self.mapper = mapper
        self.refs: dict[int, ObjectRef] = {}
        self.decls: dict[int, ObjectDecl] = {d.index: d for d in parsed.objects}
        self.out: list[Subgoal] = []
        self.notes: list[str] = []
        self.at = _UNKNOWN
        self.holding = _UNKNOWN
        self.first_note: dict[int, str] = {}
        self.counts: dict[str, int] = {}
        self.by_key: dict[str, int] = {}
        actions = parsed.actions
        self.used = {i for a in actions for i in (a.obj, a.arg) if i is not None}
        self.explicit: dict[tuple[int, str], int] = {}
        for a in actions:
            if a.obj is not None:
                self.explicit.setdefault((a.obj, a.method), a.line)
        self.pending: dict[int, list[str]] = {}
        self._mapped: dict[str, tuple[str, float]] = {}

    # -- classes --------------------------------------------------------------------------------

    def resolve(self, requested: str, line: int, what: str) -> tuple[str, str | None]:
        if self.view is None or requested in self.view:
            return requested, None
        if requested not in self._mapped:
            assert self.mapper is not None
            self._mapped[requested] = self.mapper(requested)
        cls, score = self._mapped[requested]
        if cls not in self.view:
            raise SemanticError(
                f"unknown {what} {requested!r}: use an AI2-THOR object type such as Mug, CounterTop, "
                "SinkBasin", line=line or None,
            )
        minimum = float(getattr(self.mapper, "min_score", MIN_CLASS_SCORE))
        if score < minimum:
            guesses = ", ".join(did_you_mean(requested, self.view.names(), first=cls))
            raise SemanticError(
                f"unknown {what} {requested!r}: no catalog class is close enough (best {cls} at "
                f"{score:.2f}, the minimum is {minimum:.2f}); did you mean {guesses}?", line=line or None,
            )
        return cls, f"{what} {requested!r} mapped to {cls} (score {score:.2f})"

    def make_ref(self, d: ObjectDecl) -> ObjectRef:
        cls, note = self.resolve(d.object_class, d.line, "object class")
        notes = [note] if note else []
        landmark = d.landmark
        if landmark is not None:
            landmark, lnote = self.resolve(landmark, d.line, "landmark")
            if lnote:
                notes.append(lnote)
        base = cls.lower()
        self.counts[base] = self.counts.get(base, 0) + 1
        key = f"{base}#{self.counts[base]}"
        ref = ObjectRef(key, cls, landmark, d.attributes, requested_class=d.object_class)
        self.by_key[key] = d.index
        if notes:
            self.first_note[d.index] = "; ".join(notes)
            self.notes.extend(f"line {d.line}: {n}" for n in notes)
        pending = []
        for attr in api.ATTRIBUTE_METHODS:
            if attr not in d.attributes:
                continue
            method = api.ATTRIBUTE_METHODS[attr]
            if (d.index, method) in self.explicit:
                self.notes.append(
                    f"line {d.line}: attribute '{attr}' of {key} is left to the program's own "
                    f"{method}() on line {self.explicit[(d.index, method)]}"
                )
            elif attr == "sliced" and self.view is not None and self.view.is_piece(cls):
                self.notes.append(f"line {d.line}: attribute 'sliced' of {key} dropped: {cls} is already a piece")
            else:
                pending.append(attr)
        self.pending[d.index] = pending
        return ref

    # -- emission -------------------------------------------------------------------------------

    def emit(self, kind: SubgoalKind, obj: int | None = None, rec: int | None = None, *,
             line: int = 0, note: str = "") -> None:
        target = self.refs[obj] if obj is not None else None
        receptacle = self.refs[rec] if rec is not None else None
        if kind not in _AGENT_KINDS and self.out:
            last = self.out[-1]
            if last.kind == kind and last.target == target and last.receptacle == receptacle:
                return
        notes = [note] if note else []
        for idx in (obj, rec):
            if idx is not None and idx in self.first_note:
                notes.append(self.first_note.pop(idx))
        if len(self.out) >= api.MAX_SUBGOALS:
            raise LimitError(
                f"the program compiles to more than {api.MAX_SUBGOALS} subgoals; make it shorter",
                line=line or None,
            )
        self.out.append(Subgoal(kind, target, receptacle, line=line, note="; ".join(notes)))

    def label(self, idx: int) -> str:
        return self.refs[idx].instance_key

    def navigate(self, idx: int, line: int, note: str = "") -> None:
        if self.at == idx or self.holding == idx:
            return
        self.emit(SubgoalKind.NAVIGATE, idx, line=line, note=note)
        self.at = idx

    def pickup(self, idx: int, line: int, note: str = "") -> None:
        if self.holding == idx:
            self.notes.append(f"line {line}: pickup() of {self.label(idx)} dropped: already holding it")
            return
        self.navigate(idx, line)
        self.emit(SubgoalKind.PICKUP, idx, line=line, note=note)
        self.holding = idx
        self.at = idx

    def ensure_held(self, idx: int, line: int, verb: str) -> None:
        if self.holding == idx:
            return
        why = f"inserted: pick up {self.label(idx)} before {verb} it"
        self.notes.append(f"line {line}: {why}")
        self.navigate(idx, 0)
        self.emit(SubgoalKind.PICKUP, idx, line=0, note=why)
        self.holding = idx
        self.at = idx

    def place(self, idx: int, rec: int, line: int, note: str = "") -> None:
        self.ensure_held(idx, line, "placing")
        self.navigate(rec, line)
        self.emit(SubgoalKind.PLACE, idx, rec, line=line, note=note)
        self.holding = -1  # hands known to be empty
        self.at = rec

    def method(self, method: str, idx: int, arg: int | None, line: int, note: str = "") -> None:
        spec = api.OBJECT_METHODS[method]
        if method == "go_to":
            self.navigate(idx, line, note)
        elif method == "pickup":
            self.pickup(idx, line, note)
        elif method == "place":
            assert arg is not None
            self.place(idx, arg, line, note)
        elif method == "pickup_and_place":
            assert arg is not None
            self.pickup(idx, line, note)
            self.place(idx, arg, line)
        elif method == "put_down":
            if self.holding != _UNKNOWN and self.holding != idx:
                self.notes.append(f"line {line}: put_down() of {self.label(idx)} dropped: not holding it")
                return
            self.emit(SubgoalKind.PUT_DOWN, idx, line=line, note=note)
            self.holding = -1
        elif method == "pour":
            assert arg is not None
            self.ensure_held(idx, line, "pouring")
            self.navigate(arg, line)
            self.emit(SubgoalKind.POUR, idx, arg, line=line, note=note)
            self.at = arg
        elif method in ("open", "close"):
            cls = self.refs[idx].object_class
            if self.view is not None and not self.view.openable(cls):
                self.notes.append(f"line {line}: {method}() of {self.label(idx)} dropped: {cls} cannot be opened")
                return
            self.navigate(idx, line)
            assert spec.kind is not None
            self.emit(spec.kind, idx, line=line, note=note)
        elif spec.macro:
            assert spec.kind is not None
            self.emit(spec.kind, idx, line=line, note=note)
            self.at = _UNKNOWN
            self.holding = _UNKNOWN
        else:  # toggle_on, toggle_off, slice
            assert spec.kind is not None
            self.navigate(idx, line)
            self.emit(spec.kind, idx, line=line, note=note)

    def flush_attributes(self, idx: int) -> None:
        pending = self.pending.get(idx)
        if not pending:
            return
        self.pending[idx] = []
        line = self.decls[idx].line
        for attr in pending:
            self.method(api.ATTRIBUTE_METHODS[attr], idx, None, line, note=f"attribute '{attr}'")

    # -- program --------------------------------------------------------------------------------

    def run(self) -> list[Subgoal]:
        classes = {d.index: self.resolve(d.object_class, d.line, "object class")[0] for d in self.parsed.objects}
        check_program(self.parsed, classes, self.view)
        for step in self.parsed.steps:
            if isinstance(step, ObjectDecl):
                self.refs[step.index] = self.make_ref(step)
                if step.index not in self.used:
                    self.flush_attributes(step.index)
                continue
            assert isinstance(step, Action)
            if step.obj is None:
                kind = api.AGENT_METHODS[step.method]
                self.emit(kind, line=step.line)
                if kind is not SubgoalKind.DO_NOTHING:
                    self.at = _UNKNOWN
                continue
            self.flush_attributes(step.obj)
            if step.arg is not None:
                self.flush_attributes(step.arg)
            self.method(step.method, step.obj, step.arg, step.line)
        return self.out


def _view(catalog: Any) -> CatalogView | None:
    if catalog is None:
        return default_catalog()
    if isinstance(catalog, CatalogView):
        return catalog
    return CatalogView(catalog)


def compile_program(
    text: str | bytes | ParsedProgram,
    *,
    class_mapper: ClassMapper | None = None,
    catalog: Any = None,
) -> CompiledProgram:
    """Validate and compile program text (or an already parsed program) to subgoals.

    `catalog`: the known object classes (a world `Catalog`, a `CatalogView`, or any iterable of
    names); None loads the packaged catalog. `class_mapper`: maps an unknown class to
    (known class, score); None uses the lexical `LexicalClassMapper` over the catalog's names.
    Raises `ProgramError` for anything the LLM should fix: its subclass `SemanticError` for a program
    in the language that makes no sense (an undefined name, a CoffeeMachine picked up), `LimitError`
    for one too big. `str(error)` is one line starting with "line N[, col C]: " when it has a place.
    """
    parsed = text if isinstance(text, ParsedProgram) else parse_program(text)
    view = _view(catalog)
    notes = list(parsed.notes)
    if view is None:
        notes.append("object catalog unavailable: classes were not checked")
    mapper = class_mapper
    if mapper is None and view is not None:
        mapper = LexicalClassMapper(view.names())
    compiler = _Compiler(parsed, view, mapper)
    subgoals = compiler.run()
    if not subgoals:
        raise SemanticError(
            "the program does nothing: call methods on your objects, e.g. mug.pickup(), or do_nothing()"
        )
    objects = [compiler.refs[i] for i in sorted(compiler.refs)]
    return CompiledProgram(subgoals, notes + compiler.notes, parsed.source, objects, parsed)


def describe_subgoals(subgoals: Iterable[Subgoal]) -> str:
    return "\n".join(s.describe() for s in subgoals)
