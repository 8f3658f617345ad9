"""OTLP ingest: ``searchtrace collect`` on SQLite and on PostgreSQL against Phoenix's own receiver, one run.

Payloads, built once before any clock starts: a LangChain ``BM25Retriever`` over
``datasets/sample`` (k=10), instrumented with ``openinference-instrumentation-langchain``,
invoked for ``--spans`` queries: real OpenInference RETRIEVER spans with 10 documents each
(content and metadata, as that instrumentation sends them), taken by the SDK into memory and
encoded as OTLP protobuf by the standard exporter's encoder, in requests of ``--batch`` spans.
Each concurrency has its own trace and span ids; every receiver gets the same bytes.

Receivers, each one process for the whole run: ``searchtrace collect`` into its home's
SQLite file; ``collect --store`` into a PostgreSQL this script starts and stops (Debian's
package in a temporary folder, fsync on, ``synchronous_commit=off``, as ``bench_store.py``);
Phoenix (``$SEARCHTRACE_PHOENIX``, else ``.phoenix-venv/bin/phoenix`` as ``.ci/run``
installs it) on its default SQLite working folder. The three take turns at each concurrency.

A phase: C exporter threads, each with its own keep-alive connection, share the requests
(closed loop) and retry a 429 or 503 after its ``Retry-After``, as the standard exporter
does (``503s``: how many). Spans/s: the spans over the time from the first request to the
last span stored. ``collect`` answers 200 once the spans are committed; Phoenix answers
before it writes, so its phase ends when its database holds every span (polled every
0.1 s), and the rate at which it answered is printed beside (``acked/s``). The answer: each
request from send to its 200, retries included (p50, p99). Peak RSS: the receiver's
``VmHWM`` after the phase (the peak so far). CPU: the receiver's CPU ms per 1,000 spans,
which other work on the machine inflates less than it does the wall clock.

    python benchmarks/bench_ingest.py
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_store import Server  # noqa: E402

SAMPLE = REPO / "datasets" / "sample"
PHOENIX_VENV = REPO / ".phoenix-venv" / "bin" / "phoenix"
PROTOBUF = {"Content-Type": "application/x-protobuf"}
STARTUP_S = 300
STORED_S = 300


# -- payloads ---------------------------------------------------------------------------------


def retriever_spans(n: int) -> list:
    """``n`` RETRIEVER spans of an instrumented LangChain BM25 retriever over the sample corpus."""
    import logging
    import warnings

    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    logging.getLogger("openinference").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document
    from openinference.instrumentation.langchain import LangChainInstrumentor

    corpus = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").read_text().splitlines() if line.strip()]
    queries = [json.loads(line)["text"] for line in (SAMPLE / "queries.jsonl").read_text().splitlines()
               if line.strip()]
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "bench-rag",
                                                        "openinference.project.name": "default"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        docs = [Document(page_content=d["text"], metadata={"doc_id": d["_id"], "title": d.get("title", "")})
                for d in corpus]
        retriever = BM25Retriever.from_documents(docs, k=10)
        for i in range(n):
            retriever.invoke(f"{queries[i % len(queries)]} {i}")
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    spans = list(memory.get_finished_spans())
    kinds = {(s.attributes or {}).get("openinference.span.kind") for s in spans}
    documents = {len([k for k in s.attributes or {} if k.endswith(".document.content")]) for s in spans}
    if len(spans) != n or kinds != {"RETRIEVER"} or documents != {10}:
        raise SystemExit(f"payloads: {len(spans)} spans of kinds {kinds} with {documents} documents; expected "
                         f"{n} RETRIEVER spans with 10 documents each")
    return spans


def requests_of(spans: list, batch: int) -> list[bytes]:
    """The OTLP/HTTP protobuf bodies of ``spans``, ``batch`` spans a request."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return [encode_spans(spans[i:i + batch]).SerializeToString() for i in range(0, len(spans), batch)]


