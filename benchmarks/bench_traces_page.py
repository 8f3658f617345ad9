"""The Traces page's first page with N stored traces on the local store: every filter and preset, over the whole
store (issue 40).

Fills a fresh home's SQLite store with N synthetic searches (``bench_trace_store.Synth``: a ``search`` root and
ten stage spans, 100 candidates per retriever stage), most from eval runs, one in 1,000 served over HTTP and
one in 1,000 over MCP, one in 997 refused with an error code: ``--written`` of them through the store's own
write path, the rest copies of those made by SQL (new trace ids, each copy 30 days earlier, their spans and
documents with them), since writing 100,000 through the exporter takes over an hour on a loaded machine and
the reads timed here do not care how the rows came. Then times what the page reads for each filter:
the first page (200 rows, ``dashboard.data.list_traces``) and the count (``count_traces``), median of several
runs on the dashboard's long-lived connection. Prints measured figures only.

    python benchmarks/bench_traces_page.py --traces 100000
"""

from __future__ import annotations

import argparse
import functools
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from bench_trace_store import DAY_NS, Synth, fill
from opentelemetry.attributes import BoundedAttributes

from searchtrace.dashboard import data
from searchtrace.home import Home
from searchtrace.traces import TraceFilter, TraceOrder
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v
from searchtrace.traces.store.sqlite import TraceStore

LIMIT_MS = 300.0


class Traffic(Synth):
    """:class:`Synth`'s searches, each with its source (eval, a few served) and, now and then, an error code."""

    def _root(self, i: int, degraded: str | None) -> BoundedAttributes:
        root = dict(super()._root(i, degraded))
        source = "http" if i % 1000 == 1 else "mcp" if i % 1000 == 2 else "eval"
        root.update(attrs.origin(source, "sample", "key", i % 5000 == 7))
        if i % 997 == 3:
            root[v.ERROR_CODE] = "VALIDATION_ERROR"
        return BoundedAttributes(maxlen=None, attributes=root, immutable=True)


def replicate(path: Path, copies: int) -> None:
    """Add ``copies`` copies of every stored trace (traces, spans, documents, attributes), trace ids and times
    changed."""
    conn = sqlite3.connect(path)
    traces = [r[1] for r in conn.execute("PRAGMA table_info(traces)")]
    spans = [r[1] for r in conn.execute("PRAGMA table_info(spans)")]
    conn.execute("CREATE TEMP TABLE originals AS SELECT trace_id FROM traces")
    mine = "WHERE trace_id IN (SELECT trace_id FROM originals)"
    for k in range(1, copies + 1):
        new_id = f"substr(trace_id, 1, 28) || printf('%04x', {k})"
        shift = f" - {k} * {30 * DAY_NS}"
        pick = {"trace_id": new_id, "start_ns": f"start_ns{shift}", "end_ns": f"end_ns{shift}"}
        with conn:
            for table, columns in (("traces", traces), ("spans", spans)):
                conn.execute(f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) SELECT "
                             f"{', '.join(pick.get(c, c) for c in columns)} FROM {table} {mine}")
            conn.execute(f"INSERT OR IGNORE INTO trace_docs SELECT doc_id, {new_id} FROM trace_docs {mine}")
            conn.execute(f"INSERT OR IGNORE INTO trace_attrs SELECT key, value, {new_id} FROM trace_attrs {mine}")
            conn.execute(f"INSERT OR IGNORE INTO trace_attrs_long SELECT key, {new_id} FROM trace_attrs_long {mine}")
    conn.close()  # no ANALYZE: a store's own writers never run one


def filters() -> dict[str, TraceFilter]:
    """What the page asks for: its default, each preset, each filter alone, and the orders."""
    page = data.SEARCHES
    out = {"default (searches)": page}
    out.update({f"preset {name}": preset.apply(page) for name, preset in data.PRESETS.items()})
    out.update({
        "source http": replace(page, sources=("http",)), "service searchtrace": replace(page, service="searchtrace"),
        "service absent": replace(page, service="rag-app"), "status errors": replace(page, errors=True),
        "failed in any way": replace(page, failed=True), "mode fast": replace(page, mode="fast"),
        "degraded graph": replace(page, degraded="graph"), "query text 'ferry'": replace(page, query_text="ferry"),
        "document in every 16th trace": replace(page, doc_id="doc-0"),
        "document in a few traces": replace(page, doc_id="doc-4242"),
        "document absent": replace(page, doc_id="doc-absent"),
        "attribute common": replace(page, attribute=(v.INPUT_VALUE, "harbour")),
        "attribute rare (one in 1,000)": replace(page, attribute=(v.SOURCE, "mcp")),
        "last hour": replace(page, since=time.time_ns() - 3600 * 10**9),
        "slowest first": replace(page, order=TraceOrder.SLOWEST),
        "live traffic, slowest first": replace(data.PRESETS["live traffic"].apply(page), order=TraceOrder.SLOWEST),
    })
    return out


def timed(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Median ms of ``repeats`` calls after a warm-up (the connection, the page cache), and what it returned."""
    result = fn()
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        runs.append((time.perf_counter() - t) * 1000)
    return statistics.median(runs), result


def page(home: Path, flt: TraceFilter, repeats: int) -> tuple[float, float, int, str]:
    """What the page reads for ``flt``, as ``dashboard/views/traces.py`` reads it: (page ms, count ms, rows, the
    count as shown). The attribute filter's count is its page's (counting would read every span it passes)."""
    scanned = flt.attribute is not None
    page_ms, listed = timed(functools.partial(data.list_traces, home, flt), 1 if scanned else repeats)
    rows = len(listed)  # type: ignore[arg-type]
    if scanned:
        return page_ms, 0.0, rows, f"{rows:,}{'+' if rows == flt.limit else ''}"
    count_ms, total = timed(functools.partial(data.count_traces, home, flt), repeats)
    return page_ms, count_ms, rows, f"{total:,}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=int, default=100_000)
    ap.add_argument("--written", type=int, default=10_000, help="traces written through the store (the rest copied)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dir", help="the home to fill once and read again (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(args.dir or tmp)
        if not Home(home).traces.exists():
            store = TraceStore(Home(home).traces)
            t = time.perf_counter()
            written = min(args.written, args.traces)
            _, spent, _ = fill(store, Traffic(candidates=100), written, 512)
            store.close()
            print(f"written through the store: {spent / written * 1000:.1f} s per 1,000 traces")
            replicate(Home(home).traces, args.traces // written - 1)
            print(f"filled ({written:,} written, the rest copied) in {time.perf_counter() - t:.0f} s")
        print(f"{TraceStore(Home(home).traces).count():,} traces in {Home(home).traces}")
        slowest = 0.0
        print(f"{'filter':<34} {'page ms':>8} {'count ms':>9} {'rows':>5} {'matching':>9}")
        for name, flt in filters().items():
            page_ms, count_ms, rows, shown = page(home, flt, args.repeats)
            print(f"{name:<34} {page_ms:>8.1f} {count_ms:>9.1f} {rows:>5} {shown:>9}", flush=True)
            slowest = max(slowest, page_ms + count_ms)
        verdict = "within" if slowest <= LIMIT_MS else "over"
        print(f"slowest page with its count: {slowest:.1f} ms ({verdict} {LIMIT_MS:.0f} ms)")


if __name__ == "__main__":
    main()
