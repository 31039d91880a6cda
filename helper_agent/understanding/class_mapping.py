"""Maps an object class the API does not know to the closest catalog class, by meaning.

Lexical matches first (exact, synonyms, plurals: the program layer's mapper), then cosine
similarity of sentence embeddings of the class names written as words ("coffee mug" -> Mug).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from helper_agent.memory.embeddings import Embedder
from helper_agent.program.classes import MIN_CLASS_SCORE, LexicalClassMapper
from helper_agent.world.catalog import load_catalog


def _words(name: str) -> str:
    return re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").lower()


class EmbeddingClassMapper:
    """A `ClassMapper` (name -> (catalog class, score)) over sentence embeddings."""

    def __init__(self, embedder: Embedder, names: Sequence[str] | None = None) -> None:
        self.names = sorted(names or load_catalog().names())
        self.lexical = LexicalClassMapper(self.names)
        self.embedder = embedder
        self._matrix: np.ndarray | None = None

    min_score = MIN_CLASS_SCORE
    """Both scores (the lexical one and the cosine) are no match under it; see `MIN_CLASS_SCORE`."""

    def __call__(self, name: str) -> tuple[str, float]:
        found, score = self.lexical(name)
        if score >= 0.85:
            return found, score
        if self._matrix is None:
            self._matrix = np.asarray(self.embedder.embed([_words(n) for n in self.names]), dtype=np.float32)
        vector = np.asarray(self.embedder.embed([_words(name)]), dtype=np.float32)[0]
        scores = self._matrix @ vector
        best = int(np.argmax(scores))
        # The better of spelling and meaning: sentence embeddings of a misspelling ("Kettel") can sit
        # nearer an unrelated class (SaltShaker, 0.32) than the spelling match (Kettle, 0.67) is.
        if score >= float(scores[best]):
            return found, score
        return self.names[best], float(scores[best])
