"""Routines: versions, per-user isolation, paraphrase recall, persistence across processes, kill -9."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from typer.testing import CliRunner

from helper_agent.memory.embeddings import HashEmbedder, get_embedder
from helper_agent.memory.errors import ImportFormatError, InvalidRecordError
from helper_agent.memory.routines import Routine, RoutineMemory
from helper_agent.memory.store import VectorStore

MARY = 'plate = InteractionObject("Plate")\nplate.clean()\nmug = InteractionObject("Mug")\nmug.clean()\n'
HASH_ENV = {"HELPER_EMBEDDINGS": "hash:64", "HELPER_EMBEDDING_CACHE": "false"}
PROGRAM_A = 'apple = InteractionObject("Apple")\napple.pickup()\n'
PROGRAM_B = 'mug = InteractionObject("Mug")\nmug.pickup()\n'


@pytest.fixture(scope="session")
def embedder():
    return get_embedder("local")


def hash_memory(path, **kwargs) -> RoutineMemory:
    return RoutineMemory(store=VectorStore(path), embedder=HashEmbedder(64), **kwargs)


def test_versions_latest_and_history(tmp_path):
    memory = hash_memory(tmp_path)
    v1 = memory.teach("the Mary cleaning", MARY, "wash the plates and mugs", user="bob")
    v2 = memory.teach("The  mary cleaning", MARY + "# and the pan\ndo_nothing()\n", "also the pan", user="bob")
    assert (v1.version, v2.version) == (1, 2)
    assert v2.id == "bob/the mary cleaning/v2"
    assert [r.version for r in memory.versions("the Mary cleaning", user="bob")] == [1, 2]
    assert memory.latest("THE MARY CLEANING", user="bob").program.endswith("# and the pan\ndo_nothing()\n")
    assert [r.name for r in memory.routines(user="bob")] == ["The  mary cleaning"]
    ok = memory.register_success("sunday breakfast", "# toast\ndo_nothing()\n", "make toast", user="bob")
    assert ok.source == "confirmed_success" and ok.version == 1
    assert memory.count(user="bob") == 3
    assert memory.remove("the mary cleaning", user="bob") == 2
    assert memory.latest("the mary cleaning", user="bob") is None


def test_users_are_isolated(tmp_path):
    memory = hash_memory(tmp_path)
    memory.teach("the Mary cleaning", MARY, "wash up", user="bob")
    memory.teach("movie night", "# lights off\ndo_nothing()\n", "dim the lights", user="alice")
    assert [h.record.name for h in memory.recall("the Mary cleaning", user="alice", k=5, min_score=-1)] == [
        "movie night"
    ]
    assert memory.versions("the Mary cleaning", user="alice") == []
    assert memory.list(user="alice")[0].user == "alice" and len(memory.list(user="alice")) == 1
    assert memory.remove("the Mary cleaning", user="alice") == 0
    assert memory.latest("the Mary cleaning", user="bob") is not None
    assert memory.users() == ["alice", "bob"]
    with pytest.raises(ValueError, match="user"):
        memory.recall("anything")


def test_recall_by_name_or_paraphrase(embedder):
    memory = RoutineMemory(store=VectorStore.ephemeral(), embedder=embedder, user="bob")
    memory.teach("the Mary cleaning", MARY, "wash all the plates and mugs and put them away")
    memory.teach("Sunday breakfast", "# coffee and toast\ndo_nothing()\n", "make coffee and two slices of toast")
    memory.teach("movie night", "# lamps off\ndo_nothing()\n", "turn off the lamps and put the remotes on the sofa")
    memory.teach("the Mary cleaning", MARY + "# v2\ndo_nothing()\n", "wash the dishes and put them away")
    for query in ("do the Mary cleaning", "Mary's cleaning routine please", "the mary cleaning"):
        hits = memory.recall(query)
        assert len(hits) == 1 and hits[0].record.name == "the Mary cleaning", query
        assert hits[0].record.version == 2 and hits[0].details["versions"] == 2
        assert 0.5 < hits[0].score <= 1.0001
    assert memory.recall("breakfast like every sunday")[0].record.name == "Sunday breakfast"
    assert memory.recall("solve a differential equation") == []  # under the minimum score
    ranked = memory.recall("do the Mary cleaning", k=3, min_score=-1)
    assert ranked[0].record.name == "the Mary cleaning"
    assert all(a.score >= b.score for a, b in itertools.pairwise(ranked))


def test_export_import_round_trip_keeps_history(tmp_path):
    memory = hash_memory(tmp_path / "a")
    memory.teach("the Mary cleaning", MARY, "wash up", user="bob")
    memory.teach("the Mary cleaning", MARY + "# v2\ndo_nothing()\n", "wash up again", user="bob")
    out = tmp_path / "bob.jsonl"
    assert memory.export_jsonl(out, user="bob") == 2
    header = json.loads(out.read_text().splitlines()[0])
    assert header["memory"] == "routines" and header["count"] == 2
    other = hash_memory(tmp_path / "b")
    assert other.import_jsonl(out) == 2
    assert [r.version for r in other.versions("the Mary cleaning", user="bob")] == [1, 2]
    assert other.import_jsonl(out) == 0  # the same versions again: nothing new
    # Bob re-taught it meanwhile: importing the old file appends, never overwrites.
    other.teach("the Mary cleaning", "# v3\ndo_nothing()\n", "", user="bob")
    assert other.import_jsonl(out) == 0
    assert [r.program for r in other.versions("the Mary cleaning", user="bob")][-1] == "# v3\ndo_nothing()\n"
    # Into another user's name: the versions are hers.
    assert other.import_jsonl(out, user="carol") == 2
    assert [r.id for r in other.versions("the mary cleaning", user="carol")] == [
        "carol/the mary cleaning/v1",
        "carol/the mary cleaning/v2",
    ]
    conflicting = tmp_path / "conflict.jsonl"
    from helper_agent.memory.base import write_jsonl

    write_jsonl(
        conflicting,
        "routines",
        [Routine(user="bob", name="the Mary cleaning", program="# other\ndo_nothing()\n", version=1)],
    )
    assert other.import_jsonl(conflicting) == 1
    assert [r.program for r in other.versions("the Mary cleaning", user="bob")][-1] == "# other\ndo_nothing()\n"
    assert len(other.versions("the Mary cleaning", user="bob")) == 4


def test_bad_routines_are_refused_and_nothing_is_lost(tmp_path):
    memory = hash_memory(tmp_path)
    memory.teach("keep me", "# keep\ndo_nothing()\n", user="bob")
    with pytest.raises(InvalidRecordError, match="'name' is empty"):
        memory.teach("   ", "# x\ndo_nothing()\n", user="bob")
    with pytest.raises(InvalidRecordError, match="'program'.*limit is 262144"):
        memory.teach("huge", "x" * 300_000, user="bob")
    bad = tmp_path / "bad.jsonl"
    good_line = json.dumps({"user": "bob", "name": "fine", "program": "# fine\ndo_nothing()\n"})
    bad.write_bytes(good_line.encode() + b"\n" + b'{"user": "bob", "name": "caf\xe9", "program": "x"}\n')
    with pytest.raises(ImportFormatError, match=r"bad\.jsonl:2: not UTF-8"):
        memory.import_jsonl(bad)
    bad.write_text(good_line + "\n" + json.dumps({"user": "bob", "name": "n"}) + "\n")
    with pytest.raises(ImportFormatError, match=r"bad\.jsonl:2: field 'program': Field required"):
        memory.import_jsonl(bad)
    assert [r.name for r in memory.list(user="bob")] == ["keep me"]


def test_cli_add_list_show_remove_export_import(tmp_path):
    from helper_agent.commands.routines import app

    runner = CliRunner()
    env = {**HASH_ENV, "HELPER_MEMORY_DIR": str(tmp_path / "m")}
    program = tmp_path / "mary.py"
    program.write_text(MARY)

    def run(*args: str):
        result = runner.invoke(app, list(args), env=env, catch_exceptions=False)
        return result

    r = run(
        "add", "the Mary cleaning", "--program-file", str(program), "--request", "wash up", "--user", "bob"
    )
    assert r.exit_code == 0 and "v1" in r.output
    assert run("add", "the Mary cleaning", "-p", "# v2\ndo_nothing()\n" + MARY, "--user", "bob").exit_code == 0
    rejected = run("add", "the Mary cleaning", "-p", "# v3, comments only\n", "--user", "bob")
    assert rejected.exit_code == 1 and "field 'program'" in rejected.output  # what `program check` rejects
    r = run("list", "--user", "bob")
    assert "the Mary cleaning" in r.output and r.exit_code == 0
    assert "no routines" in run("list", "--user", "alice").output
    r = run("show", "the mary cleaning", "--user", "bob", "--version", "1")
    assert "plate.clean()" in r.output
    r = run("show", "do the Mary cleaning", "--user", "bob")
    assert "recalled" in r.output and "score" in r.output
    assert run("show", "the mary cleaning", "--user", "alice").exit_code == 1
    out = tmp_path / "out.jsonl"
    assert "exported 2" in run("export", str(out), "--user", "bob").output
    assert "imported 2" in run("import", str(out), "--user", "alice").output
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe\n")
    r = run("import", str(bad), "--user", "alice")
    assert r.exit_code == 1 and "not UTF-8" in r.output
    assert "removed 2" in run("remove", "the Mary cleaning", "--user", "bob").output
    assert run("remove", "the Mary cleaning", "--user", "bob").exit_code == 1


# ------------------------------------------------------------------------------ across processes
_CHILD = textwrap.dedent(
    """
    import sys
    from helper_agent.memory.routines import RoutineMemory
    path, user, start, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    memory = RoutineMemory(path=path)
    for i in range(start, start + n):
        routine = memory.teach(f"routine {i}", f"# program {i}\\ndo_nothing()\\n" + "do_nothing()\\n" * 20, f"request number {i}", user=user)
        print("ACK", routine.id, flush=True)
    """
)


def child_env() -> dict[str, str]:
    return {**os.environ, **HASH_ENV}


def test_routines_persist_across_processes(tmp_path):
    path = str(tmp_path / "store")
    subprocess.run(
        [sys.executable, "-c", _CHILD, path, "bob", "0", "3"], check=True, env=child_env(), timeout=120
    )
    finder = textwrap.dedent(
        """
        import sys, json
        from helper_agent.memory.routines import RoutineMemory
        memory = RoutineMemory(path=sys.argv[1])
        hits = memory.recall("routine 1: request number 1", user="bob", k=1)
        print(json.dumps([hits[0].record.name, memory.count(user="bob"), memory.count(user="alice")]))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", finder, path],
        check=True,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["routine 1", 3, 0]


