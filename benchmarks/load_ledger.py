"""What each simulated person did, and the check of the stored data against it.

A `Ledger` is one person's account of their routine writes, kept by the load benchmark as the server
acknowledges them: a version the server said it stored is *acknowledged*; a write whose answer never
came (the server was killed) is *in flight*. After a round the routines memory is read back (with the
server stopped, from its folder) and compared:

- **lost**: an acknowledged version that is not stored, or a deletion acknowledged whose versions are
  still there;
- **duplicated**: one version (name, program, request) stored twice for one person;
- **leaked**: a version in one person's routines that another person wrote, or one stored under
  another person's collection (`Routine.user` differs from the owner);
- **out of order**: a routine whose versions are not numbered 1..n, or whose programs are not in the
  order they were acknowledged, or whose timestamps go back as versions go up;
- **half-written**: an in-flight import of which some versions are stored and others not (each
  import the benchmark sends is one commit batch, so it is all or nothing), or an in-flight deletion
  that left part of a routine.

The same person's conversation thread is checked too: the requests its checkpoints hold are the
person's acknowledged requests, in order, and nobody else's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

Version = tuple[str, str, str]
"""(name key, program, request): what identifies one stored version's content."""


def name_key(name: str) -> str:
    return " ".join(name.casefold().split())


@dataclass
class Write:
    """One write a person sent: an import of `versions` (from the file `source`), or a deletion of
    `deleted` (a name key)."""

    versions: tuple[Version, ...] = ()
    deleted: str | None = None
    acknowledged: bool = False
    source: str | None = None  # the file an import sent, which a resumed import sends again


@dataclass
class Ledger:
    """One person's writes in the order they were sent, and the requests their chat acknowledged."""

    user: str
    writes: list[Write] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    requests_in_flight: list[str] = field(default_factory=list)
    taught: list[str] = field(default_factory=list)
    """Name keys of routines taught through the LLM that the reply said were stored (the program
    is the model's, so any content under that name is the person's own)."""
    teaching: list[str] = field(default_factory=list)
    """Name keys of routines being taught when the answer stopped coming (may be stored or not)."""

    def names(self) -> set[str]:
        """Every routine name this person wrote or tried to."""
        return {v[0] for w in self.writes for v in w.versions} | set(self.taught) | set(self.teaching)

    def expected(self) -> dict[str, list[Version]]:
        """Each routine's versions as the acknowledged writes leave them, oldest first. A version
        re-imported with the same content is not a new version (the memory skips it)."""
        routines: dict[str, list[Version]] = {}
        for write in self.writes:
            if not write.acknowledged:
                continue
            if write.deleted is not None:
                routines.pop(write.deleted, None)
            for version in write.versions:
                if version not in routines.setdefault(version[0], []):
                    routines[version[0]].append(version)
        return routines

    def in_flight(self) -> list[Write]:
        return [w for w in self.writes if not w.acknowledged]


@dataclass
class Verdict:
    """The counts of one check; every list holds one line per finding."""

    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)
    out_of_order: list[str] = field(default_factory=list)
    half_written: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"lost": len(self.lost), "duplicated": len(self.duplicated), "leaked": len(self.leaked),
                "out_of_order": len(self.out_of_order), "half_written": len(self.half_written)}

    def clean(self) -> bool:
        return not any(self.counts().values())

    def lines(self) -> list[str]:
        return [f"{kind}: {line}" for kind, found in vars(self).items() for line in found]


