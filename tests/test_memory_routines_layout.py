"""Routines: one collection per user, the move from the single-collection layout, and imports that
commit in batches (a `kill -9` mid-import loses at most the batch in flight; importing again completes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helper_agent.memory.base import write_jsonl
from helper_agent.memory.embeddings import HashEmbedder
from helper_agent.memory.routines import USER_KEY, Routine, RoutineMemory, _digest
from helper_agent.memory.store import Entry, VectorStore

HASH_ENV = {"HELPER_EMBEDDINGS": "hash:64", "HELPER_EMBEDDING_CACHE": "false"}


def memory_at(path: Path) -> RoutineMemory:
    return RoutineMemory(store=VectorStore(path), embedder=HashEmbedder(64))


def routine_file(path: Path, users: list[str], names: int, versions: int) -> list[Routine]:
    """An export file: each user has `names` routines with `versions` versions each."""
    records = [
        Routine(
            user=user,
            name=f"routine {n}",
            program=f"# {user} routine {n} v{v}\nmug = InteractionObject(\"Mug\")\nmug.pickup()\n",
            request=f"do routine {n} the way {user} likes it ({v})",
            version=v,
            created_at="2026-01-01T00:00:00.000000Z",
        )
        for user in users
        for n in range(names)
        for v in range(1, versions + 1)
    ]
    write_jsonl(path, "routines", records)
    return records


@pytest.mark.parametrize("store_kind", ["persistent", "ephemeral"])
def test_each_user_has_a_collection_of_their_own(tmp_path: Path, store_kind: str) -> None:
    store = VectorStore(tmp_path) if store_kind == "persistent" else VectorStore.ephemeral()
    memory = RoutineMemory(store=store, embedder=HashEmbedder(64))
    memory.teach("the Mary cleaning", "# wash\ndo_nothing()\n", "wash the plates", user="mary")
    memory.teach("movie night", "# lamps\ndo_nothing()\n", "dim the lamps", user="bob/home")  # a '/' in a user name
    owners = sorted(meta[USER_KEY] for meta in store.collection_names("helper_routines").values())
    assert owners == ["bob/home", "mary"]
    assert memory.users() == ["bob/home", "mary"] and memory.count() == 2
    assert memory.recall("movie night", user="mary", min_score=-1)[0].record.user == "mary"
    assert memory.get("bob/home/movie night/v1").program == "# lamps\ndo_nothing()\n"
    assert memory.delete(["bob/home/movie night/v1", "nobody/x/v1"]) == 1
    assert memory.list(user="bob/home") == [] and memory.users() == ["mary"]
    assert memory.versions("anything", user="carol") == [] and memory.recall("x", user="carol") == []
    assert memory.count(user="carol") == 0
    assert set(store.collection_names("helper_routines")) == set(
        store.collection_names("helper_routines__u_")
    )  # reads for carol created nothing, and no single shared collection exists


def _legacy_entry(memory: RoutineMemory, record: Routine) -> Entry:
    """An entry as the single-collection layout wrote it."""
    text = memory.key_text(record)
    return Entry(
        id=record.id,
        document=text,
        metadata={
            "user": record.user,
            "name_key": record.key,
            "version": record.version,
            "source": record.source,
            "digest": _digest(record),
            "record": record.model_dump_json(),
        },
        embedding=memory.embedder.embed([text])[0],
    )


def test_a_store_of_the_single_collection_layout_is_moved_per_user(tmp_path: Path) -> None:
    records = [
        Routine(id=f"{u}/routine {n}/v1", user=u, name=f"routine {n}", program=f"# {u} {n}\ndo_nothing()\n", version=1)
        for u in ("alice", "bob")
        for n in range(3)
    ]
    old = memory_at(tmp_path)
    legacy = old.store.collection("helper_routines", embedder_name=old.embedder.name, dim=old.embedder.dim)
    legacy.upsert([_legacy_entry(old, r) for r in records])
    del old, legacy

    code = textwrap.dedent(
        """
        import json, sys
        from helper_agent.memory.embeddings import HashEmbedder
        from helper_agent.memory.routines import RoutineMemory
        from helper_agent.memory.store import VectorStore
        memory = RoutineMemory(store=VectorStore(sys.argv[1]), embedder=HashEmbedder(64))
        hit = memory.recall("routine 2", user="bob", min_score=-1)[0]
        print(json.dumps([memory.users(), memory.count(user="alice"), hit.record.program,
                          sorted(memory.store.collection_names("helper_routines"))]))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120, check=True
    )
    users, alice, program, names = json.loads(out.stdout.strip().splitlines()[-1])
    assert users == ["alice", "bob"] and alice == 3 and program == "# bob 2\ndo_nothing()\n"
    assert "helper_routines" not in names and len(names) == 2
    again = memory_at(tmp_path)  # a second open finds nothing left to move
    assert [r.id for r in again.list(user="alice")] == [r.id for r in records[:3]]
    assert again.teach("routine 0", "# new\ndo_nothing()\n", user="alice").version == 2