def with_new_ids(bodies: list[bytes], phase: int) -> list[bytes]:
    """The same requests with trace and span ids of their own (their first bytes set to ``phase``)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    out = []
    for body in bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    span.trace_id = bytes([phase]) + span.trace_id[1:]
                    span.span_id = bytes([phase]) + span.span_id[1:]
                    if span.parent_span_id:
                        span.parent_span_id = bytes([phase]) + span.parent_span_id[1:]
        out.append(request.SerializeToString())
    return out


def trace_ids(bodies: list[bytes]) -> list[str]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    return sorted({span.trace_id.hex() for body in bodies
                   for rs in ExportTraceServiceRequest.FromString(body).resource_spans
                   for ss in rs.scope_spans for span in ss.spans})


# -- receivers --------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux ``/proc``)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            todo.extend(int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split())
        except OSError:
            continue
    return out


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its descendants so far."""
    total, hz = 0, os.sysconf("SC_CLK_TCK")
    for p in _tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / hz


def peak_rss_mb(pid: int) -> float:
    """``VmHWM`` of ``pid`` and its descendants, MiB (Linux ``/proc``)."""
    total = 0
    for p in _tree(pid):
        try:
            found = re.search(r"^VmHWM:\s+(\d+) kB", Path(f"/proc/{p}/status").read_text(), re.M)
        except OSError:
            continue
        total += int(found.group(1)) if found else 0
    return total / 1024


class Receiver:
    """A receiver process on a free loopback port, its output in ``folder/log``."""

    name = ""

    def __init__(self, command: list[str], env: dict[str, str], folder: Path, port: int, health: str) -> None:
        self.folder, self.port = folder, port
        self.log = folder / "log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} exited {self.proc.returncode}: {self.log.read_text()[-3000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", health)
                if conn.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise SystemExit(f"{self.name} did not answer on port {port} within {STARTUP_S} s")

    def stored(self, ids: list[str]) -> int:
        """How many spans of the traces ``ids`` the receiver's store holds."""
        raise NotImplementedError

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Collect(Receiver):
    """``searchtrace collect`` with a home of its own, into its SQLite file or the store at ``url``."""

    def __init__(self, folder: Path, url: str | None) -> None:
        self.name = "collect " + ("PostgreSQL" if url else "SQLite")
        self.url = url
        port = _free_port()
        env = {**os.environ, "PYTHONPATH": str(REPO), "SEARCHTRACE_STORE": url or "", "SEARCHTRACE_API_KEY": "",
               "SEARCHTRACE_OTLP": "0"}
        command = [sys.executable, "-m", "searchtrace", "collect", "--port", str(port), "--home", str(folder),
                   "--every", "0"]
        super().__init__(command, env, folder, port, "/healthz")

    def stored(self, ids: list[str]) -> int:
        from searchtrace.database import StoreUrl
        from searchtrace.traces.store.opening import open_trace_store

        store = open_trace_store(self.folder / "traces.sqlite", StoreUrl(self.url) if self.url else None).open()
        try:
            return sum(store.stored(ids).values())
        finally:
            store.close()


class Phoenix(Receiver):
    """Phoenix's server with a working folder of its own, offline (as ``test_phoenix_integration``)."""

    name = "Phoenix"

    def __init__(self, folder: Path, executable: str) -> None:
        port = _free_port()
        env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
               "PHOENIX_GRPC_PORT": str(_free_port()), "PHOENIX_WORKING_DIR": str(folder),
               "PHOENIX_TELEMETRY_ENABLED": "false", "DO_NOT_TRACK": "1"}
        super().__init__([executable, "serve"], env, folder, port, "/healthz")

    def stored(self, ids: list[str]) -> int:
        # a phase's span ids share their first byte (``with_new_ids``): one range of Phoenix's unique index
        first = int(ids[0][:2], 16)
        db = sqlite3.connect(f"file:{self.folder / 'phoenix.db'}?mode=ro", uri=True, timeout=30)
        try:
            return int(db.execute("SELECT count(*) FROM spans WHERE span_id >= ? AND span_id < ?",
                                  (f"{first:02x}", f"{first + 1:02x}")).fetchone()[0])
        finally:
            db.close()


