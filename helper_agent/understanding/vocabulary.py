"""One vocabulary from a person's words to the household's classes: names, everyday names, kinds,
and the embedding model as the fallback that asks instead of refusing.

Why: "switch the telly on" in a living room with a television was refused as "there is no telly
in this house", with both models, in the chat, the app and the benchmark; "switch on the washing
machine" in a kitchen was planned as a CoffeeMachine ("machine") and ran about a Watch for 570
steps (issue 63). A word the agent does not know is not a thing the house lacks.

How a phrase is read (`Vocabulary.phrase_present`, then `Vocabulary.guess`), most certain first:

1. **By rule** (`classes_for`): a catalog class named exactly, by its plural or by an everyday
   name (the lexical mapper's table, `program/classes.SYNONYMS`: "fridge", "hob", "telly",
   "couch"; scores 0.85 and up), or the classes whose name ends in the word ("lamp" -> FloorLamp,
   DeskLamp, Lamp). In a phrase of several words a class found by one word alone must not
   contradict the others: "washing machine" is not the CoffeeMachine its last word also names
   (the class's other words are not in the phrase), while "bedside lamp" is a Lamp.
2. **Known words**: a phrase that names no class but holds a word of the planner's example
   requests ("breakfast", "sandwich") is something the agent was shown how to do, unless its head
   (its last word) is the last word of class names ("machine", "table"): such a phrase names a
   thing of a kind the catalog has, and rule 1 found none of it.
3. **By meaning** (`guess`): otherwise the embedding mapper the graph already uses for the
   compiler (`class_mapping.EmbeddingClassMapper`) gives the closest class and its cosine. At
   `MIN_CLASS_SCORE` and up (the threshold chosen on `tests/data/class_names_calibration.json`),
   and for a class the household holds, the phrase is *unsure*: the agent asks "Do you mean the
   television?" rather than refusing or guessing. Under it the phrase names nothing there is.

A class is present when the household holds it, its whole or pieces (`present_classes`), or a
kind of it (`kinds.kinds_of`: "the lamp" is there when a FloorLamp is).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from helper_agent.program.classes import MIN_CLASS_SCORE, SYNONYMS, ClassMapper, LexicalClassMapper, normalise
from helper_agent.understanding.kinds import kinds_of
from helper_agent.understanding.words import plain_name
from helper_agent.world.catalog import Catalog

__all__ = ["SURE_SCORE", "Guess", "Vocabulary", "camel_words", "word_stems"]

SURE_SCORE = 0.85
"""The lexical mapper's score from which a match is by rule (exact name, synonym, plural, last
words), not by spelling similarity (difflib's ratio x 0.8 stays under it for all but near-copies)."""


def camel_words(name: str) -> list[str]:
    """A class name's words, lower case: "CoffeeMachine" -> ["coffee", "machine"]."""
    return [w.lower() for w in re.findall(r"[A-Z][a-z]*|[a-z]+|\d+", name)]


def word_stems(word: str) -> set[str]:
    """The word and its simple inflections removed ("cleaning" -> "clean", "dishes" -> "dish")."""
    out = {word}
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            out.add(word[: -len(suffix)])
    return out


_MADE = re.compile(
    r"\b(?:make|prepare|fix|cook|serve)\s+(?:(?:me|us|you)\s+)?(?:(?:a|an|some|the|my|another)\s+)?"
    r"((?:[a-z]+\s+){0,2}?[a-z]+)(?=\s*(?:$|[.,;!?<]|\s(?:and|with|on|in|for|please|of|to|that|using|from)\b))")
"""What a request asks to make: the last word of the phrase after "make (me) (a)" ("make me a
tomato sandwich, please" -> "sandwich")."""
_PRONOUNS = frozenset({"it", "them", "one", "this", "that", "these", "those"})


@dataclass(frozen=True)
class Guess:
    """An unsure reading: `phrase` may mean the household's `cls` (cosine `score`)."""

    phrase: str
    cls: str
    score: float
    dish: str = ""  # set for a word before what the agent makes that it knows nothing of ("cheese")

    def question(self) -> str:
        """"Do you mean the television?", or for a word before a dish that names nothing here,
        "Shall I make the sandwich without it?" (what the person reads)."""
        if not self.cls:
            return (f"I don't know the word '{self.phrase}', and nothing here is called that. "
                    f"Shall I make the {self.dish} without it?")
        return f"I don't know the word '{self.phrase}'. Do you mean the {plain_name(self.cls)}?"


class Vocabulary:
    """What the agent can name: the catalog's classes (through the lexical mapper and its everyday
    names), the words of its example requests, and, given one, a mapper by meaning for the rest.
    Built once per graph context; `absent.refusal_for` asks it about one household."""

    def __init__(self, class_names: Iterable[str], example_requests: Iterable[str] = (),
                 base_type: dict[str, str] | None = None, by_meaning: ClassMapper | None = None) -> None:
        self.names = sorted(set(class_names))
        self.mapper: ClassMapper = LexicalClassMapper(self.names)
        self.heads: dict[str, set[str]] = {}
        for name in self.names:
            words = camel_words(name)
            if words:
                self.heads.setdefault(words[-1], set()).add(name)
        self.known_words: set[str] = set()
        self.made_words: set[str] = set()  # what the example requests ask to make: "sandwich", "coffee"
        for text in example_requests:
            for word in re.findall(r"[a-z]+", text.lower()):
                self.known_words |= word_stems(word)
            for made in _MADE.finditer(text.lower()):
                last = made.group(1).split()[-1]
                if last not in _PRONOUNS:
                    self.made_words |= word_stems(last)
        self.base_type = dict(base_type or {})
        self.by_meaning = by_meaning

    @classmethod
    def of(cls, catalog: Catalog, example_requests: Iterable[str] = (),
           by_meaning: ClassMapper | None = None) -> Vocabulary:
        """The vocabulary of a world catalog (its classes, and which piece comes from which whole)."""
        names = catalog.names()
        pieces = {name: catalog.base_type(name) for name in names if catalog.base_type(name) != name}
        return cls(names, example_requests, base_type=pieces, by_meaning=by_meaning)

    def classes_for(self, text: str, present: set[str]) -> set[str]:
        """The catalog classes a phrase or word stands for by rule (rule 1)."""
        found: set[str] = set()
        cls, score = self.mapper(text)
        if score >= SURE_SCORE or (score >= MIN_CLASS_SCORE and cls in present):
            found.add(cls)
        for stem in word_stems(normalise(text)):
            found |= self.heads.get(stem, set())
        return found

    def present_classes(self, household_types: Iterable[str]) -> set[str]:
        """The household's types, with the whole type of every piece and the pieces of every whole."""
        present = set(household_types)
        pieces = {piece: whole for piece, whole in self.base_type.items() if whole in present}
        return present | {self.base_type.get(t, t) for t in present} | set(pieces)

    def phrase_classes(self, phrase: str, present: set[str]) -> set[str]:
        """The catalog classes a phrase stands for: the whole phrase's, else its words' that do not
        contradict the rest of it (rule 1: "washing machine" is no CoffeeMachine). Only a word read
        as a class's last word (its head: "machine") can be contradicted; a word that is the class's
        everyday name ("keys" for the KeyChain) names it wherever it stands."""
        classes = set(self.classes_for(phrase, present))
        words = phrase.split()
        for word in words if len(words) > 1 else ():
            stems = word_stems(word)
            for cls in self.classes_for(word, present):
                parts = camel_words(cls)
                others = set(parts) - stems
                head_only = bool(parts) and parts[-1] in stems and len(parts) > 1
                if not head_only or others <= {w for p in words for w in word_stems(p)}:
                    classes.add(cls)
        return classes

    def holds(self, classes: set[str], present: set[str]) -> bool:
        """Whether the household holds one of `classes` or a kind of one ("Lamp": its FloorLamp)."""
        return bool(classes & present) or any(kinds_of(cls, present) for cls in classes)

    def is_known(self, phrase: str) -> bool:
        """Rule 2: a word of the phrase is a word of the example requests, unless its head is the
        last word of class names ("washing machine": a machine the catalog has none of, whatever
        "washing" is)."""
        words = phrase.split()
        if not words or word_stems(words[-1]) & set(self.heads):
            return False
        return any(word_stems(word) & self.known_words for word in words)

    def everyday_names(self, text: str, present: set[str]) -> tuple[str, list[tuple[str, str]]]:
        """`text` with each everyday name of a class the household holds (the class mapper's
        `SYNONYMS`, one word or two: "telly", "tv set") written as the class's name ("switch the
        telly on" -> "switch the television on"), and the (words, name) pairs read. A name that
        shares a word with its class ("sink" for the SinkBasin, "fridge"), or that the example
        requests use ("TV", "toast"), is left as said: retrieval and the planner read it already
        (rewriting "toast" as "bread sliced" lost the toasting on calibration)."""
        tokens = list(re.finditer(r"[A-Za-z]+", text))
        read: list[tuple[str, str]] = []
        pieces: list[str] = []
        last, i = 0, 0
        while i < len(tokens):
            for width in (2, 1):
                span = tokens[i:i + width]
                if len(span) < width or (width == 2 and text[span[0].end():span[1].start()].strip()):
                    continue
                words = text[span[0].start():span[-1].end()]
                cls = SYNONYMS.get(normalise(words))
                if cls is None or not self.holds({cls}, present):
                    continue
                stems = {t for w in words.split() for t in word_stems(w.lower())}
                if {w.lower() for w in camel_words(cls)} & stems or stems & self.known_words:
                    continue
                read.append((words, plain_name(cls)))
                pieces += [text[last:span[0].start()], plain_name(cls)]
                last, i = span[-1].end(), i + width - 1
                break
            i += 1
        return "".join([*pieces, text[last:]]), read

    def unknown_before_dish(self, phrase: str, present: set[str]) -> list[Guess]:
        """Words of a phrase ending in a dish (what the example requests ask to make that names no
        class: "sandwich", "salad"; not any known word: "the zorblax mug next to ..." ends in
        "next") that name nothing by rule and are no word of the example requests: "cheese" in "a
        cheese sandwich". The household holds catalog classes only, so nothing there
        is called that; whether the word is an ingredient or a manner ("a quick salad") the agent
        cannot tell, so it asks (`Guess.dish`) instead of refusing or dropping it unsaid."""
        words = phrase.split()
        if len(words) < 2:
            return []
        dish = words[-1]
        if self.classes_for(dish, present) or not word_stems(dish) & self.made_words:
            return []
        return [Guess(word, "", 0.0, dish=dish) for word in words[:-1]
                if word.isalpha() and not self.classes_for(word, present) and not word_stems(word) & self.known_words]

    def phrase_present(self, phrase: str, present: set[str]) -> bool:
        """Whether a phrase stands for something there is: a class the household holds (or a kind
        of it) when it names classes by rule, else a known word (rules 1 and 2)."""
        classes = self.phrase_classes(phrase, present)
        if classes:
            return self.holds(classes, present)
        return self.is_known(phrase)

    def guess(self, phrase: str, present: set[str]) -> Guess | None:
        """Rule 3: the household's class a phrase that names none by rule may mean, by meaning,
        when the mapper is sure enough to ask (`MIN_CLASS_SCORE`); else None."""
        if self.by_meaning is None or self.phrase_classes(phrase, present) or self.is_known(phrase):
            return None
        cls, score = self.by_meaning(phrase)
        if score < getattr(self.by_meaning, "min_score", MIN_CLASS_SCORE) or not self.holds({cls}, present):
            return None
        return Guess(phrase, cls, round(float(score), 3))

