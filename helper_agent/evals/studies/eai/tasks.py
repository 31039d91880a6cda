"""EAI's action-sequencing task inputs, read from the installed `virtualhome-eval` package.

A task is what EAI gives a model (its prompt: relevant objects, the current state, node, edge and
action goals) plus the bookkeeping our runs need: the objects the prompt names (the only argument
names EAI's evaluator accepts) and the goal text that retrieval embeds. Gold sequences are read
separately (`gold_steps`) and only for *other* tasks' memories and for tests.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SCENE = "TrimmedTestScene1_graph"
SCRIPTS = "results_intentions_march-13-18"


class EaiUnavailable(RuntimeError):
    """The `virtualhome-eval` package is not installed."""


def package_root() -> Path:
    """The installed package's directory (raises `EaiUnavailable` with the install line)."""
    try:
        import virtualhome_eval
    except ImportError:
        raise EaiUnavailable("virtualhome-eval is not installed: pip install -e '.[virtualhome]'") from None
    return Path(virtualhome_eval.__file__).parent


def data_dir() -> Path:
    return package_root() / "dataset" / "programs_processed_precond_nograb_morepreconds"


def resource_dir() -> Path:
    return package_root() / "resources" / "virtualhome"


@dataclass(frozen=True)
class EaiTask:
    """One action-sequencing task as EAI poses it."""

    identifier: str  # EAI's file id, e.g. "27_2"
    prompt: str  # EAI's task input (the prompt every published model got)
    task_name: str  # EAI's task category ("Wash clothes"), for reports only
    objects: tuple[str, ...]  # object names the prompt lists (arguments EAI accepts), in order
    goal_text: str  # the node, edge and action goals as the prompt states them

    @property
    def arguments(self) -> tuple[str, ...]:
        """Names an action may take: the prompt's objects except the robot itself (EAI's rule 3)."""
        return tuple(o for o in self.objects if o != "character")


_OBJECT_LINE = re.compile(r"^(\S+), id: (\d+), properties: ", re.M)


def prompt_section(prompt: str, start: str, end: str) -> str:
    """The text between the last `start` heading and the next `end` heading of an EAI prompt."""
    head = prompt.rfind(start)
    if head < 0:
        return ""
    tail = prompt.find(end, head + len(start))
    return prompt[head + len(start): tail if tail >= 0 else len(prompt)].strip()


def task_from_prompt(identifier: str, prompt: str, task_name: str = "") -> EaiTask:
    """Parse the parts of EAI's prompt our agents use (objects, goals)."""
    objects_part = prompt_section(prompt, "The relevant objects in the scene are:", "The current environment state is")
    objects = tuple(dict.fromkeys(m.group(1) for m in _OBJECT_LINE.finditer(objects_part)))
    goals = prompt_section(prompt, "Node goals are:", "Please output")
    goal_text = "Node goals are:\n" + re.sub(r"\n-+\n?", "\n", goals).strip()
    return EaiTask(identifier, prompt, task_name, objects, goal_text)


@lru_cache(maxsize=1)
def load_tasks() -> tuple[EaiTask, ...]:
    """All 342 tasks in EAI's order (the order of its prompts and of the packaged LLM outputs)."""
    root = package_root()
    prompts = json.loads((root / "evaluation" / "action_sequence" / "prompts" / "helm_prompts.json").read_text())
    id2task = json.loads((resource_dir() / "id2task.json").read_text())
    return tuple(task_from_prompt(p["identifier"], p["llm_prompt"], id2task.get(p["identifier"], "")) for p in prompts)


def select_tasks(limit: int | None = None, ids: list[str] | None = None, skip: int = 0) -> list[EaiTask]:
    """`limit` tasks in EAI's order after the first `skip` (the first 100 are our evaluation rows;
    `skip=100` gives a calibration split no row has seen), or the named ones."""
    tasks = list(load_tasks())
    if ids:
        by_id = {t.identifier: t for t in tasks}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise KeyError(f"no EAI task {', '.join(missing)}")
        return [by_id[i] for i in ids]
    if skip < 0:
        raise ValueError("--skip takes a whole number >= 0")
    tasks = tasks[skip:]
    return tasks[:limit] if limit else tasks


_SCRIPT_LINE = re.compile(r"^\[(\w+)\]((?:\s*<[^>]+>\s*\([\d.]+\))*)\s*$")
_SCRIPT_ARG = re.compile(r"<([^>]+)>\s*\(([\d.]+)\)")


def gold_steps(identifier: str) -> list[tuple[str, tuple[str, ...]]]:
    """The task's recorded program (VirtualHome's gold script) as (ACTION, (object, ...)) steps.

    Never shown to the agent for its own task: examples are cross-task, from tasks 101-342 (`pool.py`).
    """
    path = data_dir() / "executable_programs" / SCENE / SCRIPTS / f"file{identifier}.txt"
    steps = []
    for line in path.read_text().splitlines():
        match = _SCRIPT_LINE.match(line.strip())
        if match:
            args = tuple(name for name, _ in _SCRIPT_ARG.findall(match.group(2)))
            steps.append((match.group(1).upper(), args))
    return steps


def gold_lines(identifier: str) -> list[str]:
    """The recorded program as simulator script lines with graph ids (`[WALK] <sink> (12)`), as EAI
    reads it (for measurements and tests; never on an agent's path)."""
    path = data_dir() / "executable_programs" / SCENE / SCRIPTS / f"file{identifier}.txt"
    lines = []
    for line in path.read_text().splitlines():
        match = _SCRIPT_LINE.match(line.strip())
        if match:
            args = [f"<{name}> ({ident.split('.')[-1]})" for name, ident in _SCRIPT_ARG.findall(match.group(2))]
            lines.append(" ".join([f"[{match.group(1).upper()}]", *args]))
    return lines
