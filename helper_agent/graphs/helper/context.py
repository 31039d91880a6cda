"""Run-scoped dependencies of the HELPER graph (LangGraph's runtime `context`).

The caller hands the graph everything it acts with: the live environment, the chat model, the
memories and, in an evaluation, the feedback source (a function that answers "Is the task
completed?" from outside the agent; a person answers through `interrupt` when it is None). The
agent never builds its world and never scores itself.

Nothing here is checkpointed; a resumed chat gets a fresh context. The chat model and memories
have defaults built from the settings on first use, so the graph also runs under the LangGraph
server; the environment has none and must be given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from helper_agent.graphs.base import RunContext
from helper_agent.graphs.helper.configuration import HelperConfig
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.routines import RoutineMemory
from helper_agent.perception.diagnosis import FailureDiagnoser, TextDiagnoser
from helper_agent.program.classes import ClassMapper
from helper_agent.understanding.class_mapping import EmbeddingClassMapper

FeedbackSource = Callable[[], str]
"""Answers the feedback question after execution: "" when nothing is missing, else what is."""


@dataclass
class HelperContext(RunContext):
    graph_name = "HELPER"

    examples: ExampleMemory | None = None  # language-program examples
    corrections: CorrectionMemory | None = None  # correction examples
    routines: RoutineMemory | None = None  # per-user routines
    feedback: FeedbackSource | None = None  # None: ask a person through `interrupt`
    config: HelperConfig = field(default_factory=HelperConfig)
    # Write the environment's snapshot into the state after every node that acts, so a
    # checkpointed chat can resume in a new process. Evaluations leave it off: the household
    # stays out of the state and out of traces.
    keep_snapshots: bool = False
    diagnoser: FailureDiagnoser | None = None
    class_mapper: ClassMapper | None = None

    # ------------------------------------------------------------------ parts, with defaults
    def example_memory(self) -> ExampleMemory:
        if self.examples is None:
            self.examples = ExampleMemory()
        return self.examples

    def correction_memory(self) -> CorrectionMemory:
        if self.corrections is None:
            self.corrections = CorrectionMemory()
        return self.corrections

    def routine_memory(self) -> RoutineMemory:
        if self.routines is None:
            self.routines = RoutineMemory()
        return self.routines

    def failure_diagnoser(self) -> FailureDiagnoser:
        if self.diagnoser is None:
            self.diagnoser = TextDiagnoser(self.example_memory().embedder.embed)
        return self.diagnoser

    def mapper(self) -> ClassMapper:
        if self.class_mapper is None:
            self.class_mapper = EmbeddingClassMapper(self.example_memory().embedder)
        return self.class_mapper
