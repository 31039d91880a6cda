"""The HELPER graph's reading of a request before it plans and after it acts, over the shared
understanding (`helper_agent.understanding`):

- before planning (`check_request`, called by `nodes.retrieve`): words the vocabulary can only
  guess are asked about first (`clarify`: "I don't know the word 'telly'. Do you mean the
  television?"); a request about things the household lacks is refused (`absent.refusal_for`);
  one that asks a thing for what it cannot take is refused with the reason
  (`feasibility.infeasible`: "a mug can't be sliced"). Why: such requests ran as something else
  and looked done (issue 63).
- after acting (`outcome_statement`, called by `nodes.ask_feedback`): what the request asked that
  the household does not show, said before the question ("Not done yet: the pillow is not in the
  vase."), from the household the agent acted on, never from a benchmark's checker.

Where nobody can be asked (an evaluation's feedback source answers instead of a person), a guessed
word is not asked about: the request is read as before (its refusal, if any, stands), so the
published rows do not move.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from helper_agent.graphs.helper.context import HelperContext
from helper_agent.graphs.helper.examples import examples_for
from helper_agent.graphs.helper.state import HelperState
from helper_agent.graphs.helper.teaching import is_yes
from helper_agent.understanding.absent import Refusal, refusal_for, unsure_words
from helper_agent.understanding.feasibility import infeasible
from helper_agent.understanding.outcome import others, read_request, unmet, unmet_sentence
from helper_agent.understanding.requests import teach_request
from helper_agent.understanding.vocabulary import Guess, Vocabulary
from helper_agent.understanding.words import plain_name
from helper_agent.world.catalog import load_catalog

__all__ = ["CLARIFY_KIND", "check_request", "clarify", "household_names", "outcome_statement", "vocabulary"]

CLARIFY_KIND = "clarify_word"
"""The `interrupt` payload's kind of the question about an unsure word (a yes/no question)."""


def household_types(env: Any) -> list[str]:
    """The object types the household holds, hidden ones included (read like `household_lines`)."""
    return [str(obj.get("objectType", "")) for obj in env.objects_metadata()]


def vocabulary(ctx: HelperContext) -> Vocabulary:
    """What the agent can name: the catalog's classes, the words of its example requests, and the
    context's class mapper by meaning (the compiler's) for the words it cannot name by rule."""
    memory = ctx.example_memory()
    requests = [str(getattr(record, "dialogue", "")) for record in memory.seed_records()]
    # a mapper handed in is used; one built over a hashing embedder would guess nothing of meaning
    meaningful = ctx.class_mapper is not None or getattr(memory.embedder, "meaningful", True)
    return Vocabulary.of(load_catalog(), requests, by_meaning=ctx.mapper() if meaningful else None)


def household_names(words: Vocabulary, env: Any, request: str) -> tuple[str, list[tuple[str, str]]]:
    """The request with the person's everyday names of things the household holds written as their
    names ("the telly": the television), where the example requests never use them, and what was
    read (`Vocabulary.everyday_names`). Nothing for a household in another vocabulary (VirtualHome's)."""
    types = household_types(env)
    if not set(types) & set(words.names):
        return request, []
    return words.everyday_names(request, words.present_classes(types))


def check_request(words: Vocabulary, env: Any, request: str, ask: bool) -> dict[str, Any]:
    """The reading before planning, with the context's vocabulary (`vocabulary`): `unsure` words to
    ask about (only when `ask`: a person is there), else a `refusal` sentence, else nothing. With a
    `log` of what it found."""
    teach = teach_request(request)
    text = teach.body if teach else request
    types = household_types(env)
    guesses = unsure_words(text, types, words) if ask else []
    if guesses:
        return {"unsure": [asdict(g) for g in guesses],
                "log": [f"retrieve: unsure what {', '.join(repr(g.phrase) for g in guesses)} means "
                        f"({', '.join(f'{g.cls} {g.score}' if g.cls else f'before {g.dish}' for g in guesses)}); asking"]}
    refusal = refusal_for(text, types, words)
    if refusal is not None:
        return {"refusal": refusal.sentence(),
                "log": [f"retrieve: refused: nothing named is in the household ({', '.join(refusal.missing)})"]}
    cannot = infeasible(text, words.present_classes(types))
    if cannot is not None:
        return {"refusal": cannot.sentence(text),
                "log": [f"retrieve: refused: the {cannot.cls} cannot take {cannot.step} ({cannot.reason})"]}
    return {}


def _meant(request: str, phrase: str, cls: str) -> str:
    """The request with the person's word for `phrase` replaced by the class's name."""
    return re.sub(r"\b" + r"\s+".join(map(re.escape, phrase.split())) + r"\b", plain_name(cls), request,
                  count=1, flags=re.I)


def clarify(state: HelperState, runtime: Runtime[HelperContext]) -> dict[str, Any]:
    """Ask about each unsure word ("Do you mean the television?", or for a word before a dish that
    names nothing here, "Shall I make the sandwich without it?"). A yes puts the class's name in
    the request (or leaves the word out; the person's own words are kept in `said`) and the request
    is read again; a no ends the turn with nothing done and a request to name the thing another
    way (an unknown word is never refused as absent)."""
    ctx = HelperContext.of(runtime)
    request = state["request"]
    log: list[str] = []
    for data in state.get("unsure") or []:
        guess = Guess(**data)
        answer = str(interrupt({"kind": CLARIFY_KIND, "question": guess.question(), "phrase": guess.phrase,
                                "class": guess.cls}) or "").strip()
        log.append(f"clarify: {answer or 'no answer'}")
        if not is_yes(answer):
            # a no to going without the word: it is wanted, and nothing here is called that, so the
            # request is about a thing the house does not have ("there is no cheese in this house")
            sentence = (Refusal(state.get("said") or state["request"], (guess.phrase,)).sentence() if guess.dish else
                        f"Then I don't know what '{guess.phrase}' is, so I did nothing. Could you name it another way?")
            return {"unsure": [], "refusal": sentence,
                    "log": [*log, f"clarify: '{guess.phrase}' is not the {guess.cls or 'word to leave out'}; "
                                  "asked to say it again"]}
        if guess.dish:  # "make the sandwich without it": the word goes, the person's words stay in `said`
            request = re.sub(rf"\b{re.escape(guess.phrase)}\s+", "", request, count=1, flags=re.I)
            log.append(f"clarify: the {guess.dish} without '{guess.phrase}'")
            continue
        request = _meant(request, guess.phrase, guess.cls)
        log.append(f"clarify: '{guess.phrase}' is the {guess.cls}")
    checked = check_request(vocabulary(ctx), ctx.environment(), request, ask=False)
    examples = examples_for(ctx, request)  # about what will be planned
    log.append(f"clarify: examples {', '.join(e['id'] for e in examples)}")
    return {"unsure": [], "request": request, "said": state.get("said") or state["request"], "examples": examples,
            "refusal": checked.get("refusal", ""), "log": [*log, *checked.get("log", [])]}


def outcome_statement(state: HelperState, env: Any) -> tuple[list[str], list[str], str]:
    """What the request asked that the household does not show (`outcome.unmet`), what else of
    the kind the words were met without (`outcome.others`: "Another book is not on the desk."), and
    the sentence said before the question ("" when all is met and nothing else is left)."""
    teach = teach_request(state["request"])
    text = teach.body if teach else state["request"]
    objects = env.objects_metadata()
    reading = read_request(text, objects)  # one reading of the request for both
    lacks, remarks = unmet(text, objects, reading), others(text, objects, reading)
    return lacks, remarks, unmet_sentence(lacks, remarks)
