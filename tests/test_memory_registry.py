"""The registry (names, entry points), the plugin protocol, settings, and bad input at the edges."""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint

import pytest

from helper_agent import plugins
from helper_agent.memory import registry
from helper_agent.memory.base import MemoryPlugin, write_jsonl
from helper_agent.memory.embeddings import HashEmbedder
from helper_agent.memory.errors import (
    ImportFormatError,
    IncompatibleStoreError,
    InvalidRecordError,
    MemoryStoreError,
    UnknownMemoryError,
)
from helper_agent.memory.examples import ExampleMemory, ProgramExample
from helper_agent.memory.registry import available_memories, create_memory, register_memory
from helper_agent.memory.settings import MemorySettings
from helper_agent.memory.store import META_FILE, VectorStore

BUILTINS = ["corrections", "examples", "experience", "fewshot", "routines", "scene_graph"]


@pytest.mark.parametrize("name", BUILTINS)
def test_every_builtin_is_created_by_name_and_follows_the_protocol(name, tmp_path):
    memory = create_memory(name, path=tmp_path / "store", embeddings="hash:32")
    assert isinstance(memory, MemoryPlugin)
    assert memory.kind == name
    assert memory.store.path == (tmp_path / "store").resolve()
    assert memory.embedder.name == "hash:32"


def test_available_and_unknown():
    assert set(BUILTINS) <= set(available_memories())
    with pytest.raises(UnknownMemoryError, match="no memory named 'nope'; available: corrections"):
        create_memory("nope")


