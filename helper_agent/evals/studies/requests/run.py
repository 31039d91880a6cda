"""Running the benchmark: each case through the episode harness, one record per case, resumable.

One request is one episode: its household is prepared (`households.prepare`), the harness lets the
agent act (`evals.engine.harness.run_episode`, under the episode's LLM budget) with the scripted person as
its feedback source, and the final household is checked against the goal and compared with the
first (`scope.changes`). A teaching case is two episodes for the same user: the teaching request in
its household, then the recall in a fresh one.

What a case scores (None where it does not apply; `metrics` turns each into a percent of the cases
it applies to):

- `first_try_success` (plain, teach): the goal was met when the person was first asked (or, when
  the agent never asked, at the end). For a teaching case: of the teaching request.
- `corrected_success` (plain, teach): the goal was met at the end, after at most two corrections.
- `false_claims` (every case): some reply said done or stored and the checker disagreed
  (`claims.py`); an impossible case has nothing that could be done, so any such claim is false.
- `unasked_changes` (every case): some object outside the allowed classes changed
  (`scope.py`; an impossible case allows none).
- `taught_replayed` (teach): the teaching reply said the routine was stored and the recall, in a
  fresh household, met the whole goal when the person was first asked.
- `impossible_refused` (impossible): the reply was a refusal that says why and nothing changed.
- `silent_failures` (every case): the agent asked whether the task was done while it was not (the
  goal unmet, or an impossible case attempted) and said nothing of what was not done with the
  question: neither what the request asked that it did not see, nor what else of the kind it left
  ("another book is not on the desk", for "the book goes on the desk" where the person meant every
  book; each round records these as `others`, so the cases warned by them alone can be counted), nor
  a step that did not finish (issue 63: "slice the mug" washed the mug and every subgoal read done).
- `false_refusals` (plain, teach): the reply to a request that could be done refused it.

Beside them, what a person waits for (issue 64; `timing`): the median and 90th percentile of the
seconds from a plain or teach request until it was done as asked (the person's first satisfied
answer, correction rounds included; a case never done counts `TIME_BUDGET_SECONDS`), and the LLM
seconds per request.

Records go to `<out>/results.jsonl` (the engine's `ResultStore`: a case whose record is there is not
run again; an errored one is), `metrics.json` holds the eight figures and the three waiting ones, `report.md` the table.
"""

from __future__ import annotations

import math
import statistics
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.engine.harness import run_episode
from helper_agent.evals.engine.provenance import code_version
from helper_agent.evals.engine.runfiles import read_spec, write_spec
from helper_agent.evals.engine.store import ResultStore, errored
from helper_agent.evals.studies.requests.cases import Household, RequestCase, RequestSuite
from helper_agent.evals.studies.requests.claims import is_false_claim, read_claim
from helper_agent.evals.studies.requests.households import prepare
from helper_agent.evals.studies.requests.person import ScriptedPerson
from helper_agent.evals.studies.requests.scope import allowed_classes, changes, household_state, unasked
from helper_agent.files import atomic_write_json, atomic_write_text
from helper_agent.graphs.base import Agent, EpisodeSetup
from helper_agent.memory.errors import StoreUnavailableError
from helper_agent.teach import Task

METRICS = ("first_try_success", "corrected_success", "false_claims", "unasked_changes", "taught_replayed",
           "impossible_refused", "silent_failures", "false_refusals")
"""The keys of `metrics.json`, in the order of the report."""

LABELS = {
    "first_try_success": "first-try success",
    "corrected_success": "success after corrections",
    "false_claims": "false claims",
    "unasked_changes": "requests with unasked changes",
    "taught_replayed": "taught routines replayed",
    "impossible_refused": "impossible requests refused",
    "silent_failures": "requests not done and not said so",
    "false_refusals": "doable requests refused",
}
APPLIES = {"first_try_success": "plain and teach cases", "corrected_success": "plain and teach cases",
           "false_claims": "every case", "unasked_changes": "every case", "taught_replayed": "teach cases",
           "impossible_refused": "impossible cases", "silent_failures": "every case",
           "false_refusals": "plain and teach cases"}


