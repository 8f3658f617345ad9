"""``searchtrace collect`` as a process on a free loopback port: the standard OTLP/HTTP exporter's spans come
back from the store as sent; SIGTERM drains and exits 0; ``kill -9`` under eight exporters loses nothing it
acknowledged; and our own exporter, pointed at it, stores what the local store holds for the same search."""

from __future__ import annotations

import signal
import threading
import time

import httpx
import pytest
from collect_process import Collector, free_port
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from opentelemetry.sdk.trace.export import SpanExportResult
from receive_fixtures import assert_stored_as_sent, sdk_spans
from trace_fixtures import FakeSearch, emulate_search

from searchtrace.home import Home
from searchtrace.traces.store.opening import open_trace_store


@pytest.fixture
def collector(tmp_path):
    c = Collector(tmp_path / "collect-home")
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait()


def test_the_standard_exporter_s_spans_are_stored_as_sent(collector):
    spans = sdk_spans()
    exporter = OTLPSpanExporter(endpoint=collector.url)
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    assert collector.stop() == 0  # SIGTERM: drained, exit 0
    log = collector.log.read_text()
    assert log.splitlines()[0] == (f"collecting OTLP/HTTP on {collector.url}; storing in "
                                   f"{collector.home / 'traces.sqlite'}")
    assert "spans received 2, stored 2, rejected 0" in log
    store = open_trace_store(collector.home / "traces.sqlite")
    try:
        assert_stored_as_sent(store, spans)
    finally:
        store.close()


def _batch(thread: int, n: int, size: int = 5) -> tuple[bytes, list[tuple[str, str]]]:
    """A request of ``size`` root spans with ids unique to (thread, n, i)."""
    spans, ids = [], []
    for i in range(size):
        trace_id = (thread << 96 | n << 32 | i + 1).to_bytes(16, "big")
        span_id = (thread << 48 | n << 8 | i + 1).to_bytes(8, "big")
        spans.append(Span(trace_id=trace_id, span_id=span_id, name=f"t{thread}-{n}-{i}",
                          start_time_unix_nano=1_700_000_000_000_000_000, end_time_unix_nano=1_700_000_000_001_000_000))
        ids.append((trace_id.hex(), span_id.hex()))
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])])
    return request.SerializeToString(), ids


