"""``searchtrace queries from-traces`` on a store of 100,000 emulated searches.

Fills a fresh store with N searches (a ``search`` root and ten stage spans each, built as
``bench_trace_store.py`` builds them: the retriever's attributes at its defaults, 100 candidates
per retriever stage), written through ``TraceStore.write``. Their queries follow a Zipf law over
``--distinct`` texts, a fifth of them spelled with other case or spacing; 3% were recorded
without their text; sources are http 50%, mcp 20%, cli 10%, python 5%, eval 15%; 90% searched
the dataset ``docs``, the rest ``other``. Then times the command, as a user runs it (a new
process each time), for each sampling; median of ``--repeats``. Prints measured figures only.

    python benchmarks/bench_queries_from_traces.py --traces 100000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_trace_store import Synth
from opentelemetry.attributes import BoundedAttributes

from searchtrace.traces import TraceStore
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v

SOURCES = ("http", "mcp", "cli", "python", "eval")
SOURCE_SHARES = (0.50, 0.20, 0.10, 0.05, 0.15)


class Traffic(Synth):
    """Synth's searches, asking Zipf-distributed queries through the surfaces above."""

    def __init__(self, candidates: int, distinct: int, seed: int = 0) -> None:
        super().__init__(candidates, seed)
        ranks = np.arange(1, distinct + 1)
        weights = ranks ** -1.1
        draws = np.random.default_rng(seed)
        self.pick = draws.choice(distinct, size=1 << 20, p=weights / weights.sum())
        self.source = draws.choice(len(SOURCES), size=1 << 20, p=SOURCE_SHARES)
        self.coins = draws.random((1 << 20, 3))

    def _root(self, i: int, degraded: str | None) -> BoundedAttributes:
        a = {k: x for k, x in super()._root(i, degraded).items() if k not in (v.RUN_ID, v.QUERY_ID)}
        j = i % (1 << 20)
        text = f"which harbour holds the archive of guild {self.pick[j]}?"
        if self.coins[j, 0] < 0.2:
            text = "  " + text.upper().replace(" ", "   ")
        a[v.INPUT_VALUE] = text
        if self.coins[j, 1] < 0.03:
            del a[v.INPUT_VALUE]
        a.update(attrs.origin(SOURCES[self.source[j]], "docs" if self.coins[j, 2] < 0.9 else "other"))
        return BoundedAttributes(maxlen=None, attributes=a, immutable=True)


def fill(store: TraceStore, traffic: Traffic, n: int, per_write: int) -> float:
    started = time.perf_counter()
    pending = []
    for i in range(n):
        pending.extend(traffic.trace(i))
        if (i + 1) % per_write == 0 or i == n - 1:
            store.write(pending)
            pending = []
        if (i + 1) % 10_000 == 0:
            print(f"  {i + 1:>7,} traces, {time.perf_counter() - started:.0f} s", flush=True)
    return time.perf_counter() - started


def timed_command(argv: list[str], repeats: int) -> tuple[float, str]:
    """Median wall seconds of ``searchtrace ARGV`` in a new process, and its last output."""
    seconds, out = [], ""
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "searchtrace", *argv], capture_output=True, text=True,
                              check=True, env={**os.environ, "COLUMNS": "80"})
        seconds.append(time.perf_counter() - started)
        out = done.stdout
    return statistics.median(seconds), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=int, default=100_000)
    ap.add_argument("--distinct", type=int, default=5_000, help="distinct query texts the traffic draws from")
    ap.add_argument("--candidates", type=int, default=100, help="recorded candidates per retriever stage")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", help="where to put the store (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="time the command on the store already in --dir")
    args = ap.parse_args()

    folder = Path(args.dir or tempfile.mkdtemp(prefix="bench-queries-"))
    dataset = folder / "docs"
    dataset.mkdir(parents=True, exist_ok=True)
    (dataset / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "title": "", "text": "a harbour"}) + "\n")
    store = TraceStore(folder / "traces.sqlite")
    if not args.reuse:
        print(f"writing {args.traces:,} traces to {store.path}")
        spent = fill(store, Traffic(args.candidates, args.distinct), args.traces, per_write=500)
        size = sum(p.stat().st_size for p in folder.glob("traces.sqlite*"))
        print(f"written in {spent:.0f} s; store {size / 2**20:,.0f} MiB")
    print(f"{store.count():,} traces stored")
    store.close()

    base = ["queries", "from-traces", str(folder / "out"), "--dataset", str(dataset), "--home", str(folder),
            "--force", "--no-progress"]
    print(f"\nqueries from-traces, new process each time, median of {args.repeats} (s):")
    for label, extra in (("--sample all", []), ("--sample random --n 500", ["--sample", "random", "--n", "500"]),
                         ("--sample frequency --n 500", ["--sample", "frequency", "--n", "500"]),
                         ("--sample top --n 500", ["--sample", "top", "--n", "500"]),
                         ("--source http --band low", ["--source", "http", "--band", "low"])):
        seconds, out = timed_command([*base, *extra], args.repeats)
        print(f"  {label:<30} {seconds:6.2f}   {out.splitlines()[1].strip()}")
    version, _ = timed_command(["--version"], args.repeats)
    print(f"  {'(searchtrace --version)':<30} {version:6.2f}")
    print(f"(store left in {folder})")


if __name__ == "__main__":
    main()