@pytest.mark.parametrize(("total", "batch", "calls"), [(10, 4, [(0, 10), (4, 10), (8, 10), (10, 10)]), (3, 50, [(0, 3), (3, 3)]), (0, 5, [(0, 0)])])
def test_import_commits_in_batches_and_reports_progress(tmp_path: Path, total: int, batch: int, calls: list) -> None:
    path = tmp_path / "routines.jsonl"
    routine_file(path, ["bob"], total, 1)
    memory = memory_at(tmp_path / "store")
    seen: list[tuple[int, int]] = []
    assert memory.import_jsonl(path, batch_size=batch, progress=lambda done, n: seen.append((done, n))) == total
    assert seen == calls
    assert memory.import_jsonl(path, batch_size=batch) == 0  # every version is there already
    assert memory.count(user="bob") == total


def test_import_batch_size_comes_from_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from helper_agent.config import Settings

    path = tmp_path / "routines.jsonl"
    routine_file(path, ["bob"], 7, 1)
    memory = RoutineMemory(
        store=VectorStore(tmp_path / "s"), embedder=HashEmbedder(64), settings=Settings(routine_import_batch=3)
    )
    seen: list[int] = []
    memory.import_jsonl(path, progress=lambda done, n: seen.append(done))
    assert seen == [0, 3, 6, 7]


_IMPORTER = textwrap.dedent(
    """
    import sys
    from helper_agent.memory.routines import RoutineMemory
    memory = RoutineMemory(path=sys.argv[1])
    memory.import_jsonl(sys.argv[2], batch_size=int(sys.argv[3]),
                        progress=lambda done, total: print("ACK", done, flush=True))
    """
)