def check_routines(ledgers: list[Ledger], stored: dict[str, list[Any]]) -> Verdict:
    """Compare what each person's ledger expects with `stored`: person -> their stored `Routine`s (as
    the memory lists them for that person). Writes still in flight may be present in full or absent."""
    verdict = Verdict()
    people = {ledger.user for ledger in ledgers}
    for user, records in stored.items():
        if user not in people:
            verdict.leaked += [f"a version stored for {user!r}, who did nothing: {r.name!r}" for r in records]
    owners: dict[str, str] = {}
    for ledger in ledgers:
        for key in ledger.names():
            owners.setdefault(key, ledger.user)
    for ledger in ledgers:
        records = stored.get(ledger.user, [])
        have = [(name_key(r.name), r.program, r.request) for r in records]
        counted = Counter(have)
        for version, n in counted.items():
            if n > 1:
                verdict.duplicated.append(f"{ledger.user}: {version[0]!r} stored {n} times with the same content")
        for record, version in zip(records, have, strict=True):
            if record.user != ledger.user:
                verdict.leaked.append(f"{ledger.user}'s list holds a version of user {record.user!r}: {version[0]!r}")
            elif owners.get(version[0], ledger.user) != ledger.user:
                verdict.leaked.append(f"{ledger.user}'s list holds {owners[version[0]]}'s {version[0]!r}")
        expected = ledger.expected()
        for key in ledger.taught:
            if not any(v[0] == key for v in have):
                verdict.lost.append(f"{ledger.user}: the routine {key!r} the reply said was stored is not")
        deleting = {w.deleted for w in ledger.in_flight() if w.deleted is not None}
        for key, versions in expected.items():
            if key in deleting and not any(v[0] == key for v in have):
                continue  # a deletion in flight that went through: whole, so not lost
            for version in versions:
                if version not in counted:
                    verdict.lost.append(f"{ledger.user}: acknowledged version of {key!r} is not stored")
        for write in ledger.writes:
            if write.acknowledged and write.deleted is not None and write.deleted not in expected \
                    and any(v[0] == write.deleted for v in have) \
                    and not _rewritten_later(ledger, write):
                verdict.lost.append(f"{ledger.user}: acknowledged deletion of {write.deleted!r} did not stick")
        for write in ledger.in_flight():
            if write.versions:
                present = [v for v in write.versions if v in counted]
                if present and len(present) != len(write.versions):
                    verdict.half_written.append(f"{ledger.user}: an unacknowledged import is stored in part "
                                                f"({len(present)} of {len(write.versions)} versions)")
            elif write.deleted is not None:
                before = expected.get(write.deleted, [])
                present = [v for v in have if v[0] == write.deleted]
                if before and 0 < len(present) < len(before):
                    verdict.half_written.append(f"{ledger.user}: an unacknowledged deletion of {write.deleted!r} "
                                                f"left {len(present)} of {len(before)} versions")
        allowed = {v for w in ledger.writes for v in w.versions}
        own_names = set(ledger.taught) | set(ledger.teaching)
        for version in counted:
            if version not in allowed and version[0] not in own_names and owners.get(version[0]) in (None, ledger.user):
                verdict.leaked.append(f"{ledger.user}: a version nobody sent: {version[0]!r}")
        by_name: dict[str, list[Any]] = {}
        for record in records:
            by_name.setdefault(name_key(record.name), []).append(record)
        for key, rows in by_name.items():
            rows = sorted(rows, key=lambda r: r.version)
            numbers = [r.version for r in rows]
            if numbers != list(range(1, len(rows) + 1)):
                verdict.out_of_order.append(f"{ledger.user}: {key!r} has versions {numbers}")
            stamps = [r.created_at for r in rows]
            if stamps != sorted(stamps):
                verdict.out_of_order.append(f"{ledger.user}: {key!r}'s timestamps go back as versions go up")
            order = [(key, r.program, r.request) for r in rows]
            wanted = [v for v in expected.get(key, []) if v in order]
            if [v for v in order if v in wanted] != wanted:
                verdict.out_of_order.append(f"{ledger.user}: {key!r}'s versions are not in the order acknowledged")
    return verdict


def _rewritten_later(ledger: Ledger, deletion: Write) -> bool:
    """Whether a write after `deletion` (acknowledged or in flight) may have stored the name again."""
    after = ledger.writes[ledger.writes.index(deletion) + 1:]
    return any(v[0] == deletion.deleted for w in after for v in w.versions)


def check_threads(ledgers: list[Ledger], threads: dict[str, list[tuple[str, str]]], verdict: Verdict) -> None:
    """`threads`: person -> (user the checkpoint names, request) for every request their threads'
    checkpoints started, oldest first. Acknowledged requests must all be there, in order; a request
    in flight may be there or not; nothing of anyone else's."""
    for ledger in ledgers:
        seen = threads.get(ledger.user, [])
        for owner, request in seen:
            if owner != ledger.user:
                verdict.leaked.append(f"{ledger.user}'s thread holds a request of {owner!r}: {request[:40]!r}")
        mine = [request for owner, request in seen if owner == ledger.user]
        acked = [r for r in mine if r not in ledger.requests_in_flight]
        for request in ledger.requests:
            if request not in mine:
                verdict.lost.append(f"{ledger.user}: acknowledged request {request[:40]!r} is not in the thread")
        if [r for r in acked if r in ledger.requests] != [r for r in ledger.requests if r in acked]:
            verdict.out_of_order.append(f"{ledger.user}: the thread's requests are not in the order sent")
        for request in mine:
            if request not in ledger.requests and request not in ledger.requests_in_flight:
                verdict.leaked.append(f"{ledger.user}'s thread holds a request they never sent: {request[:40]!r}")