def phoenix_executable(explicit: str | None) -> str:
    found = explicit or os.environ.get("SEARCHTRACE_PHOENIX") or (str(PHOENIX_VENV) if PHOENIX_VENV.exists() else None)
    if not found:
        raise SystemExit(f"no Phoenix: python3 -m venv {REPO / '.phoenix-venv'} && {REPO / '.phoenix-venv'}/bin/pip "
                         "install arize-phoenix (as .ci/run does), or set SEARCHTRACE_PHOENIX")
    return found


# -- a phase ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Phase:
    """What one receiver did with one set of requests at one concurrency."""

    spans_s: float
    answered_s: float
    p50_ms: float
    p99_ms: float
    retries: int
    stored: int
    peak_mb: float
    cpu_ms: float


def _exporter(port: int, queue: list[bytes], lock: threading.Lock, latencies: list[float],
              retries: list[float], failures: list[str]) -> None:
    """Post requests from ``queue`` until it is empty; each one's time to its 200 in ``latencies``, each
    429/503 in ``retries``, anything else in ``failures`` (and stop)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while True:
        with lock:
            if not queue:
                return
            body = queue.pop()
        t = time.perf_counter()
        while True:
            try:
                conn.request("POST", "/v1/traces", body, PROTOBUF)
                response = conn.getresponse()
                response.read()
            except OSError as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
                return
            if response.status == 200:
                break
            if response.status not in (429, 503):
                failures.append(f"HTTP {response.status}")
                return
            with lock:
                retries.append(time.perf_counter() - t)
            time.sleep(float(response.getheader("Retry-After") or 1))
        latencies.append(time.perf_counter() - t)


def run_phase(receiver: Receiver, bodies: list[bytes], ids: list[str], exporters: int, spans: int) -> Phase:
    """Send ``bodies`` with ``exporters`` threads; time until the receiver's store holds all ``spans``."""
    queue, lock = list(reversed(bodies)), threading.Lock()
    latencies: list[float] = []
    retries: list[float] = []
    failures: list[str] = []
    threads = [threading.Thread(target=_exporter, args=(receiver.port, queue, lock, latencies, retries, failures))
               for _ in range(exporters)]
    cpu = cpu_s(receiver.proc.pid)
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    answered = time.perf_counter() - t
    if failures:
        raise SystemExit(f"{receiver.name}, {exporters} exporters: {failures[:3]}")
    deadline = time.monotonic() + STORED_S
    checked = time.perf_counter()  # the spans were all stored by the start of the check that finds them all
    stored = receiver.stored(ids)
    while stored < spans and time.monotonic() < deadline:
        time.sleep(0.1)
        checked = time.perf_counter()
        stored = receiver.stored(ids)
    spent = checked - t
    if stored != spans:
        print(f"  !! {receiver.name}: {stored} of {spans} spans stored after {spent:.0f} s")
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return Phase(stored / spent, spans / answered, cuts[49] * 1000, cuts[98] * 1000, len(retries), stored,
                 peak_rss_mb(receiver.proc.pid), (cpu_s(receiver.proc.pid) - cpu) * 1e6 / spans)


