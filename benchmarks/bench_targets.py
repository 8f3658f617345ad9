"""The eval as a client of foreign targets (issue 38): its own CPU per query, and its throughput.

Usage:
    flock /tmp/searchtrace-bench.lock python benchmarks/bench_targets.py \
        [--dataset datasets/sample] [--home DIR] [--copies 6] [--rounds 3] \
        [--transports http,mcp-http,mcp-stdio] [--throughput-copies 9] \
        [--concurrency 1,4,16] [--delay-ms 50] [--batch-size N] [--skip cpu|throughput] \
        [--out results.json]

CPU: ``searchtrace serve`` runs on a free loopback port (HTTP and MCP streamable
HTTP at ``/mcp``), and as a child over stdio (``serve --mcp stdio``, started by
the eval's own target). For each transport, ``eval`` runs in this process on
the dataset's test queries and on a copy with ``--copies`` times as many (each
query repeated under new ids, the qrels with it), with ``--target`` naming the
server; the difference of this process's CPU (every thread: the target
session, the trace export, the journal) over the difference in queries is the
eval's own CPU per query, the fixed costs (start, metrics, the run folder)
cancelled. The bare round trip is the same requests sent by the transport's
own client alone (``httpx``, the answer's JSON decoded; the ``mcp`` SDK's
``Client``, which decodes it), its CPU per request in this process. Between the two, the eval's client alone: the target opened
and asked as ``eval`` does (its retry discipline, its ``search`` span with the
traceparent, the answer mapped and checked, the spans exported to the store),
without the run around it (journal, scoring, run folder). Besides, the direct
round trip: the client the eval itself speaks through, alone (``http.client``,
the answer decoded by orjson; the direct MCP client of ``targets/lean.py``, the
result read), so the eval's own work beside its transport shows too. The server's CPU is
in another process and counted in none. Each transport is measured in
``--rounds`` rounds, each round the bare client, the eval's client and the
eval in turn (so a load that drifts reaches all three); the figures are the
medians, the differences taken within each round, with their range. The goal
is judged on the whole eval (every thread of the process: the target session,
the journal, scoring, the run folder, the trace store) in every round.

Throughput: a stand-in target answering our contract after sleeping
``--delay-ms`` (a child, a thread per request) is evaluated at each
``--concurrency``; queries per second from the wall time's difference between
the test queries and ``--throughput-copies`` times as many.

Targets (issue 38): the eval's CPU per query at most 1 ms above the bare round
trip on each transport; 16 in flight at least 10x the throughput of 1.
Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
DEPTH = 100
WARM = 20
GOAL_MS = 1.0
"""Issue 38: the eval's CPU per query at most this above the transport's bare round trip."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_queries(dataset: Path) -> list[dict[str, Any]]:
    qrels = {line.split("\t")[0] for line in (dataset / "qrels" / "test.tsv").read_text().splitlines()[1:]}
    rows = [json.loads(line) for line in (dataset / "queries.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in rows if r["_id"] in qrels]


def copied(dataset: Path, root: Path, copies: int) -> Path:
    """The dataset with its test queries (and their qrels) ``copies`` times, under new ids; the same corpus."""
    out = root / f"{dataset.name}-x{copies}"
    if out.exists():
        return out
    (out / "qrels").mkdir(parents=True)
    shutil.copy(dataset / "corpus.jsonl", out / "corpus.jsonl")
    queries = test_queries(dataset)
    lines = (dataset / "qrels" / "test.tsv").read_text().splitlines()
    with (out / "queries.jsonl").open("w") as q, (out / "qrels" / "test.tsv").open("w") as r:
        r.write(lines[0] + "\n")
        for k in range(copies):
            for row in queries:
                q.write(json.dumps({**row, "_id": f"{row['_id']}~{k}"}) + "\n")
            for line in lines[1:]:
                qid, rest = line.split("\t", 1)
                r.write(f"{qid}~{k}\t{rest}\n")
    return out


BATCH: list[str] = []  # --batch-size N, when given: queries searched, then journaled, together


def run_eval(dataset: Path, home: Path, target: list[str], concurrency: int = 1) -> tuple[float, float, int]:
    """``searchtrace eval`` in this process: (CPU s, wall s, failed queries)."""
    from searchtrace.cli import main

    out = home / "runs" / f"r{time.monotonic_ns()}"
    cpu, wall = time.process_time(), time.perf_counter()
    code = main(["eval", str(dataset), *target, "--depth", str(DEPTH), "--mode", "fast", "--out", str(out),
                 "--home", str(home), "--no-progress", "--concurrency", str(concurrency), *BATCH])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if code not in (0, 1):
        raise SystemExit(f"eval exited {code}")
    return cpu, wall, int(json.loads((out / "run.json").read_text())["errors"])


def per_query(small: Path, large: Path, home: Path, target: list[str], concurrency: int = 1,
              warm: bool = True) -> dict[str, float]:
    """The eval's CPU and wall per query: the difference between the large and the small dataset's runs (after a
    warm-up run unless ``warm`` is false: the first imports, the session's first connection or child)."""
    n_small, n_large = len(test_queries(small)), len(test_queries(large))
    if warm:
        run_eval(small, home, target, concurrency)
    cpu_s, wall_s, err_s = run_eval(small, home, target, concurrency)
    cpu_l, wall_l, err_l = run_eval(large, home, target, concurrency)
    n = n_large - n_small
    return {"queries": n, "cpu_ms_per_query": round((cpu_l - cpu_s) * 1000 / n, 3),
            "queries_per_s": round(n / (wall_l - wall_s), 1), "failed": err_s + err_l}


def client_path(target: list[str], home: Path, requests: list[dict[str, Any]]) -> float:
    """CPU ms per query of the eval's client alone: the target opened as ``eval`` opens it, asked through its
    retry discipline under the eval's ``search`` span (traceparent sent, the answer mapped and checked), the spans
    exported to the home's store (flushed before the clock stops)."""
    from searchtrace.evals.runs.client import ClientPolicy, RetryingSearch
    from searchtrace.evals.runs.target import TargetRetriever, resolve_target
    from searchtrace.evals.runs.targets import target_spec
    from searchtrace.retriever import resolve_config
    from searchtrace.traces import TraceSettings, make_tracer_provider

    spec = target_spec(target[1], target[3] if len(target) > 3 else None, None, None)
    assert spec is not None
    config = resolve_config(home=home)
    settings = TraceSettings.resolve().for_home(config.home)
    provider, handles = make_tracer_provider(config.home, settings)
    client = TargetRetriever(RetryingSearch(resolve_target(spec, 60.0), ClientPolicy()), spec,
                             provider.get_tracer("bench"), config, depth=DEPTH, shown=10)
    try:
        for r in requests[:WARM]:
            client.search_detailed(r)
        provider.force_flush()
        cpu = time.process_time()
        for r in requests:
            client.search_detailed(r)
        provider.force_flush()
        return (time.process_time() - cpu) * 1000 / len(requests)
    finally:
        client.close()
        handles.close(settings.exit_timeout_s)


def requests_of(dataset: Path) -> list[dict[str, Any]]:
    """What the eval sends the target for each query (top_k the depth, its candidates, the mode)."""
    return [{"query": q["text"], "top_k": DEPTH, "candidates": DEPTH, "mode": "fast"} for q in test_queries(dataset)]


def bare_http(url: str, requests: list[dict[str, Any]]) -> float:
    """CPU ms per request of ``httpx`` posting each request to ``/v1/search`` and decoding the JSON answer (after a
    warm-up)."""
    with httpx.Client(timeout=60) as client:
        for r in requests[:WARM]:
            client.post(f"{url}/v1/search", json=r).raise_for_status()
        cpu = time.process_time()
        for r in requests:
            answer = client.post(f"{url}/v1/search", json=r)
            answer.raise_for_status()
            answer.json()
        return (time.process_time() - cpu) * 1000 / len(requests)


def bare_mcp(connect: Callable[[], Any], requests: list[dict[str, Any]]) -> float:
    """CPU ms per call of the ``mcp`` SDK's client calling ``search`` with each request (after a warm-up)."""

    async def calls() -> float:
        async with connect() as client:
            for r in requests[:WARM]:
                await client.call_tool("search", r)
            cpu = time.process_time()
            for r in requests:
                result = await client.call_tool("search", r)
                if result.is_error:
                    raise SystemExit(f"the search tool failed: {result.content}")
            return (time.process_time() - cpu) * 1000 / len(requests)

    return asyncio.run(calls())


def bare_direct(call: Callable[[dict[str, Any]], Any], close: Callable[[], None],
                requests: list[dict[str, Any]]) -> float:
    """CPU ms per request of the client the eval itself speaks through (``http.client`` with the answer decoded
    by orjson; the direct MCP client, the result read), alone, after a warm-up."""
    try:
        for r in requests[:WARM]:
            call(r)
        cpu = time.process_time()
        for r in requests:
            call(r)
        return (time.process_time() - cpu) * 1000 / len(requests)
    finally:
        close()


def direct_http(url: str, requests: list[dict[str, Any]]) -> float:
    from searchtrace.evals.runs.targets.keepalive import KeepAlive
    from searchtrace.evals.runs.targets.wire import json_of

    client = KeepAlive(f"{url}/v1/search", 60)

    def call(r: dict[str, Any]) -> Any:
        reply = client.post(r)
        assert reply is not None and reply.status_code == 200
        return json_of(reply)

    return bare_direct(call, client.close, requests)


def direct_mcp(client: Any, requests: list[dict[str, Any]]) -> float:
    def call(r: dict[str, Any]) -> Any:
        result = client.call(r, {}, 60)
        if result.is_error:
            raise SystemExit(f"the search tool failed: {result.content[0].text}")
        return result

    return bare_direct(call, client.close, requests)


def mcp_http(url: str) -> Callable[[], Any]:
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    @asynccontextmanager
    async def connect() -> Any:
        async with httpx2.AsyncClient(timeout=60) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                yield client

    return connect


def mcp_stdio(command: list[str]) -> Callable[[], Any]:
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    return lambda: Client(params, mode="legacy")


def start_server(args: argparse.Namespace, port: int, log: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "searchtrace", "serve", str(args.dataset), "--port", str(port), "--no-progress",
           "--timeout", "30", *(["--home", str(args.home)] if args.home else [])]
    with log.open("wb") as err:
        server = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=err, stderr=err)
    deadline = time.monotonic() + 1800  # a first start may index the dataset
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"server exited: {log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(1)
    server.kill()
    raise SystemExit("server not ready after 30 min")


def cpu_phase(args: argparse.Namespace, small: Path, large: Path, work: Path) -> dict[str, Any]:
    """Each transport: the eval's CPU per query and the bare round trip's, against ``searchtrace serve``."""
    requests = requests_of(small)
    stdio = [sys.executable, "-m", "searchtrace", "serve", "--mcp", "stdio", str(args.dataset), "--no-progress",
             *(["--home", str(args.home)] if args.home else [])]
    port = free_port()
    server = start_server(args, port, work / "serve.log")
    url = f"http://127.0.0.1:{port}"
    try:
        from searchtrace.evals.runs.targets.lean import LeanHttp, LeanStdio

        phases = {
            "http": (["--target", url], lambda: bare_http(url, requests), lambda: direct_http(url, requests)),
            "mcp-http": (["--target", f"mcp+{url}/mcp", "--tool", "search"],
                         lambda: bare_mcp(mcp_http(f"{url}/mcp"), requests),
                         lambda: direct_mcp(LeanHttp(f"{url}/mcp", "search", {}, 60), requests)),
            "mcp-stdio": (["--target", "mcp+stdio:" + " ".join(stdio), "--tool", "search"],
                          lambda: bare_mcp(mcp_stdio(stdio), requests),
                          lambda: direct_mcp(LeanStdio(stdio, "search"), requests)),
        }
        out = {}
        for name, (target, bare, direct) in phases.items():
            if name not in args.transports:
                continue
            home = work / f"home-{name}"
            run_eval(small, home, target)  # warm: the first imports, the session's first connection or child
            rounds = []
            for r in range(args.rounds):  # each round measures the three in turn: a load that drifts hits all
                bare_ms, direct_ms = bare(), direct()
                client_ms = client_path(target, work / f"home-{name}-client-{r}", requests)
                ours = per_query(small, large, home, target, warm=False)
                rounds.append({"bare": bare_ms, "direct": direct_ms, "client": client_ms,
                               "eval": ours["cpu_ms_per_query"],
                               "failed": ours["failed"], "queries": ours["queries"]})
                print(json.dumps({name: {"round": r + 1, **{k: round(v, 3) for k, v in rounds[-1].items()}}}),
                      flush=True)
            out[name] = summarize(rounds)
            print(json.dumps({name: out[name]}), flush=True)
        return out
    finally:
        server.terminate()
        server.wait(30)


def summarize(rounds: list[dict[str, float]]) -> dict[str, Any]:
    """Medians over the rounds, and each difference's median and range (taken within a round: a pair measured
    minutes apart, under the same load)."""
    def med(values: list[float]) -> float:
        return round(statistics.median(values), 3)

    above_client = [r["client"] - r["bare"] for r in rounds]
    above_eval = [r["eval"] - r["bare"] for r in rounds]
    above_direct = [r["eval"] - r["direct"] for r in rounds]
    return {"rounds": len(rounds), "queries_per_round": rounds[0]["queries"],
            "failed": sum(int(r["failed"]) for r in rounds),
            "bare_cpu_ms_per_request": med([r["bare"] for r in rounds]),
            "client_cpu_ms_per_query": med([r["client"] for r in rounds]),
            "client_above_bare_ms": med(above_client),
            "client_above_bare_range": [round(min(above_client), 3), round(max(above_client), 3)],
            "direct_cpu_ms_per_request": med([r["direct"] for r in rounds]),
            "eval_above_direct_ms": med(above_direct),
            "eval_above_direct_range": [round(min(above_direct), 3), round(max(above_direct), 3)],
            "eval": {"cpu_ms_per_query": med([r["eval"] for r in rounds]), "above_bare_ms": med(above_eval),
                     "above_bare_range": [round(min(above_eval), 3), round(max(above_eval), 3)],
                     "goal_met": max(above_eval) <= GOAL_MS}}


def table(cpu: dict[str, Any]) -> str:
    """The CPU phase as a plain table (80 columns): medians, and the range of the eval's figure over rounds."""
    lines = [f"{'transport':<10} {'bare':>6} {'client':>7} {'+bare':>6} {'eval':>6} {'+bare':>6} "
             f"{'range':>13}  goal", "-" * 70]
    for name, row in cpu.items():
        ev = row["eval"]
        low, high = ev["above_bare_range"]
        lines.append(f"{name:<10} {row['bare_cpu_ms_per_request']:>6.2f} {row['client_cpu_ms_per_query']:>7.2f} "
                     f"{row['client_above_bare_ms']:>+6.2f} {ev['cpu_ms_per_query']:>6.2f} "
                     f"{ev['above_bare_ms']:>+6.2f} {f'{low:+.2f}..{high:+.2f}':>13}  "
                     f"{'met' if ev['goal_met'] else 'NOT met'}")
    lines.append(f"ms of CPU a query, medians of {next(iter(cpu.values()))['rounds']} rounds; goal: the eval at most "
                 f"{GOAL_MS:g} ms")
    lines.append("above the bare round trip in every round")
    lines += ["", f"{'transport':<10} {'direct':>7} {'eval':>6} {'+direct':>8} {'range':>13}", "-" * 48]
    for name, row in cpu.items():
        low, high = row["eval_above_direct_range"]
        lines.append(f"{name:<10} {row['direct_cpu_ms_per_request']:>7.2f} {row['eval']['cpu_ms_per_query']:>6.2f} "
                     f"{row['eval_above_direct_ms']:>+8.2f} {f'{low:+.2f}..{high:+.2f}':>13}")
    lines.append("direct: the client the eval speaks through, alone (http.client, or the")
    lines.append("direct MCP client); the eval's own work beside its transport")
    return "\n".join(lines)


def stand_in(port_file: str, delay_ms: float) -> None:
    """Our contract's ``POST /v1/search``, answered after ``delay_ms`` (a thread per request): ten documents."""
    delay = delay_ms / 1000
    body = json.dumps({"results": [{"id": f"d{i}", "score": 1 - i / 10, "confidenceBand": "high"}
                                   for i in range(10)]}).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # buffered: the headers and the body leave in one segment, flushed after the handler (unbuffered, the
        # body waits on the client's delayed ACK, Nagle's 40 ms, and would be measured as the target's time)
        wbufsize = -1

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            time.sleep(delay)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            self.send_error(404)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    Path(port_file).write_text(str(server.server_address[1]))
    server.serve_forever()


def throughput_phase(args: argparse.Namespace, small: Path, large: Path, work: Path) -> dict[str, Any]:
    port_file = work / "stand-in.port"
    child = subprocess.Popen([sys.executable, __file__, "--stand-in", str(port_file), "--delay-ms",
                              str(args.delay_ms)])
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text()):
            if child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the stand-in target did not start")
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port_file.read_text()}"
        out = {}
        for n in args.concurrency:
            out[str(n)] = per_query(small, large, work / f"home-c{n}", ["--target", url], n)
            print(json.dumps({f"concurrency {n}": out[str(n)]}), flush=True)
        one = out[str(args.concurrency[0])]["queries_per_s"]
        for n in args.concurrency:
            out[str(n)]["x_of_first"] = round(out[str(n)]["queries_per_s"] / one, 2)
        return out
    finally:
        child.terminate()
        child.wait(10)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", type=Path, default=REPO / "datasets" / "sample")
    p.add_argument("--home", type=Path, help="the server's home (default: searchtrace's; the index is built there)")
    p.add_argument("--copies", type=int, default=6)
    p.add_argument("--rounds", type=int, default=3, help="CPU rounds per transport (medians reported)")
    p.add_argument("--transports", type=lambda s: s.split(","), default=["http", "mcp-http", "mcp-stdio"],
                   help="the CPU phase's transports (default: http,mcp-http,mcp-stdio)")
    p.add_argument("--throughput-copies", type=int, default=9)
    p.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 16])
    p.add_argument("--delay-ms", type=float, default=50.0)
    p.add_argument("--batch-size", type=int, help="eval --batch-size (default: the eval's)")
    p.add_argument("--out", type=Path)
    p.add_argument("--stand-in", help=argparse.SUPPRESS)
    p.add_argument("--skip", choices=("cpu", "throughput"), help="leave one phase out")
    args = p.parse_args()
    if args.stand_in:
        stand_in(args.stand_in, args.delay_ms)
        return
    if args.batch_size:
        BATCH.extend(["--batch-size", str(args.batch_size)])
    with tempfile.TemporaryDirectory(prefix="bench-targets-") as tmp:
        work = Path(tmp)
        small = copied(args.dataset, work, 1)
        result: dict[str, Any] = {"load_avg": os.getloadavg(), "cpus": os.cpu_count()}
        if args.skip != "cpu":
            result["cpu"] = cpu_phase(args, small, copied(args.dataset, work, args.copies), work)
        if args.skip != "throughput":
            result["throughput"] = throughput_phase(args, small, copied(args.dataset, work, args.throughput_copies),
                                                    work)
        result["load_avg_after"] = os.getloadavg()
    text = json.dumps(result, indent=2)
    print(text)
    if "cpu" in result:
        print(table(result["cpu"]))
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
