"""LLM-Planner's high-level planning (HLP) accuracy, leave-one-out over a few-shot pool.

Each example of a pool in the format of LLM-Planner's `knn_set.json` is planned with the other
examples as its pool (kNN by instruction embedding, or a random draw), and its plan is compared with
its gold plan:

- `exact`: the paper's HLP accuracy: correct only when every subgoal matches, in order, none extra;
- `in_order`: the fraction of gold subgoals predicted in order (LCS / gold length), so that a small
  model's progress shows where exact match is zero;
- `in_order_precision`: the fraction of predicted subgoals that are gold ones in order (LCS /
  predicted length), and the mean predicted and gold plan lengths: recall alone rewards a plan that
  runs on past the gold one.

Figures are given overall and per task type, for goal-only instructions and goal + step-by-step
instructions. Records go to an append-only `results.jsonl` (one per example and instruction mode),
so a run resumes where it stopped; `metrics.json` is rewritten at the end.

The decoding grammar allows the pool's actions and the objects its plans and visible-object lists
name (the vocabulary comes from the data, not from a list written here).
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from helper_agent.evals.engine.store import ResultStore
from helper_agent.files import atomic_write_json, read_json_object
from helper_agent.graphs.llm_planner.plans import (
    PlanParseError,
    PlanVocabulary,
    Step,
    actions_in,
    exact_match,
    format_plan,
    in_order_precision,
    in_order_recall,
    parse_plan,
    plan_grammar,
)
from helper_agent.graphs.llm_planner.prompts import (
    MAX_PROMPT_CHARS,
    PlanQuery,
    fit_examples,
    planner_messages,
)
from helper_agent.llm import UsageRecorder, grammar_decoding, invoke_with_retry
from helper_agent.memory.fewshot import FewShotMemory, PlanExample

MODES = ("goal", "goal+step")
PAPER = {"knn": 40.59, "random": 17.48}  # LLM-Planner's HLP accuracy with text-davinci-003, k = 9


class HLPOptions(BaseModel):
    k: int = 9
    retriever: str = "knn"  # knn or random
    modes: list[str] = ["goal"]
    limit: int | None = None
    seed: int = 0
    visible: bool = False  # show the example's visible objects (they name the plan's objects: a leak)
    max_attempts: int = 2
    max_prompt_chars: int = MAX_PROMPT_CHARS


def vocabulary_of(pool: Sequence[PlanExample]) -> PlanVocabulary:
    """Actions and objects the pool's plans (and visible-object lists) use."""
    objects = {o for e in pool for _, o in e.hlp()} | {o for e in pool for o in e.visible_objects}
    return PlanVocabulary.build(actions_in(e.hlp() for e in pool), objects)


class Retriever:
    """Leave-one-out retrieval: never the example itself."""

    def __init__(self, pool: Sequence[PlanExample], memory: FewShotMemory | None, kind: str, seed: int = 0) -> None:
        if kind not in ("knn", "random"):
            raise ValueError(f"retriever must be knn or random, not {kind!r}")
        self.pool, self.memory, self.kind, self.seed = list(pool), memory, kind, seed

    def __call__(self, example: PlanExample, k: int) -> list[PlanExample]:
        if self.kind == "random":
            others = [e for e in self.pool if e.id != example.id]
            return random.Random(f"{self.seed}:{example.id}").sample(others, min(k, len(others)))
        assert self.memory is not None
        return [h.record for h in self.memory.retrieve(example.instruction, k=k, exclude_ids=[example.id])]


def query_of(example: PlanExample, mode: str, visible: bool) -> PlanQuery:
    return PlanQuery(task=example.instruction, steps=example.step_instructions if mode == "goal+step" else (),
                     visible=example.visible_objects if visible else None, plan=example.hlp())


def plan_one(chat: Any, example: PlanExample, shots: Sequence[PlanExample], vocabulary: PlanVocabulary,
             mode: str, options: HLPOptions, callbacks: list[Any]) -> dict[str, Any]:
    """Plan one example; the record of its result (parse failures count as wrong)."""
    query = query_of(example, mode, options.visible)
    examples = fit_examples(list(vocabulary.actions), [query_of(s, mode, options.visible) for s in shots], query,
                            options.max_prompt_chars)
    grammar = plan_grammar(vocabulary)
    error, answer, predicted = "", "", []
    started = time.perf_counter()
    for attempt in range(1, options.max_attempts + 1):
        decoding = grammar_decoding(chat, grammar, temperature=0.0 if attempt == 1 else 0.7, seed=options.seed + attempt - 1)
        model = chat.bind(**decoding) if decoding else chat
        messages = planner_messages(list(vocabulary.actions), examples, query, error=error, previous=answer)
        answer = str(invoke_with_retry(model, messages, config={"run_name": "hlp", "callbacks": callbacks}).content)
        try:
            predicted = parse_plan(answer, vocabulary)
            error = ""
            break
        except PlanParseError as exc:
            error = str(exc)
    gold = example.hlp()
    return {"key": f"{mode}:{example.id}", "instance_id": f"{mode}:{example.id}", "id": example.id, "mode": mode,
            "task_type": example.task_type, "examples": [s.id for s in shots[: len(examples)]], "gold": format_plan(gold),
            "predicted": format_plan(predicted), "answer": answer, "error": error,
            "exact": exact_match(predicted, gold), "in_order": round(in_order_recall(predicted, gold), 4),
            "in_order_precision": round(in_order_precision(predicted, gold), 4),
            "seconds": round(time.perf_counter() - started, 3)}


