"""Answered against stored traces when a server, or one of its workers, is killed with ``kill -9`` under load.

Usage:
    python benchmarks/bench_kill.py DATASET --home HOME [--answers 500] [--clients 4] [--rounds 2]

Each round runs ``searchtrace serve DATASET`` (the index already built in HOME)
on a loopback port, four times: one process and ``--workers 2``, each with the
answer waiting for its trace's commit (the default) and without
(``SEARCHTRACE_TRACE_ACK=0``, as before issue 23). ``--clients`` threads search
until ``--answers`` answers came back; then the server (or worker 0) gets
SIGKILL. The store is then read: of the answered traces, how many are stored
and how many whole (with their root span), and how many stored traces of
searches never answered lack their root. Median latency of the answers, ack on
over ack off, is the cost of the wait. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx


def _serve(dataset: Path, home: Path, ack: bool, workers: int,
           env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "SEARCHTRACE_OTLP": "0", "SEARCHTRACE_TRACE_ACK": "1" if ack else "0", **(env or {})}
    flags = ["--workers", str(workers)] if workers > 1 else []
    process = subprocess.Popen([sys.executable, "-m", "searchtrace", "serve", str(dataset), "--home", str(home),
                                "--port", "0", "--no-progress", *flags], env=env, stderr=subprocess.PIPE, text=True)
    stream = process.stderr
    assert stream is not None
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(stream.readline, "")), daemon=True).start()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        found = re.search(r"http://127\.0\.0\.1:(\d+)", "".join(lines))
        if found:
            url = f"http://127.0.0.1:{found.group(1)}"
            try:
                if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                    return process, url
            except httpx.HTTPError:
                pass
        if process.poll() is not None:
            raise SystemExit("".join(lines))
        time.sleep(0.2)
    raise SystemExit("server not ready in 300 s")


def _round(dataset: Path, home: Path, ack: bool, workers: int, answers: int, clients: int) -> dict[str, Any]:
    process, url = _serve(dataset, home, ack, workers)
    victim = process.pid
    if workers > 1:
        victim = httpx.get(f"{url}/v1/stats", timeout=10).json()["workers"][0]["pid"]
    answered: list[str] = []
    latency: list[float] = []
    lock = threading.Lock()
    stop = threading.Event()

    def client(k: int) -> None:
        with httpx.Client(timeout=30) as session:
            for i in range(answers):  # bounded: at most `answers` requests per client
                if stop.is_set():
                    return
                started = time.perf_counter()
                try:
                    r = session.post(f"{url}/v1/search", json={"query": f"storm harbour ship {k} {i}", "top_k": 5})
                except httpx.HTTPError:
                    return
                with lock:
                    if r.status_code == 200 and not stop.is_set():
                        answered.append(r.headers["x-trace-id"])
                        latency.append((time.perf_counter() - started) * 1000)
                        if len(answered) >= answers:
                            stop.set()
                            os.kill(victim, signal.SIGKILL)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    from searchtrace.traces import TraceStore

    store = TraceStore(home / "traces.sqlite")
    try:
        stored = store.stored(answered)
        details = [store.load_trace(t) for t in stored]
        whole = sum(1 for d in details if d is not None and any(s.parent_id is None for s in d.spans))
    finally:
        store.close()
    return {"ack": ack, "workers": workers, "answered": len(answered), "stored": len(stored),
            "stored_whole": whole, "lost": len(answered) - len(stored),
            "median_ms": round(statistics.median(latency), 2) if latency else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--answers", type=int, default=500)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rows = []
    for _ in range(args.rounds):
        for workers in (1, 2):
            for ack in (True, False):
                rows.append(_round(args.dataset, args.home, ack, workers, args.answers, args.clients))
                print(json.dumps(rows[-1]), file=sys.stderr)
    ratio = {}
    for workers in (1, 2):
        on = [r["median_ms"] for r in rows if r["ack"] and r["workers"] == workers]
        off = [r["median_ms"] for r in rows if not r["ack"] and r["workers"] == workers]
        ratio[f"workers={workers}"] = round(statistics.median(on) / statistics.median(off), 2)
    print(json.dumps({"rounds": rows, "median_latency_ack_over_no_ack": ratio}, indent=1))


if __name__ == "__main__":
    main()
