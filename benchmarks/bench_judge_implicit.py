"""``judge implicit`` over a store of 100,000 served searches and the fetches that follow a fifth of them.

Fills a fresh store with rows inserted in bulk (``TraceStore.insert_rows``, as ``traces repair``
does), in schema 3's columns: ``--searches`` searches of dataset ``docs`` showing 10 results each,
half over MCP in sessions of about five searches, half over HTTP; their queries drawn by a Zipf
law (s = 1.1) over ``--distinct`` texts, half of them the dataset's own queries; the results a
query shows are its ten documents of a 5,000-document corpus, two of them swapped now and then.
``--fetch-share`` of the searches are followed by a fetch of one shown result, at a position drawn
with odds 1/r (MCP fetches found by their session, HTTP ones naming the search's ``traceId``;
every 200th names a trace the store never held). Each trace also has its spans (a root and a
``search`` span for a search, one for a fetch), their attribute blobs ``--span-bytes`` of
incompressible bytes, so the file is the size a real store of this traffic is.

Then times ``implicit_judgments`` in this process (best of ``--repeats``: the first run writes the
judgments, the next ones find nothing changed), its parts, and ``searchtrace judge implicit`` once in
a new process, as a user runs it. Prints measured figures only.

    python benchmarks/bench_judge_implicit.py --searches 100000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import orjson

from searchtrace.evals import implicit_judgments
from searchtrace.traces import InteractionFilter, TraceStore, is_damaged

T = TypeVar("T")
DOCS = 5_000
SHOWN = 10
T0 = 1_760_000_000_000_000_000
STEP_NS = 2_000_000_000  # a search every 2 s


def dataset(folder: Path, distinct: int) -> Path:
    """The dataset ``docs``: its corpus and, as its queries, every other traffic text."""
    root = folder / "docs"
    root.mkdir(parents=True, exist_ok=True)
    with (root / "corpus.jsonl").open("w") as out:
        out.writelines(json.dumps({"_id": f"d{i}", "title": "", "text": f"passage {i}"}) + "\n" for i in range(DOCS))
    with (root / "queries.jsonl").open("w") as out:
        out.writelines(json.dumps({"_id": f"own-{q}", "text": _text(q)}) + "\n" for q in range(0, distinct, 2))
    return root


def _text(q: int) -> str:
    return f"which harbour keeps the archive of guild {q}?"


def _hex(rng: np.random.Generator) -> str:
    return rng.bytes(16).hex()


def _row(trace_id: str, start: int, source: str, *, query: str | None = None, shown: list[str] | None = None,
         session: str | None = None, fetched: list[str] | None = None, fetch_of: str | None = None) -> tuple:
    """A ``traces`` row in schema 3's column order."""
    search = shown is not None
    return (trace_id, start, start + 40_000_000, 40.0, 1, "tools/call search" if search else "GET /v1/docs", "OK",
            "fast" if search else None, query, query.casefold() if query else None, None, None,
            SHOWN if search else None, 0.8 if search else None, 0 if search else None, "", 1 if search else 0,
            SHOWN if search else None, None, 2 if search else 1, None, source if search else None, "docs", session,
            orjson.dumps(shown).decode() if search else None, orjson.dumps(fetched).decode() if fetched else None,
            fetch_of)


