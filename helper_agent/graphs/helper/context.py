"""Run-scoped dependencies of the HELPER graph (LangGraph's `context`): the chat model, the memories,
the failure diagnoser, the class mapper, and, in evaluations, the TEACh task that gives feedback.

Nothing here is checkpointed; a resumed chat gets a fresh context. Missing parts are built lazily
from the settings (`HELPER_LLM`, `HELPER_HOME`), so the graph also runs under the LangGraph server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from helper_agent.graphs.helper.configuration import HelperConfig
from helper_agent.llm import UsageRecorder


@dataclass
class HelperContext:
    chat_model: Any = None
    examples: Any = None  # memory of language-program examples
    corrections: Any = None  # memory of correction examples
    routines: Any = None  # per-user routines
    diagnoser: Any = None
    class_mapper: Any = None
    config: HelperConfig = field(default_factory=HelperConfig)
    mode: str = "chat"  # "chat": a person answers the feedback question; "eval": the checker does
    task: Any = None  # teach.Task checked for feedback in evaluations
    usage: UsageRecorder = field(default_factory=UsageRecorder)
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ lazy defaults
    def chat(self) -> Any:
        if self.chat_model is None:
            from helper_agent.config import get_settings
            from helper_agent.llm import make_chat_model

            self.chat_model = make_chat_model(get_settings().llm, temperature=get_settings().temperature)
        return self.chat_model

    def example_memory(self) -> Any:
        if self.examples is None:
            from helper_agent.memory.examples import ExampleMemory

            self.examples = ExampleMemory()
        return self.examples

    def correction_memory(self) -> Any:
        if self.corrections is None:
            from helper_agent.memory.corrections import CorrectionMemory

            self.corrections = CorrectionMemory()
        return self.corrections

    def routine_memory(self) -> Any:
        if self.routines is None:
            from helper_agent.memory.routines import RoutineMemory

            self.routines = RoutineMemory()
        return self.routines

    def failure_diagnoser(self) -> Any:
        if self.diagnoser is None:
            from helper_agent.perception.diagnosis import TextDiagnoser

            self.diagnoser = TextDiagnoser(self.example_memory().embedder.embed)
        return self.diagnoser

    def mapper(self) -> Any:
        if self.class_mapper is None:
            self.class_mapper = EmbeddingClassMapper(self.example_memory().embedder)
        return self.class_mapper


def _words(name: str) -> str:
    return re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").lower()


class EmbeddingClassMapper:
    """Maps an object class the API does not know to the closest catalog class.

    Lexical matches first (exact, synonyms, plurals: the program layer's mapper), then cosine
    similarity of sentence embeddings of the class names written as words ("coffee mug" -> Mug).
    """

    def __init__(self, embedder: Any, names: list[str] | None = None) -> None:
        from helper_agent.program.classes import LexicalClassMapper
        from helper_agent.world.catalog import load_catalog

        self.names = sorted(names or load_catalog().names())
        self.lexical = LexicalClassMapper(self.names)
        self.embedder = embedder
        self._matrix: np.ndarray | None = None

    def __call__(self, name: str) -> tuple[str, float]:
        found, score = self.lexical(name)
        if score >= 0.85:
            return found, score
        if self._matrix is None:
            self._matrix = np.asarray(self.embedder.embed([_words(n) for n in self.names]), dtype=np.float32)
        vector = np.asarray(self.embedder.embed([_words(name)]), dtype=np.float32)[0]
        scores = self._matrix @ vector
        best = int(np.argmax(scores))
        return self.names[best], float(scores[best])
