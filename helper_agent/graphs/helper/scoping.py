"""The HELPER graph's use of a request's scope (`understanding/scope.py`): which text it is read
from, the note that flags the retrieved examples' objects the request does not ask for, and the
fitting of a program to its request that `nodes.validate` makes before it runs (`fit_to_request`).

A program that changes an object the request neither names nor needs for one of its steps loses
those steps (`trimmed`: the edit language's tree transform `program/edits/trim.py` removes each
statement that changes such an object, and whatever only those statements needed), and the rest
runs, the removed statements named in the log. It goes back to the planner with the reason ("the
request does not mention Lettuce ...; leave it out") only when what remains changes nothing, or
still changes something unasked, or does not compile. On the calibration suite the 0.5B planner
did not listen to that reason: "could you make me a coffee?" came back with the same copied plate
and toast three times, and the last attempt ran with them. Its coffee part was right each time.

On the planner's last attempt a program that cannot be trimmed runs anyway, with the objects in
the log: doing the request with something extra beats doing nothing (the request would end
"invalid_program"); but not a program that does nothing *but* the unasked (`leaves_nothing`).

Before that, a class the program wrote in place of one the request names, of the same sort (a Mug
for "the cup", a DeskLamp for "the lamp" in a room whose lamp is a FloorLamp), is written as the
named one (`named_instead`). After it, a first plan gets what its request's words ask it to end
with and it left out (`completed`, from `understanding/asked.py`: the slice put on the plate, the
toast toasted). A recalled routine is never checked: its program is what the person asked for by
its name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from helper_agent.graphs.helper.feedback import answers_in_log
from helper_agent.program import CompiledProgram, ProgramError, compile_program
from helper_agent.program.edits.append import append_program
from helper_agent.program.edits.apply import apply_edit, carry_all, put_made
from helper_agent.program.edits.language import Edit, EditError
from helper_agent.program.edits.tree import CTOR, base_class, declarations, parse_tree, var_for
from helper_agent.program.edits.trim import trim_classes
from helper_agent.program.steps import STEP_TOOLS
from helper_agent.program.subgoals import SubgoalKind
from helper_agent.understanding.asked import Asked, asked
from helper_agent.understanding.kinds import household_class, with_classes
from helper_agent.understanding.requests import teach_request
from helper_agent.understanding.scope import Scope, changed_classes, request_scope
from helper_agent.world.catalog import load_catalog

__all__ = ["Fitted", "asked_of", "completed", "example_note", "fit_to_request", "from_words", "leaves_nothing", "named_instead", "out_of_scope", "routine_in_scope", "scope_of",
           "trimmed", "unasked_steps", "unasked_visits", "unmoved"]


def scope_of(state: Mapping[str, Any], present: Collection[str]) -> Scope | None:
    """The scope of the state's request in a household holding `present` classes: the words of a
    taught request after its name ("Perform the Mo snack: <these words>"), with the feedback the
    current program answers; None for a recalled routine or where the rule does not apply."""
    if state.get("routine"):
        return None
    request = str(state.get("request") or "")
    teach = teach_request(request)
    text = teach.body if teach else request
    feedback = str(state.get("feedback") or "")
    return request_scope(f"{text}\n{feedback}".strip(), present)


def asked_of(state: Mapping[str, Any], present: Collection[str],
             counts: Mapping[str, int] | None = None) -> Asked | None:
    """What the state's request asks a first plan to end with (`understanding/asked.py`; `counts`:
    how many of each class the household holds); None for a recalled routine, a replan (it writes
    only what the person says is missing, in the household the last program left) and where the
    scope rule does not apply."""
    if state.get("routine") or state.get("feedback") or scope_of(state, present) is None:
        return None
    request = str(state.get("request") or "")
    teach = teach_request(request)
    return asked(teach.body if teach else request, present, counts)


def out_of_scope(compiled: CompiledProgram, scope: Scope | None) -> list[str]:
    """The classes the compiled program changes that `scope` does not allow ([] without a scope)."""
    return scope.outside(changed_classes(compiled.subgoals)) if scope else []


_USES = ("pickupable", "receptacle", "openable", "toggleable", "sliceable", "can_fill_with_liquid")


def _sorts(cls: str) -> set[str]:
    """The TEACh semantic classes of `cls` beyond its own name (a Mug and a Cup are Drinkware)."""
    catalog = load_catalog()
    return set(catalog.get(cls).simbot_classes) - {cls} if cls in catalog else set()


def _same_sort(a: str, b: str) -> bool:
    """Whether `a` and `b` share a TEACh semantic class and are used the same way (the catalog's
    `_USES`): a Mug and a Cup, a DeskLamp and a FloorLamp; not a Knife and a Pot, which share
    Cookware (calibration cal-058 wrote the knife of an egg example as the request's pot)."""
    catalog = load_catalog()
    return (bool(_sorts(a) & _sorts(b)) and a in catalog and b in catalog
            and all(getattr(catalog.get(a), u) == getattr(catalog.get(b), u) for u in _USES))


def named_instead(compiled: CompiledProgram, scope: Scope | None, present: Collection[str]) -> dict[str, str]:
    """What the program wrote in place of a class the request names: {the class as written: the named
    class}, for an object the request does not allow whose TEACh semantic class and uses it shares with
    exactly one class the request names (as the household's kind of it, `household_class`) that the program
    makes in no form. "can you wash up the cup?" (calibration cal-036) came back as a washed Mug on
    every attempt, and "turn on the lamp" (cal-059) as a DeskLamp in a room whose lamp is a FloorLamp:
    the planner copied its examples' class for the person's word. Each named class takes one."""
    if scope is None:
        return {}
    made = {base_class(ref.object_class) for ref in compiled.objects}
    missing = [c for c in dict.fromkeys(household_class(n, present) for n in scope.named)
               if c == base_class(c) and c in present and c not in made]
    out: dict[str, str] = {}
    for ref in compiled.objects:
        cls = ref.object_class
        if cls in scope.allowed or cls != base_class(cls) or (ref.requested_class or cls) in out:
            continue
        same = [n for n in missing if _same_sort(n, cls) and n not in out.values()]
        if len(same) == 1:
            out[ref.requested_class or cls] = same[0]
    return out


def unasked_steps(compiled: CompiledProgram, scope: Scope | None) -> list[str]:
    """The steps the compiled program does that `scope` does not ask for ([] without a scope)."""
    return scope.unasked_steps(compiled.subgoals) if scope else []


def unmoved(compiled: CompiledProgram, scope: Scope | None) -> list[str]:
    """The places of the request the compiled program moves for nothing (`Scope.unmoved`)."""
    return scope.unmoved(compiled.subgoals) if scope else []


def unasked_visits(compiled: CompiledProgram, scope: Scope | None) -> list[str]:
    """The classes the program only goes to (no other step acts on or with them) that the request's
    scope does not allow. Why: "switch the TV on" (calibration cal-060) went to a TV stand and a
    desk lamp copied from a lamp example before switching the TV on; the household had no desk lamp
    and the walk to it searched for 600 steps. Going somewhere changes nothing, so the change rule
    never saw it; a walk to something the request has no use for is dropped like a change would be."""
    if scope is None:
        return []
    visited = [s.target.object_class for s in compiled.subgoals if s.kind == SubgoalKind.NAVIGATE and s.target]
    used = {ref.object_class for s in compiled.subgoals if s.kind != SubgoalKind.NAVIGATE
            for ref in (s.target, s.receptacle) if ref is not None}
    return scope.outside(c for c in visited if c not in used)


def trimmed(compiled: CompiledProgram, scope: Scope, outside: Collection[str],
            recompile: Callable[[str], CompiledProgram], steps: Collection[str] = (),
            places: Collection[str] = (), visits: Collection[str] = ()) -> tuple[CompiledProgram, str] | None:
    """`compiled` without its steps on the `outside` classes and its unasked `steps` (`trim_classes`),
    compiled again by `recompile` (the caller's: in the household's classes), with the log's note on
    what was removed; None when what remains changes nothing, still changes or does something `scope`
    does not allow, or does not compile: then the planner is asked again."""
    # the classes as the program's constructors wrote them (a mapped "bread slice" is a BreadSliced)
    written = {ref.requested_class or ref.object_class for ref in compiled.objects if ref.object_class in outside}
    still = {ref.requested_class or ref.object_class for ref in compiled.objects if ref.object_class in places}
    walks = {ref.requested_class or ref.object_class for ref in compiled.objects if ref.object_class in visits}
    try:
        cut = trim_classes(compiled.source, {*outside, *written}, steps, {*places, *still}, {*visits, *walks})
        if not cut.removed or not cut.program.strip():
            return None
        again = recompile(cut.program)
    except (EditError, ProgramError):
        return None
    changed = changed_classes(again.subgoals)
    if not changed or scope.outside(changed) or scope.unasked_steps(again.subgoals) or scope.unmoved(again.subgoals):
        return None
    lines = [line for line in cut.removed if "InteractionObject(" not in line]
    what = ", ".join([*outside, *(f"{s} steps" for s in steps), *(f"moving the {p}" for p in places),
                      *(f"going to the {v}" for v in visits)])
    return again, (f"removed unasked {what}: {len(lines)} step(s) "
                   f"({'; '.join(lines[:6])}{'; ...' if len(lines) > 6 else ''})")


def leaves_nothing(compiled: CompiledProgram, outside: Collection[str], steps: Collection[str] = ()) -> bool:
    """Whether the program without its unasked part (`trim_classes`) would change nothing at all: all
    it does is what nobody asked for. Such a program is not run even on the planner's last attempt
    (calibration cal-051: "move the pillows onto the bed" came back three times as a cell phone, a
    remote and a bat, copied from an example, and the last one moved them)."""
    written = {ref.requested_class or ref.object_class for ref in compiled.objects if ref.object_class in outside}
    try:
        cut = trim_classes(compiled.source, {*outside, *written}, steps)
        return not cut.program.strip() or not changed_classes(compile_program(cut.program).subgoals)
    except (EditError, ProgramError):
        return False


_STEP_KINDS = {"toast": SubgoalKind.TOAST, "cook": SubgoalKind.COOK, "clean": SubgoalKind.CLEAN,
               "slice": SubgoalKind.SLICE}
_SWITCHES = {"toggle_on": SubgoalKind.TOGGLE_ON, "toggle_off": SubgoalKind.TOGGLE_OFF}


def _sliced_here(subgoals: Iterable[Any], cls: str) -> bool:
    """Whether a plan cuts `cls`: it slices one, or acts on its pieces (the executor cuts a whole one
    for a piece it does not find)."""
    return any(s.target is not None and base_class(s.target.object_class) == base_class(cls)
               and (s.kind == SubgoalKind.SLICE or s.target.object_class != base_class(s.target.object_class))
               for s in subgoals)


def completed(compiled: CompiledProgram, wanted: Asked) -> tuple[str, list[str]] | None:
    """A first plan with what the request's words ask it to end with (`understanding/asked.py`) and
    it left out, added by the edit language: a placement no step makes (the program's own object of
    that class when it makes one, `put_made`: the toasted slice, not a second one; else `put`: "a
    slice on a clean plate" -> a TomatoSliced put on the program's plate), then a toasting or cooking where the plan
    toasts or cooks nothing, and a washing of a dish it serves on and never washes (`step`). The program text and the log's notes; None when
    nothing is missing or an edit does not fit. What is there already is never changed."""
    program, notes = compiled.source, []
    places: dict[tuple[str, str], set[str]] = {}
    for s in compiled.subgoals:
        if s.kind == SubgoalKind.PLACE and s.target and s.receptacle:
            key = (base_class(s.target.object_class), base_class(s.receptacle.object_class))
            places.setdefault(key, set()).add(s.target.instance_key)
    try:
        for want in wanted.placements:
            more = want.count - len(places.get((base_class(want.placed), base_class(want.where)), set()))
            if more > 0:
                own = put_made(program, want.placed, want.where) if want.count == 1 else None
                program = own or apply_edit(program, Edit("put", target=want.where, value=want.placed, count=more))
                notes.append(f"added {more} {want.placed} on/in the {want.where}, as the request asks")
        if wanted.everything_to:
            carried = carry_all(program, wanted.everything_to)
            if carried is not None and carried != program:
                notes.append(f"carried what it serves to the {wanted.everything_to}, as the request asks")
                program = carried
        made = {d.cls for d in declarations(parse_tree(program))}
        for method, cls in wanted.steps:
            # a toasting or cooking is missing only from a plan that toasts (cooks) nothing: which thing
            # the words' "cooked" goes with is the planner's reading ("lettuce and a cooked potato slice");
            # a dish to serve on is washed where the plan leaves that dish unwashed
            # (a slice put in the toaster and the toaster switched on is toasted: its tool is the step)
            if method in _SWITCHES:  # "switch the TV on": a plan that switches no TV gets the switch
                if not any(s.kind == _SWITCHES[method] and s.target and s.target.object_class == cls
                           for s in compiled.subgoals):
                    var = var_for(cls, set())  # append_program renames it if the program has the name
                    program = apply_edit(program, Edit("step", cls, method)) if cls in made else append_program(
                        program, f'{var} = {CTOR}("{cls}")\n{var}.{method}()\n')
                    notes.append(f"added {method} of the {cls}, as the request asks")
                continue
            if method == "slice":
                if not _sliced_here(compiled.subgoals, cls) and cls in made:
                    program = apply_edit(program, Edit("step", cls, method))
                    notes.append(f"added slice to the {cls}, as the request asks")
                continue
            done = any((s.kind == _STEP_KINDS[method] and s.target
                        and (method != "clean" or base_class(s.target.object_class) == base_class(cls)))
                       or (method != "clean" and s.kind == SubgoalKind.PLACE and s.receptacle
                           and s.receptacle.object_class in STEP_TOOLS[method])
                       for s in compiled.subgoals)
            if not done and cls in made:
                program = apply_edit(program, Edit("step", cls, method))
                notes.append(f"added {method} to the {cls}, as the request asks")
    except EditError:
        return None
    return (program, notes) if notes else None


def from_words(wanted: Asked, scope: Scope | None,
               recompile: Callable[[str], CompiledProgram]) -> tuple[CompiledProgram, list[str]] | None:
    """A program for what the words ask a program to end with (`understanding/asked.py`), written by
    the edit language alone: each placement put (`put`), then the steps asked of what it makes
    (`step`), with the log's notes; None when the words ask for no placement, or the program does
    not compile or would change what `scope` does not allow. Why: "move the pillows onto the bed"
    (calibration cal-051) came back three times as a phone, a remote and a bat copied from an
    example, and the request ended with no program at all; the words say exactly what to do."""
    if not wanted.placements:
        return None
    program, notes = "", []
    try:
        for want in wanted.placements:
            program = apply_edit(program, Edit("put", target=want.where, value=want.placed, count=want.count))
            notes.append(f"{want.count} {want.placed} on/in the {want.where}")
        made = {d.cls for d in declarations(parse_tree(program))}
        for method, cls in wanted.steps:
            if cls in made:
                program = apply_edit(program, Edit("step", cls, method))
                notes.append(f"{method} the {cls}")
        compiled = recompile(program)
    except (EditError, ProgramError):
        return None
    if scope is not None and (out_of_scope(compiled, scope) or unasked_steps(compiled, scope)):
        return None
    return compiled, notes


def routine_in_scope(program: str, state: Mapping[str, Any], present: Collection[str]) -> tuple[str, list[str]]:
    """A routine about to be stored without the steps on things its teaching request never asked
    for (the request's words after its name, with each answer that asked for more on the way:
    `feedback.answers_in_log`), and the classes dropped; the program as it is when the scope
    rule does not apply or nothing would be left. Why: a real chat session taught "make a coffee in
    the mug and put a slice of toast on the plate", and a corrective program had put a tomato slice
    (from the request before) back on the plate; the routine offered for storing listed it."""
    request = str(state.get("request") or "")
    teach = teach_request(request)
    said = answers_in_log(state.get("log") or [])
    scope = request_scope("\n".join([teach.body if teach else request, *said]), present)
    if scope is None:
        return program, []
    try:
        compiled = compile_program(program)
    except ProgramError:
        return program, []
    outside = out_of_scope(compiled, scope)
    cut = trimmed(compiled, scope, outside, compile_program) if outside else None
    return (cut[0].source, outside) if cut is not None else (program, [])


def example_note(scope: Scope | None, examples: Iterable[Mapping[str, Any]]) -> str:
    """A line for the planner's turn naming the objects the retrieved examples change that this
    request does not ask for, so they are adapted, not copied; "" when there are none or no scope
    applies. (What an example only puts things on, a table or a counter, is not named.)"""
    if scope is None:
        return ""
    found: list[str] = []
    for example in examples:
        try:
            found += changed_classes(compile_program(str(example.get("program") or "")).subgoals)
        except ProgramError:
            continue
    others = scope.outside(found)
    if not others:
        return ""
    return (f"The examples above are other requests. This one does not ask for {', '.join(others)}: "
            "leave them out; change only what this request names and the tools its steps need.")


@dataclass(frozen=True)
class Fitted:
    """A program fitted to its request: the program to run and the log's notes, or (`compiled` None)
    the reason it goes back to the planner."""

    compiled: CompiledProgram | None
    notes: tuple[str, ...] = ()
    reason: str = ""
    kept: tuple[str, ...] = ()  # unasked classes the program runs with (nothing could trim them)


def fit_to_request(compiled: CompiledProgram, state: Mapping[str, Any], present: Collection[str],
                   recompile: Callable[[str], CompiledProgram], last: bool,
                   counts: Mapping[str, int] | None = None) -> Fitted:
    """`compiled` (the planner's program, in the household's classes) fitted to the state's request,
    in order: a class written for one the request names is the named one (`named_instead`); the
    unasked (`out_of_scope`, `unasked_steps`, `unmoved`) is trimmed (`trimmed`); a first plan gets what
    the words ask and it left out (`completed`). Where the unasked cannot be trimmed, the program goes
    back with the reason while attempts remain (`last` False); on the last it runs with the unasked
    noted, unless it does nothing else (`leaves_nothing`). `recompile` compiles a program text the way
    the caller does (in the household's classes); `counts`, how many of each class the household
    holds (a definite plural placed is every one: `understanding/asked.py`)."""
    scope = scope_of(state, present)
    notes: list[str] = []
    kept: tuple[str, ...] = ()
    named = named_instead(compiled, scope, present)
    if named:
        try:
            compiled = recompile(with_classes(compiled.source, named))
            notes += [f"{old} is the request's {new}" for old, new in named.items()]
        except ProgramError:
            pass
    outside, steps, places = out_of_scope(compiled, scope), unasked_steps(compiled, scope), unmoved(compiled, scope)
    visits = unasked_visits(compiled, scope)
    cut = (trimmed(compiled, scope, outside, recompile, steps, places, visits)
           if scope and (outside or steps or places or visits) else None)
    if cut is None and visits and (outside or steps or places):
        cut = trimmed(compiled, scope, outside, recompile, steps, places)  # the walks kept, the rest trimmed
    if cut is not None:
        compiled = cut[0]
        notes.append(cut[1])
    elif places and not (outside or steps):
        notes.append(f"moving the {', '.join(places)} kept: without it the program would do nothing")
    elif scope is not None and (outside or steps):
        reason = scope.reason(outside, steps)
        if not last:
            return Fitted(None, tuple(notes), reason)
        if leaves_nothing(compiled, outside, steps):
            wanted = asked_of(state, present, counts)
            own = from_words(wanted, scope, recompile) if wanted else None
            if own is not None:  # the planner's last program did only the unasked: the words' own
                return Fitted(own[0], (*notes, f"{reason}: on the planner's last attempt; written from the request's "
                                              f"words instead ({'; '.join(own[1])})"))
            return Fitted(None, tuple(notes), f"{reason} (nothing the request asks for is left in it)")
        notes.append(f"unasked {', '.join([*outside, *steps])} kept: the planner's attempts are used up")
        kept = tuple(outside)
    wanted = asked_of(state, present, counts)
    done = completed(compiled, wanted) if wanted else None
    if done is not None:
        try:
            again = recompile(done[0])
            if not out_of_scope(again, scope) and not unasked_steps(again, scope):
                compiled = again
                notes += done[1]
        except ProgramError:
            pass
    return Fitted(compiled, tuple(notes), kept=kept)
