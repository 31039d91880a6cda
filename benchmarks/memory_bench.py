"""Benchmark of the memory layer: store add throughput and query latency at scale, embedding speed.

The scale test uses the embedded Chroma store (PersistentClient in a temporary folder) with
precomputed random unit vectors (384-d, like all-MiniLM-L6-v2), so embedding time is excluded;
the embedding throughput of the local model is measured separately.

    .venv/bin/python benchmarks/memory_bench.py                       # 1k, 10k, 100k entries
    .venv/bin/python benchmarks/memory_bench.py --sizes 1000,10000 --json out/memory_bench.json

Targets: query p50 < 20 ms at 10k entries, < 100 ms at 100k.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helper_agent.memory.store import Entry, VectorStore

TARGETS_P50_MS = {10_000: 20.0, 100_000: 100.0}


def unit_vectors(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def bench_store(
    size: int, *, dim: int, queries: int, k: int, batch: int, root: Path, seed: int
) -> dict[str, float]:
    rng = np.random.default_rng(seed + size)
    folder = root / f"store-{size}"
    store = VectorStore(folder)
    col = store.collection(f"bench-{size}", embedder_name=f"random:{dim}", dim=dim)
    add_seconds = 0.0
    for start in range(0, size, batch):
        n = min(batch, size - start)
        vectors = unit_vectors(rng, n, dim)
        entries = [
            Entry(
                id=f"e{start + i}",
                document=f"entry {start + i}",
                metadata={"group": (start + i) % 10},
                embedding=v,
            )
            for i, v in enumerate(vectors)
        ]
        t0 = time.perf_counter()
        col.upsert(entries)
        add_seconds += time.perf_counter() - t0
    assert col.count() == size, (col.count(), size)
    probe = unit_vectors(rng, queries + 10, dim)
    for q in probe[:10]:  # warm-up (index load, caches)
        col.query(q, k)
    latencies = []
    for q in probe[10:]:
        t0 = time.perf_counter()
        hits = col.query(q, k)[0]
        latencies.append((time.perf_counter() - t0) * 1000)
        assert len(hits) == min(k, size)
    filtered = []
    for q in probe[10 : 10 + max(10, queries // 4)]:
        t0 = time.perf_counter()
        col.query(q, k, {"group": 3})
        filtered.append((time.perf_counter() - t0) * 1000)
    # recall of the approximate index against exact search, on a sample
    agree = []
    if size <= 20_000:
        stored = np.stack(
            [e.embedding for e in col.get(ids=[f"e{i}" for i in range(size)], include_embeddings=True)]
        )
        for q in probe[10:30]:
            exact = {f"e{i}" for i in np.argsort(-(stored @ q))[:k]}
            agree.append(len(exact & {h.id for h in col.query(q, k)[0]}) / k)
    disk = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    out = {
        f"add_per_s_{size}": size / add_seconds,
        f"query_p50_ms_{size}": statistics.median(latencies),
        f"query_p95_ms_{size}": percentile(latencies, 95),
        f"filtered_query_p50_ms_{size}": statistics.median(filtered),
        f"disk_mb_{size}": disk / 1e6,
    }
    if agree:
        out[f"recall_at_{k}_vs_exact_{size}"] = float(np.mean(agree))
    return out


def bench_embedding(n: int, seed: int) -> dict[str, float]:
    from helper_agent.memory.embeddings import LocalEmbedder, load_sentence_transformer

    rng = np.random.default_rng(seed)
    verbs = [
        "put",
        "clean",
        "slice",
        "cook",
        "toast",
        "water",
        "open",
        "close",
        "turn on",
        "turn off",
        "fill",
        "boil",
    ]
    objects = [
        "the mug",
        "a plate",
        "the bread",
        "the potato",
        "two tomatoes",
        "the plant",
        "the fridge",
        "a bowl",
        "the lamp",
        "the kettle",
        "all forks",
        "the laptop",
    ]
    places = [
        "on the counter",
        "in the sink",
        "on the dining table",
        "in the cabinet",
        "next to the stove",
        "in the microwave",
        "on the sofa",
        "by the toaster",
    ]
    texts = [
        f"<Commander> please {rng.choice(verbs)} {rng.choice(objects)} {rng.choice(places)} ({i})"
        for i in range(n)
    ]
    t0 = time.perf_counter()
    load_sentence_transformer()
    load_s = time.perf_counter() - t0
    embedder = LocalEmbedder(cache_size=n)
    embedder.embed(["warm up"])
    t0 = time.perf_counter()
    embedder.embed(texts)
    seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    embedder.embed(texts)
    cached = time.perf_counter() - t0
    single = []
    for text in texts[:50]:
        t0 = time.perf_counter()
        LocalEmbedder(cache_size=0).embed([text + " again"])
        single.append((time.perf_counter() - t0) * 1000)
    return {
        "embed_model_load_s": load_s,
        "embed_per_s": n / seconds,
        "embed_cached_per_s": n / max(cached, 1e-9),
        "embed_single_query_p50_ms": statistics.median(single),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated store sizes")
    parser.add_argument("--queries", type=int, default=200, help="queries per size")
    parser.add_argument("--k", type=int, default=10, help="results per query")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--batch", type=int, default=1000, help="entries per add call")
    parser.add_argument(
        "--embed-texts", type=int, default=1000, help="sentences for the embedding throughput"
    )
    parser.add_argument("--skip-embedding", action="store_true")
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to build the stores (default: a temp dir)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the stores")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write the figures as one flat JSON object")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    root = args.dir or Path(tempfile.mkdtemp(prefix="helper-memory-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    figures: dict[str, float] = {"dim": args.dim, "k": args.k, "queries": args.queries}
    failed = []
    try:
        for size in sizes:
            t0 = time.perf_counter()
            result = bench_store(
                size,
                dim=args.dim,
                queries=args.queries,
                k=args.k,
                batch=args.batch,
                root=root,
                seed=args.seed,
            )
            figures.update(result)
            p50 = result[f"query_p50_ms_{size}"]
            target = TARGETS_P50_MS.get(size)
            verdict = (
                "" if target is None else f" (target < {target:.0f} ms: {'ok' if p50 < target else 'MISSED'})"
            )
            if target is not None and p50 >= target:
                failed.append(size)
            recall = result.get(f"recall_at_{args.k}_vs_exact_{size}")
            print(
                f"{size:>7} entries: add {result[f'add_per_s_{size}']:>8.0f}/s   query p50 {p50:6.2f} ms   "
                f"p95 {result[f'query_p95_ms_{size}']:6.2f} ms   filtered p50 {result[f'filtered_query_p50_ms_{size}']:6.2f} ms"
                + (f"   recall@{args.k} {recall:.3f}" if recall is not None else "")
                + f"   disk {result[f'disk_mb_{size}']:.0f} MB   ({time.perf_counter() - t0:.0f} s){verdict}",
                flush=True,
            )
        if not args.skip_embedding:
            emb = bench_embedding(args.embed_texts, args.seed)
            figures.update(emb)
            print(
                f"embedding (all-MiniLM-L6-v2, CPU): {emb['embed_per_s']:.0f} sentences/s, "
                f"single query p50 {emb['embed_single_query_p50_ms']:.1f} ms, cached {emb['embed_cached_per_s']:.0f}/s, "
                f"model load {emb['embed_model_load_s']:.1f} s",
                flush=True,
            )
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"figures written to {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
