"""Per-query latency of EdgeStore dense, sparse and hybrid search on N random documents.

Prints measured figures only. ``engine`` is the bare ``EdgeShard.query_batch`` call on
prebuilt requests; ``store`` is the full ``EdgeStore`` method; their difference is the
Python overhead of the wrapper (request building and ``Hit`` conversion).

    python benchmarks/bench_vectorstore.py --n 5000
"""

from __future__ import annotations

import argparse
import string
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import qdrant_edge as qe

from searchtrace.retriever.vectorstore.base import PayloadFilter, PointRow
from searchtrace.retriever.vectorstore.bm25 import Bm25Encoder, mean_token_length
from searchtrace.retriever.vectorstore.edge import EdgeStore, _dense_queries, _sparse_queries


def _corpus(rng: np.random.Generator, n: int, doc_len: int, vocab_size: int = 20_000) -> list[str]:
    letters = np.array(list(string.ascii_lowercase))
    vocab = ["".join(rng.choice(letters, size=rng.integers(5, 10))) for _ in range(vocab_size)]
    ranks = np.minimum(rng.zipf(1.2, size=(n, doc_len)), vocab_size) - 1  # Zipfian word use
    return [" ".join(vocab[r] for r in row) for row in ranks]


def _timed(fn: Callable[[], object], repeats: int) -> np.ndarray:
    fn()  # warm-up
    out = np.empty(repeats)
    for i in range(repeats):
        t = time.perf_counter()
        fn()
        out[i] = time.perf_counter() - t
    return out * 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="documents")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--doc-len", type=int, default=150, help="words per document")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--batch", type=int, default=32, help="queries per batched call")
    ap.add_argument("--limit", type=int, default=100)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    texts = _corpus(rng, args.n, args.doc_len)
    dense = rng.normal(size=(args.n, args.dim)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    t0 = time.perf_counter()
    enc = Bm25Encoder(mean_token_length(texts))
    sparse = enc.encode_documents(texts)
    t_bm25 = time.perf_counter() - t0

    q_dense = rng.normal(size=(args.queries, args.dim)).astype(np.float32)
    q_dense /= np.linalg.norm(q_dense, axis=1, keepdims=True)
    q_sparse = enc.encode_queries([" ".join(t.split()[:8]) for t in rng.choice(texts, args.queries)])
    flt = PayloadFilter(collection="c1")

    with tempfile.TemporaryDirectory() as tmp:
        store = EdgeStore(Path(tmp) / "shard")
        store.create(args.dim)
        t0 = time.perf_counter()
        store.upsert([PointRow(i, dense[i], sparse[i],
                               {"id": f"d{i}", "collection": f"c{i % 4}", "tags": ["t"], "timestamp": "2024-01-01"})
                      for i in range(args.n)])
        t_upsert = time.perf_counter() - t0
        t0 = time.perf_counter()
        store.flush()
        t_flush = time.perf_counter() - t0
        info = store.shard.info()
        print(f"N={args.n} dim={args.dim} limit={args.limit}  bm25 encode {t_bm25:.2f}s  upsert {t_upsert:.2f}s  "
              f"flush+optimize {t_flush:.2f}s  segments={info.segments_count} indexed={info.indexed_vectors_count}")

        def raw(queries: list) -> Callable[[], object]:
            reqs = [qe.QueryRequest(limit=args.limit, query=q, with_payload=False) for q in queries]
            return lambda: store.shard.query_batch(qe.QueryBatchRequest(reqs))

        Maker = Callable[[int, int], Callable[[], object]]
        cases: list[tuple[str, Maker, Maker | None]] = [
            ("dense",
             lambda a, b: lambda: store.search_dense(q_dense[a:b], args.limit),
             lambda a, b: raw(_dense_queries(q_dense[a:b]))),
            ("dense+filter",
             lambda a, b: lambda: store.search_dense(q_dense[a:b], args.limit, flt),
             None),
            ("sparse",
             lambda a, b: lambda: store.search_sparse(q_sparse[a:b], args.limit),
             lambda a, b: raw(_sparse_queries(q_sparse[a:b]))),
            ("hybrid",
             lambda a, b: lambda: store.search_hybrid(q_dense[a:b], q_sparse[a:b], args.limit),
             lambda a, b: raw(_dense_queries(q_dense[a:b]) + _sparse_queries(q_sparse[a:b]))),
        ]
        print(f"{'search':<14}{'single p50':>12}{'single p95':>12}{'engine p50':>12}{'overhead':>10}"
              f"{'batch/q':>10}   (ms per query)")
        for name, store_fn, raw_fn in cases:
            single = np.concatenate([_timed(store_fn(i, i + 1), 3) for i in range(args.queries)])
            engine = (np.concatenate([_timed(raw_fn(i, i + 1), 3) for i in range(args.queries)])
                      if raw_fn else None)
            batched = _timed(store_fn(0, args.batch), 20) / args.batch
            eng = f"{np.median(engine):12.3f}{np.median(single) - np.median(engine):10.3f}" if engine is not None \
                else f"{'-':>12}{'-':>10}"
            print(f"{name:<14}{np.median(single):12.3f}{np.percentile(single, 95):12.3f}{eng}"
                  f"{np.median(batched):10.3f}")
        store.close()


if __name__ == "__main__":
    main()