def test_kill_9_under_eight_exporters_loses_nothing_acknowledged(collector):
    acknowledged: list[tuple[str, str]] = []
    lock = threading.Lock()
    stop = threading.Event()

    def exporter(thread: int) -> None:
        with httpx.Client(timeout=5) as client:
            for n in range(10_000):
                if stop.is_set():
                    return
                body, ids = _batch(thread + 1, n)
                try:
                    r = client.post(collector.url, content=body, headers={"Content-Type": "application/x-protobuf"})
                except httpx.HTTPError:
                    return  # the receiver is gone
                if r.status_code == 200:
                    with lock:
                        acknowledged.extend(ids)

    threads = [threading.Thread(target=exporter, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 20
    while len(acknowledged) < 500 and time.monotonic() < deadline:
        time.sleep(0.05)
    collector.proc.send_signal(signal.SIGKILL)
    collector.proc.wait(10)
    stop.set()
    for t in threads:
        t.join(10)
    assert len(acknowledged) >= 500
    store = open_trace_store(collector.home / "traces.sqlite")
    try:
        found = store.stored(sorted({trace for trace, _ in acknowledged}))
        missing = [trace for trace, _ in acknowledged if found.get(trace, 0) < 1]
    finally:
        store.close()
    assert not missing, f"{len(missing)} of {len(acknowledged)} acknowledged spans are not in the store"


def test_our_exporter_pointed_at_the_receiver_stores_what_the_local_store_holds(collector, tmp_path, monkeypatch):
    from searchtrace.traces.export.provider import TraceSettings, make_tracer_provider

    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_TRACES_EXPORTER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url.removesuffix("/v1/traces"))
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.delenv("SEARCHTRACE_STORE", raising=False)
    home = Home(tmp_path / "local-home")
    provider, handles = make_tracer_provider(home, TraceSettings.resolve(store=True, otlp=True))
    trace_id = emulate_search(provider.get_tracer("searchtrace"), FakeSearch(candidates=20, start_ns=time.time_ns()))
    handles.close()
    assert collector.stop() == 0
    local, received = open_trace_store(home.traces), open_trace_store(collector.home / "traces.sqlite")
    try:
        mine, theirs = local.load_trace(trace_id), received.load_trace(trace_id)
    finally:
        local.close()
        received.close()
    assert mine is not None and theirs is not None
    assert theirs.resource == mine.resource
    assert theirs.summary == mine.summary  # the same search: query, mode, results, bands, timing
    got = {s.span_id: s for s in theirs.spans}
    assert set(got) == {s.span_id for s in mine.spans}
    for span in mine.spans:
        other = got[span.span_id]
        assert (other.name, other.parent_id, other.kind, other.start_ns, other.end_ns, other.status) == \
            (span.name, span.parent_id, span.kind, span.start_ns, span.end_ns, span.status)
        assert other.events == span.events
        # the OTLP export adds OpenInference's document keys (spans/openinference); every attribute the local
        # store holds arrives as it is
        assert {k: x for k, x in other.attributes.items() if k in span.attributes} == dict(span.attributes)
        extra = set(other.attributes) - set(span.attributes)
        assert all(k.startswith(("retrieval.documents.", "reranker.")) for k in extra), sorted(extra)[:5]


def test_grpc_spans_are_stored_as_sent(tmp_path):
    """``--grpc-port``: the standard OTLP gRPC exporter, gzip-compressed, into the same store."""
    from grpc import Compression  # type: ignore[import-untyped]
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

    port = free_port()
    collector = Collector(tmp_path / "grpc-home", "--grpc-port", str(port))
    try:
        spans = sdk_spans()
        exporter = GrpcExporter(endpoint=f"127.0.0.1:{port}", insecure=True, compression=Compression.Gzip)
        assert exporter.export(spans) is SpanExportResult.SUCCESS
        exporter.shutdown()
        assert collector.stop() == 0
        assert f"and gRPC on 127.0.0.1:{port}" in collector.log.read_text().splitlines()[0]
        store = open_trace_store(collector.home / "traces.sqlite")
        try:
            assert_stored_as_sent(store, spans)
        finally:
            store.close()
    finally:
        if collector.proc.poll() is None:
            collector.proc.kill()
            collector.proc.wait()


def test_grpc_refusals_are_status_codes(tmp_path):
    """Without the key: UNAUTHENTICATED; over the span bound: INVALID_ARGUMENT (not retried); a span without
    ids: partial_success, the other stored."""
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    from searchtrace.traces.receive.app import receiver_for_store
    from searchtrace.traces.receive.grpc_service import start_grpc
    from searchtrace.traces.receive.limits import ReceiveLimits

    store = open_trace_store(tmp_path / "traces.sqlite")
    receiver = receiver_for_store(store, limits=ReceiveLimits(spans=3))
    server, port = start_grpc(receiver, "127.0.0.1", 0, api_key="k")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = trace_service_pb2_grpc.TraceServiceStub(channel)
            one, _ = _batch(1, 1, size=1)
            request = ExportTraceServiceRequest.FromString(one)
            with pytest.raises(grpc.RpcError) as refused:
                stub.Export(request, timeout=10)
            assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
            key = (("authorization", "Bearer k"),)
            with pytest.raises(grpc.RpcError) as refused:
                stub.Export(ExportTraceServiceRequest.FromString(_batch(1, 2, size=4)[0]), metadata=key, timeout=10)
            assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            request.resource_spans[0].scope_spans[0].spans.add(name="no ids")
            answer = stub.Export(request, metadata=key, timeout=10)
            assert answer.partial_success.rejected_spans == 1
            assert "traceId is 0 bytes" in answer.partial_success.error_message
    finally:
        server.stop(None)
        receiver.writer.close()
    totals = receiver.tally.totals()
    assert (totals.stored, totals.rejected, totals.refused) == (1, 1, 1)  # the key's refusal is the guard's, as on HTTP


def test_into_the_shared_store(tmp_path, pg_db, pg_url):
    """``--store URL``: the spans go to the team's PostgreSQL store, through the bounded buffer `serve` uses."""
    from searchtrace.traces.store.postgres import PostgresTraceStore

    collector = Collector(tmp_path / "pg-home", "--store", pg_url)
    try:
        spans = sdk_spans()
        exporter = OTLPSpanExporter(endpoint=collector.url)
        assert exporter.export(spans) is SpanExportResult.SUCCESS
        exporter.shutdown()
        assert collector.stop() == 0
        assert_stored_as_sent(PostgresTraceStore(pg_db), spans)
    finally:
        if collector.proc.poll() is None:
            collector.proc.kill()
            collector.proc.wait()


STOPPED_S = 10


def test_the_shared_store_stopped_for_10_s_loses_nothing_acknowledged(tmp_path, stoppable_postgres):
    """Four exporters send while the team's store is stopped for 10 s: every request is answered (200, held in
    the bounded buffer, or 503 to retry), and every span answered 200 is stored once the store is back, or
    dropped and counted in the store's drop total."""
    from searchtrace.cli import migrations
    from searchtrace.database import Database, StoreUrl, migrate
    from searchtrace.traces.store.postgres import PostgresTraceStore

    url = stoppable_postgres.new_database()
    db = Database(StoreUrl(url))
    migrate(db, migrations())
    collector = Collector(tmp_path / "outage-home", "--store", url)
    acknowledged: list[str] = []
    statuses: dict[int, int] = {}
    lock, stop = threading.Lock(), threading.Event()

    def exporter(thread: int) -> None:
        with httpx.Client(timeout=30) as client:
            for n in range(100_000):
                if stop.is_set():
                    return
                body, ids = _batch(thread + 1, n)
                r = client.post(collector.url, content=body, headers={"Content-Type": "application/x-protobuf"})
                with lock:
                    statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                    if r.status_code == 200:
                        acknowledged.extend(trace for trace, _ in ids)
                time.sleep(0.01)

    threads = [threading.Thread(target=exporter, args=(t,)) for t in range(4)]
    try:
        for t in threads:
            t.start()
        time.sleep(1)
        stoppable_postgres.stop()
        stopped_at = len(acknowledged)
        time.sleep(STOPPED_S)
        during = len(acknowledged) - stopped_at
        stoppable_postgres.start()
        time.sleep(2)
        stop.set()
        for t in threads:
            t.join(30)
        deadline = time.monotonic() + 60  # the buffer is written once the store answers again
        while httpx.get(f"http://127.0.0.1:{collector.port}/healthz").json()["held"] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert collector.stop() == 0
        assert set(statuses) <= {200, 503}, statuses
        assert during > 0  # answered while the store was stopped: held, not refused
        store = PostgresTraceStore(Database(StoreUrl(url)))
        found = store.stored(sorted(set(acknowledged)))
        missing = sum(1 for trace in acknowledged if found.get(trace, 0) < 1)
        assert missing == store.dropped(), f"{missing} acknowledged spans missing, {store.dropped()} counted dropped"
        print(f"\n{len(acknowledged)} spans acknowledged ({during} while the store was stopped for {STOPPED_S} s), "
              f"answers {statuses}, {missing} missing, {store.dropped()} counted dropped")
        store.close()
    finally:
        stop.set()
        if collector.proc.poll() is None:
            collector.proc.kill()
            collector.proc.wait()
        db.close()
        stoppable_postgres.drop_database(url)


def test_a_spill_file_left_by_a_killed_receiver_is_stored_at_the_next_start(tmp_path, stoppable_postgres):
    """The shared store stopped, spans acknowledged (held, and spilled to the home), the receiver killed with
    ``kill -9``: a ``collect`` started again from the same home takes the spill file and stores every span."""
    from searchtrace.cli import migrations
    from searchtrace.database import Database, StoreUrl, migrate
    from searchtrace.traces.store.postgres import PostgresTraceStore

    url = stoppable_postgres.new_database()
    db = Database(StoreUrl(url))
    migrate(db, migrations())
    home = tmp_path / "spill-home"
    collector = Collector(home, "--store", url)
    acknowledged: list[str] = []
    try:
        stoppable_postgres.stop()
        try:
            deadline = time.monotonic() + 60
            for n in range(20):  # as an exporter does: a 503 (the store's first answer is awaited) is retried
                body, ids = _batch(1, n)
                while (r := httpx.post(collector.url, content=body, timeout=30,
                                       headers={"Content-Type": "application/x-protobuf"})).status_code == 503 \
                        and time.monotonic() < deadline:
                    time.sleep(0.2)
                assert r.status_code == 200, (n, r.status_code, r.text)
                acknowledged.extend(trace for trace, _ in ids)
            # a request answered 503 may still be held once the store's first answer came: held again by its retry
            held = httpx.get(f"http://127.0.0.1:{collector.port}/healthz", timeout=10).json()["held"]
            assert held >= len(acknowledged) == 100, held
            collector.proc.send_signal(signal.SIGKILL)
            assert collector.proc.wait(30) == -signal.SIGKILL
        finally:
            stoppable_postgres.start()
        left = list((home / "traces.spill").glob("*/*.jsonl"))
        assert len(left) == 1 and left[0].stat().st_size > 0, left
        store = PostgresTraceStore(db)
        assert store.stored(acknowledged) == {}  # nothing reached the store before the kill

        again = Collector(home, "--store", url)
        try:
            deadline = time.monotonic() + 60
            while len(store.stored(acknowledged)) < len(acknowledged) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert again.stop() == 0
        finally:
            if again.proc.poll() is None:
                again.proc.kill()
                again.proc.wait()
        log = again.log.read_text()
        assert f"\n{held} spans a collect or serve of this home held for {StoreUrl(url).masked()} " \
            "when it stopped are held again" in log, log
        stored = store.stored(acknowledged)
        assert set(stored) == set(acknowledged), f"{len(acknowledged) - len(stored)} of 100 spans missing"
        assert sum(stored.values()) == len(acknowledged)  # each once: one root span per trace
        assert list((home / "traces.spill").glob("*/*.jsonl")) == []  # written, then removed at a clean exit
        assert store.dropped() == 0
        store.close()
    finally:
        if collector.proc.poll() is None:
            collector.proc.kill()
            collector.proc.wait()
        db.close()
        stoppable_postgres.drop_database(url)