def test_register_memory_and_entry_points(monkeypatch):
    class Dummy:
        kind = "dummy"

        def __init__(self, **config):
            self.config = config

    register_memory("dummy-test", Dummy)
    try:
        assert create_memory("dummy-test", answer=42).config == {"answer": 42}
        with pytest.raises(ValueError, match="already registered"):
            register_memory("dummy-test", Dummy)
        with pytest.raises(ValueError, match="already registered"):
            register_memory("examples", Dummy)
    finally:
        registry.MEMORIES.registered.pop("dummy-test", None)

    ep = EntryPoint(
        name="third_party",
        value="helper_agent.memory.examples:ExampleMemory",
        group=registry.ENTRY_POINT_GROUP,
    )
    broken = EntryPoint(name="broken", value="no_such_module_xyz:Thing", group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(
        plugins, "entry_points", lambda group: [ep, broken] if group == registry.ENTRY_POINT_GROUP else []
    )
    assert {"third_party", "broken"} <= set(available_memories())
    made = create_memory("third_party", store=VectorStore.ephemeral(), embedder=HashEmbedder(16), seed=False)
    assert isinstance(made, ExampleMemory)
    with pytest.raises(UnknownMemoryError, match="broken.*failed to load"):
        create_memory("broken")


def test_settings_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("HELPER_MEMORY_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:16")
    monkeypatch.setenv("HELPER_CHROMA_PORT", "9000")
    monkeypatch.setenv("HELPER_EXPERIENCE_POLICY", "keep_latest_round")
    s = MemorySettings()
    assert s.memory_dir == tmp_path / "m" and s.embeddings == "hash:16" and s.chroma_port == 9000
    assert s.experience_policy == "keep_latest_round"
    monkeypatch.delenv("HELPER_MEMORY_DIR")
    monkeypatch.setenv("HELPER_HOME", str(tmp_path / "home"))
    assert MemorySettings().memory_dir == tmp_path / "home" / "memory"
    monkeypatch.delenv("HELPER_HOME")
    assert str(MemorySettings().memory_dir) == ".helper/memory"


# ------------------------------------------------------------------------------------ bad input
@pytest.fixture
def examples(tmp_path):
    memory = ExampleMemory(store=VectorStore(tmp_path / "store"), embedder=HashEmbedder(32), seed=False)
    memory.add([ProgramExample(id="keep", dialogue="make coffee", program="# coffee\n")])
    return memory


def test_empty_keys_are_refused(examples):
    with pytest.raises(InvalidRecordError, match=r"records\[0\] \(id='x'\): field 'dialogue' is empty"):
        examples.add([{"id": "x", "dialogue": "  ", "program": "# p\n"}])
    with pytest.raises(InvalidRecordError, match="field 'program' is empty"):
        examples.add([{"id": "x", "dialogue": "make tea", "program": ""}])
    with pytest.raises(InvalidRecordError, match="field 'dialogue': Field required"):
        examples.add([{"id": "x", "program": "# p\n"}])
    with pytest.raises(InvalidRecordError, match="field 'colour': Extra inputs are not permitted"):
        examples.add([{"id": "x", "dialogue": "a", "program": "b", "colour": "red"}])
    with pytest.raises(InvalidRecordError, match="id 'd' appears twice"):
        examples.add(
            [{"id": "d", "dialogue": "a", "program": "b"}, {"id": "d", "dialogue": "c", "program": "d"}]
        )
    with pytest.raises(ValueError, match="query is empty"):
        examples.retrieve("   ")
    assert [r.id for r in examples.list()] == ["keep"]


def test_huge_values_are_refused_with_the_limit(examples):
    with pytest.raises(
        InvalidRecordError, match=r"field 'program' is 300000 bytes; the limit is 262144 bytes"
    ):
        examples.add([{"id": "big", "dialogue": "make coffee", "program": "x" * 300_000}])
    with pytest.raises(InvalidRecordError, match=r"field 'dialogue' has 9000 characters; the limit is 8192"):
        examples.add([{"id": "big", "dialogue": "y" * 9000, "program": "# p\n"}])
    with pytest.raises(InvalidRecordError, match="not valid Unicode"):
        examples.add([{"id": "s", "dialogue": "bad \ud800 surrogate", "program": "# p\n"}])
    small = ExampleMemory(
        store=examples.store,
        embedder=examples.embedder,
        seed=False,
        settings=MemorySettings(max_value_bytes=10),
    )
    with pytest.raises(InvalidRecordError, match="limit is 10 bytes"):
        small.add([{"id": "m", "dialogue": "d", "program": "# twelve b\n"}])
    assert examples.count() == 1


def test_import_errors_name_file_and_line_and_lose_nothing(examples, tmp_path):
    good = json.dumps({"id": "n1", "dialogue": "make toast", "program": "# toast\n"})
    cases = {
        b"\xff\xfe" + good.encode(): r"f\.jsonl:1: not UTF-8 text \(byte 0xff at column 1\)",
        (good + "\n" + '{"id": "n2", "dialogue": "caf').encode() + b'\xe9"}\n': r"f\.jsonl:2: not UTF-8",
        (good + "\n\n{not json}\n").encode(): r"f\.jsonl:3: invalid JSON",
        (good + "\n[1, 2]\n").encode(): r"f\.jsonl:2: expected a JSON object",
        (
            good + "\n" + json.dumps({"id": "n3", "dialogue": ""}) + "\n"
        ).encode(): r"f\.jsonl:2: field 'program'",
        (good + "\n" + good + "\n").encode(): r"f\.jsonl:2: id 'n1' already used on line 1",
        (
            json.dumps({"_format": "helper-agent-memory", "memory": "routines", "schema_version": 1}) + "\n"
        ).encode(): r"f\.jsonl:1: this file holds 'routines' records, not 'examples'",
        (
            json.dumps({"_format": "helper-agent-memory", "memory": "examples", "schema_version": 99}) + "\n"
        ).encode(): r"f\.jsonl:1: schema_version 99 is newer",
    }
    path = tmp_path / "f.jsonl"
    for content, pattern in cases.items():
        path.write_bytes(content)
        with pytest.raises(ImportFormatError, match=pattern):
            examples.import_jsonl(path)
    with pytest.raises(ImportFormatError, match="cannot read"):
        examples.import_jsonl(tmp_path / "missing.jsonl")
    assert [r.id for r in examples.list()] == ["keep"]  # nothing half-imported
    path.write_bytes(b"\xef\xbb\xbf" + good.encode() + b"\r\n")  # a BOM and CRLF are fine
    assert examples.import_jsonl(path) == 1


def test_export_is_atomic_and_round_trips(examples, tmp_path):
    out = tmp_path / "sub" / "ex.jsonl"
    assert examples.export_jsonl(out) == 1
    lines = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["memory"] == "examples" and len(lines) == 2
    assert not list(out.parent.glob(".*.tmp"))
    other = ExampleMemory(store=VectorStore.ephemeral(), embedder=HashEmbedder(32), seed=False)
    assert other.import_jsonl(out) == 1 and other.get("keep").program == "# coffee\n"


def test_store_written_by_an_incompatible_version_is_refused_and_kept(tmp_path, examples):
    folder = examples.store.path
    meta = json.loads((folder / META_FILE).read_text())
    meta.update(schema_version=7, created_by="helper-agent 9.0")
    (folder / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(
        IncompatibleStoreError,
        match=r"helper_memory_meta.json: schema_version 7 \(written by helper-agent 9.0\)",
    ):
        create_memory("examples", path=folder.parent / folder.name / ".." / folder.name, embeddings="hash:32")
    assert (folder / "chroma.sqlite3").exists()  # nothing was touched


def test_write_jsonl_reports_unwritable_paths(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(MemoryStoreError, match="cannot write"):
        write_jsonl(blocker / "out.jsonl", "examples", [])