def _spans(trace_id: str, start: int, names: list[str], blob: int, rng: np.random.Generator) -> list[tuple]:
    root = rng.bytes(8).hex()
    out = []
    for i, name in enumerate(names):
        out.append((trace_id, root if i == 0 else rng.bytes(8).hex(), None if i == 0 else root, name,
                    "SERVER" if i == 0 else "INTERNAL", start, start + 40_000_000, "UNSET", None, "searchtrace",
                    rng.bytes(blob // len(names)), "[]"))
    return out


def fill(store: TraceStore, searches: int, distinct: int, fetch_share: float, span_bytes: int, seed: int = 0) -> int:
    """Insert the traffic; returns how many traces."""
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, distinct + 1)
    weights = ranks ** -1.1
    queries = rng.choice(distinct, size=searches, p=weights / weights.sum())
    odds = 1 / np.arange(1, SHOWN + 1)
    positions = rng.choice(SHOWN, size=searches, p=odds / odds.sum())
    coins = rng.random((searches, 4))
    traces: list[tuple] = []
    spans: list[tuple] = []
    session, total = _hex(rng), 0
    for i in range(searches):
        q, start = int(queries[i]), T0 + i * STEP_NS
        shown = [f"d{(q * 7 + k) % DOCS}" for k in range(SHOWN)]
        if coins[i, 0] < 0.3:
            a, b = rng.integers(SHOWN, size=2)
            shown[a], shown[b] = shown[b], shown[a]
        mcp = coins[i, 1] < 0.5
        if mcp and coins[i, 2] < 0.2:
            session = _hex(rng)  # a new agent session, about every fifth MCP search
        trace_id = _hex(rng)
        traces.append(_row(trace_id, start, "mcp" if mcp else "http", query=_text(q), shown=shown,
                           session=session if mcp else None))
        spans += _spans(trace_id, start, ["tools/call search", "search"], span_bytes, rng)
        if coins[i, 3] < fetch_share:
            fetch_id, fetched = _hex(rng), [shown[int(positions[i])]]
            named = None if mcp else (trace_id if i % 200 else _hex(rng))
            traces.append(_row(fetch_id, start + 1_000_000_000, "mcp" if mcp else "http",
                               session=session if mcp else None, fetched=fetched, fetch_of=named))
            spans += _spans(fetch_id, start + 1_000_000_000, ["GET /v1/docs"], span_bytes // 4, rng)
        if len(traces) >= 2_000 or i == searches - 1:
            store.insert_rows(traces, spans)
            total += len(traces)
            traces, spans = [], []
    return total


def timed(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[float, T]:
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - started, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--searches", type=int, default=100_000)
    ap.add_argument("--distinct", type=int, default=5_000, help="distinct query texts the traffic draws from")
    ap.add_argument("--fetch-share", type=float, default=0.2, help="share of searches followed by a fetch")
    ap.add_argument("--span-bytes", type=int, default=4_096, help="attribute bytes of a search's spans")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", help="where to put the store and the dataset (default: a temporary folder)")
    args = ap.parse_args()

    folder = Path(args.dir or tempfile.mkdtemp(prefix="bench-implicit-"))
    docs = dataset(folder, args.distinct)
    store = TraceStore(folder / "traces.sqlite")
    print(f"inserting {args.searches:,} searches and their fetches into {store.path}")
    spent, traces = timed(fill, store, args.searches, args.distinct, args.fetch_share, args.span_bytes)
    store.close()
    size = sum(p.stat().st_size for p in folder.glob("traces.sqlite*"))
    print(f"{traces:,} traces inserted in {spent:.0f} s; store {size / 2**20:,.0f} MiB")

    print("\nparts, in this process:")
    check, _ = timed(is_damaged, store.path)
    print(f"  quick_check (is_damaged)        {check:6.2f} s")
    reader = TraceStore(store.path)
    read, batches = timed(lambda: [x for b in reader.interactions(InteractionFilter("docs")) for x in b])
    reader.close()
    print(f"  read impressions and fetches    {read:6.2f} s   ({len(batches):,} rows)")

    print(f"\nimplicit_judgments in this process, {args.repeats} runs (the first writes):")
    best = float("inf")
    for n in range(args.repeats):
        seconds, report = timed(implicit_judgments, docs, home=folder)
        best = min(best, seconds)
        c = report.counts
        print(f"  run {n + 1}: {seconds:6.2f} s   {c.impressions:,} impressions, {c.fetches:,} fetches, "
              f"{c.clicks:,} clicks, {c.unknown_traces:,} unknown, {len(report.pairs):,} pairs judged, "
              f"{report.written:,} written")
    print(f"  best of {args.repeats}: {best:.2f} s")

    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "searchtrace", "judge", "implicit", str(docs), "--home", str(folder),
                           "--no-progress"], capture_output=True, text=True, check=True,
                          env={**os.environ, "COLUMNS": "80"})
    print(f"\nsearchtrace judge implicit, a new process: {time.perf_counter() - started:.2f} s")
    print("\n".join("  " + line for line in done.stdout.splitlines()))
    print(f"(store and dataset left in {folder})")


if __name__ == "__main__":
    main()
