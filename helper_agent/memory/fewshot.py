"""LLM-Planner's few-shot pool: (instruction, high-level plan, visible objects) examples, kNN k = 9.

LLM-Planner retrieves the k = 9 training examples whose goal instruction is closest to the current
one and shows their high-level plans — sequences of (action, object) subgoals such as
"Navigation fridge, OpenObject fridge, PickupObject apple" — as in-context examples.

`load_knn_set(path)` reads LLM-Planner's `knn_set.json` (a JSON list of objects with `task`,
`task_instr`, `step_instr`, `gold_traj` — one list of subgoal strings such as
"('PutObject','Knife', 'DiningTable')" per step instruction — and `vis_objs`). The file is
user-provided; nothing of it ships with this package. Subgoal strings are parsed with a regular
expression, never evaluated.

    memory = create_memory("fewshot")
    memory.add(load_knn_set("knn_set.json"))
    for hit in memory.retrieve("Put a cold apple slice on the table"):
        print(hit.record.format_plan())
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from helper_agent.memory.base import MemoryRecord
from helper_agent.memory.errors import ImportFormatError, InvalidRecordError
from helper_agent.memory.keyed import KeyedMemory

_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


class PlanExample(MemoryRecord):
    """One LLM-Planner example. `plan` holds subgoals as [action, object(, receptacle)] lists."""

    instruction: str = Field(description="The goal instruction (the key).")
    plan: list[list[str]] = Field(description="High-level plan: [action, object, (receptacle)] per subgoal.")
    step_instructions: list[str] = Field(default_factory=list)
    visible_objects: list[str] = Field(default_factory=list)
    task_type: str = Field(default="", description="e.g. pick_clean_then_place_in_recep")

    def hlp(self) -> list[tuple[str, str]]:
        """The plan as LLM-Planner's (action, object) pairs; PutObject names its receptacle."""
        pairs = []
        for step in self.plan:
            action = step[0]
            target = step[-1] if len(step) > 1 else ""
            pairs.append((action, target))
        return pairs

    def format_plan(self, lowercase: bool = True) -> str:
        """ "Navigation fridge, OpenObject fridge, ..." as in LLM-Planner's prompts."""
        return ", ".join(f"{a} {o.lower() if lowercase else o}".strip() for a, o in self.hlp())


def parse_subgoal(text: str) -> list[str]:
    """ "('PutObject','Knife', 'DiningTable')" → ["PutObject", "Knife", "DiningTable"] (no eval)."""
    parts = [a if a else b for a, b in _QUOTED.findall(text)]
    if not parts:
        raise ValueError(f"not a subgoal: {text!r}")
    return parts


def load_knn_set(path: str | Path) -> list[PlanExample]:
    """Read LLM-Planner's knn_set.json; errors name the file and the entry."""
    path = Path(path).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if not isinstance(data, list):
        raise ImportFormatError(f"{path}: expected a JSON list of examples")
    out: list[PlanExample] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(data):
        where = f"{path}: entry {index}"
        if not isinstance(item, dict):
            raise ImportFormatError(f"{where}: expected an object")
        for key in ("task_instr", "gold_traj"):
            if key not in item:
                raise ImportFormatError(f"{where}: missing field {key!r}")
        plan: list[list[str]] = []
        try:
            for group in item["gold_traj"]:
                for sub in group if isinstance(group, list) else [group]:
                    plan.append(parse_subgoal(str(sub)))
        except (TypeError, ValueError) as exc:
            raise ImportFormatError(f"{where}: field 'gold_traj': {exc}") from None
        task = str(item.get("task") or f"knn-{index}")
        rid = task if task not in seen else f"{task}#{index}"
        seen[task] = index
        out.append(
            PlanExample(
                id=rid,
                instruction=str(item["task_instr"]).strip(),
                plan=plan,
                step_instructions=[str(s).strip() for s in item.get("step_instr") or []],
                visible_objects=[str(o) for o in item.get("vis_objs") or []],
                task_type=task.split("-", 1)[0] if "-" in task else "",
            )
        )
    return out


class FewShotMemory(KeyedMemory):
    """LLM-Planner's kNN example pool; `retrieve(instruction, k=9, exclude_ids=...)`."""

    kind: ClassVar[str] = "fewshot"
    record_type: ClassVar[Any] = PlanExample
    default_collection: ClassVar[str] = "helper_fewshot"
    key_fields: ClassVar[tuple[str, ...]] = ("instruction",)
    value_fields: ClassVar[tuple[str, ...]] = ("plan", "step_instructions", "visible_objects")
    filter_fields: ClassVar[tuple[str, ...]] = ("task_type",)
    k_setting: ClassVar[str] = "fewshot_k"

    def check_record(self, record: Any, where: str) -> None:
        super().check_record(record, where)
        if not record.plan:
            raise InvalidRecordError(f"{where}: field 'plan' is empty")
        for i, step in enumerate(record.plan):
            if not step or not all(isinstance(s, str) and s.strip() for s in step):
                raise InvalidRecordError(
                    f"{where}: field 'plan.{i}' must be [action, object, ...] non-empty texts"
                )

    def key_text(self, record: PlanExample) -> str:
        return record.instruction

    def load_knn_set(self, path: str | Path) -> int:
        """Add every example of an LLM-Planner knn_set.json; returns how many."""
        return len(self.add(load_knn_set(path)))