def test_kill_9_during_a_batch_of_adds_keeps_every_acknowledged_routine(tmp_path):
    path = str(tmp_path / "store")
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, path, "bob", "0", "400"],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    acked: list[str] = []
    deadline = time.monotonic() + 120
    assert proc.stdout is not None
    while len(acked) < 25 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("ACK "):
            acked.append(line.split(" ", 1)[1].strip())
    os.kill(proc.pid, signal.SIGKILL)  # in the middle of the next adds
    proc.wait(timeout=30)
    acked += [
        line.split(" ", 1)[1].strip() for line in proc.stdout.read().splitlines() if line.startswith("ACK ")
    ]
    assert len(acked) >= 25
    memory = RoutineMemory(store=VectorStore(path), embedder=HashEmbedder(64))
    stored = {r.id: r for r in memory.list(user="bob")}
    assert set(acked) <= set(stored)
    assert len(stored) <= len(acked) + 1  # at most the one in flight, and then whole
    for r in stored.values():  # no half record
        n = int(r.name.split()[-1])
        assert r.program.startswith(f"# program {n}\ndo_nothing()\n") and r.request == f"request number {n}"
    # The store still works after the crash (lock released, index loadable).
    assert memory.teach("after crash", "# ok\ndo_nothing()\n", user="bob").version == 1
    assert memory.recall("routine 3: request number 3", user="bob")[0].record.name == "routine 3"