def run_request(case: RequestCase, agent: Agent, household: Household, text: str, part: str) -> dict[str, Any]:
    """One request of a case in its household, through the harness; what it said and changed."""
    goal: list[Task] = [g.instantiate() for g in case.goal]
    env = SymbolicEnv()
    env.reset(prepare(household, goal))
    before = household_state(env.objects_metadata())
    person = ScriptedPerson(env, goal, why=case.why if case.kind == "impossible" else None)
    setup = EpisodeSetup(env=env, request=text, instance_id=f"{case.id}:{part}", user=case.user, feedback=person.answer,
                         tags=["requests", case.kind], metadata={"case": case.id, "kind": case.kind, "part": part})
    started = person.started = time.perf_counter()
    result = run_episode(agent, setup)
    changed = changes(before, household_state(env.objects_metadata()))
    outside = unasked(changed, allowed_classes(case.may_change, goal), before)
    final = person.check() if goal else None
    first = person.rounds[0] if person.rounds else None
    claim = read_claim(result.reply)
    return {
        "part": part, "request": text, "household": household.model_dump(),
        "reply": result.reply, "claim": claim, "outcome": result.outcome,
        "first_try": (bool(first["satisfied"]) if first else bool(final and final.satisfied)) if goal else None,
        "success": final.satisfied if final else None,
        "unmet": final.unmet if final else [],
        "goal_conditions": list(final.goal_conditions) if final else [0, 0],
        "false_claim": is_false_claim(claim, bool(final and final.satisfied)),
        "silent": any(not r["satisfied"] and not r.get("warned") for r in person.rounds),
        "rounds": person.rounds, "confirmations": person.confirmations,
        "changes": [c.model_dump() for c in changed],
        "unasked": [c.model_dump() for c in outside],
        "steps": env.steps, "failures": env.failures,
        "program": result.program, "log": result.log, "trace": result.trace,
        "llm_calls": int(result.usage.get("llm_calls", 0)), "llm_seconds": float(result.usage.get("llm_seconds", 0.0)),
        "seconds": round(time.perf_counter() - started, 3),
        "done_after": _done_after(person.rounds, bool(final and final.satisfied), time.perf_counter() - started),
        "error": result.error if result.outcome != "llm_budget" else None,  # out of LLM time is a result
    }


def _done_after(rounds: Sequence[dict[str, Any]], met: bool, seconds: float) -> float | None:
    """Seconds from the request until it was done as asked: when the person, first asked with the
    goal met, was asked (correction rounds included); the whole request's time when the goal is met
    and nobody was asked then; None when it was never done."""
    for round_ in rounds:
        if round_.get("satisfied"):
            return float(round_["at"])
    return round(seconds, 3) if met else None


