"""Subgoals back to program text, for prompts that show what was done or what failed.

HELPER's replanning prompt shows the failed subgoal, and its planning prompt the completed part of
the plan, as API code. `render_program` writes subgoals that way: one `InteractionObject(...)`
per instance key (named after the key: mug#1 -> mug_1), then one method call per subgoal. Attributes
are left out of the constructors because their macros appear as explicit calls, so compiling the
rendered text gives back the same subgoals.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from helper_agent.program.subgoals import ObjectRef, Subgoal, SubgoalKind

_METHOD = {
    SubgoalKind.NAVIGATE: "go_to",
    SubgoalKind.PICKUP: "pickup",
    SubgoalKind.PLACE: "place",
    SubgoalKind.PUT_DOWN: "put_down",
    SubgoalKind.OPEN: "open",
    SubgoalKind.CLOSE: "close",
    SubgoalKind.TOGGLE_ON: "toggle_on",
    SubgoalKind.TOGGLE_OFF: "toggle_off",
    SubgoalKind.SLICE: "slice",
    SubgoalKind.POUR: "pour",
    SubgoalKind.FILL_UP: "fill_up",
    SubgoalKind.EMPTY: "empty",
    SubgoalKind.CLEAN: "clean",
    SubgoalKind.COOK: "cook",
    SubgoalKind.TOAST: "toast",
    SubgoalKind.MOVE_BACK: "move_back",
    SubgoalKind.MOVE_CLOSER: "move_closer",
    SubgoalKind.MOVE_ALTERNATE_VIEWPOINT: "move_alternate_viewpoint",
    SubgoalKind.DO_NOTHING: "do_nothing",
}


def variable_name(ref: ObjectRef) -> str:
    name = re.sub(r"\W+", "_", ref.instance_key).strip("_").lower() or "obj"
    return name if name[0].isalpha() else f"obj_{name}"


def _order(key: str) -> tuple[int, str]:
    base, _, number = key.rpartition("#")
    return (int(number), base) if number.isdigit() else (0, key)


def render_program(subgoals: Iterable[Subgoal]) -> str:
    """Program text that performs `subgoals` (objects constructed first, in instance-key order)."""
    subgoals = list(subgoals)
    refs: dict[str, ObjectRef] = {}
    for s in subgoals:
        for ref in (s.target, s.receptacle):
            if ref is not None:
                refs.setdefault(ref.instance_key, ref)
    lines = []
    for key in sorted(refs, key=_order):
        ref = refs[key]
        args = [repr(ref.object_class)]
        if ref.landmark:
            args.append(f"landmark={ref.landmark!r}")
        lines.append(f"{variable_name(ref)} = InteractionObject({', '.join(args)})")
    for s in subgoals:
        method = _METHOD[s.kind]
        if s.target is None:
            lines.append(f"{method}()")
        elif s.receptacle is not None:
            lines.append(f"{variable_name(s.target)}.{method}({variable_name(s.receptacle)})")
        else:
            lines.append(f"{variable_name(s.target)}.{method}()")
    return "\n".join(lines) + ("\n" if lines else "")
