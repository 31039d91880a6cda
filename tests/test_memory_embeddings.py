"""The embedding layer: offline local model, batching, LRU and disk caches, hashing embedder."""

from __future__ import annotations

import importlib.util
import threading

import numpy as np
import pytest

from helper_agent.memory.embeddings import (
    LOCAL_DIM,
    ChromaEmbeddingFunction,
    HashEmbedder,
    LocalEmbedder,
    get_embedder,
    make_embedder,
    normalize_rows,
)


@pytest.fixture(scope="session")
def local_embedder():
    """The real all-MiniLM-L6-v2 (loaded once per process and shared)."""
    embedder = get_embedder("local")
    embedder.embed(["warm up"])
    return embedder


def test_local_model_is_offline_normalized_and_384d(local_embedder):
    vectors = local_embedder.embed(["make a cup of coffee", "brew coffee in a mug", "turn off the lamp"])
    assert vectors.shape == (3, LOCAL_DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    sims = vectors @ vectors.T
    assert sims[0, 1] > sims[0, 2] + 0.2
    assert local_embedder.name == "local:all-MiniLM-L6-v2" and local_embedder.dim == LOCAL_DIM


def test_model_loaded_once_per_process(local_embedder):
    other = LocalEmbedder()
    assert other.model is local_embedder.model
    assert get_embedder("local") is local_embedder


def test_lru_cache_and_duplicates(local_embedder):
    e = LocalEmbedder(cache_size=10)
    calls = []
    real = e._compute
    e._compute = lambda texts: calls.append(list(texts)) or real(texts)  # type: ignore[method-assign]
    first = e.embed(["alpha text", "beta text", "alpha text"])
    assert calls == [["alpha text", "beta text"]]
    again = e.embed(["beta text", "alpha text"])
    assert calls == [["alpha text", "beta text"]]  # served from the LRU
    assert np.allclose(again[1], first[0])
    assert e.stats["lru_hits"] == 2


def test_batches_are_bounded():
    e = HashEmbedder(16, batch_size=4, cache_size=0)
    sizes = []
    real = e._compute
    e._compute = lambda texts: sizes.append(len(texts)) or real(texts)  # type: ignore[method-assign]
    e.embed([f"text {i}" for i in range(10)])
    assert sizes == [4, 4, 2]


def test_lru_evicts_oldest():
    e = HashEmbedder(8, cache_size=2)
    e.embed(["a"])
    e.embed(["b"])
    e.embed(["c"])
    assert list(e._lru) == ["b", "c"]


def test_disk_cache_serves_a_new_instance_without_the_model(tmp_path):
    cache = tmp_path / "cache.sqlite3"
    first = make_embedder("local", cache_path=cache)
    v1 = first.embed(["water the plant", "slice the tomato"])
    second = make_embedder("local", cache_path=cache)

    def no_model(texts):  # the vectors must come from the disk cache
        raise AssertionError(f"model called for {texts}")

    second._compute = no_model  # type: ignore[method-assign]
    v2 = second.embed(["slice the tomato", "water the plant"])
    assert np.allclose(v2, v1[::-1])
    assert second.stats["disk_hits"] == 2


def test_thread_safe_embedding(local_embedder):
    texts = [f"put {i} apples in the bowl" for i in range(40)]
    expected = LocalEmbedder(cache_size=0).embed(texts)
    results: dict[int, np.ndarray] = {}

    def work(n: int) -> None:
        results[n] = LocalEmbedder(cache_size=0).embed(texts)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results.values():
        assert np.allclose(r, expected, atol=1e-5)


def test_hash_embedder_is_deterministic_and_unit():
    a, b = HashEmbedder(64), HashEmbedder(64)
    va, vb = a.embed(["Put the Mug in the CoffeeMachine"]), b.embed(["Put the Mug in the CoffeeMachine"])
    assert np.array_equal(va, vb)
    assert np.allclose(np.linalg.norm(va, axis=1), 1.0)
    sims = a.embed(["coffee machine", "coffee machine please", "potato"]) @ a.embed(["coffee machine"])[0]
    assert sims[0] == pytest.approx(1.0) and sims[1] > sims[2]


def test_specs():
    assert make_embedder("hash:32").dim == 32
    with pytest.raises(ValueError, match="HELPER_EMBEDDINGS"):
        make_embedder("bert")


@pytest.mark.skipif(
    importlib.util.find_spec("langchain_openai") is not None, reason="langchain-openai installed"
)
def test_openai_is_lazy_and_explains_the_missing_extra():
    e = make_embedder("openai:text-embedding-3-small")  # constructing needs nothing
    assert e.dim == 1536 and e.name == "openai:text-embedding-3-small"
    with pytest.raises(ImportError, match="langchain-openai"):
        e.embed(["hello"])


def test_chroma_embedding_function_wrapper():
    fn = ChromaEmbeddingFunction(HashEmbedder(8))
    out = fn(["a b", "c"])
    assert len(out) == 2 and out[0].shape == (8,)


def test_normalize_rows_handles_zero():
    out = normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert np.allclose(out, [[0.6, 0.8], [0.0, 0.0]])
