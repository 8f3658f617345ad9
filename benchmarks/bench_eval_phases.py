"""Where the eval's own CPU per query goes against a target: each phase's thread CPU (issue 38).

Usage:
    flock /tmp/searchtrace-bench.lock python benchmarks/bench_eval_phases.py \
        [--transport http|mcp-http|mcp-stdio] [--copies 6] [--dataset datasets/sample]

``searchtrace serve`` runs on a loopback port (or as the eval's stdio child),
and ``eval --target`` runs in this process twice, on the dataset's test queries
and on ``--copies`` times as many, as ``bench_targets.py`` does. Each function
named in :data:`PHASES` is wrapped: its thread CPU (``time.thread_time``),
less that of the wrapped calls inside it, is added to its phase. Each figure is
the large run's total less the small run's, over the difference in queries, so
the fixed costs cancel. The MCP session's loop thread is read whole when the
session closes, and Python's garbage collections are timed by ``gc.callbacks``.
The process's own CPU a query is printed first: the phases' sum beside it shows
how much the wrappers themselves add.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bench_targets as bt

PHASES = [
    ("searchtrace.evals.runs.execution.orchestrate", "finalize"),
    ("searchtrace.evals.runs.runfolder.journal", "Journal.read"),
    ("searchtrace.evals.runs.runfolder.journal", "Journal.append"),
    ("searchtrace.evals.runs.target", "TargetRetriever.search_detailed"),
    ("searchtrace.evals.runs.target", "_response_of"),
    ("searchtrace.evals.runs.target", "detail_of"),
    ("searchtrace.evals.runs.targets.mapping", "map_results"),
    ("searchtrace.evals.runs.targets.shaped", "response_json"),
    ("searchtrace.evals.runs.targets.session", "LoopSession.call"),
    ("searchtrace.evals.runs.execution.loop", "outcome_of"),
    ("searchtrace.evals.runs.execution.loop", "store_traces"),
    ("searchtrace.evals.runs.analysis", "evaluation"),
    ("searchtrace.evals.runs.analysis", "run_of"),
    ("searchtrace.evals.runs.runfolder.folder", "RunFolder.write_run_file"),
    ("searchtrace.evals.runs.runfolder.folder", "RunFolder.write_tables"),
    ("searchtrace.evals.runs.runfolder.folder", "RunFolder.write_summary"),
    ("searchtrace.traces.store.sqlite", "TraceStore.write"),
    ("searchtrace.evals.cli", "cmd_eval"),
]
"""(module, attribute path) of each function measured; a function imported by name elsewhere before the wrap
is measured only where it is called through its module."""

TOTAL: dict[str, float] = defaultdict(float)
CALLS: dict[str, int] = defaultdict(int)
_local = threading.local()


def wrap(module: str, path: str) -> None:
    """Replace the function at ``module.path`` by one adding its exclusive thread CPU to ``TOTAL[path]``."""
    owner: Any = importlib.import_module(module)
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    fn: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(fn)
    def measured(*args: Any, **kwargs: Any) -> Any:
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        started = time.thread_time()
        stack.append(0.0)
        try:
            return fn(*args, **kwargs)
        finally:
            spent = time.thread_time() - started
            inner = stack.pop()
            TOTAL[path] += spent - inner
            CALLS[path] += 1
            if stack:
                stack[-1] += spent

    setattr(owner, name, measured)


def measure_loop_thread() -> None:
    """Add the MCP session's loop thread's whole CPU, read as the session closes."""
    from searchtrace.evals.runs.targets.session import LoopSession

    close = LoopSession.close

    def closing(self: LoopSession) -> None:
        ident = self._thread.ident
        if ident is not None and self._thread.is_alive():
            TOTAL["[MCP loop thread]"] += time.clock_gettime(time.pthread_getcpuclockid(ident))
            CALLS["[MCP loop thread]"] += 1
        close(self)

    LoopSession.close = closing  # type: ignore[method-assign]


def measure_gc() -> None:
    started = [0.0]

    def timed(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            key = f"[gc generation {info['generation']}]"
            TOTAL[key] += time.thread_time() - started[0]
            CALLS[key] += 1

    gc.callbacks.append(timed)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--transport", choices=("http", "mcp-http", "mcp-stdio"), default="http")
    p.add_argument("--copies", type=int, default=6)
    p.add_argument("--dataset", type=Path, default=bt.REPO / "datasets" / "sample")
    args = p.parse_args()
    for module, path in PHASES:
        wrap(module, path)
    measure_loop_thread()
    measure_gc()
    work = Path(tempfile.mkdtemp(prefix="bench-phases-"))
    small, large = bt.copied(args.dataset, work, 1), bt.copied(args.dataset, work, args.copies)
    port = bt.free_port()
    server = bt.start_server(argparse.Namespace(dataset=args.dataset, home=None), port, work / "serve.log")
    url = f"http://127.0.0.1:{port}"
    stdio = [sys.executable, "-m", "searchtrace", "serve", "--mcp", "stdio", str(args.dataset), "--no-progress"]
    target = {"http": ["--target", url], "mcp-http": ["--target", f"mcp+{url}/mcp", "--tool", "search"],
              "mcp-stdio": ["--target", "mcp+stdio:" + " ".join(stdio), "--tool", "search"]}[args.transport]
    try:
        bt.run_eval(small, work / "home", target)  # warm: imports, the first connection
        runs = []
        for dataset in (small, large):
            TOTAL.clear()
            CALLS.clear()
            cpu = time.process_time()
            bt.run_eval(dataset, work / "home", target)
            runs.append((time.process_time() - cpu, dict(TOTAL)))
    finally:
        server.terminate()
        server.wait(30)
    n = len(bt.test_queries(large)) - len(bt.test_queries(small))
    (cpu_small, small_phases), (cpu_large, large_phases) = runs
    rows = {k: (v - small_phases.get(k, 0.0)) * 1000 / n for k, v in large_phases.items()}
    print(f"{args.transport}: the process's CPU a query {(cpu_large - cpu_small) * 1000 / n:.3f} ms "
          f"({n} queries)")
    for key, ms in sorted(rows.items(), key=lambda kv: -kv[1]):
        print(f"{ms:8.3f} ms  {key}")
    print(f"{sum(rows.values()):8.3f} ms  (the phases' sum)")


if __name__ == "__main__":
    main()
