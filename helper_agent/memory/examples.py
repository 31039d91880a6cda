"""HELPER's language–program examples: key = dialogue or instruction, value = program text.

HELPER retrieves the k = 3 examples whose dialogue is closest to the current one and shows them to
the LLM as in-context examples. The memory is seeded from the project's own examples in
`helper_agent/prompts/examples/programs.jsonl` (JSON Lines: {"id", "task_family", "dialogue",
"program"}), written against HELPER's action API (`InteractionObject(...)`), one or more per TEACh
task family, and from `train_programs.jsonl`: 108 dialogues of the built-in benchmark's train
split with their gold programs (see TRAIN_PROGRAMS_FILE).

    memory = create_memory("examples")
    for hit in memory.retrieve("<Commander> make me a coffee please", k=3):
        print(hit.score, hit.record.program)
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import Field

from helper_agent.memory.base import MemoryRecord, iter_jsonl_objects
from helper_agent.memory.errors import InvalidRecordError
from helper_agent.memory.keyed import SeededMemory, seed_file

PROGRAMS_FILE = "programs.jsonl"
# Dialogue -> gold program pairs from the built-in benchmark's train split (seed 0), the first 6 of
# each of its 18 task families (about LLM-Planner's 100-example pool), made by `make packaged-examples`.
# Never from a valid split or the unseen phrasing pool: those are what evaluations are scored on.
TRAIN_PROGRAMS_FILE = "train_programs.jsonl"

_SPEAKER = re.compile(r"<\s*(driver|commander|user|robot|agent)\s*>\s*:?", re.IGNORECASE)


def dialogue_text(dialogue: str) -> str:
    """The dialogue as embedded: speaker tags removed, whitespace collapsed.

    Tags such as `<Driver>`/`<Commander>` appear in every dialogue and carry no task information.
    """
    return " ".join(_SPEAKER.sub(" ", dialogue).split())


class ProgramExample(MemoryRecord):
    """A dialogue (or instruction) and the program that carries it out."""

    task_family: str = Field(default="", description="TEACh task family, e.g. coffee, salad")
    dialogue: str = Field(description="The key: a commander-driver dialogue or an instruction.")
    program: str = Field(description="The value: a program over HELPER's action API.")
    scene: dict | None = Field(
        default=None, description='A generated scene the program succeeds in: {"room_type": ..., "seed": N}.'
    )
    task: dict | None = Field(
        default=None, description='The TEACh task it carries out: {"task_name": ..., "params": [...]}.'
    )


class ExampleMemory(SeededMemory):
    """Language–program examples (HELPER); `retrieve` returns the top k (default 3)."""

    kind: ClassVar[str] = "examples"
    record_type: ClassVar[Any] = ProgramExample
    default_collection: ClassVar[str] = "helper_examples"
    key_fields: ClassVar[tuple[str, ...]] = ("dialogue",)
    value_fields: ClassVar[tuple[str, ...]] = ("program",)
    filter_fields: ClassVar[tuple[str, ...]] = ("task_family",)
    seed_files: ClassVar[tuple[str, ...]] = (PROGRAMS_FILE, TRAIN_PROGRAMS_FILE)
    k_setting: ClassVar[str] = "examples_k"

    def check_record(self, record: Any, where: str) -> None:
        self.check_key(record.dialogue, where, "dialogue")
        if not record.program.strip():
            raise InvalidRecordError(f"{where}: field 'program' is empty")
        self.check_value(record.program, where, "program")

    def key_text(self, record: ProgramExample) -> str:
        return dialogue_text(record.dialogue) or record.dialogue

    def query_text(self, query: Any) -> str:
        return dialogue_text(super().query_text(query)) or str(query)


def _load_packaged(name: str) -> list[ProgramExample]:
    return [ProgramExample.model_validate(obj) for _, obj in iter_jsonl_objects(seed_file(name))]


def load_seed_examples() -> list[ProgramExample]:
    """The hand-written shipped examples, without a store (for prompts and tests)."""
    return _load_packaged(PROGRAMS_FILE)


def load_train_examples() -> list[ProgramExample]:
    """The packaged train-split examples (see TRAIN_PROGRAMS_FILE), without a store."""
    return _load_packaged(TRAIN_PROGRAMS_FILE)
