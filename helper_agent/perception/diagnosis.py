"""Failure diagnosis: turn a failed action into one of a fixed set of failure descriptions.

HELPER asks a vision-language model which of a fixed list of failure descriptions matches the
current image. Here the default diagnoser matches the simulator's error text against that list
with the sentence embedding model. An image diagnoser (ALIGN through `transformers`,
`perception/align.py`) has the same interface and can replace it where images and weights exist.

The list holds HELPER's seven kinds, plus five that the simulator reports and a planner can act on
(knife, hands full, closed receptacle, wrong receptacle, not visible).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

EmbedFn = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class FailureKind:
    key: str
    description: str
    # Phrases the simulator's messages use for this kind; they are embedded together with the
    # description so the match leans on the same wording the error text has.
    hints: tuple[str, ...] = ()


FAILURE_KINDS: tuple[FailureKind, ...] = (
    FailureKind("already_on", "The object is already turned on.", ("is already on",)),
    FailureKind("already_off", "The object is already turned off.", ("is already off",)),
    FailureKind(
        "blocked_open",
        "The object is blocked from opening or closing; something, maybe the agent, is in the way.",
        ("is blocked from opening", "is blocked from closing", "agent is in the way of the door"),
    ),
    FailureKind(
        "blocks_interaction",
        "Something is blocking the interaction with the object.",
        ("cannot place into itself", "is not pickupable", "is not openable", "is not toggleable", "cannot pour into"),
    ),
    FailureKind("too_far", "The object is too far away to interact with.", ("too far away to interact with",)),
    FailureKind("no_space", "There is no free space to place the object.", ("no valid positions to place object", "is full")),
    FailureKind(
        "blocked_move",
        "The agent is blocked from moving; an obstacle is in the way.",
        ("agent was blocked from moving", "collided with", "a wall is in the way"),
    ),
    FailureKind("needs_knife", "The agent must be holding a knife to slice the object.", ("must be holding a knife to slice",)),
    FailureKind("hands_full", "The agent's hands are full; it must put down what it holds first.", ("hand is already holding",)),
    FailureKind(
        "receptacle_closed",
        "The receptacle is closed; it must be opened first.",
        ("must be open to place objects in it", "inside a closed receptacle"),
    ),
    FailureKind(
        "wrong_receptacle",
        "The object cannot be placed in that kind of receptacle.",
        ("cannot be placed in", "is not a receptacle"),
    ),
    FailureKind(
        "not_visible",
        "The object is not visible from the current viewpoint.",
        ("is not visible from the current viewpoint", "not holding any object", "is not filled with liquid"),
    ),
)


@dataclass(frozen=True)
class Diagnosis:
    kind: str
    description: str
    score: float
    error: str


class FailureDiagnoser(Protocol):
    def diagnose(self, error: str, image: Any | None = None) -> Diagnosis: ...


class TextDiagnoser:
    """Matches error text to the closest failure kind by cosine similarity of sentence embeddings."""

    def __init__(self, embed: EmbedFn, kinds: Sequence[FailureKind] = FAILURE_KINDS) -> None:
        self.embed = embed
        self.kinds = tuple(kinds)
        texts: list[str] = []
        self._owner: list[int] = []
        for index, kind in enumerate(self.kinds):
            for text in (kind.description, *kind.hints):
                texts.append(text)
                self._owner.append(index)
        self._matrix = _normalise(np.asarray(embed(texts), dtype=np.float32))
        self._tokens = [_tokens(t) for t in texts]
        self._cache: dict[str, Diagnosis] = {}

    def diagnose(self, error: str, image: Any | None = None) -> Diagnosis:
        cached = self._cache.get(error)
        if cached is not None:
            return cached
        # Object ids carry numbers that only add noise to the match.
        cleaned = " ".join(w for w in error.replace("|", " ").split() if not _is_number(w))
        vector = _normalise(np.asarray(self.embed([cleaned]), dtype=np.float32))[0]
        # Sentence embeddings put "already on" and "already off" close together; a little lexical
        # overlap breaks such near-ties without overriding the semantic match.
        words = _tokens(cleaned)
        overlap = np.array([len(words & t) / max(len(words | t), 1) for t in self._tokens], dtype=np.float32)
        scores = self._matrix @ vector + LEXICAL_WEIGHT * overlap
        best = int(np.argmax(scores))
        kind = self.kinds[self._owner[best]]
        result = Diagnosis(kind.key, kind.description, float(scores[best]), error)
        self._cache[error] = result
        return result


LEXICAL_WEIGHT = 0.3


def _tokens(text: str) -> set[str]:
    return {w.strip(".,:;()'").lower() for w in text.split() if w.strip(".,:;()'")}


def _is_number(word: str) -> bool:
    try:
        float(word.strip("(),"))
    except ValueError:
        return False
    return True


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


def kind_by_key(key: str) -> FailureKind:
    for kind in FAILURE_KINDS:
        if kind.key == key:
            return kind
    raise KeyError(key)
