"""Trace store write throughput, and list/load latency with N stored traces.

Fills a fresh store with N synthetic searches (a ``search`` root and ten stage
spans each, with the attributes the retriever records at its defaults: 100
candidates per retriever stage), exported through ``StoreSpanExporter.export``
in batches of 512 spans as a BatchSpanProcessor would send them (children
first, traces split across batches). Then times each list filter and
``load_trace`` (median of several runs). Prints measured figures only.

    python benchmarks/bench_trace_store.py --traces 100000
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sized
from datetime import timedelta
from pathlib import Path

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags

from searchtrace.names import Stage
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v
from searchtrace.traces.export.exporter import StoreSpanExporter
from searchtrace.traces.spans.attributes import CaptureConfig
from searchtrace.traces.store.sqlite import TraceFilter, TraceStore

STAGES = [Stage.VALIDATE, Stage.REWRITE, Stage.EMBED, Stage.DENSE, Stage.KEYWORD, Stage.GRAPH,
          Stage.FUSE, Stage.RERANK, Stage.FILTER, Stage.SHAPE]
RESOURCE = Resource.create({"service.name": "searchtrace"})
SCOPE = InstrumentationScope("searchtrace")
DAY_NS = 86_400 * 10**9
STEMS = ("harbour", "river", "guild", "lantern", "ferry", "tower", "market", "island", "bridge", "archive")
ENDINGS = ("", "s", "side", "man", "wood", "ford", "gate", "hall", "stone", "way", "mark", "field", "wick", "ton", "ley",
           "by", "worth", "burg", "holm", "stead")
WORDS = [stem + ending for stem in STEMS for ending in ENDINGS]


class Synth:
    """Synthetic traces: shared stage attribute templates, per-trace root attributes and timing."""

    def __init__(self, candidates: int, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        capture = CaptureConfig(max_candidates=candidates)
        self.templates = [self._stage_attributes(capture, candidates, t) for t in range(16)]
        self.now = time.time_ns()

    def _stage_attributes(self, capture: CaptureConfig, n: int, t: int) -> dict[Stage, BoundedAttributes]:
        out = {}
        for name in STAGES:
            ids = [f"doc-{(t * 7919 + i * 104729) % 50_000}" for i in range(n)]
            scores = sorted((self.rng.random() for _ in range(n)), reverse=True)
            a: dict = dict(attrs.span_kind(name.value))
            if name in (Stage.DENSE, Stage.KEYWORD, Stage.GRAPH, Stage.FUSE):
                a.update(attrs.candidates(ids, scores, capture))
            elif name is Stage.RERANK:
                a.update(attrs.rerank("identity", 5, ids, scores, ids[:5], scores[:5], capture))
            elif name is Stage.REWRITE:
                a.update(attrs.rewrite(["Harbour Town"], ["river", "ferry"]))
            elif name is Stage.FILTER:
                a.update(attrs.filtered(["min_relevance"], ids[5:], capture))
            out[name] = BoundedAttributes(maxlen=None, attributes=a, immutable=True)
        return out

    def trace(self, i: int) -> list[ReadableSpan]:
        rng = self.rng
        trace_id, root_id = rng.getrandbits(128) | 1, rng.getrandbits(64) | 1
        start = self.now - int(rng.random() * 30 * DAY_NS)
        stage_ns = [int(rng.lognormvariate(14.2, 0.8)) for _ in STAGES]  # ~1.5 ms median per stage
        if rng.random() < 0.05:  # a slow backend now and then
            stage_ns[5] *= 100
        degraded = rng.choice(["graph", "keyword"]) if rng.random() < 0.03 else None
        template = self.templates[i % len(self.templates)]
        root_ctx = SpanContext(trace_id, root_id, False, TraceFlags(1))
        spans, t = [], start + 1000
        for name, ns in zip(STAGES, stage_ns):
            ctx = SpanContext(trace_id, rng.getrandbits(64) | 1, False, TraceFlags(1))
            failed = name.value == degraded
            events = [Event("exception", {"exception.type": "TimeoutError", "exception.message": "graph timed out"},
                            t + 10)] if failed else []
            spans.append(ReadableSpan(name.value, ctx, root_ctx, RESOURCE, template[name], events,
                                      status=Status(StatusCode.ERROR, "timed out") if failed else Status(),
                                      start_time=t, end_time=t + ns, instrumentation_scope=SCOPE))
            t += ns
        spans.append(ReadableSpan(v.SEARCH_SPAN, root_ctx, None, RESOURCE, self._root(i, degraded), (),
                                  start_time=start, end_time=t + 1000, instrumentation_scope=SCOPE))
        return spans

    def _root(self, i: int, degraded: str | None) -> BoundedAttributes:
        rng = self.rng
        quality = rng.uniform(0.3, 1.0)  # some queries have no good answer in the corpus
        relevance = sorted((quality * rng.betavariate(2, 2) for _ in range(5)), reverse=True)
        bands = ["high" if r >= 0.65 else "low" if r < 0.35 else "medium" for r in relevance]
        mode = "graph" if rng.random() < 0.7 else "fast"
        ids = [f"doc-{rng.randrange(50_000)}" for _ in relevance]
        a = {**attrs.span_kind(v.SEARCH_SPAN),
             **attrs.request(" ".join(rng.choices(WORDS, k=rng.randint(3, 8))), mode, 5, 100, 2, CaptureConfig()),
             **attrs.outcome(ids, bands, relevance, relevance[0], relevance[0] < 0.35,
                             [degraded] if degraded else [], None)}
        if i % 5 == 0:  # a fifth of the searches come from eval runs of 1,000 queries
            a.update(attrs.eval_context(f"run-{i // 5000:03d}", f"q{i % 1000}"))
        return BoundedAttributes(maxlen=None, attributes=a, immutable=True)


def fill(store: TraceStore, synth: Synth, n: int, batch: int) -> tuple[int, float, list[str]]:
    exporter = StoreSpanExporter(store)
    pending: list[ReadableSpan] = []
    ids: list[str] = []
    exported, spent = 0, 0.0
    for i in range(n):
        spans = synth.trace(i)
        ids.append(format(spans[-1].context.trace_id, "032x"))
        pending.extend(spans)
        while len(pending) >= batch or (i == n - 1 and pending):
            chunk, pending = pending[:batch], pending[batch:]
            t = time.perf_counter()
            exporter.export(chunk)
            spent += time.perf_counter() - t
            exported += len(chunk)
        if (i + 1) % 10_000 == 0:
            print(f"  {i + 1:>7} traces, {exported / spent:,.0f} spans/s so far", flush=True)
    assert exporter.failures == 0, exporter.stats()
    return exported, spent, ids


def timed(fn: Callable[[TraceStore], object], path: Path, repeats: int) -> tuple[float, float, object]:
    """Median ms on one long-lived connection (the dashboard) and on a new one each time (the CLI)."""
    store = TraceStore(path)
    result = fn(store)  # warm-up
    warm, fresh = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(store)
        warm.append((time.perf_counter() - t) * 1000)
        new = TraceStore(path).open()
        t = time.perf_counter()
        fn(new)
        fresh.append((time.perf_counter() - t) * 1000)
        new.close()
    store.close()
    return statistics.median(warm), statistics.median(fresh), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=int, default=100_000)
    ap.add_argument("--candidates", type=int, default=100, help="recorded candidates per retriever stage")
    ap.add_argument("--batch", type=int, default=512, help="spans per export call")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--dir", help="where to put the store (default: a temporary folder)")
    ap.add_argument("--reads-only", action="store_true", help="time the reads on the store already in --dir")
    ap.add_argument("--no-prune", action="store_true", help="skip the (destructive) prune timings")
    args = ap.parse_args()

    folder = Path(args.dir or tempfile.mkdtemp(prefix="bench-traces-"))
    store = TraceStore(folder / "traces.sqlite")
    synth = Synth(args.candidates)
    if args.reads_only:
        ids = [s.trace_id for s in store.list_traces(TraceFilter(limit=None))]
        now, spent = store.list_traces(TraceFilter(limit=1))[0].start_ns, 0.0
    else:
        print(f"writing {args.traces:,} traces ({args.candidates} candidates per stage) to {store.path}")
        spans, spent, ids = fill(store, synth, args.traces, args.batch)
        size = sum(p.stat().st_size for p in folder.glob("traces.sqlite*"))
        print(f"write: {spans:,} spans in {spent:.1f} s = {spans / spent:,.0f} spans/s ({spans / spent / 11:,.0f} "
              f"traces/s); store {size / 2**20:,.0f} MiB, {size / args.traces / 1024:.1f} KiB/trace")
        now = synth.now

    day = DAY_NS
    reads: dict[str, Callable[[TraceStore], object]] = {
        "list (newest 50)": lambda s: s.list_traces(TraceFilter()),
        "since 1 day": lambda s: s.list_traces(TraceFilter(since=now - day)),
        "since/until 1 day, 10 days ago": lambda s: s.list_traces(
            TraceFilter(since=now - 11 * day, until=now - 10 * day)),
        "mode=fast": lambda s: s.list_traces(TraceFilter(mode="fast")),
        "band=low": lambda s: s.list_traces(TraceFilter(band="low")),
        "band=high": lambda s: s.list_traces(TraceFilter(band="high")),
        "noConfidentResults": lambda s: s.list_traces(TraceFilter(no_confident=True)),
        "degraded": lambda s: s.list_traces(TraceFilter(degraded=True)),
        "degraded=keyword": lambda s: s.list_traces(TraceFilter(degraded="keyword")),
        "min latency 200 ms": lambda s: s.list_traces(TraceFilter(min_latency_ms=200)),
        "run id": lambda s: s.list_traces(TraceFilter(run_id="run-007")),
        "query text (common word)": lambda s: s.list_traces(TraceFilter(query_text="harbour")),
        "query text (rare: no match)": lambda s: s.list_traces(TraceFilter(query_text="zzz-absent")),
        "mode+band+noConfident+query": lambda s: s.list_traces(
            TraceFilter(mode="graph", band="low", no_confident=True, query_text="ferry")),
        "degraded, all matches (limit None)": lambda s: s.list_traces(TraceFilter(degraded=True, limit=None)),
        "page at offset 10,000": lambda s: s.list_traces(TraceFilter(offset=10_000)),
        "count()": lambda s: s.count(),
        "count(band=low)": lambda s: s.count(TraceFilter(band="low")),
    }
    print(f"\nreads at {store.count():,} traces, median of {args.repeats} (ms): same connection | new connection")
    for label, fn in reads.items():
        warm, fresh, result = timed(fn, store.path, args.repeats)
        n = result if isinstance(result, int) else len(result) if isinstance(result, Sized) else 0
        print(f"  {label:<36} {warm:8.2f} | {fresh:8.2f}  ({n} rows)")

    warm_ms: list[float] = []
    fresh_ms: list[float] = []
    for trace_id in random.Random(1).sample(ids, 50):
        for runs, reader in ((warm_ms, store), (fresh_ms, TraceStore(store.path).open())):
            t = time.perf_counter()
            detail = reader.load_trace(trace_id)
            runs.append((time.perf_counter() - t) * 1000)
            assert detail is not None and len(detail.spans) == 11
        reader.close()
    print(f"  {'load_trace (50 random ids)':<36} {statistics.median(warm_ms):8.2f} | "
          f"{statistics.median(fresh_ms):8.2f}  (max {max(warm_ms):.2f} | {max(fresh_ms):.2f})")

    if not args.no_prune:
        prune(store, len(ids))
    store.close()
    print(f"(store left in {folder}; {timedelta(seconds=round(spent))} spent writing)")


def _file_mib(store: TraceStore) -> float:
    conn = sqlite3.connect(store.path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        conn.close()
    return store.path.stat().st_size / 2**20


def prune(store: TraceStore, n: int) -> None:
    """Prune as ``traces prune --keep-last 100`` would, while another thread writes traces:
    the longest any transaction held the write lock, what the writer waited, the space given back."""
    from contextlib import contextmanager

    from searchtrace.traces.store import sqlite_sql as sql

    held: list[float] = []
    real = sql.write_transaction

    @contextmanager
    def timed_transaction(conn):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        with real(conn):
            yield
        held.append(time.perf_counter() - t)

    before = _file_mib(store)
    writer_waits: list[float] = []
    writer_failures: list[int] = []
    stop = threading.Event()

    def writer() -> None:  # a searching process's exporter: it retries a locked store for up to 30 s
        other = TraceStore(store.path)
        exporter = StoreSpanExporter(other)
        synth = Synth(100)
        i = 0
        while not stop.is_set():
            spans = synth.trace(10**7 + i)
            t = time.perf_counter()
            exporter.export(spans)
            writer_waits.append(time.perf_counter() - t)
            i += 1
            time.sleep(0.05)
        writer_failures.append(exporter.stats().dropped_spans)
        other.close()

    sql.write_transaction = timed_transaction  # type: ignore[assignment]
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        t = time.perf_counter()
        deleted = store.prune(keep_last=100)
        elapsed = time.perf_counter() - t
    finally:
        stop.set()
        thread.join()
        sql.write_transaction = real  # type: ignore[assignment]
    print(f"\nprune keep_last=100: {deleted:,} traces in {elapsed:.2f} s, {len(held)} transactions, the longest "
          f"holding the write lock {max(held) * 1000:.0f} ms; a writer beside it wrote {len(writer_waits)} traces, "
          f"its slowest write {max(writer_waits) * 1000:.0f} ms, {writer_failures[0]} spans lost; "
          f"file {before:,.1f} MiB -> {_file_mib(store):,.1f} MiB")
    t = time.perf_counter()
    ok = store.integrity_check()
    print(f"integrity_check: {ok} in {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
