"""User-feedback text from unmet goal conditions (HELPER's user-feedback experiment).

For every failed subgoal the feedback holds one sentence naming the subtask, followed by one
sentence per object that still needs work, e.g.::

    You failed to complete the subtask: Make a sandwich. For the bread slice: The bread slice
    needs to be toasted.

Objects are named by their type in words ("BreadSliced" -> "bread slice"); when a subgoal
mentions several objects of one type they are told apart by ordinals ("the first bread slice",
"the second bread slice"). The text is a pure function of the checker's result.
"""

from __future__ import annotations

from helper_agent.teach.checker import Step, SubgoalProgress, TaskProgress

_ORDINALS = (
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
)
_SUFFIX_WORDS = {"Sliced": "slice", "Cracked": "cracked"}


def object_phrase(object_type: str) -> str:
    """``"BreadSliced"`` -> ``"bread slice"``, ``"EggCracked"`` -> ``"cracked egg"``,
    ``"CoffeeMachine"`` -> ``"coffee machine"``."""
    for suffix, word in _SUFFIX_WORDS.items():
        if object_type.endswith(suffix) and len(object_type) > len(suffix):
            base = object_phrase(object_type[: -len(suffix)])
            return f"{word} {base}" if suffix == "Cracked" else f"{base} {word}"
    words: list[str] = []
    current = ""
    for i, ch in enumerate(object_type):
        boundary = (
            ch.isupper()
            and i > 0
            and (
                not object_type[i - 1].isupper()
                or (i + 1 < len(object_type) and object_type[i + 1].islower())
            )
        )
        if boundary and current:
            words.append(current)
            current = ""
        current += ch
    if current:
        words.append(current)
    return " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words)


def _ordinal(i: int) -> str:
    return _ORDINALS[i] if i < len(_ORDINALS) else f"{i + 1}th"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


def subgoal_feedback(subgoal: SubgoalProgress, fallback_description: str = "") -> str:
    """The feedback sentence(s) for one failed subgoal ("" if it succeeded)."""
    if subgoal.success:
        return ""
    description = _sentence(subgoal.description or fallback_description)
    parts = [
        f"You failed to complete the subtask: {description}"
        if description
        else "You failed to complete a subtask."
    ]
    # Group unmet steps by object, in order of first mention.
    by_object: dict[str, list[Step]] = {}
    for step in subgoal.unmet_steps:
        by_object.setdefault(step.object_id, []).append(step)
    type_counts: dict[str, int] = {}
    for steps in by_object.values():
        type_counts[steps[0].object_type] = type_counts.get(steps[0].object_type, 0) + 1
    seen_of_type: dict[str, int] = {}
    for steps in by_object.values():
        otype = steps[0].object_type
        name = object_phrase(otype)
        if type_counts[otype] > 1:
            name = f"{_ordinal(seen_of_type.get(otype, 0))} {name}"
            seen_of_type[otype] = seen_of_type.get(otype, 0) + 1
        descs: list[str] = []
        for s in steps:
            d = _sentence(s.desc)
            if d and d not in descs:
                descs.append(d)
        if descs:
            parts.append(f"For the {name}: {' '.join(descs)}")
    return " ".join(parts)


def feedback_from_progress(progress: TaskProgress) -> str:
    """The whole feedback text for a checked task; empty when the task succeeded."""
    if progress.success:
        return ""
    return " ".join(
        text for sg in progress.failed_subgoals() if (text := subgoal_feedback(sg, progress.description))
    )
