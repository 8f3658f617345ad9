"""Reading a TREC run with one long document id among short ones: the id interner's cost (issue 35).

Writes (seeded) a run of ``--lines`` lines with short ids, then the same run with one id
made ``N`` bytes long, for each ``N`` of ``--lengths``, and times ``read_run`` on each
(median of ``--repeats``), as the tree on ``PYTHONPATH`` reads it. Lengths over the TREC
line limit (``searchtrace.limits``, where it exists) are refused at their line: the time to
refuse is printed. Prints measured figures only.

    PYTHONPATH=TREE python benchmarks/bench_long_ids.py [--lines 10000] [--lengths 0 500 3000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from searchtrace.errors import SearchtraceError


def _run(path: Path, lines: int, long_id: int) -> None:
    rng = random.Random(7)
    rows = []
    for i in range(lines):
        doc = f"d{i}-{rng.randrange(100_000)}"
        if long_id and i == lines // 2:
            doc = "x" * long_id
        rows.append(f"q{i // 100} Q0 {doc} {i % 100 + 1} {1000 - i % 100}.5 bench\n")
    path.write_text("".join(rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--lengths", type=int, nargs="+", default=[0, 500, 3000])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    from searchtrace.evals import read_run

    with tempfile.TemporaryDirectory() as tmp:
        for length in args.lengths:
            path = Path(tmp) / f"run-{length}.trec"
            _run(path, args.lines, length)
            times, outcome = [], "read"
            for _ in range(args.repeats):
                start = time.perf_counter()
                try:
                    read_run(path)
                except SearchtraceError as exc:
                    outcome = f"refused: {str(exc).splitlines()[0][-60:]}"
                times.append(time.perf_counter() - start)
            label = f"one id of {length:,} bytes" if length else "short ids only"
            print(f"{label:<26} {statistics.median(times) * 1000:9.1f} ms  (min {min(times) * 1000:.1f})  {outcome}")


if __name__ == "__main__":
    main()
