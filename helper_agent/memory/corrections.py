"""HELPER's correction examples: key = failed subgoal + failure description (+ dialogue),
value = an explanation and a corrective program.

When a subgoal fails, the failure is diagnosed into one of a fixed set of descriptions (see
`helper_agent.perception.diagnosis`); HELPER retrieves the correction examples closest to
"<failure description> Failed subgoal: <subgoal>" and asks the LLM for a corrective program, which
may use `move_back()`, `move_closer()`, `move_alternate_viewpoint()`, `do_nothing()` (bare or on
`AgentCorrective()`) besides the action API. Seeded from
`helper_agent/prompts/examples/corrections.jsonl`.

    memory = create_memory("corrections")
    hits = memory.retrieve(correction_query("fridge.open()", "The object is blocked from opening ..."))
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from helper_agent.memory.base import MemoryRecord, iter_jsonl_objects
from helper_agent.memory.embeddings import normalize_rows
from helper_agent.memory.errors import InvalidRecordError
from helper_agent.memory.examples import dialogue_text
from helper_agent.memory.keyed import SeededMemory, seed_file

CORRECTIONS_FILE = "corrections.jsonl"

FAILURE_KINDS: dict[str, str] = {
    "already_on": "The object is already turned on.",
    "already_off": "The object is already turned off.",
    "blocked_open": "The object is blocked from opening or closing; something, maybe the agent, is in the way.",
    "blocks_interaction": "Something is blocking the interaction with the object.",
    "too_far": "The object is too far away to interact with.",
    "no_space": "There is no free space to place the object.",
    "blocked_move": "The agent is blocked from moving; an obstacle is in the way.",
}
"""HELPER's seven failure descriptions (the seed covers each, plus a few the simulator adds)."""


class CorrectionExample(MemoryRecord):
    """A failed subgoal, its failure description, and how to recover."""

    failed_subgoal: str = Field(description="The call that failed, e.g. 'fridge.open()'.")
    failure: str = Field(description="The failure description, e.g. 'The object is already turned on.'")
    failure_kind: str = Field(default="", description="Short key of the failure, e.g. 'already_on'.")
    dialogue: str = Field(default="", description="The dialogue the plan came from (optional context).")
    explanation: str = Field(default="", description="Why it failed and what to do.")
    program: str = Field(description="The corrective program.")


def correction_query(
    failed_subgoal: str, failure: str, dialogue: str = "", *, include_dialogue: bool = False
) -> str:
    """The text a correction is keyed and retrieved by."""
    text = f"{failure.strip()} Failed subgoal: {failed_subgoal.strip()}"
    if include_dialogue and dialogue.strip():
        text += f" Dialogue: {dialogue_text(dialogue)}"
    return text


_QUERY_TEXT = re.compile(
    r"^(?P<failure>.+?)\s*Failed subgoal:\s*(?P<failed_subgoal>.+?)(?:\s+Dialogue:\s*(?P<dialogue>.*))?$",
    re.DOTALL,
)
FAILURE_WEIGHT = 0.75
SUBGOAL_WEIGHT = 0.35
DIALOGUE_WEIGHT = 0.2


class CorrectionMemory(SeededMemory):
    """Correction examples (HELPER); `retrieve` takes a text, a dict or a `CorrectionExample`-like query.

    A record's vector is the normalized weighted sum of the embeddings of its failure description
    (0.75), its failed subgoal (0.35) and, with `include_dialogue=True`, its dialogue (0.2), so the
    kind of failure decides first and the subgoal breaks ties. Queries given as a dict or record
    with `failed_subgoal` and `failure`, or as `correction_query(...)` text, are embedded the same
    way; any other text is embedded as it is.
    """

    kind: ClassVar[str] = "corrections"
    record_type: ClassVar[Any] = CorrectionExample
    default_collection: ClassVar[str] = "helper_corrections"
    key_fields: ClassVar[tuple[str, ...]] = ("failed_subgoal", "failure")
    value_fields: ClassVar[tuple[str, ...]] = ("program", "explanation", "dialogue")
    filter_fields: ClassVar[tuple[str, ...]] = ("failure_kind",)
    seed_files: ClassVar[tuple[str, ...]] = (CORRECTIONS_FILE,)
    k_setting: ClassVar[str] = "corrections_k"

    def __init__(self, *, include_dialogue: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.include_dialogue = include_dialogue

    def check_record(self, record: Any, where: str) -> None:
        super().check_record(record, where)
        if not record.program.strip():
            raise InvalidRecordError(f"{where}: field 'program' is empty")

    def key_text(self, record: CorrectionExample) -> str:
        return correction_query(
            record.failed_subgoal, record.failure, record.dialogue, include_dialogue=self.include_dialogue
        )

    def _combined(self, rows: list[tuple[str, str, str]]) -> np.ndarray:
        parts = [r[0] for r in rows] + [r[1] for r in rows] + [r[2] or r[0] for r in rows]
        vectors = self._embed(parts)
        n = len(rows)
        failure, subgoal, dialogue = vectors[:n], vectors[n : 2 * n], vectors[2 * n :]
        combined = FAILURE_WEIGHT * failure + SUBGOAL_WEIGHT * subgoal
        if self.include_dialogue:
            combined = combined + DIALOGUE_WEIGHT * dialogue
        return normalize_rows(combined)

    def embed_keys(self, records: list[Any], keys: list[str]) -> Any:
        return self._combined(
            [
                (r.failure.strip(), f"Failed subgoal: {r.failed_subgoal.strip()}", dialogue_text(r.dialogue))
                for r in records
            ]
        )

    def embed_query(self, query: Any, text: str) -> Any:
        if isinstance(query, MemoryRecord):
            query = query.model_dump()
        if isinstance(query, str) and (parsed := _QUERY_TEXT.match(query.strip())):
            query = {k: v or "" for k, v in parsed.groupdict().items()}
        if isinstance(query, dict) and query.get("failure") and query.get("failed_subgoal"):
            row = (
                str(query["failure"]).strip(),
                f"Failed subgoal: {str(query['failed_subgoal']).strip()}",
                dialogue_text(str(query.get("dialogue", ""))),
            )
            return self._combined([row])
        return self._embed([text])

    def query_text(self, query: Any) -> str:
        if isinstance(query, str):
            return query
        if isinstance(query, MemoryRecord):
            query = query.model_dump()
        if isinstance(query, dict):
            return correction_query(
                str(query.get("failed_subgoal", "")),
                str(query.get("failure", "")),
                str(query.get("dialogue", "")),
                include_dialogue=self.include_dialogue,
            )
        return super().query_text(query)


def load_seed_corrections() -> list[CorrectionExample]:
    """The shipped correction examples, without a store."""
    return [
        CorrectionExample.model_validate(obj) for _, obj in iter_jsonl_objects(seed_file(CORRECTIONS_FILE))
    ]
