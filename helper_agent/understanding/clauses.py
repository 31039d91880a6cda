"""Where a request's changes begin and end: clause breaks read from the sentence, not from the model.

The HELPER graph's change reader (`graphs.helper.adaptation.changes_grammar`) lets the model copy
spans of the request, one per change. On the calibration suite the 0.5B model kept two changes
joined by "and" as one span ("skip the mug and wash a plate too": one edit, so one change was lost)
and now and then dropped a change it had not copied at all. Both are fixed here from the
sentence's own structure, deterministically:

- **Breaks.** A clause break is a comma, semicolon, colon or full stop between two words, or one of
  the coordinators `COORDINATORS` ("and", "plus", "then", "but"). A break only divides when *both*
  sides name something a change can be about: an object class (`named_classes`: class names, plurals,
  the catalog's synonyms) or a count (`COUNT_WORDS`, digits). So "skip the mug | and wash a plate
  too" and "a cup instead of the mug | and three bowls" divide, while "a bowl, please" or "the Omar
  dishes and then some" do not.
- **Split.** Each span the model copied is divided at its breaks (`split_span`).
- **Cover.** Once the model has found at least one change, every clause of the request from the
  routine's name (or the first change, if earlier) on that names something and that no change
  overlaps is a change too (`cover`). "No change" stays the model's decision under its grammar.
- **Nothing named, no change.** A change that names nothing the routine or the world knows (no
  object class, count, step of the action API or liquid: "I'm in a hurry", "my sister is
  visiting") is dropped. Read from the extended calibration suite, where such context sentences
  stand beside the routine's name and its changes.
- **Lists.** "a salad with lettuce and tomato" is one change: an "and" between bare things after
  "with"/"of" joins the contents of one thing (`_in_list`).

The coordinators and count words are the plain English ones the calibration suite's requests use
(`helper_agent/evals/studies/data/personalization_calibration.json`); nothing was chosen on the packaged suite.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from helper_agent.understanding.words import named_classes, named_steps
from helper_agent.world.effects import COFFEE, WATER

__all__ = ["COORDINATORS", "COUNT_WORDS", "LIQUIDS", "Clauses", "asks_something", "names_something"]

COORDINATORS = ("and", "plus", "then", "but")
_DROPPED = ("and", "but")  # a coordinator that is not itself part of the change ("then water it" keeps "then")
COUNT_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "single", "couple",
               "double", "twice", "triple")
# What the world holds besides objects: its liquids ("make me a coffee", "two coffees").
LIQUIDS = (WATER, COFFEE)
_DETERMINERS = ("a", "an", "the", "some", "another", "my", "your", "its", "their")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")
_STOP = re.compile(r"[,;:.!?]")


def names_something(words: Sequence[str]) -> bool:
    """The words name an object class, a count or a liquid of the world ("two coffees"), so they
    can be a change of their own (a clause to split off or to add)."""
    if any(w.isdigit() or w.lower() in COUNT_WORDS for w in words):
        return True
    if any(w.lower().rstrip("s") in LIQUIDS for w in words):
        return True
    return bool(words) and bool(named_classes(" ".join(words)))


def asks_something(words: Sequence[str]) -> bool:
    """The words name something the routine or the world knows: what `names_something` takes, or
    a step of the action API ("without cooking them"). A change that asks nothing ("I'm in a
    hurry", "my sister is visiting") is no change."""
    return names_something(words) or bool(named_steps(" ".join(words)))


@dataclass(frozen=True)
class Clauses:
    """A request's words (the routine's name blanked to None, as `request_words` does) and the
    indices of the words a punctuation mark comes right before."""

    words: tuple[str | None, ...]
    stops: frozenset[int]

    @classmethod
    def of(cls, text: str, words: Sequence[str | None]) -> Clauses:
        """`words` must be `request_words(text, name)`: the `_WORD` matches of `text` in order."""
        matches = list(_WORD.finditer(text))
        if len(matches) != len(words):
            raise ValueError("words are not the request's words")
        stops = {i for i in range(1, len(matches)) if _STOP.search(text[matches[i - 1].end():matches[i].start()])}
        return cls(tuple(words), frozenset(stops))

    # ------------------------------------------------------------------ spans
    def locate(self, change: str, taken: Sequence[tuple[int, int]] = ()) -> tuple[int, int] | None:
        """Where the change's words stand in the request, [start, end), the first place not taken."""
        target = [w.lower() for w in _WORD.findall(change)]
        lowered = [w.lower() if w else None for w in self.words]
        for i in range(len(lowered) - len(target) + 1):
            if lowered[i:i + len(target)] == target and (i, i + len(target)) not in taken:
                return i, i + len(target)
        return None

    def _text(self, start: int, end: int) -> str:
        return " ".join(w for w in self.words[start:end] if w)

    def _names(self, start: int, end: int) -> bool:
        return names_something([w for w in self.words[start:end] if w])

    def _breaks(self, start: int, end: int) -> list[int]:
        """Indices in (start, end) where a clause may begin: after a punctuation mark, or at a
        coordinator that does not join the contents of one thing (`_in_list`)."""
        return [i for i in range(start + 1, end)
                if i in self.stops or ((self.words[i] or "").lower() in COORDINATORS and not self._in_list(start, i))]

    def _in_list(self, start: int, i: int) -> bool:
        """An "and" between two bare things after "with" or "of" ("a salad with lettuce and tomato"):
        the contents of one thing, not two changes. The thing after "and" has no determiner or count
        of its own ("and a pan", "and three bowls" are new things) and the "of" is not "instead of"."""
        if (self.words[i] or "").lower() != "and" or i + 1 >= len(self.words):
            return False
        nxt = (self.words[i + 1] or "").lower()
        if not nxt or nxt in _DETERMINERS or nxt in COUNT_WORDS or nxt.isdigit() or not named_classes(nxt):
            return False
        for j in range(i - 1, start - 1, -1):
            w = (self.words[j] or "").lower()
            if not w or w in COORDINATORS:
                return False
            if w == "than" or (w == "of" and (self.words[j - 1] or "").lower() in ("instead", "place")):
                return False  # "instead of the mug and bowls": one thing in place of another, then more
            if w in ("with", "of"):
                return named_classes(" ".join(x for x in self.words[j + 1:i] if x)) != []
            if j in self.stops:
                return False
        return False

    def _trim(self, start: int, end: int) -> tuple[int, int]:
        while start < end and (self.words[start] or "").lower() in _DROPPED:
            start += 1
        return start, end

    def split_span(self, start: int, end: int) -> list[tuple[int, int]]:
        """The span divided at each break with something named on both sides."""
        pieces = [(start, end)]
        for b in self._breaks(start, end):
            s, e = pieces[-1]
            left, right = (s, b), self._trim(b, e)
            if right[0] < right[1] and self._names(*left) and self._names(*right):
                pieces[-1:] = [left, right]
        return pieces

    def clauses(self, start: int, end: int) -> list[tuple[int, int]]:
        """[start, end) cut at every break and at the routine's name."""
        out: list[tuple[int, int]] = []
        s = start
        for i in range(start, end + 1):
            cut = i == end or self.words[i] is None or i in self._breaks(start, end)
            if cut:
                piece = self._trim(s, i)
                if piece[0] < piece[1] and all(self.words[piece[0]:piece[1]]):
                    out.append(piece)
                s = i + 1 if i < end and self.words[i] is None else i
        return out

    # ------------------------------------------------------------------ the changes
    def refine(self, changes: Sequence[str]) -> tuple[list[str], list[str]]:
        """The model's changes split at clause breaks, plus the clauses it left out that name
        something; and a note per split or added clause (for the log). Order: as in the request."""
        spans: list[tuple[int, int]] = []
        notes: list[str] = []
        unplaced: list[str] = []
        for change in changes:
            where = self.locate(change, spans)
            if where is None:  # not the request's words in order (a model without a grammar)
                unplaced.append(change)
                continue
            where = self._trim(*where)
            if all((w or "").lower() in COORDINATORS for w in self.words[where[0]:where[1]]):
                notes.append(f"dropped '{change}' (a coordinator only)")
                continue
            pieces = self.split_span(*where)
            if len(pieces) > 1:
                notes.append(f"split '{change}' into " + " | ".join(f"'{self._text(*p)}'" for p in pieces))
            spans.extend(pieces)
        inside = [sp for sp in spans if any(o != sp and o[0] <= sp[0] and sp[1] <= o[1] for o in spans)]
        for s, e in inside:  # "wash the" and "the mug" beside "wash the bowl instead of the mug": one change
            notes.append(f"dropped '{self._text(s, e)}' (inside another change)")
        spans = [sp for sp in spans if sp not in inside]
        if spans:
            name_end = max((i + 1 for i, w in enumerate(self.words) if w is None), default=0)
            start = min(name_end, min(s for s, _ in spans))
            for s, e in self.clauses(start, len(self.words)):
                if self._names(s, e) and not any(s < e2 and s2 < e for s2, e2 in spans):
                    spans.append((s, e))
                    notes.append(f"added '{self._text(s, e)}' (a clause no change covered)")
        out = []
        for s, e in sorted(spans):
            if asks_something([w for w in self.words[s:e] if w]):
                out.append(self._text(s, e))
            else:
                notes.append(f"dropped '{self._text(s, e)}' (names nothing the routine or the world knows)")
        return list(dict.fromkeys([*out, *unplaced])), notes
