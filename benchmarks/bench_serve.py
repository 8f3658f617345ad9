"""Closed-loop load on ``searchtrace serve``: 1, 4 and 16 keep-alive clients, and in-process search.

Usage:
    flock /tmp/searchtrace-bench.lock python benchmarks/bench_serve.py \
        [--dataset ../shared/datasets/scifact] [--no-parts] [--seconds 60] [--clients 1,4,16] \
        [--home DIR] [--timeout 2] [--batch-window-ms 0] [--out results.json]

First, in this process, ``Retriever.search`` (traced to the store, as the server
does) runs the dataset's queries one after another: its p50 is the in-process
baseline. Then a server (``python -m searchtrace serve``) starts on a free
loopback port, and for each client count that many threads, each with its own
keep-alive HTTP connection, post ``/v1/search`` back to back for ``--seconds``
(closed loop: a client sends its next request when the last one is answered).
Per phase: throughput, latency p50/p95/p99, errors by status, and the traces
the store holds for the phase (one per request is the target). Loopback only.

Targets (issue 14): the HTTP path adds <= 1.5 ms to the in-process p50 at one
client; 16 clients give >= 2x the throughput of one (micro-batching) with
p99 <= 4x p50; 0 errors.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
# As `searchtrace serve` does (searchtrace.environment.OMP_WAIT_POLICY), so both paths run the model alike.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (inclusive method), 0 for no values."""
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=1000, method="inclusive")[round(p * 10) - 1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def in_process(args: argparse.Namespace, queries: list[str]) -> dict:
    """p50 of ``Retriever.search`` in this process over the queries (after a warm-up pass of 20)."""
    from searchtrace.retriever import open_retriever, resolve_config
    from searchtrace.traces import TraceSettings, make_tracer_provider

    search = {"dense": {"parts": False}} if args.no_parts else None
    config = resolve_config(home=args.home, search=search)
    settings = TraceSettings.resolve()
    provider, handles = make_tracer_provider(config.home, settings)
    retriever = open_retriever(args.dataset, config, progress=False, tracer=provider.get_tracer("bench"),
                               capture=settings.capture, deferred=handles.deferred)
    for q in queries[:20]:
        retriever.search({"query": q, "top_k": 10})
    times = []
    for q in queries:
        started = time.perf_counter()
        response = retriever.search({"query": q, "top_k": 10})
        times.append((time.perf_counter() - started) * 1000)
        assert "error" not in response, response
    retriever.close()
    handles.close()
    return {"searches": len(times), "p50_ms": round(percentile(times, 50), 2),
            "p95_ms": round(percentile(times, 95), 2)}


def start_server(args: argparse.Namespace, port: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "searchtrace", "serve", str(args.dataset), "--home", str(args.home), "--port",
           str(port), "--timeout", str(args.timeout), "--batch-window-ms", str(args.batch_window_ms), "--no-progress"]
    if args.no_parts:
        cmd.append("--no-parts")
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 1800  # a first start may index the dataset
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"server exited: {server.stderr.read() if server.stderr else ''}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(1)
    server.kill()
    raise SystemExit("server not ready after 30 min")


def phase(url: str, clients: int, seconds: float, queries: list[str], seed: int) -> dict:
    """``clients`` closed-loop keep-alive clients for ``seconds``; latencies and statuses."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    statuses: list[dict[int, int]] = [{} for _ in range(clients)]
    trace_ids: list[list[str]] = [[] for _ in range(clients)]
    start = threading.Barrier(clients + 1)
    deadline = [0.0]

    def client(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        with httpx.Client(base_url=url, timeout=30) as http:
            http.get("/healthz")  # open the connection before the clock starts
            start.wait()
            while time.monotonic() < deadline[0]:
                t0 = time.perf_counter()
                try:
                    r = http.post("/v1/search", json={"query": rng.choice(queries), "top_k": 10})
                    code = r.status_code
                    if r.headers.get("x-trace-id"):  # every answer, errors too, is one trace
                        trace_ids[i].append(r.headers["x-trace-id"])
                except httpx.HTTPError:
                    code = 0
                latencies[i].append((time.perf_counter() - t0) * 1000)
                statuses[i][code] = statuses[i].get(code, 0) + 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    deadline[0] = time.monotonic() + seconds
    began = time.monotonic()
    start.wait()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    lat = [x for part in latencies for x in part]
    codes: dict[int, int] = {}
    for s in statuses:
        for code, n in s.items():
            codes[code] = codes.get(code, 0) + n
    return {"clients": clients, "seconds": round(elapsed, 1), "requests": len(lat),
            "throughput_rps": round(len(lat) / elapsed, 1), "p50_ms": round(percentile(lat, 50), 2),
            "p95_ms": round(percentile(lat, 95), 2), "p99_ms": round(percentile(lat, 99), 2),
            "errors": sum(n for code, n in codes.items() if code != 200), "statuses": codes,
            "trace_ids": [t for part in trace_ids for t in part]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", type=Path, default=REPO.parent / "shared" / "datasets" / "scifact")
    p.add_argument("--no-parts", action="store_true", help="index without passage parts (much faster to build)")
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--clients", default="1,4,16")
    p.add_argument("--home", type=Path, default=Path("/tmp/searchtrace-bench-serve-home"))
    p.add_argument("--timeout", type=float, default=2.0, help="the server's per-request timeout")
    p.add_argument("--batch-window-ms", type=float, default=0.0)
    p.add_argument("--out", type=Path)
    args = p.parse_args()

    from searchtrace.retriever import load_dataset
    from searchtrace.traces import TraceStore

    queries = [q.text for q in load_dataset(args.dataset).queries]
    print(f"{args.dataset.name}: {len(queries)} queries; in-process Retriever.search ...", file=sys.stderr)
    local = in_process(args, queries)
    print(f"in-process p50 {local['p50_ms']} ms, p95 {local['p95_ms']} ms", file=sys.stderr)
    port = free_port()
    server = start_server(args, port)
    url = f"http://127.0.0.1:{port}"
    store = TraceStore(args.home / "traces.sqlite")
    phases = []
    try:
        for n in (int(c) for c in args.clients.split(",")):
            result = phase(url, n, args.seconds, queries, seed=n)
            time.sleep(3)  # the server's batch exporter writes the last spans
            ids = result.pop("trace_ids")
            stored = store.stored(ids)
            result["traces_stored"] = sum(1 for i in ids if i in stored)
            result["traced_requests"] = len(ids)
            phases.append(result)
            print(json.dumps(result), file=sys.stderr)
        stats = httpx.get(f"{url}/v1/stats").json()
    finally:
        server.terminate()
        server.wait(30)
        store.close()
    after = in_process(args, queries)  # again, the server gone: the machine's load drifts
    print(f"in-process again: p50 {after['p50_ms']} ms, p95 {after['p95_ms']} ms", file=sys.stderr)
    one = next((r for r in phases if r["clients"] == 1), None)
    summary = {"dataset": args.dataset.name, "parts": not args.no_parts, "seconds_per_phase": args.seconds,
               "timeout_s": args.timeout, "batch_window_ms": args.batch_window_ms, "in_process": local,
               "in_process_after": after,
               "phases": phases, "server_stats": stats,
               "http_overhead_p50_ms": round(one["p50_ms"] - local["p50_ms"], 2) if one else None}
    for r in phases:
        if one:
            r["throughput_vs_1"] = round(r["throughput_rps"] / one["throughput_rps"], 2)
        r["p99_over_p50"] = round(r["p99_ms"] / r["p50_ms"], 2) if r["p50_ms"] else None
    print(f"{'clients':>7} {'req/s':>7} {'p50':>8} {'p95':>8} {'p99':>8} {'errors':>6} {'traces':>13}")
    for r in phases:
        print(f"{r['clients']:>7} {r['throughput_rps']:>7} {r['p50_ms']:>8} {r['p95_ms']:>8} {r['p99_ms']:>8} "
              f"{r['errors']:>6} {r['traces_stored']:>6}/{r['traced_requests']:<6}")
    print(f"in-process p50 {local['p50_ms']} ms before, {after['p50_ms']} ms after; HTTP adds "
          f"{summary['http_overhead_p50_ms']} ms at 1 client (against the first)")
    if args.out:
        args.out.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
