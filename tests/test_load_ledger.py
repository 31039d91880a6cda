"""benchmarks/load_ledger.py: the load benchmark's data check finds each kind of damage it reports
(lost, duplicated, leaked, out of order, half-written) and nothing in clean data. No server: the
stored routines are given."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from scripts import load_script

ledger_mod = load_script("benchmarks/load_ledger.py")
Ledger, Write, check_routines, check_threads = (ledger_mod.Ledger, ledger_mod.Write, ledger_mod.check_routines,
                                                ledger_mod.check_threads)


@dataclass
class Stored:
    """What the check reads of a stored routine version."""

    user: str
    name: str
    program: str
    request: str
    version: int
    created_at: str


def v(name: str, program: str, user: str = "ann") -> tuple[str, str, str]:
    return (name, program, f"{user}: {name}")


def stored(user: str, rows: list[tuple[tuple[str, str, str], int]], owner: str | None = None) -> list[Stored]:
    return [Stored(owner or user, key, program, request, number, f"2026-01-01T00:00:{i:02d}")
            for i, ((key, program, request), number) in enumerate(rows)]


def ann() -> Ledger:
    ledger = Ledger("ann")
    ledger.writes.append(Write(versions=(v("tidy", "A1"), v("wash", "W1")), acknowledged=True))
    ledger.writes.append(Write(versions=(v("tidy", "A2"),), acknowledged=True))
    return ledger


def test_clean_data_has_no_finding() -> None:
    verdict = check_routines([ann()], {"ann": stored("ann", [(v("tidy", "A1"), 1), (v("tidy", "A2"), 2),
                                                             (v("wash", "W1"), 1)])})
    assert verdict.clean(), verdict.lines()


def test_a_missing_acknowledged_version_is_lost() -> None:
    verdict = check_routines([ann()], {"ann": stored("ann", [(v("tidy", "A1"), 1), (v("wash", "W1"), 1)])})
    assert verdict.counts()["lost"] == 1 and "tidy" in verdict.lost[0]


def test_the_same_content_twice_is_duplicated() -> None:
    rows = [(v("tidy", "A1"), 1), (v("tidy", "A2"), 2), (v("tidy", "A2"), 3), (v("wash", "W1"), 1)]
    assert check_routines([ann()], {"ann": stored("ann", rows)}).counts()["duplicated"] == 1


def test_another_persons_routine_in_a_list_is_leaked() -> None:
    bob = Ledger("bob", [Write(versions=(v("walk", "B1", "bob"),), acknowledged=True)])
    rows = [(v("tidy", "A1"), 1), (v("tidy", "A2"), 2), (v("wash", "W1"), 1), (v("walk", "B1", "bob"), 1)]
    verdict = check_routines([ann(), bob], {"ann": stored("ann", rows), "bob": stored("bob", [(v("walk", "B1", "bob"), 1)])})
    assert verdict.counts()["leaked"] == 1 and "bob" in verdict.leaked[0]
    # a record whose owner field names somebody else is a leak too
    filed = stored("ann", [(v("tidy", "A1"), 1), (v("tidy", "A2"), 2), (v("wash", "W1"), 1)])
    filed[2].user = "bob"
    assert check_routines([ann()], {"ann": filed}).counts()["leaked"] == 1


def test_versions_numbered_out_of_order_or_in_the_wrong_order_are_reported() -> None:
    gap = check_routines([ann()], {"ann": stored("ann", [(v("tidy", "A1"), 1), (v("tidy", "A2"), 3),
                                                         (v("wash", "W1"), 1)])})
    assert gap.counts()["out_of_order"] == 1
    swapped = check_routines([ann()], {"ann": stored("ann", [(v("tidy", "A2"), 1), (v("tidy", "A1"), 2),
                                                             (v("wash", "W1"), 1)])})
    assert swapped.counts()["out_of_order"] >= 1


def test_an_import_in_flight_may_be_whole_or_absent_but_not_in_part() -> None:
    ledger = ann()
    ledger.writes.append(Write(versions=(v("cook", "C1"), v("nap", "N1"))))  # no answer came
    base = [(v("tidy", "A1"), 1), (v("tidy", "A2"), 2), (v("wash", "W1"), 1)]
    assert check_routines([ledger], {"ann": stored("ann", base)}).clean()
    assert check_routines([ledger], {"ann": stored("ann", [*base, (v("cook", "C1"), 1), (v("nap", "N1"), 1)])}).clean()
    part = check_routines([ledger], {"ann": stored("ann", [*base, (v("cook", "C1"), 1)])})
    assert part.counts()["half_written"] == 1


def test_deletions_acknowledged_must_stick_and_in_flight_ones_are_all_or_nothing() -> None:
    ledger = ann()
    ledger.writes.append(Write(deleted="tidy", acknowledged=True))
    assert check_routines([ledger], {"ann": stored("ann", [(v("wash", "W1"), 1)])}).clean()
    kept = check_routines([ledger], {"ann": stored("ann", [(v("tidy", "A1"), 1), (v("wash", "W1"), 1)])})
    assert kept.counts()["lost"] >= 1
    flying = ann()
    flying.writes.append(Write(deleted="tidy"))
    assert check_routines([flying], {"ann": stored("ann", [(v("wash", "W1"), 1)])}).clean()
    half = check_routines([flying], {"ann": stored("ann", [(v("tidy", "A1"), 1), (v("wash", "W1"), 1)])})
    assert half.counts()["half_written"] == 1


def test_a_taught_routine_is_the_persons_own_and_must_be_there_once_acknowledged() -> None:
    ledger = ann()
    ledger.taught.append("coffee")
    rows = [(v("tidy", "A1"), 1), (v("tidy", "A2"), 2), (v("wash", "W1"), 1)]
    assert check_routines([ledger], {"ann": stored("ann", [*rows, (("coffee", "model's", "Perform"), 1)])}).clean()
    assert check_routines([ledger], {"ann": stored("ann", rows)}).counts()["lost"] == 1
    stranger = check_routines([ann()], {"ann": stored("ann", [*rows, (("coffee", "x", "y"), 1)])})
    assert stranger.counts()["leaked"] == 1  # a version nobody sent


@pytest.mark.parametrize(("seen", "kind"), [
    ([("ann", "one"), ("ann", "two")], None),
    ([("ann", "one")], "lost"),
    ([("ann", "two"), ("ann", "one")], "out_of_order"),
    ([("ann", "one"), ("bob", "two"), ("ann", "two")], "leaked"),
    ([("ann", "one"), ("ann", "two"), ("ann", "three")], "leaked"),
])
def test_threads_hold_the_persons_acknowledged_requests_in_order_and_nobody_elses(seen, kind) -> None:
    ledger = Ledger("ann", requests=["one", "two"])
    verdict = ledger_mod.Verdict()
    check_threads([ledger], {"ann": seen}, verdict)
    counts = verdict.counts()
    assert (sum(counts.values()) == 0) if kind is None else counts[kind] >= 1, verdict.lines()


def test_a_version_stored_for_somebody_who_did_nothing_is_leaked() -> None:
    rows = [(v("tidy", "A1"), 1), (v("tidy", "A2"), 2), (v("wash", "W1"), 1)]
    verdict = check_routines([ann()], {"ann": stored("ann", rows), "zed": stored("zed", [(v("tidy", "A1"), 1)])})
    assert verdict.counts()["leaked"] == 1 and "zed" in verdict.leaked[0]