def _teach_many(path: str, tag: str, n: int) -> None:
    os.environ.update(HASH_ENV)
    memory = RoutineMemory(store=VectorStore(path), embedder=HashEmbedder(64))
    for i in range(n):
        memory.teach("shared routine", f"# {tag} {i}\ndo_nothing()\n", f"from {tag}", user="bob")


def test_two_processes_teaching_the_same_name_get_distinct_versions(tmp_path):
    path = str(tmp_path / "store")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_teach_many, args=(path, tag, 15)) for tag in ("p", "q")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=180)
        assert p.exitcode == 0
    memory = hash_memory(path)
    versions = memory.versions("shared routine", user="bob")
    assert [r.version for r in versions] == list(range(1, 31))
    assert sorted(r.program for r in versions) == sorted(
        [f"# p {i}\ndo_nothing()\n" for i in range(15)] + [f"# q {i}\ndo_nothing()\n" for i in range(15)]
    )


PWNED = 'import os\nos.system("touch pwned")\n'


def test_every_write_checks_the_program_language_whoever_opens_the_memory(tmp_path):
    """The web app opened the memory without the CLI's check and imported an `import os` routine;
    the language check lives in the memory now, so no caller can leave it out."""
    memory = hash_memory(tmp_path / "m")  # no program_check: what the app and the graph open
    with pytest.raises(InvalidRecordError, match="field 'program': line 1: 'import os' is not allowed"):
        memory.teach("the pwn", PWNED, user="bob")
    with pytest.raises(InvalidRecordError, match="'import os' is not allowed"):
        memory.add([Routine(user="bob", name="the pwn", program=PWNED)])
    exported = tmp_path / "routines.jsonl"
    exported.write_text(json.dumps({"user": "bob", "name": "fine", "program": MARY}) + "\n"
                        + json.dumps({"user": "bob", "name": "the pwn", "program": PWNED}) + "\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"routines\.jsonl:2: field 'program': line 1: 'import os' is not allowed"):
        memory.import_jsonl(exported, user="bob")
    assert memory.list(user="bob") == []  # the whole file is refused, the good line too


def test_an_import_checks_the_object_catalog_too_whoever_imports(tmp_path):
    """What a person brings in from a file is checked as `helper program check` checks it (the CLI
    and the app refuse the same files); what the agent itself stores needs only the language."""
    memory = hash_memory(tmp_path / "m")
    odd = 'ship = InteractionObject("Spaceship")\nship.pickup()\n'
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps({"user": "bob", "name": "the launch", "program": odd}) + "\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"odd\.jsonl:1: field 'program': line 1: unknown object class 'Spaceship'"):
        memory.import_jsonl(path)
    assert memory.teach("the launch", odd, user="bob").version == 1  # the language allows it


def test_removing_a_version_never_touches_another_user_whose_ids_collide(tmp_path):
    """Issue 52: user `a`'s routine `b/x` and user `a/b`'s routine `x` share the id `a/b/x/v1`;
    `routines remove x --version 1 --user a/b` removed both."""
    memory = hash_memory(tmp_path / "m")
    memory.teach("b/x", PROGRAM_A, user="a")
    memory.teach("x", PROGRAM_A, user="a/b")
    assert memory.remove("x", user="a/b", version=1) == 1
    assert [(r.name, r.version) for r in memory.list(user="a")] == [("b/x", 1)]
    assert memory.list(user="a/b") == []
    assert memory.remove("b/x", user="a", version=2) == 0  # no such version: nothing removed


def test_an_export_imported_again_over_a_taken_number_adds_it_once(tmp_path):
    """Issue 52: a file whose v1 collides with other content under that name was appended again on
    every import (v2, v3, v4 of the same content); run again, an import adds nothing."""
    other = hash_memory(tmp_path / "other")
    other.teach("r", PROGRAM_A, user="x")
    other.export_jsonl(tmp_path / "r.jsonl", user="x")
    memory = hash_memory(tmp_path / "m")
    memory.teach("r", PROGRAM_B, user="u")
    added = [memory.import_jsonl(tmp_path / "r.jsonl", user="u") for _ in range(4)]
    assert added == [1, 0, 0, 0]
    assert [(r.version, r.program) for r in memory.versions("r", user="u")] == [(1, PROGRAM_B), (2, PROGRAM_A)]


def test_an_unterminated_string_names_its_column_with_one_at(tmp_path):
    """json's message ends in "starting at"; the import's line said "starting at at column 50"."""
    path = tmp_path / "broken.jsonl"
    path.write_text('{"user": "bob", "name": "x", "program": "unterminated}\n', encoding="utf-8")
    memory = hash_memory(tmp_path / "m")
    with pytest.raises(ImportFormatError) as caught:
        memory.import_jsonl(path, user="bob")
    assert "Unterminated string starting at column 41" in str(caught.value)
    assert "at at" not in str(caught.value)