# -- the run ----------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spans", type=int, default=3_200, help="spans sent per receiver and concurrency")
    ap.add_argument("--batch", type=int, default=16, help="spans per request")
    ap.add_argument("--exporters", default="1,4,16", help="concurrent exporters, one phase each")
    ap.add_argument("--rounds", type=int, default=1, help="times every concurrency is run (median ratios)")
    ap.add_argument("--phoenix", help="the phoenix executable (default $SEARCHTRACE_PHOENIX, .phoenix-venv)")
    ap.add_argument("--store", help="an existing PostgreSQL server's URL (default: start one here)")
    args = ap.parse_args()
    concurrency = [int(c) for c in args.exporters.split(",")]
    if not 1 <= args.rounds * len(concurrency) < 0xF0 or args.spans < 1 or args.batch < 1:
        ap.error("--rounds times the number of --exporters must be 1-239; --spans and --batch at least 1")
    phoenix = phoenix_executable(args.phoenix)

    t = time.perf_counter()
    base = requests_of(retriever_spans(args.spans), args.batch)
    size = sum(map(len, base)) / args.spans
    print(f"payloads: {args.spans:,} OpenInference RETRIEVER spans (LangChain BM25Retriever,\n"
          f"  10 documents each, {size / 1024:.1f} KiB a span as OTLP protobuf), {len(base)} requests of "
          f"{args.batch}\n  built in {time.perf_counter() - t:.0f} s")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n{busiest()}")

    folder = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    server = Server(args.store)
    receivers: list[Receiver] = []
    try:
        starts: list[Callable[[], Receiver]] = [
            lambda: Collect(_mkdir(folder / "sqlite"), None),
            lambda: Collect(_mkdir(folder / "postgres"), server.fresh()),
            lambda: Phoenix(_mkdir(folder / "phoenix"), phoenix)]
        for start in starts:
            t = time.perf_counter()
            receivers.append(start())
            print(f"{receivers[-1].name}: up in {time.perf_counter() - t:.1f} s, peak RSS "
                  f"{peak_rss_mb(receivers[-1].proc.pid):.0f} MiB")
        print(f"\n{'exporters':>9}  {'receiver':<18}{'spans/s':>8}{'acked/s':>8}{'p50 ms':>7}{'p99 ms':>7}"
              f"{'503s':>5}{'RSS MiB':>8}{'CPU':>6}")
        warm = with_new_ids(base[:2], 0xF0)  # untimed: each receiver's first requests (connections, caches)
        for r in receivers:
            run_phase(r, warm, trace_ids(warm), 1, args.batch * len(warm))
        ratios: dict[int, list[tuple[float, float]]] = {c: [] for c in concurrency}
        for rnd in range(args.rounds):
            for k, c in enumerate(concurrency):
                bodies = with_new_ids(base, rnd * len(concurrency) + k + 1)
                results = {r.name: run_phase(r, bodies, trace_ids(bodies), c, args.spans) for r in receivers}
                for name, p in results.items():
                    print(f"{c:>9}  {name:<18}{p.spans_s:>8.0f}{p.answered_s:>8.0f}{p.p50_ms:>7.0f}"
                          f"{p.p99_ms:>7.0f}{p.retries:>5}{p.peak_mb:>8.0f}{p.cpu_ms:>6.0f}")
                ph = results["Phoenix"].spans_s
                ratios[c].append((results["collect SQLite"].spans_s / ph, results["collect PostgreSQL"].spans_s / ph))
                print(f"{'':>11}ratio to Phoenix: SQLite {ratios[c][-1][0]:.2f}x, PostgreSQL {ratios[c][-1][1]:.2f}x")
        if args.rounds > 1:
            print(f"\nspans/s ratio to Phoenix, median of {args.rounds} rounds (range)")
            for c, rs in ratios.items():
                lite, pg = [x for x, _ in rs], [y for _, y in rs]
                print(f"{c:>9}  SQLite {statistics.median(lite):.2f}x ({min(lite):.2f}-{max(lite):.2f})   "
                      f"PostgreSQL {statistics.median(pg):.2f}x ({min(pg):.2f}-{max(pg):.2f})")
        print(f"\nload average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n{busiest()}")
    finally:
        for r in receivers:
            r.stop()
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


def _ticks() -> dict[int, int]:
    """User + system CPU ticks of every process now (Linux ``/proc``)."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(stat.parent.name)] = int(fields[11]) + int(fields[12])
    return out


def busiest(n: int = 5, seconds: float = 2.0) -> str:
    """The ``n`` processes using the most CPU over ``seconds`` (what else ran, for the record)."""
    before = _ticks()
    time.sleep(seconds)
    after, hz = _ticks(), os.sysconf("SC_CLK_TCK")
    use = sorted(((t - before.get(pid, t)) / hz / seconds, pid) for pid, t in after.items())[::-1][:3 * n]
    named = []
    for share, pid in use:
        try:
            words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # some programs (chromium) rewrite their argv into one string: split on spaces as well
        shown = [Path(w).name[:30] for w in b" ".join(words).decode(errors="replace").split()
                 if not w.startswith("-")][:2]
        if shown:  # kernel threads have no command line
            named.append(f"{' '.join(shown)} {share:.0%}")
    return textwrap.fill("busiest processes (share of a core): " + ", ".join(named[:n]), 78, initial_indent="  ",
                         subsequent_indent="    ")


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


if __name__ == "__main__":
    main()
