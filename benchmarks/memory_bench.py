"""Benchmark of the memory layer: store add throughput and query latency at scale, embedding speed.

The scale test uses the embedded Chroma store (PersistentClient in a temporary folder) with
precomputed random unit vectors (384-d, like all-MiniLM-L6-v2), so embedding time is excluded;
the embedding throughput of the local model is measured separately.

Per-user queries (what routines do) are measured two ways at each size, with `--per-user` entries
per user (so 100k entries are 1,000 users):

- `user_filter_query_p50_ms_N`: one collection for everyone, a `where` filter on the user (the
  routine memory's first layout; local Chroma has no metadata index, so this scans every entry);
- `user_query_p50_ms_N`, `routine_recall_p50_ms_N`, `routine_list_p50_ms_N`: the routine memory's
  layout, one collection per user, through `RoutineMemory` (recall = query + the matched routine's
  versions; list = the latest version of each of the user's routines), with a hashing embedder so
  that the model's time is excluded.

    .venv/bin/python benchmarks/memory_bench.py                       # 1k, 10k, 100k entries
    .venv/bin/python benchmarks/memory_bench.py --sizes 1000,10000 --json out/memory_bench.json
    .venv/bin/python benchmarks/memory_bench.py --self-recall 5000,20000 --json out/self_recall.json

`--self-recall N,...` builds one user's memory of N routines with the real embedding model and asks
for each routine by its own teaching request: `self_recall_rate_N_exact` is the routine memory as it
searches (exactly, up to `HELPER_ROUTINE_EXACT_MAX` versions), `..._index` the same through Chroma's
HNSW index, as every recall did before issue 38.

Targets: every query p50 < 20 ms at 10k entries, < 100 ms at 100k (per-user queries included).
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

from helper_agent.memory.embeddings import HashEmbedder
from helper_agent.memory.routines import Routine, RoutineMemory
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


def _p50(samples: list[float]) -> float:
    return statistics.median(samples)


def _timed(calls: int, fn) -> list[float]:
    out = []
    for i in range(calls):
        t0 = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def bench_users(
    size: int, *, dim: int, queries: int, k: int, batch: int, per_user: int, root: Path, seed: int
) -> dict[str, float]:
    """Per-user queries at `size` entries in total: one shared collection with a `where` filter
    (the first routine layout) against a collection per user (the routine memory's layout)."""
    rng = np.random.default_rng(seed + size + 1)
    users = max(1, size // per_user)
    # The first layout: everyone in one collection, each entry tagged with its user.
    store = VectorStore(root / f"users-shared-{size}")
    shared = store.collection(f"shared-{size}", embedder_name=f"random:{dim}", dim=dim)
    for start in range(0, size, batch):
        n = min(batch, size - start)
        shared.upsert(
            [
                Entry(id=f"e{start + i}", document="", metadata={"user": f"u{(start + i) % users}"}, embedding=v)
                for i, v in enumerate(unit_vectors(rng, n, dim))
            ]
        )
    probe = unit_vectors(rng, queries + 10, dim)
    picks = rng.integers(0, users, size=queries + 10)
    for i in range(10):
        shared.query(probe[i], k, {"user": f"u{picks[i]}"})
    filtered = _timed(queries, lambda i: shared.query(probe[10 + i], k, {"user": f"u{picks[10 + i]}"}))

    # The routine memory's layout: one collection per user, written through RoutineMemory.
    memory = RoutineMemory(store=VectorStore(root / f"users-own-{size}"), embedder=HashEmbedder(dim))
    t0 = time.perf_counter()
    for u in range(users):
        memory.add(
            [
                Routine(
                    user=f"u{u}",
                    name=f"routine {n}",
                    program=f"# routine {n} of u{u}\ndo_nothing()\n",
                    request=f"please do routine number {n} the way user {u} likes it",
                )
                for n in range(per_user)
            ]
        )
    add_s = time.perf_counter() - t0
    assert memory.count(user="u0") == per_user
    texts = [f"do routine number {int(n)} please" for n in rng.integers(0, per_user, size=queries + 10)]
    for i in range(10):
        memory.recall(texts[i], user=f"u{picks[i]}", min_score=-1)
    recall = _timed(queries, lambda i: memory.recall(texts[10 + i], user=f"u{picks[10 + i]}", min_score=-1))
    listing = _timed(max(10, queries // 4), lambda i: memory.routines(user=f"u{picks[i]}"))
    vectors = unit_vectors(rng, queries, dim)
    own = _timed(queries, lambda i: memory._user_col(f"u{picks[i]}", create=False).query(vectors[i], k))
    return {
        f"users_{size}": users,
        f"user_filter_query_p50_ms_{size}": _p50(filtered),
        f"user_query_p50_ms_{size}": _p50(own),
        f"routine_recall_p50_ms_{size}": _p50(recall),
        f"routine_recall_p95_ms_{size}": percentile(recall, 95),
        f"routine_list_p50_ms_{size}": _p50(listing),
        f"routine_add_per_s_{size}": size / add_s,
    }


OWNERS = ["Mary", "John", "Aiko", "Bruno", "Chen", "Dana", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas",
          "Kofi", "Lena", "Marco", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor",
          "Wen", "Ximena", "Yusuf", "Zoe", "Anton", "Bea", "Carlos", "Dmitri", "Esther", "Felix", "Gita", "Hana",
          "Ivan", "Julia", "Kai", "Luis"]
CHORES = ["cleaning", "breakfast", "coffee", "tidying", "dish washing", "salad", "sandwich", "toast", "tea",
          "watering", "laundry folding", "table setting", "fruit bowl", "lunch box", "dessert", "soup", "omelette",
          "potato boiling", "apple slicing", "bread slicing", "mug washing", "plate stacking", "candle lighting",
          "desk tidying", "sink scrubbing"]
ROOMS = ["kitchen", "living room", "bedroom", "bathroom", "dining room", "study", "hallway", "porch", "attic",
         "basement"]
WHEN = ["in the morning", "in the evening"]


def routine_texts(n: int) -> list[tuple[str, str]]:
    """`n` distinct (name, teaching request) pairs, alike on purpose (same owners, chores, rooms)."""
    out = []
    for owner in OWNERS:
        for chore in CHORES:
            for room in ROOMS:
                for when in WHEN:
                    out.append((f"{owner}'s {room} {chore} {when.split()[-1]}",
                                f"do the {chore} in the {room} {when} the way {owner} likes it"))
    if n > len(out):
        raise ValueError(f"at most {len(out)} distinct routines")
    rng = np.random.default_rng(0)
    return [out[i] for i in sorted(rng.choice(len(out), size=n, replace=False))]


def bench_self_recall(size: int, *, embeddings: str, exact_max: int, queries: int, root: Path) -> dict[str, float]:
    """One user with `size` routines: is each routine the top hit for its own teaching request?

    `exact_max` is `HELPER_ROUTINE_EXACT_MAX`: the default searches exactly (every routine
    recallable), 0 goes through the HNSW index as every recall did before (the "before" figure).
    `queries` routines are asked for (all of them when 0)."""
    from helper_agent.config import Settings
    from helper_agent.memory.embeddings import get_embedder

    settings = Settings(embeddings=embeddings, routine_exact_max=exact_max, embedding_cache=False)
    memory = RoutineMemory(store=VectorStore(root / f"self-{size}-{exact_max}", settings=settings),
                           embedder=get_embedder(embeddings, settings=settings), settings=settings)
    texts = routine_texts(size)
    program = 'mug = InteractionObject("Mug")\nmug.pickup()\n'
    t0 = time.perf_counter()
    for start in range(0, size, 500):
        memory.add([Routine(user="u", name=name, program=program, request=request)
                    for name, request in texts[start:start + 500]])
    add_s = time.perf_counter() - t0
    asked = range(size) if not queries else np.random.default_rng(1).choice(size, size=min(queries, size), replace=False)
    missing, times = 0, []
    for i in asked:
        name, request = texts[int(i)]
        t = time.perf_counter()
        hits = memory.recall(request, user="u", k=1, min_score=-1)
        times.append(1000 * (time.perf_counter() - t))
        missing += not hits or hits[0].record.name != name
    tag = f"{size}_{'exact' if exact_max >= size else 'index'}"
    return {f"self_recall_rate_{tag}": 1 - missing / len(times), f"self_recall_missing_{tag}": missing,
            f"self_recall_asked_{tag}": len(times), f"self_recall_p50_ms_{tag}": _p50(times),
            f"self_recall_add_s_{tag}": add_s}


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
    parser.add_argument("--per-user", type=int, default=100, help="entries per user in the per-user queries")
    parser.add_argument("--skip-users", action="store_true", help="skip the per-user query figures")
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to build the stores (default: a temp dir)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the stores")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write the figures as one flat JSON object")
    parser.add_argument("--self-recall", default="", help="comma-separated routine counts: is each routine the "
                        "top hit for its own teaching request (exact search, and through the index as before)?")
    parser.add_argument("--self-recall-embeddings", default="local", help="HELPER_EMBEDDINGS for --self-recall")
    parser.add_argument("--self-recall-queries", type=int, default=0, help="routines asked for (0: all)")
    args = parser.parse_args(argv)
    if args.self_recall:
        root = args.dir or Path(tempfile.mkdtemp(prefix="helper-memory-bench-"))
        figures: dict[str, float] = {"embeddings": args.self_recall_embeddings}  # type: ignore[dict-item]
        try:
            for size in (int(s) for s in args.self_recall.split(",") if s.strip()):
                for exact_max in (max(size, 50_000), 0):
                    result = bench_self_recall(size, embeddings=args.self_recall_embeddings, exact_max=exact_max,
                                               queries=args.self_recall_queries, root=root)
                    figures.update(result)
                    print("  ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items()),
                          flush=True)
        finally:
            _finish(args, root, figures)
        return 0
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
            if not args.skip_users:
                t1 = time.perf_counter()
                users = bench_users(
                    size,
                    dim=args.dim,
                    queries=args.queries,
                    k=args.k,
                    batch=args.batch,
                    per_user=args.per_user,
                    root=root,
                    seed=args.seed,
                )
                figures.update(users)
                waited = [users[f"{name}_p50_ms_{size}"] for name in ("user_query", "routine_recall", "routine_list")]
                if target is not None and max(waited) >= target:
                    failed.append(size)
                print(
                    f"{size:>7} entries, {users[f'users_{size}']:.0f} users: shared collection + where p50 "
                    f"{users[f'user_filter_query_p50_ms_{size}']:6.2f} ms   per-user collection p50 "
                    f"{users[f'user_query_p50_ms_{size}']:6.2f} ms   routine recall p50 "
                    f"{users[f'routine_recall_p50_ms_{size}']:6.2f} ms (p95 {users[f'routine_recall_p95_ms_{size}']:.2f})   "
                    f"routine list p50 {users[f'routine_list_p50_ms_{size}']:6.2f} ms   ({time.perf_counter() - t1:.0f} s)",
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
        _finish(args, root, figures)
    return 1 if failed else 0


def _finish(args: argparse.Namespace, root: Path, figures: dict[str, float]) -> None:
    """Remove the stores (unless kept) and write the figures (`--json`)."""
    if not args.keep and args.dir is None:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"figures written to {args.json}")


if __name__ == "__main__":
    raise SystemExit(main())
