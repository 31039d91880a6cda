"""An environment's named actions as a method shows them in a prompt (`envs/base.ActionVocabulary`).

How the vocabulary is shown (`vocabulary_text`). EAI's prompt lists its supported actions one per
line in a fixed order, and with the 0.5B 68 of 100 open-loop answers copied that list in that order.
The grammar already guarantees that only these actions are written, so the methods' prompts show
them as a reference, not as something shaped like an answer: grouped by how many objects they
take, alphabetically within a group, each with the environment's one-line meaning, on one line per
group, under a heading that says to use only what the goals need. This was chosen from that
failure's form alone, before any run of these methods on EAI's tasks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from helper_agent.envs.base import ActionVocabulary

_NAME = re.compile(r"^[a-z0-9_-]+$")


def by_arity(vocabulary: ActionVocabulary) -> dict[int, list[str]]:
    """The actions taking none, one and two objects, each group sorted."""
    chosen = sorted(vocabulary.actions)
    return {n: [a for a in chosen if vocabulary.actions[a] == n] for n in (0, 1, 2)}


def vocabulary_text(vocabulary: ActionVocabulary) -> str:
    """The actions, grouped by the number of objects they take (see the module docstring)."""
    groups, meaning = by_arity(vocabulary), vocabulary.meanings
    lines = ["Vocabulary (use only the actions the goals need, in the order the task needs them):"]
    for n, what in ((0, "no object"), (1, "one object"), (2, "two objects")):
        if groups[n]:
            shown = [f"{a} ({meaning[a].lower()})" if a in meaning else a for a in groups[n]]
            lines.append(f"- with {what}: " + "; ".join(shown))
    return "\n".join(lines)


def check_names(names: Sequence[str]) -> list[str]:
    """The object names, checked: each must be one token an answer can spell (`[a-z0-9_-]+`)."""
    bad = [n for n in names if not _NAME.match(n)]
    if bad:
        raise ValueError(f"object names an answer cannot spell: {', '.join(bad)}")
    return list(dict.fromkeys(names))
