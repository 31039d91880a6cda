"""ORACLE answers for checking the EAI adapters end to end: what a model that knew a task's gold
sequence would answer, in each method's own form.

Only for tests and `benchmarks/eai_methods_bench.py`, which label every figure from it ORACLE: it
checks that each adapter's prompts, grammars, parsers, acting and scoring carry a right answer to
EAI's evaluator intact. No agent reads it.
"""

from __future__ import annotations

from collections.abc import Sequence

from helper_agent.evals.studies.eai.tasks import EaiTask, gold_steps
from helper_agent.graphs.llm_planner.named.plans import plan_text
from helper_agent.graphs.named_actions import step_text


def gold_replies(agent: str, tasks: Sequence[EaiTask], *, graph: str = "subgraph") -> list[str]:
    """The answers, in call order, for `agent` on `tasks` (one after the other)."""
    out: list[str] = []
    for task in tasks:
        gold = gold_steps(task.identifier)
        if agent == "llm-planner":
            out.append(plan_text(gold))
        elif agent == "prag":
            out += [f"Action: {step_text(s)}" for s in gold] + ["Action: done()"]
        elif agent == "embodiedrag":
            if graph == "subgraph":  # the self-query: the objects the gold sequence acts on
                out.append("\n".join(f"- {a.replace('_', ' ')}" for a in sorted({a for s in gold for a in s[1]})))
            out += [f"Thought: next step\nAction: {step_text(s)}" for s in gold] + ["Thought: all done\nAction: done()"]
        else:
            raise ValueError(f"no oracle answers for {agent!r}")
    return out