def _steps(text: str) -> list[Step]:
    """The steps of a plan as `format_plan` wrote it in a record ("Action object, ...")."""
    return [(a, o) for a, _, o in (part.strip().partition(" ") for part in text.split(",")) if a]


def _precision(record: dict[str, Any]) -> float:
    """A record's in-order precision (records written before the figure existed get it from their text)."""
    if "in_order_precision" in record:
        return float(record["in_order_precision"])
    return in_order_precision(_steps(record.get("predicted", "")), _steps(record.get("gold", "")))


def summarise(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Exact-match accuracy and in-order recall (percent), overall and per task type, per mode."""
    out: dict[str, Any] = {}
    for mode in MODES:
        rows = [r for r in records if r["mode"] == mode]
        if not rows:
            continue
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            groups[r["task_type"] or "unknown"].append(r)

        def figures(items: list[dict[str, Any]]) -> dict[str, float]:
            n = len(items)
            return {"examples": n, "HLP_accuracy": round(100 * sum(bool(r["exact"]) for r in items) / n, 2),
                    "in_order": round(100 * sum(float(r["in_order"]) for r in items) / n, 2),
                    "in_order_precision": round(100 * sum(_precision(r) for r in items) / n, 2),
                    "predicted_steps": round(sum(len(_steps(r.get("predicted", ""))) for r in items) / n, 2),
                    "gold_steps": round(sum(len(_steps(r.get("gold", ""))) for r in items) / n, 2),
                    "unparsed": sum(1 for r in items if r.get("error"))}

        out[mode] = {"overall": figures(rows), "by_task_type": {t: figures(v) for t, v in sorted(groups.items())}}
    return out


def run_hlp(pool: Sequence[PlanExample], chat: Any, out: str | Path, options: HLPOptions,
            memory: FewShotMemory | None = None,
            progress: Callable[[int, int, dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run (or resume) the leave-one-out evaluation; returns the metrics written to `<out>/metrics.json`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spec_file = out / "spec.json"
    spec = {"k": options.k, "retriever": options.retriever, "seed": options.seed, "visible": options.visible,
            "pool": [e.id for e in pool]}
    if spec_file.exists():
        previous = read_json_object(spec_file)
        for key in ("k", "retriever", "seed", "visible", "pool"):
            if previous.get(key) != spec[key]:
                raise ValueError(f"{out} holds a run with another {key}; use another --out")
    atomic_write_json(spec_file, spec)
    for mode in options.modes:
        if mode not in MODES:
            raise ValueError(f"instructions must be one of {', '.join(MODES)}, not {mode!r}")
    if options.retriever == "knn" and memory is None:
        memory = FewShotMemory(path=str(out / "memory"), collection="hlp_pool")
        memory.delete([e.id for e in memory.list() if e.id not in {p.id for p in pool}])
        memory.add(pool)
    retriever = Retriever(pool, memory, options.retriever, options.seed)
    vocabulary = vocabulary_of(pool)
    examples = list(pool)[: options.limit] if options.limit else list(pool)
    jobs = [(mode, e) for mode in options.modes for e in examples]
    store = ResultStore(out / "results.jsonl")
    done = store.done_ids()
    finished = sum(1 for mode, e in jobs if f"{mode}:{e.id}" in done)
    if progress:
        progress(finished, len(jobs), {})
    usage = UsageRecorder()
    for mode, example in jobs:
        if f"{mode}:{example.id}" in done:
            continue
        record = plan_one(chat, example, retriever(example, options.k), vocabulary, mode, options, [usage])
        store.append(record)
        finished += 1
        if progress:
            progress(finished, len(jobs), record)
    wanted = {f"{mode}:{e.id}" for mode, e in jobs}
    records = [r for key, r in store.records().items() if key in wanted]
    metrics = {"k": options.k, "retriever": options.retriever, "pool_size": len(pool), "evaluated": len(examples),
               "paper_HLP_accuracy": PAPER.get(options.retriever), **summarise(records)}
    atomic_write_json(out / "metrics.json", metrics)
    return metrics
