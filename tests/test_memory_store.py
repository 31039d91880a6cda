"""The vector-store layer: scores, filters, schema file, locking, cross-process visibility."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from helper_agent.memory.errors import EmbeddingMismatchError, IncompatibleStoreError
from helper_agent.memory.settings import SCHEMA_VERSION, MemorySettings
from helper_agent.memory.store import (
    META_FILE,
    Entry,
    VectorStore,
    and_where,
    open_store,
    where_all,
)


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_upsert_query_scores_are_cosine_similarity(tmp_path):
    store = VectorStore(tmp_path / "m")
    col = store.collection("vectors", embedder_name="test", dim=3)
    col.upsert(
        [
            Entry("a", "a", {"kind": "x", "n": 1}, unit(1, 0, 0)),
            Entry("b", "b", {"kind": "y", "n": 2}, unit(1, 1, 0)),
            Entry("c", "c", {"kind": "x", "n": 3}, unit(0, 0, 1)),
        ]
    )
    hits = col.query(unit(1, 0, 0), 3)[0]
    assert [h.id for h in hits] == ["a", "b", "c"]
    assert [h.score for h in hits] == pytest.approx([1.0, 2**-0.5, 0.0], abs=1e-5)
    only_x = col.query(unit(1, 1, 0), 5, where_all(kind="x"))[0]
    assert [h.id for h in only_x] == ["a", "c"]
    assert col.count() == 3 and col.count({"kind": "x"}) == 2
    assert [e.id for e in col.get(["c", "a"])] == ["c", "a"]  # requested order
    col.delete(ids=["a"])
    assert col.count() == 2
    col.delete(where={"kind": "y"})
    assert [e.id for e in col.get()] == ["c"]


def test_where_helpers():
    assert where_all() is None
    assert where_all(a=1, b=None) == {"a": 1}
    assert where_all(a=1, b=["x", "y"]) == {"$and": [{"a": 1}, {"b": {"$in": ["x", "y"]}}]}
    assert and_where(None, {"a": 1}) == {"a": 1}


def test_metadata_values_are_stored_or_encoded(tmp_path):
    col = VectorStore(tmp_path).collection("meta-values", embedder_name="t", dim=2)
    col.upsert([Entry("x", "doc", {"s": "v", "none": None, "list": [1, 2], "flag": True}, unit(1, 0))])
    meta = col.get(["x"])[0].metadata
    assert meta == {"s": "v", "list": "[1, 2]", "flag": True}


def test_meta_file_is_written_and_checked(tmp_path):
    folder = tmp_path / "store"
    VectorStore(folder)
    meta = json.loads((folder / META_FILE).read_text())
    assert meta["schema_version"] == SCHEMA_VERSION and meta["format"] == "helper-agent-memory"
    meta["schema_version"] = SCHEMA_VERSION + 1
    (folder / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(IncompatibleStoreError) as err:
        VectorStore(folder)
    assert str(folder / META_FILE) in str(err.value) and "schema_version" in str(err.value)


def test_foreign_chroma_folder_is_refused(tmp_path):
    import chromadb
    from chromadb.config import Settings

    folder = tmp_path / "foreign"
    client = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    client.get_or_create_collection("someone-else", embedding_function=None)
    with pytest.raises(IncompatibleStoreError, match="no helper_memory_meta.json"):
        VectorStore(folder)


def test_corrupt_meta_file_is_refused(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / META_FILE).write_bytes(b"\xff\xfe{not json")
    with pytest.raises(IncompatibleStoreError, match="unreadable"):
        VectorStore(folder)


def test_collection_remembers_its_embedder(tmp_path):
    store = VectorStore(tmp_path)
    store.collection("c1x", embedder_name="local:all-MiniLM-L6-v2", dim=384)
    with pytest.raises(EmbeddingMismatchError, match="c1x"):
        VectorStore(tmp_path).collection("c1x", embedder_name="openai:text-embedding-3-small", dim=1536)


def test_vector_shape_is_checked(tmp_path):
    col = VectorStore(tmp_path).collection("shape", embedder_name="t", dim=3)
    with pytest.raises(ValueError, match="expected 1x3"):
        col.upsert([Entry("a", "a", {"k": 1}, np.ones(4, dtype=np.float32))])
    with pytest.raises(ValueError, match="NaN"):
        col.upsert([Entry("a", "a", {"k": 1}, np.array([np.nan, 0, 0], dtype=np.float32))])


def test_ephemeral_stores_are_separate():
    a, b = VectorStore.ephemeral(), VectorStore.ephemeral()
    a.collection("same", embedder_name="t", dim=2).upsert([Entry("x", "x", {"k": 1}, unit(1, 0))])
    assert b.collection("same", embedder_name="t", dim=2).count() == 0


def test_open_store_shares_one_object_per_folder(tmp_path):
    assert open_store(tmp_path / "a") is open_store(tmp_path / "a")
    settings = MemorySettings(memory_dir=tmp_path / "b")
    assert open_store(settings=settings) is open_store(tmp_path / "b")


_WRITER = textwrap.dedent(
    """
    import sys, numpy as np
    from helper_agent.memory.store import VectorStore, Entry
    path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    col = VectorStore(path).collection("shared", embedder_name="t", dim=4)
    rng = np.random.default_rng(abs(hash(tag)) % 1000)
    for i in range(n):
        v = rng.normal(size=4).astype(np.float32)
        col.upsert([Entry(f"{tag}-{i}", "d", {"tag": tag}, v / np.linalg.norm(v))])
    print("done", flush=True)
    """
)


def test_reader_sees_writes_of_another_process(tmp_path):
    col = VectorStore(tmp_path).collection("shared", embedder_name="t", dim=4)
    col.upsert([Entry("mine", "d", {"tag": "me"}, unit(1, 0, 0, 0))])
    assert len(col.query(unit(1, 0, 0, 0), 100)[0]) == 1
    subprocess.run([sys.executable, "-c", _WRITER, str(tmp_path), "other", "7"], check=True, timeout=120)
    # Chroma alone would keep answering from this process's stale index; the generation file fixes it.
    assert len(col.query(unit(1, 0, 0, 0), 100)[0]) == 8
    assert col.count() == 8


def _mp_writer(path: str, tag: str, n: int) -> None:
    col = VectorStore(path).collection("shared", embedder_name="t", dim=4)
    rng = np.random.default_rng(len(tag) * 7 + ord(tag[0]))
    for i in range(n):
        v = rng.normal(size=4).astype(np.float32)
        col.upsert([Entry(f"{tag}-{i}", "d", {"tag": tag}, v / np.linalg.norm(v))])


def test_two_processes_writing_do_not_corrupt_the_store(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_mp_writer, args=(str(tmp_path), tag, 60)) for tag in ("p", "q")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=180)
        assert p.exitcode == 0
    col = VectorStore(tmp_path).collection("shared", embedder_name="t", dim=4)
    assert col.count() == 120
    ids = {h.id for h in col.query(unit(1, 1, 1, 1), 500)[0]}
    assert len(ids) == 120


# ------------------------------------------------------------------------------ Chroma server
def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """`chroma run` on a loopback port (skipped where the CLI is missing or does not start)."""
    import shutil
    import time
    import urllib.request
    from pathlib import Path

    exe = Path(sys.executable).parent / "chroma"
    if not exe.exists() and shutil.which("chroma") is None:
        pytest.skip("the chroma CLI is not installed")
    port = _free_port()
    log = tmp_path_factory.mktemp("chroma") / "server.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [
                str(exe if exe.exists() else shutil.which("chroma")),
                "run",
                "--path",
                str(tmp_path_factory.mktemp("chroma-data")),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1)
            break
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.skip("the chroma server did not start")
    if proc.poll() is not None:
        pytest.skip(f"the chroma server exited: {log.read_text()[-500:]}")
    yield port
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_http_client_store(chroma_server):
    from helper_agent.memory.embeddings import HashEmbedder
    from helper_agent.memory.registry import create_memory

    store = VectorStore(host="127.0.0.1", port=chroma_server)
    assert store.kind == "http" and store.path is None
    col = store.collection("remote", embedder_name="t", dim=3)
    col.upsert([Entry("a", "a", {"k": 1}, unit(1, 0, 0)), Entry("b", "b", {"k": 2}, unit(0, 1, 0))])
    assert [h.id for h in col.query(unit(1, 0.1, 0), 2)[0]] == ["a", "b"]
    routines = create_memory("routines", host="127.0.0.1", port=chroma_server, embedder=HashEmbedder(32))
    routines.teach("the Mary cleaning", "# wash\ndo_nothing()\n", "wash up", user="bob")
    again = create_memory(
        "routines", store=VectorStore(host="127.0.0.1", port=chroma_server), embedder=HashEmbedder(32)
    )
    assert again.latest("the mary cleaning", user="bob").program == "# wash\ndo_nothing()\n"
    with pytest.raises(EmbeddingMismatchError):
        VectorStore(host="127.0.0.1", port=chroma_server).collection("remote", embedder_name="other", dim=3)
