"""Closed-loop load on ``searchtrace serve``: 1, 4 and 16 keep-alive clients, and in-process search.

Usage:
    flock /tmp/searchtrace-bench.lock python benchmarks/bench_serve.py \
        [--dataset ../shared/datasets/scifact] [--no-parts] [--seconds 60] [--clients 1,4,16] \
        [--home DIR] [--timeout 2] [--batch-window-ms 0] [--workers 1] [--model-threads N] [--out results.json]

First, in this process, ``Retriever.search`` (traced to the store, as the server
does) runs the dataset's queries one after another: its p50 is the in-process
baseline. Then a server (``python -m searchtrace serve``) starts on a free
loopback port (``--workers`` processes), and for each client count that many
threads, each with its own keep-alive HTTP connection, post ``/v1/search`` back
to back for ``--seconds`` (closed loop: a client sends its next request when
the last one is answered). The clients are the standard library's
``http.client``, one connection per thread: the load generator shares the
machine's cores with the server, and a lean client takes less of them (httpx
costs about 0.4 ms more per request). Per phase: throughput, latency
p50/p95/p99, errors by status, the traces the store holds for the phase (one
per request is the target), and CPU seconds per request of the server's
processes and of this one (Linux). Loopback only.

Before the load phases, a paired run measures the HTTP path alone: each query
in this process, then the same query over HTTP, one after the other, so both
see the same machine load (on a shared machine, load drifts between two runs a
minute apart by more than the HTTP path costs).

Targets (issue 14): the HTTP path adds <= 1.5 ms to the in-process p50 at one
client; 16 clients give >= 2x the throughput of one (micro-batching) with
p99 <= 4x p50; 0 errors.
"""

from __future__ import annotations

import argparse
import http.client
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
from typing import Any

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


def open_local(args: argparse.Namespace) -> tuple:
    """``Retriever`` on the dataset in this process, traced to the same store as the server; and its trace handles."""
    from searchtrace.retriever import open_retriever, resolve_config
    from searchtrace.traces import TraceSettings, make_tracer_provider

    search = {"dense": {"parts": False}} if args.no_parts else None
    config = resolve_config(home=args.home, search=search)
    settings = TraceSettings.resolve()
    provider, handles = make_tracer_provider(config.home, settings)
    retriever = open_retriever(args.dataset, config, progress=False, tracer=provider.get_tracer("bench"),
                               capture=settings.capture, deferred=handles.deferred)
    return retriever, handles


def in_process(retriever: Any, queries: list[str]) -> dict:
    """p50 of ``Retriever.search`` in this process over the queries (after a warm-up pass of 20), and its CPU."""
    for q in queries[:20]:
        retriever.search({"query": q, "top_k": 10})
    times = []
    cpu = time.process_time()
    for q in queries:
        started = time.perf_counter()
        retriever.search({"query": q, "top_k": 10})  # an error raises
        times.append((time.perf_counter() - started) * 1000)
    cpu = time.process_time() - cpu
    return {"searches": len(times), "p50_ms": round(percentile(times, 50), 2),
            "p95_ms": round(percentile(times, 95), 2), "cpu_ms_per_search": round(cpu * 1000 / len(times), 2)}


def paired(retriever: Any, port: int, queries: list[str]) -> dict:
    """Each query in turn in this process, then over HTTP (one keep-alive connection): p50 of each.

    Interleaved, the two see the same machine load, which on a shared machine
    drifts more between two runs a minute apart than the HTTP path costs.
    """
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    local, served = [], []
    for i, q in enumerate(queries[:20] + queries):
        started = time.perf_counter()
        retriever.search({"query": q, "top_k": 10})
        middle = time.perf_counter()
        conn.request("POST", "/v1/search", json.dumps({"query": q, "top_k": 10}), {"content-type": "application/json"})
        answer = conn.getresponse()
        answer.read()
        ended = time.perf_counter()
        assert answer.status == 200, answer.status
        if i >= 20:
            local.append((middle - started) * 1000)
            served.append((ended - middle) * 1000)
    conn.close()
    return {"searches": len(local), "in_process_p50_ms": round(percentile(local, 50), 2),
            "http_p50_ms": round(percentile(served, 50), 2),
            "http_overhead_p50_ms": round(percentile(served, 50) - percentile(local, 50), 2)}


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and its descendants so far; 0 without /proc."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        child = int(entry.parent.name)
        parents[child] = int(fields[1])
        cpu[child] = (int(fields[11]) + int(fields[12])) / ticks
    tree, grew = {pid}, True
    while grew:
        grew = False
        for child, parent in parents.items():
            if parent in tree and child not in tree:
                tree.add(child)
                grew = True
    return sum(cpu.get(p, 0.0) for p in tree)


def start_server(args: argparse.Namespace, port: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "searchtrace", "serve", str(args.dataset), "--home", str(args.home), "--port",
           str(port), "--timeout", str(args.timeout), "--batch-window-ms", str(args.batch_window_ms), "--no-progress",
           "--workers", str(args.workers)] + (["--model-threads", str(args.model_threads)] if args.model_threads else [])
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


