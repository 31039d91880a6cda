"""Requests about things the household does not have: read what a request names, and refuse with
the reason when none of it is there.

Why: "can you mow the lawn" was planned anyway; the program named a mug `mow` and the agent spent
690 steps moving it. A person told "mow the lawn" in a flat would say there is no lawn. The HELPER graph
checks this before planning (`graphs.helper.nodes.retrieve`) and ends the request with that sentence
(`Refusal.sentence`), acting on nothing.

The reading rule, generic and deterministic (no word list of requests):

1. **What a request names** (`named_phrases`): the words after a determiner, possessive or number
   ("the", "a", "my", "two", ...) or after the "of" that ends such a phrase ("a head of lettuce"),
   up to three, stopping at a function word or punctuation:
   "can you mow the lawn" names "lawn"; "put the dirty mug in the sink" names "dirty mug" and
   "sink". A request naming nothing this way ("make coffee") is planned as usual.
2. **What a phrase stands for** (`Vocabulary.classes_for`): the catalog classes the lexical class
   mapper (`program/classes.py`) gives the whole phrase or one of its words with a sure score
   (exact, synonym, plural, last words: 0.85 and up), and the classes whose name ends with the word
   ("lamp" -> FloorLamp, DeskLamp, Lamp); a looser spelling match (`MIN_CLASS_SCORE`, what the
   compiler accepts: "mugg" -> Mug) counts only when that class is in the household.
3. **Words the agent knows without a class** (`Vocabulary.known_words`): the words of its planner's
   example requests ("breakfast", "coffee", "sandwich"): a request about them is one the agent has
   been shown how to do, so a phrase that stands for no class but holds one is never missing.
4. **Present**: a class is present when the household holds it, its whole (a TomatoSliced when there
   is a Tomato) or its pieces. A phrase that stands for classes is present when one of them is (the
   household decides: "make the bed" in a kitchen names a Bed there is not); one that stands for
   none is present when it holds a known word.
5. **What a request acts on** (`phrase_roles`): a phrase is acted on unless a preposition puts it
   in a place or a purpose ("on the sofa", "for my husband", "I'm in the mood"; a preposition
   right after a clause's first word is the verb's particle: "turn on the lamp" acts on the lamp),
   or it follows another phrase directly as a second object ("give the plant a drink" acts on the
   plant). "a head of lettuce" is one thing; "the plate and the bowl" are two, in one role.
6. **Refused** when (a) it names at least one phrase and none is present; or (b) a thing it acts
   on stands for catalog classes and the household holds none of them ("turn on the TV and put the
   mug in the sink" in a kitchen: there is no TV, whatever else is there); or (c) it acts on
   something and nothing it acts on is present ("give the cat a bowl": the bowl is what the cat
   gets, the cat is not there). The sentence names what is missing.

Chosen on the calibration suite of `helper eval requests` (every impossible case refused, no
possible case refused, teaching bodies included), and held to the false-refusal checks of
`tests/test_refuse_absent.py` (the packaged held-out paraphrases, every request wording of the
built-in benchmark in its households). Rules (b) and (c) widen (a), under which one present place
or purpose ("the food in the bowl") planned a request about an absent thing ("feed the dog"). A household whose objects are not in the catalog's vocabulary at all (VirtualHome's)
is never judged; requests that name nothing ("make coffee") are never refused; a thing the
household has but the vocabulary does not know is planned when something else acted on is there.
Known limit: an activity no household action can do on a thing that is there ("iron the cloth") is
planned; telling those verbs apart needs more than the example requests' words ("brew" and "stash"
are doable and unknown to them too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from helper_agent.understanding.vocabulary import Guess, Vocabulary
from helper_agent.understanding.words import LEAD, request_as_task

__all__ = ["NamedPhrase", "Refusal", "named_phrases", "phrase_roles", "refusal_for", "unsure_words"]

_DETERMINERS = frozenset(
    "a an the my your our his her their its this that these those some any every each both all another "
    "one two three four five six seven eight nine ten".split()
)
# Words that end a noun phrase: prepositions, conjunctions, pronouns, auxiliaries and adverbs of
# manner. A closed class of English, not a list of things.
_STOP = frozenset(
    "of in on at to for with from into onto over under above below behind beside near by about as "
    "and or but then so if when while after before until than "
    "it them it's i me you he she we they him us this that there here "
    "is are was were be been am do does did can could would will should shall may might must "
    "please now too also again just only very really not no yes "
    "off up down out away back".split()  # verb particles: "switch the telly off" names the telly
)
# The prepositions that put a phrase in a place or a purpose ("on the sofa", "for the cat"): what
# follows one is not what the request acts on. Also a closed class of English.
_PREPOSITIONS = frozenset(
    "in on at to for with from into onto over under above below behind beside near by about as".split()
)
_JOINS = frozenset({"and", "or", ","})
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|[.,;:!?()\[\]<>\"]")



@dataclass(frozen=True)
class NamedPhrase:
    """One noun phrase of a request: its words, the phrase it belongs to ("a head of lettuce": the
    head and the lettuce are one thing named) and whether the request acts on it (rule 5)."""

    text: str
    group: int
    acted_on: bool


def phrase_roles(request: str) -> list[NamedPhrase]:
    """The noun phrases a request names, in order, lower case, each with its role (rules 1 and 5 of
    the module docstring). A phrase repeated is kept once, in its first role."""
    lead = LEAD.match(request)  # "can you", "please": skipped, so the verb is the first word
    tokens = [t.lower().replace("’", "'") for t in _WORD.findall(request)][len(_WORD.findall(lead.group(0))) if lead else 0:]
    phrases: list[NamedPhrase] = []
    i, group, last_end = 0, -1, -1
    while i < len(tokens):
        # "of" after a phrase starts another: "a head of lettuce" names the head and the lettuce.
        follows_of = tokens[i] == "of" and bool(phrases) and i > 0 and tokens[i - 1] not in _STOP
        if tokens[i] in _DETERMINERS or tokens[i].isdigit() or follows_of:
            before = tokens[i - 1] if i > 0 else ""
            # A preposition places what follows ("the remote on the sofa", "the knife is on the
            # stool", "I'm in the mood"), except right after a clause's first word, a verb's particle
            # ("turn on the lamp", "can you switch off the TV").
            placed = before in _PREPOSITIONS and not (i >= 2 and _clause_verb(tokens, i - 2))
            words: list[str] = []
            j = i + 1
            while j < len(tokens) and len(words) < 3:
                token = tokens[j]
                if not token[0].isalpha() or token in _STOP or token in _DETERMINERS:
                    break
                words.append(token)
                j += 1
            if words and all(p.text != " ".join(words) for p in phrases):
                if follows_of:
                    acted = phrases[-1].acted_on
                elif before in _JOINS and phrases:
                    acted = phrases[-1].acted_on  # "the plate and the bowl": the role goes on
                else:
                    group += 1
                    # A phrase right after a phrase is a second object: "give the plant a drink" acts
                    # on the plant; "a drink" is what it gets.
                    acted = not placed and i != last_end
                if not follows_of and before in _JOINS and phrases:
                    group += 1
                phrases.append(NamedPhrase(" ".join(words), group, acted))
            last_end = j if words else last_end
            i = j
        else:
            i += 1
    return phrases


def _clause_verb(tokens: list[str], k: int) -> bool:
    """Whether token k is a clause's first word and could be its verb: nothing or a function word
    or punctuation before it, and it is neither a function word nor a contraction ("I'm")."""
    word = tokens[k]
    if not word[0].isalpha() or word in _STOP or word in _DETERMINERS or "'" in word:
        return False
    return k == 0 or not tokens[k - 1][0].isalpha() or tokens[k - 1] in _STOP


def named_phrases(request: str) -> list[str]:
    """The noun phrases a request names, in order, lower case (rule 1 of the module docstring)."""
    return [p.text for p in phrase_roles(request)]


@dataclass(frozen=True)
class Refusal:
    """A request refused because the household has none of what it names."""

    request: str
    missing: tuple[str, ...]  # the phrases named, none present

    def sentence(self) -> str:
        """"I can't mow the lawn: there is no lawn in this house." (what the person reads)."""
        what = request_as_task(self.request)
        things = " or ".join(self._as_written(m) for m in self.missing)
        plural = self.missing[0].endswith("s") and not self.missing[0].endswith("ss")
        return f"I can't {what or 'do that'}: there {'are' if plural else 'is'} no {things} in this house."


    def _as_written(self, phrase: str) -> str:
        """The phrase as the request wrote it ("TV", not "tv"), else as read."""
        found = re.search(r"\b" + r"\s+".join(map(re.escape, phrase.split())) + r"\b", self.request, re.I)
        return found.group(0) if found else phrase


def refusal_for(request: str, household_types: Iterable[str], vocabulary: Vocabulary) -> Refusal | None:
    """The refusal of a request the household cannot serve (rules 5 and 6 of the module docstring):
    nothing it names is there, or something it acts on is a class the household lacks, or nothing
    it acts on is there. Else None."""
    types = set(household_types)
    phrases = phrase_roles(request)
    # A household described in another vocabulary (VirtualHome's "kitchencounter") cannot be judged.
    if not phrases or not types & set(vocabulary.names):
        return None
    present = vocabulary.present_classes(types)
    there = {p.text: vocabulary.phrase_present(p.text, present) for p in phrases}
    if not any(there.values()):
        return Refusal(request, tuple(p.text for p in phrases))
    groups: dict[int, list[NamedPhrase]] = {}
    for phrase in phrases:
        if phrase.acted_on:
            groups.setdefault(phrase.group, []).append(phrase)
    absent = [group for group in groups.values() if not any(there[p.text] for p in group)]
    # A thing acted on that is a class the household lacks ("turn on the TV" in a kitchen) is
    # missing whatever else the request names.
    lacking = [group for group in absent
               if any(vocabulary.phrase_classes(p.text, present) for p in group)]
    if lacking:
        return Refusal(request, tuple(group[-1].text for group in lacking))
    # Nothing acted on is there ("give the cat its dinner": the dinner is only what the cat gets).
    if groups and len(absent) == len(groups):
        return Refusal(request, tuple(group[-1].text for group in absent))
    return None


def unsure_words(request: str, household_types: Iterable[str], vocabulary: Vocabulary) -> list[Guess]:
    """The phrases of a request that stand for nothing there is by rule, but that the vocabulary's
    mapper by meaning takes for a class the household holds (`Vocabulary.guess`): "the telly" as
    the Television; and the words before a dish it knows nothing of ("cheese" in "a cheese
    sandwich", `Vocabulary.unknown_before_dish`). The person is asked about these before any refusal
    (issue 63: an unknown word is not an absent thing, and is never dropped unsaid). Empty for a
    household in another vocabulary, as `refusal_for`."""
    types = set(household_types)
    phrases = phrase_roles(request)
    if not phrases or not types & set(vocabulary.names):
        return []
    present = vocabulary.present_classes(types)
    guesses = [vocabulary.guess(p.text, present) for p in phrases if not vocabulary.phrase_present(p.text, present)]
    unknown = [g for p in phrases for g in vocabulary.unknown_before_dish(p.text, present)]
    return [g for g in guesses if g is not None] + unknown
