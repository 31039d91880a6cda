"""The prompt examples of one request: retrieved by similarity (HELPER's memory-augmented prompt) or,
in HELPER's `mem` ablation, the same fixed examples for every request.

Why a module of its own: `retrieve` picks them for the request as said, and `clarify` again for the
request as the person confirmed it ("switch the gogglebox on" read as "switch the television on"),
so that the examples are about what will be planned.
"""

from __future__ import annotations

from typing import Any

from helper_agent.graphs.helper.context import HelperContext

__all__ = ["examples_for"]


def examples_for(ctx: HelperContext, request: str) -> list[dict[str, Any]]:
    """The k examples for `request`, each as the prompt and the log use it (id, dialogue, program,
    similarity score or None)."""
    memory = ctx.example_memory()
    if ctx.config.memory_augmented:
        hits = memory.retrieve(request, k=ctx.config.k)
        return [{"id": h.id, "dialogue": h.record.dialogue, "program": h.record.program, "score": round(h.score, 3)}
                for h in hits]
    # HELPER's ablation: the same fixed examples for every request, one per task family (families in
    # name order) so that the fixed prompt is as varied as k allows.
    firsts: dict[str, Any] = {}
    for record in sorted(memory.seed_records(), key=lambda r: (r.task_family, r.id)):
        firsts.setdefault(record.task_family, record)
    fixed = list(firsts.values())[: ctx.config.k]
    return [{"id": r.id, "dialogue": r.dialogue, "program": r.program, "score": None} for r in fixed]