def score_case(case: RequestCase, parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A case's figures from its requests' records (see the module docstring)."""
    main = parts[0]
    figures: dict[str, Any] = {key: None for key in METRICS}
    figures["false_claims"] = any(p["false_claim"] for p in parts)
    figures["unasked_changes"] = any(p["unasked"] for p in parts)
    figures["silent_failures"] = any(p.get("silent", False) for p in parts)
    if case.kind == "impossible":
        figures["impossible_refused"] = main["claim"] == "refused" and not main["changes"]
    else:
        figures["first_try_success"] = bool(main["first_try"])
        figures["corrected_success"] = bool(main["success"])
        figures["false_refusals"] = main["claim"] == "refused"
        figures["done_after"] = main.get("done_after")
    if case.kind == "teach":
        recall = parts[1] if len(parts) > 1 else None
        figures["taught_replayed"] = main["claim"] == "stored" and bool(recall and recall["first_try"])
    return figures


def run_case(case: RequestCase, agent: Agent) -> dict[str, Any]:
    """Run one case to its record; an exception becomes an error record (retried on resume)."""
    started = time.perf_counter()
    record: dict[str, Any] = {"instance_id": case.id, "kind": case.kind, "family": case.family, "request": case.request}
    try:
        parts = [run_request(case, agent, case.household, case.request, "request")]
        if case.kind == "teach":
            assert case.recall is not None and case.recall_household is not None
            parts.append(run_request(case, agent, case.recall_household, case.recall, "recall"))
        record.update(score_case(case, parts))
        record["requests"] = parts
        errors = [p["error"] for p in parts if p.get("error")]
        if errors:
            record["error"] = "; ".join(errors)
    except StoreUnavailableError:
        raise  # the memory store is down: every case would fail the same way
    except Exception as exc:  # noqa: BLE001 - one case's error must not stop the run
        record.update({"ended_by": "error", "error": f"{type(exc).__name__}: {exc}",
                       "traceback": traceback.format_exc(limit=6)})
    record["seconds"] = round(time.perf_counter() - started, 3)
    record["llm_calls"] = sum(p.get("llm_calls", 0) for p in record.get("requests", []))
    return record


# ------------------------------------------------------------------------------------------ figures
def metrics(records: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """The eight figures: percent of the (not errored) cases each applies to; None where none does."""
    scored = [r for r in records if not errored(r)]
    out: dict[str, float | None] = {}
    for key in METRICS:
        values = [bool(r[key]) for r in scored if r.get(key) is not None]
        out[key] = round(100 * sum(values) / len(values), 2) if values else None
    return out


TIME_BUDGET_SECONDS = 600.0
"""What a case never done as asked counts in the waiting figures: ten minutes, longer than any
request of either packaged suite has taken with the local models (a person has given up by then)."""

TIMING = ("median_seconds_to_done", "p90_seconds_to_done", "llm_seconds_per_request")
"""The waiting figures of `metrics.json`, beside the eight (issue 64: what a person waits for)."""


def timing(records: Sequence[dict[str, Any]], budget: float = TIME_BUDGET_SECONDS) -> dict[str, float | None]:
    """Over the plain and teach cases (their first request): the median and 90th percentile of the
    seconds from the request until it was done as asked, correction rounds included, a case never
    done counting as `budget`; and the LLM seconds per request over every request of every case."""
    scored = [r for r in records if not errored(r)]
    waits = sorted(min(float(r["done_after"]), budget) if r.get("done_after") is not None else budget
                   for r in scored if r.get("corrected_success") is not None)
    requests = [p for r in scored for p in r.get("requests") or []]

    def percentile(share: float) -> float | None:
        if not waits:
            return None
        return round(waits[min(len(waits) - 1, max(0, math.ceil(share * len(waits)) - 1))], 2)

    llm = sum(float(p.get("llm_seconds", 0.0)) for p in requests)
    return {"median_seconds_to_done": round(statistics.median(waits), 2) if waits else None,
            "p90_seconds_to_done": percentile(0.9),
            "llm_seconds_per_request": round(llm / len(requests), 2) if requests else None}


def counts(records: Sequence[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """(cases where it holds, cases it applies to) per figure."""
    scored = [r for r in records if not errored(r)]
    return {key: (sum(bool(r[key]) for r in scored if r.get(key) is not None),
                  sum(1 for r in scored if r.get(key) is not None)) for key in METRICS}


def _yes(value: Any) -> str:
    return "-" if value is None else ("yes" if value else "no")


def report(records: Sequence[dict[str, Any]], suite: RequestSuite, llm: str) -> str:
    """`report.md`: the eight figures, then one row per case."""
    figures, numbers = metrics(records), counts(records)
    failed = [r for r in records if errored(r)]
    lines = [f"# Everyday requests: {suite.name} suite, `--llm {llm}`", "",
             f"{len(records) - len(failed)} cases scored" + (f", {len(failed)} errored (rerun the command to retry them)" if failed else "")
             + f"; suite file `{Path(suite.source).name}`.", "",
             "| figure | % | cases | applies to |", "|---|---:|---:|---|"]
    for key in METRICS:
        value = figures[key]
        held, total = numbers[key]
        lines.append(f"| {LABELS[key]} (`{key}`) | {'-' if value is None else f'{value:.1f}'} | {held}/{total} | {APPLIES[key]} |")
    waits = timing(records)
    lines += ["", "| waiting | seconds |", "|---|---:|"] + [
        f"| {key.replace('_', ' ')} (`{key}`) | {'-' if waits[key] is None else f'{waits[key]:.1f}'} |" for key in TIMING]
    lines += ["", f"A case never done as asked counts {TIME_BUDGET_SECONDS:.0f} s in the waiting figures."]
    lines += ["", "## Cases", "", "| case | kind | family | first try | corrected | reply's claim | false claim | unasked changes | replayed / refused |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if errored(r):
            lines.append(f"| {r['instance_id']} | {r.get('kind', '')} | {r.get('family', '')} | error: {str(r.get('error', ''))[:80]} | | | | | |")
            continue
        parts = r.get("requests") or []
        claims = " / ".join(p["claim"] for p in parts)
        extra = sorted({c["object_type"] for p in parts for c in p["unasked"]})
        last = r["taught_replayed"] if r["kind"] == "teach" else r["impossible_refused"]
        lines.append(f"| {r['instance_id']} | {r['kind']} | {r['family']} | {_yes(r['first_try_success'])} | "
                     f"{_yes(r['corrected_success'])} | {claims} | {_yes(r['false_claims'])} | {', '.join(extra) or '-'} | {_yes(last)} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ a run
Progress = Callable[[int, int, dict[str, Any]], None]


def run_suite(suite: RequestSuite, agent: Agent, out: str | Path, *, llm: str, limit: int | None = None,
              progress: Progress | None = None) -> dict[str, float | None]:
    """Run (or resume) the suite's first `limit` cases; returns the figures written to `metrics.json`.

    A folder holds one run: resuming with another suite or model is refused (use another `--out`)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spec = {"mode": "requests", "split": suite.name, "planner": agent.name, "llm": llm,
            "suite_source": str(suite.source)}
    previous = read_spec(out / "spec.json")
    if previous is not None:
        for key in ("mode", "split", "planner", "llm"):
            if previous.get(key) != spec[key]:
                raise ValueError(f"{out} holds a run with {key}={previous.get(key)!r}; use another --out for "
                                 f"{key}={spec[key]!r}")
    write_spec(out / "spec.json", spec)
    cases = list(suite.cases)[:limit] if limit else list(suite.cases)
    store = ResultStore(out / "results.jsonl")
    done = store.done_ids()
    finished = sum(1 for c in cases if c.id in done)
    if progress:
        progress(finished, len(cases), {})
    for case in cases:
        if case.id in done:
            continue
        record = {**run_case(case, agent), "suite": suite.name, "code": code_version()}
        store.append(record)
        finished += 1
        if progress:
            progress(finished, len(cases), record)
    latest = store.records()
    records = [latest[c.id] for c in cases if c.id in latest]
    figures = {**metrics(records), **timing(records)}
    atomic_write_json(out / "metrics.json", figures)
    atomic_write_text(out / "report.md", report(records, suite, llm))
    return figures
