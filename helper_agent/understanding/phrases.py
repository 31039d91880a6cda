"""Constructions over a change's words: what it puts in place of what, what it does without, what
it puts where, and a new thing with contents. Each rule names the suite batch it was read from.
"""

from __future__ import annotations

import re

from helper_agent.understanding.words import (
    INDEFINITE,
    LOCATIVE,
    NEGATIONS,
    SPAN_WORD,
    STEP_WORDS,
    class_before,
    class_from,
    exact_class,
    named_classes,
    past_article,
    stems,
)
from helper_agent.world.catalog import load_catalog
from helper_agent.world.effects import COFFEE, WATER

__all__ = ["contrast_parts", "destinations", "negated_objects", "new_holder", "placed_objects", "placements",
           "unwanted_steps"]

_CONTRAST = re.compile(r"\b(?:instead of|rather than|in place of)\b", re.I)
# English's constructions for putting one thing in place of another, with the old thing first:
# "replace the cup with a mug", "swap the candle for the soap bottle", "change the apple to tomato".
# Written as a designer lists them before batch 3 of the calibration suite, which has one of each.
_OLD_FIRST = re.compile(r"\b(?:replace|swap|switch|exchange|trade|change)\s+(?P<old>.+?)\s+"
                        r"(?:with|for|by|to|into)\s+(?P<new>.+)$", re.I)
_SUBSTITUTE = re.compile(r"\bsubstitute\s+(?P<new>.+?)\s+for\s+(?P<old>.+)$", re.I)  # "substitute A for B": A new
_NOT = re.compile(r"^(?P<new>.+?),?\s+(?:and\s+)?not\s+(?P<old>.+)$|^not\s+(?P<old2>.+?),?\s+but\s+(?P<new2>.+)$", re.I)


def contrast_parts(change: str) -> tuple[str, str] | None:
    """(the words for what is wanted, the words for what it takes the place of), or None when the
    change puts nothing in place of anything: "a cup instead of the mug" -> ("a cup", "the mug");
    "replace the plate with a bowl" -> ("a bowl", "the plate"); "the soap bottle, not the soap bar".
    Both sides must name an object ("change the slices to be cooked" is no substitution)."""
    found: tuple[str, str] | None = None
    if m := _CONTRAST.search(change):
        found = change[:m.start()], change[m.end():]
    elif m := _SUBSTITUTE.search(change) or _OLD_FIRST.search(change):
        found = m["new"], m["old"]
    elif m := _NOT.search(change.strip()):
        found = (m["new"], m["old"]) if m["new"] else (m["new2"], m["old2"])
    if found is None:
        return None
    if not _CONTRAST.search(change) and not (named_classes(found[0]) and named_classes(found[1])):
        return None
    return found[0].strip(), found[1].strip()


def negated_objects(text: str) -> list[str]:
    """The classes (and liquids) the text says to do without: right after a negation and an
    optional article ("no coffee", "skip the bowls", "without the remote"). Read from the
    calibration suite (114 requests), where "no coffee" became "skip Mug clean" (the mug still went
    to the coffee machine) and "skip the bowls" "skip Bowl clean"."""
    words = SPAN_WORD.findall(text)
    out: list[str] = []
    for j, word in enumerate(words):
        if word.lower() not in ("no", "without", "skip"):
            continue
        k = past_article(words, j, ("a", "an", "the", "any", "my"))
        found = class_from(words, k)
        liquid = words[k].lower().rstrip("s") if k < len(words) else ""
        if found or liquid in (WATER, COFFEE):
            out.append(found or liquid)
    return out