def phase(port: int, clients: int, seconds: float, queries: list[str], seed: int, server_pid: int) -> dict:
    """``clients`` closed-loop keep-alive clients for ``seconds``; latencies, statuses, CPU."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    statuses: list[dict[int, int]] = [{} for _ in range(clients)]
    trace_ids: list[list[str]] = [[] for _ in range(clients)]
    start = threading.Barrier(clients + 1)
    deadline = [0.0]

    def client(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/healthz")  # open the connection before the clock starts
        conn.getresponse().read()
        start.wait()
        while time.monotonic() < deadline[0]:
            t0 = time.perf_counter()
            body = json.dumps({"query": rng.choice(queries), "top_k": 10})
            try:
                conn.request("POST", "/v1/search", body, {"content-type": "application/json"})
                r = conn.getresponse()
                r.read()
                code = r.status
                if r.getheader("x-trace-id"):  # every answer, errors too, is one trace
                    trace_ids[i].append(r.getheader("x-trace-id", ""))
            except (OSError, http.client.HTTPException):
                code = 0
                conn.close()  # the next request reconnects
            latencies[i].append((time.perf_counter() - t0) * 1000)
            statuses[i][code] = statuses[i].get(code, 0) + 1
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    deadline[0] = time.monotonic() + seconds
    server_cpu, own_cpu = tree_cpu_s(server_pid), time.process_time()
    began = time.monotonic()
    start.wait()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    server_cpu, own_cpu = tree_cpu_s(server_pid) - server_cpu, time.process_time() - own_cpu
    lat = [x for part in latencies for x in part]
    codes: dict[int, int] = {}
    for s in statuses:
        for code, n in s.items():
            codes[code] = codes.get(code, 0) + n
    return {"clients": clients, "seconds": round(elapsed, 1), "requests": len(lat),
            "throughput_rps": round(len(lat) / elapsed, 1), "p50_ms": round(percentile(lat, 50), 2),
            "p95_ms": round(percentile(lat, 95), 2), "p99_ms": round(percentile(lat, 99), 2),
            "errors": sum(n for code, n in codes.items() if code != 200), "statuses": codes,
            "server_cpu_ms_per_request": round(server_cpu * 1000 / max(len(lat), 1), 2),
            "client_cpu_ms_per_request": round(own_cpu * 1000 / max(len(lat), 1), 2),
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
    p.add_argument("--workers", default="1", help="the server's --workers (a number or auto)")
    p.add_argument("--model-threads", type=int, help="the server's --model-threads (default: its own)")
    p.add_argument("--out", type=Path)
    args = p.parse_args()

    from searchtrace.retriever import load_dataset
    from searchtrace.traces import TraceStore

    load_before = os.getloadavg()
    queries = [q.text for q in load_dataset(args.dataset).queries]
    print(f"{args.dataset.name}: {len(queries)} queries; in-process Retriever.search ...", file=sys.stderr)
    retriever, handles = open_local(args)
    local = in_process(retriever, queries)
    print(f"in-process p50 {local['p50_ms']} ms, p95 {local['p95_ms']} ms", file=sys.stderr)
    port = free_port()
    server = start_server(args, port)
    url = f"http://127.0.0.1:{port}"
    store = TraceStore(args.home / "traces.sqlite")
    phases = []
    try:
        pairs = paired(retriever, port, queries)
        print(f"paired, one client: {json.dumps(pairs)}", file=sys.stderr)
        retriever.close()
        handles.close()
        for n in (int(c) for c in args.clients.split(",")):
            result = phase(port, n, args.seconds, queries, seed=n, server_pid=server.pid)
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
    retriever, handles = open_local(args)
    after = in_process(retriever, queries)  # again, the server gone: the machine's load drifts
    retriever.close()
    handles.close()
    print(f"in-process again: p50 {after['p50_ms']} ms, p95 {after['p95_ms']} ms", file=sys.stderr)
    one = next((r for r in phases if r["clients"] == 1), None)
    summary = {"dataset": args.dataset.name, "parts": not args.no_parts, "seconds_per_phase": args.seconds,
               "timeout_s": args.timeout, "batch_window_ms": args.batch_window_ms, "workers": args.workers,
               "model_threads": args.model_threads,
               "load_average_before": load_before, "load_average_after": os.getloadavg(), "in_process": local,
               "in_process_after": after,
               "paired": pairs, "phases": phases, "server_stats": stats,
               "http_overhead_p50_ms": round(one["p50_ms"] - local["p50_ms"], 2) if one else None}
    for r in phases:
        if one:
            r["throughput_vs_1"] = round(r["throughput_rps"] / one["throughput_rps"], 2)
        r["p99_over_p50"] = round(r["p99_ms"] / r["p50_ms"], 2) if r["p50_ms"] else None
    print(f"{'clients':>7} {'req/s':>7} {'p50':>7} {'p95':>7} {'p99':>7} {'errors':>6} {'traces':>13} "
          f"{'cpu ms/req':>10}")
    for r in phases:
        print(f"{r['clients']:>7} {r['throughput_rps']:>7} {r['p50_ms']:>7} {r['p95_ms']:>7} {r['p99_ms']:>7} "
              f"{r['errors']:>6} {r['traces_stored']:>6}/{r['traced_requests']:<6} "
              f"{r['server_cpu_ms_per_request']:>5}+{r['client_cpu_ms_per_request']}")
    print(f"in-process p50 {local['p50_ms']} ms before, {after['p50_ms']} ms after; HTTP adds "
          f"{summary['http_overhead_p50_ms']} ms at 1 client (against the first); paired, one query in "
          f"process then the same over HTTP: {pairs['in_process_p50_ms']} vs {pairs['http_p50_ms']} ms, "
          f"+{pairs['http_overhead_p50_ms']} ms")
    if args.out:
        args.out.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