def _kill_after(cmd: list[str], acks: int, env: dict[str, str]) -> int:
    """Run `cmd`, SIGKILL it once it has acknowledged `acks` committed batches; the last count acked."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    done, seen = 0, 0
    deadline = time.monotonic() + 180
    while seen < acks and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("ACK "):
            done, seen = int(line.split()[1]), seen + 1
    os.kill(proc.pid, signal.SIGKILL)  # in the middle of the next batch
    proc.wait(timeout=30)
    for line in proc.stdout.read().splitlines():  # acknowledged before the kill landed
        if line.startswith("ACK "):
            done = int(line.split()[1])
    assert proc.returncode == -signal.SIGKILL, "the import finished before it could be killed"
    return done


@pytest.mark.parametrize("batch", [25, 60])
def test_kill_9_mid_import_loses_at_most_the_batch_in_flight(tmp_path: Path, batch: int) -> None:
    path = tmp_path / "routines.jsonl"
    records = routine_file(path, ["bob", "mary"], 150, 2)  # 600 versions
    store = tmp_path / "store"
    acked = _kill_after([sys.executable, "-c", _IMPORTER, str(store), str(path), str(batch)], 4, {**os.environ, **HASH_ENV})
    assert acked >= 3 * batch
    memory = memory_at(store)
    stored = {r.id: r for r in memory.list()}
    expected = {f"{r.user}/{r.key}/v{r.version}": r for r in records}
    assert acked <= len(stored) <= acked + batch  # nothing acknowledged lost; at most the batch in flight
    for rid, record in stored.items():  # and what is there is whole
        assert record.program == expected[rid].program and record.request == expected[rid].request
    assert memory.import_jsonl(path, batch_size=batch) == len(records) - len(stored)
    assert {r.id for r in memory.list()} == set(expected)
    assert memory.import_jsonl(path) == 0


_CLI = textwrap.dedent(
    """
    import sys
    import helper_agent.memory.routines as routines

    add = routines.RoutineMemory.add
    def acknowledged(self, records, **kwargs):
        ids = add(self, records, **kwargs)
        acknowledged.done += len(records)
        print("ACK", acknowledged.done, flush=True)
        return ids
    acknowledged.done = 0
    routines.RoutineMemory.add = acknowledged
    from helper_agent.cli import app
    app(sys.argv[1:])
    """
)


def test_cli_import_killed_then_run_again_completes(tmp_path: Path) -> None:
    path = tmp_path / "routines.jsonl"
    records = routine_file(path, ["someone"], 100, 3)  # 300 versions
    env = {**os.environ, **HASH_ENV, "HELPER_MEMORY_DIR": str(tmp_path / "m"), "HELPER_ROUTINE_IMPORT_BATCH": "20", "COLUMNS": "200"}
    args = ["routines", "import", str(path), "--user", "mary"]
    acked = _kill_after([sys.executable, "-c", _CLI, *args], 3, env)
    assert acked >= 60
    done = subprocess.run(
        [sys.executable, "-m", "helper_agent.cli", *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    imported = int(done.stdout.split("imported ")[1].split()[0])
    assert acked <= len(records) - imported <= acked + 20
    listed = subprocess.run(
        [sys.executable, "-m", "helper_agent.cli", "routines", "list", "--user", "mary"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert listed.returncode == 0 and sum(line.startswith("│ routine ") for line in listed.stdout.splitlines()) == 100
    memory = RoutineMemory(store=VectorStore(tmp_path / "m"), embedder=HashEmbedder(64))
    assert memory.count(user="mary") == 300 and len(memory.versions("routine 42", user="mary")) == 3


class _CountingDeletes:
    """Wraps a Chroma collection and counts `delete` calls (a sync is a no-op delete)."""

    def __init__(self, raw: object) -> None:
        self._raw = raw
        self.deletes = 0

    def delete(self, *args: object, **kwargs: object) -> object:
        self.deletes += 1
        return self._raw.delete(*args, **kwargs)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._raw, name)


_TEACHER = textwrap.dedent(
    """
    import sys
    from helper_agent.memory.embeddings import HashEmbedder
    from helper_agent.memory.routines import RoutineMemory
    from helper_agent.memory.store import VectorStore
    memory = RoutineMemory(store=VectorStore(sys.argv[1]), embedder=HashEmbedder(64))
    memory.teach(sys.argv[3], "# taught elsewhere\\ndo_nothing()\\n", "", user=sys.argv[2])
    """
)


def test_another_process_s_write_is_seen_and_only_its_user_catches_up(tmp_path: Path) -> None:
    memory = memory_at(tmp_path)
    for user in ("mary", "bob"):
        memory.teach("first routine", "# one\ndo_nothing()\n", "the first one", user=user)
        memory.recall("first routine", user=user)  # the index is loaded in this process
    spies = {}
    for user in ("mary", "bob"):
        col = memory._user_col(user, create=False)
        spies[user] = col.raw = _CountingDeletes(col.raw)
    subprocess.run([sys.executable, "-c", _TEACHER, str(tmp_path), "mary", "evening tidy up"], check=True, timeout=120)
    assert memory.recall("first routine", user="bob")[0].record.user == "bob"
    assert spies["bob"].deletes == 0  # bob's collection was not written: no catch-up
    hits = memory.recall("evening tidy up", user="mary", k=2, min_score=-1)
    assert "evening tidy up" in [h.record.name for h in hits]
    assert spies["mary"].deletes == 1  # mary's index caught up once, then is current
    memory.recall("evening tidy up", user="mary")
    assert spies["mary"].deletes == 1