def unwanted_steps(text: str) -> list[str]:
    """The steps (`STEP_METHODS`) the text says not to do: a participle with "un" ("leave the slices
    uncooked", "unwashed"), or a verb form ("cooking", "washed", "wash") in a clause with a negation
    ("skip cooking the potato", "don't wash the mug"), after the negation. A bare noun ("no toast") is the thing, not
    its step. Read from batch 3 of the calibration suite, where "leave the slices uncooked" became
    "remove TomatoSliced"."""
    words = [w.lower() for w in SPAN_WORD.findall(text)]
    out: list[str] = []
    for j, word in enumerate(words):
        negated = any(w in NEGATIONS for w in words[:j])  # "skip cooking", not "cooked, not raw"
        verb = word.endswith(("ing", "ed")) or (j and words[j - 1] in ("don't", "dont", "never", "not"))
        candidates = [word[2:]] if word.startswith("un") else [word] if negated and verb else []
        for w in candidates:
            method = next((STEP_WORDS[x] for x in stems(w) if x in STEP_WORDS), None)
            if method and method not in out:
                out.append(method)
    return out


def destinations(text: str) -> list[str]:
    """The classes the text names right after "on"/"in"/... (and an article): where things go."""
    words = SPAN_WORD.findall(text)
    out: list[str] = []
    for j, word in enumerate(words):
        if word.lower() not in (*LOCATIVE, "to") or (j and words[j - 1].lower().rstrip("ed") in ("turn", "switch")):
            continue  # "turn on the television" names no place
        if found := class_from(words, past_article(words, j)):
            out.append(found)
    return out


def placed_objects(text: str) -> list[str]:
    """The classes the text puts somewhere: a class followed by "on"/"in"/... and another class ("a
    box on the sofa": the Box is what is placed, though a box can hold things). Read from the
    extended calibration suite, where "a box on the sofa" moved the newspaper onto the sofa."""
    words = SPAN_WORD.findall(text)
    out: list[str] = []
    for j, word in enumerate(words):
        if word.lower() not in LOCATIVE or not named_classes(" ".join(words[j + 1:])):
            continue
        if found := class_before(words, j):
            out.append(found)
    return out


def placements(text: str) -> dict[str, str]:
    """What the text puts where: {the class placed: the receptacle class it goes on or in}, for a
    class right before "on"/"in"/... and a receptacle right after it (and an article): "and a pen on
    the desk" -> {Pen: Desk}. Read from the calibration suite (batch 2), where "a box on the sofa"
    and "a pen on the desk" became copies of a routine object that went elsewhere."""
    catalog = load_catalog()
    words = SPAN_WORD.findall(text)
    out: dict[str, str] = {}
    for j, word in enumerate(words):
        if word.lower() not in LOCATIVE:
            continue
        placed, where = class_before(words, j), class_from(words, past_article(words, j))
        if placed and where and where in catalog and catalog.get(where).receptacle:
            out.setdefault(placed, where)
    return out


def new_holder(text: str) -> str:
    """The class of a new object with contents the text asks for, or "": an indefinite article, an
    object class, then "of" or "with" ("a plate of toast", "another mug of coffee", "a bowl with
    apple slices"). The article makes it a new object (not "the plate of toast" the routine already
    makes), and "of" after a class gives it contents ("instead of" follows no class). No edit of the
    routine's objects makes a new object with something in it, so the planner writes it (`add
    task`); seen on the calibration suite, where such changes came out as `count` or `add ... like`
    edits. A thing no class names, "with" things one does ("a salad with lettuce and tomato"), is
    such a new thing too; its word is returned (the extended calibration suite)."""
    words = SPAN_WORD.findall(text)
    for j, word in enumerate(words):
        if word.lower() not in ("of", "with"):
            continue
        for n in (2, 1):
            found = exact_class(" ".join(words[j - n:j])) if j - n - 1 >= 0 else None
            if found and words[j - n - 1].lower() in INDEFINITE:
                return found
        # "a salad with lettuce and tomato": a new thing no class names, made of things one does
        if (word.lower() == "with" and j >= 2 and words[j - 2].lower() in INDEFINITE
                and not exact_class(words[j - 1]) and named_classes(" ".join(words[j + 1:]))):
            return words[j - 1].lower()
    return ""
