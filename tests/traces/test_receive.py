"""The OTLP/HTTP receiver (``traces/receive``): every answer the specification names, both encodings, both
compressions, partial success and the limits, with the spans read back from a real SQLite store."""

from __future__ import annotations

import gzip
import json
import threading
import zlib

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace.export import SpanExportResult
from receive_fixtures import JSON, PROTOBUF, assert_stored_as_sent, dumps, json_body, protobuf_body, sdk_spans, stored
from starlette.testclient import TestClient

from searchtrace.traces.export.exporter import FailureKind
from searchtrace.traces.receive.app import collector_app, receiver_for_store
from searchtrace.traces.receive.limits import ReceiveLimits
from searchtrace.traces.receive.writer import GroupWriter
from searchtrace.traces.store.opening import open_trace_store

URL = "/v1/traces"
BASE = "http://127.0.0.1:4318"


@pytest.fixture
def store(tmp_path):
    s = open_trace_store(tmp_path / "traces.sqlite")
    yield s
    s.close()


def client_for(store, limits: ReceiveLimits | None = None, api_key: str | None = None):
    receiver = receiver_for_store(store, limits=limits, close_store=False)
    return TestClient(collector_app(receiver, "127.0.0.1", api_key=api_key), base_url=BASE), receiver


@pytest.fixture
def client(store):
    c, receiver = client_for(store)
    with c:
        yield c
    assert receiver.writer.pending == 0


def response(r) -> ExportTraceServiceResponse:
    message = ExportTraceServiceResponse()
    message.ParseFromString(r.content)
    return message


def test_protobuf_spans_are_stored_as_sent(client, store):
    spans = sdk_spans()
    r = client.post(URL, content=protobuf_body(spans), headers=PROTOBUF)
    assert r.status_code == 200 and r.headers["content-type"] == "application/x-protobuf"
    assert not response(r).HasField("partial_success")
    assert_stored_as_sent(store, spans)


def test_json_spans_are_stored_as_sent_and_answered_in_json(client, store):
    spans = sdk_spans()
    r = client.post(URL, content=dumps(json_body(spans)), headers=JSON)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json() == {}
    assert_stored_as_sent(store, spans)


@pytest.mark.parametrize("coding, compress", [("gzip", gzip.compress), ("deflate", zlib.compress),
                                              ("deflate", lambda b: zlib.compress(b, wbits=-15))])
@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_compressed_bodies(client, store, coding, compress, encoding):
    spans = sdk_spans()
    body, headers = (protobuf_body(spans), PROTOBUF) if encoding == "protobuf" else (dumps(json_body(spans)), JSON)
    r = client.post(URL, content=compress(body), headers={**headers, "Content-Encoding": coding})
    assert r.status_code == 200
    assert_stored_as_sent(store, spans)


def test_json_values_of_every_kind(client, store):
    """A hand-written OTLP JSON document: int64 as a string, bytes, arrays, maps, an unknown kind and field."""
    doc = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "j"}}]},
                              "scopeSpans": [{"scope": {"name": "hand"}, "spans": [{
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "get",
        "kind": 9, "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": 1700000000000001000,
        "somethingNew": True, "status": {"code": 2, "message": "boom"},
        "attributes": [
            {"key": "n", "value": {"intValue": "42"}},
            {"key": "f", "value": {"doubleValue": 0.5}},
            {"key": "b", "value": {"boolValue": True}},
            {"key": "raw", "value": {"bytesValue": "AAEC"}},
            {"key": "ids", "value": {"arrayValue": {"values": [{"stringValue": "x"}, {"stringValue": "y"}]}}},
            {"key": "mixed", "value": {"arrayValue": {"values": [{"stringValue": "x"}, {"intValue": "1"}]}}},
            {"key": "meta", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}},
            {"key": "empty", "value": {}}]}]}]}]}
    r = client.post(URL, content=dumps(doc), headers=JSON)
    assert r.status_code == 200, r.text
    span = store.load_trace("5b8efff798038103d269b633813fc60c").spans[0]
    assert span.kind == "INTERNAL" and span.status == "ERROR" and span.status_message == "boom"
    assert (span.start_ns, span.end_ns) == (1700000000000000000, 1700000000000001000)
    assert dict(span.attributes) == {"n": 42, "f": 0.5, "b": True, "raw": "AAEC", "ids": ("x", "y"),
                                     "mixed": '["x", 1]', "meta": '{"k": "v"}'}


def test_base64_ids_of_protobuf_s_own_json_mapping_are_taken(client, store):
    """Some exporters send protobuf's JSON mapping as is: ids in base64, where OTLP JSON says hex."""
    from google.protobuf import json_format
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    spans = sdk_spans()
    r = client.post(URL, content=dumps(json_format.MessageToDict(encode_spans(spans))), headers=JSON)
    assert r.status_code == 200 and r.json() == {}
    assert_stored_as_sent(store, spans)


def test_a_span_without_valid_ids_is_rejected_alone(store):
    c, receiver = client_for(store)
    spans = sdk_spans()
    doc = json_body(spans)
    bad = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    bad.append(dict(bad[0], traceId="zz-not-hex", spanId="00" * 8))
    bad.append({k: x for k, x in bad[0].items() if k != "traceId"})
    with c:
        r = c.post(URL, content=dumps(doc), headers=JSON)
    assert r.status_code == 200
    partial = r.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "2"
    assert partial["errorMessage"].startswith("2 spans rejected: resourceSpans[0].scopeSpans[0].spans[2]: traceId")
    assert_stored_as_sent(store, spans)
    totals = receiver.tally.totals()
    assert (totals.received, totals.stored, totals.rejected) == (4, 2, 2)


@pytest.mark.parametrize("body, headers", [
    (b"\x0a\x05garbage", PROTOBUF),
    (b"{not json", JSON),
    (b'{"resourceSpans": "\xff\xfe"}', JSON),  # invalid UTF-8
    (b"[1, 2]", JSON),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 5}]}]}]}', JSON),
    (gzip.compress(b"x", mtime=0)[:-4], {**PROTOBUF, "Content-Encoding": "gzip"}),
])
def test_malformed_is_400_with_a_status_message(client, body, headers):
    r = client.post(URL, content=body, headers=headers)
    assert r.status_code == 400
    if headers["Content-Type"] == JSON["Content-Type"]:
        assert r.json()["message"]
    else:
        from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]

        status = Status()
        status.ParseFromString(r.content)
        assert status.message


def test_invalid_utf8_in_a_protobuf_string_is_400(client):
    body = bytearray(protobuf_body(sdk_spans()))
    name = body.find(b"BM25Retriever")
    body[name:name + 2] = b"\xff\xfe"
    assert client.post(URL, content=bytes(body), headers=PROTOBUF).status_code == 400


def test_too_large_is_413(store):
    limits = ReceiveLimits(body_bytes=16 * 1024, decoded_bytes=64 * 1024, spans=1)
    c, _ = client_for(store, limits)
    with c:
        assert c.post(URL, content=b"\0" * 20_000, headers=PROTOBUF).status_code == 413
        bomb = gzip.compress(b"\0" * 10_000_000)  # 10 MB of zeros in about 10 KB: under the body's limit
        assert len(bomb) < limits.body_bytes
        r = c.post(URL, content=bomb, headers={**PROTOBUF, "Content-Encoding": "gzip"})
        assert r.status_code == 413 and "inflates" in r.text
        r = c.post(URL, content=protobuf_body(sdk_spans()), headers=PROTOBUF)
        assert r.status_code == 413 and "2 spans" in r.text


@pytest.mark.parametrize("headers", [{"Content-Type": "text/plain"}, {},
                                     {**PROTOBUF, "Content-Encoding": "br"}])
def test_other_types_and_encodings_are_415(client, headers):
    assert client.post(URL, content=b"x", headers=headers).status_code == 415


def test_get_is_405(client):
    r = client.get(URL)
    assert r.status_code == 405 and r.headers["allow"] == "POST"


def test_long_values_are_cut_and_counted(store):
    c, receiver = client_for(store, ReceiveLimits(value_chars=1000, attributes=2))
    spans = sdk_spans(n_docs=2)
    doc = json_body(spans)
    child = next(s for s in doc["resourceSpans"][0]["scopeSpans"][0]["spans"] if s["name"] == "BM25Retriever")
    child["attributes"] = [{"key": "big", "value": {"stringValue": "é" * 1_000_000}},
                           {"key": "b", "value": {"intValue": "1"}}, {"key": "c", "value": {"intValue": "2"}}]
    with c:
        assert c.post(URL, content=dumps(doc), headers=JSON).status_code == 200
    got = next(s for s in stored(store, spans[0]).spans if s.name == "BM25Retriever")
    assert dict(got.attributes) == {"big": "é" * 1000, "b": 1}
    lists = [doc["resourceSpans"][0]["resource"]["attributes"],
             *(s["attributes"] for s in doc["resourceSpans"][0]["scopeSpans"][0]["spans"])]
    totals = receiver.tally.totals()
    assert (totals.truncated, totals.dropped) == (1, sum(max(0, len(a) - 2) for a in lists))


class Gate:
    """An exporter that waits for a release before each export, and records the batches."""

    def __init__(self, result=SpanExportResult.SUCCESS):
        self.release = threading.Event()
        self.entered = threading.Event()
        self.batches: list[int] = []
        self.result = result

    def export(self, spans):
        self.entered.set()
        self.release.wait(10)
        self.batches.append(len(spans))
        return self.result

    def shutdown(self):
        pass


def test_requests_waiting_share_one_commit():
    gate = Gate()
    writer = GroupWriter(gate, capacity=100)  # type: ignore[arg-type]
    spans = sdk_spans()
    first = writer.submit(spans[:1])
    assert gate.entered.wait(5)  # the writer is inside the first write: the next three wait together
    tickets = [writer.submit(spans) for _ in range(3)]
    gate.release.set()
    assert first.result(5) and all(t.result(5) for t in tickets)
    assert gate.batches == [1, 6]
    assert writer.close(5)


class Poisoned:
    """An exporter whose store refuses any batch holding a span named ``poison`` (as a store refuses a value
    it cannot hold), saying so as the store exporters do (``last_failure``)."""

    def __init__(self):
        self.release = threading.Event()
        self.entered = threading.Event()
        self.batches: list[list[str]] = []
        self.last_failure = None

    def export(self, spans):
        self.entered.set()
        self.release.wait(10)
        self.batches.append([s.name for s in spans])
        if any(s.name == "poison" for s in spans):
            self.last_failure = FailureKind.UNEXPECTED
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self):
        pass


def test_a_request_the_store_refuses_fails_alone():
    from opentelemetry.sdk.trace import ReadableSpan

    exporter = Poisoned()
    writer = GroupWriter(exporter, capacity=100)  # type: ignore[arg-type]
    first = writer.submit([ReadableSpan("first")])
    assert exporter.entered.wait(5)
    good, bad, other = (writer.submit([ReadableSpan(n)]) for n in ("good", "poison", "other"))
    exporter.release.set()
    assert [t.result(5) for t in (first, good, bad, other)] == [True, True, False, True]
    assert exporter.batches == [["first"], ["good", "poison", "other"], ["good"], ["poison"], ["other"]]
    assert writer.close(5)


def test_a_full_queue_is_503_with_retry_after(store):
    gate = Gate()
    receiver = receiver_for_store(store, limits=ReceiveLimits(queue_spans=2, retry_after_s=3), close_store=False)
    receiver.writer = GroupWriter(gate, capacity=2)  # type: ignore[arg-type]
    c = TestClient(collector_app(receiver, "127.0.0.1"), base_url=BASE)
    assert receiver.writer.submit(sdk_spans()) is not None  # two spans fill it
    r = c.post(URL, content=protobuf_body(sdk_spans()), headers=PROTOBUF)
    assert r.status_code == 503 and r.headers["retry-after"] == "3"
    gate.release.set()
    receiver.writer.close(5)


def test_a_failed_write_is_503(store):
    receiver = receiver_for_store(store, close_store=False)
    gate = Gate(SpanExportResult.FAILURE)
    gate.release.set()
    receiver.writer = GroupWriter(gate, capacity=100)  # type: ignore[arg-type]
    with TestClient(collector_app(receiver, "127.0.0.1"), base_url=BASE) as c:
        r = c.post(URL, content=dumps(json_body(sdk_spans())), headers=JSON)
    assert r.status_code == 503 and r.headers["retry-after"] == "1" and "retry" in r.json()["message"]


def test_the_guards_of_serve(store):
    c, _ = client_for(store, api_key="s3cret")
    body = protobuf_body(sdk_spans())
    with c:
        assert c.post(URL, content=body, headers=PROTOBUF).status_code == 401
        auth = {**PROTOBUF, "Authorization": "Bearer s3cret"}
        assert c.post(URL, content=body, headers={**auth, "Host": "evil.example"}).status_code == 421
        assert c.post(URL, content=body, headers={**auth, "Origin": "http://evil.example"}).status_code == 421
        assert c.post(URL, content=body, headers=auth).status_code == 200
        assert c.get("/healthz").json()["status"] == "ok"


def test_an_answer_is_json_the_specification_reads(client):
    """partial_success's int64 is a string in JSON, as protobuf's JSON mapping writes it."""
    doc = json_body(sdk_spans())
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = ""
    r = client.post(URL, content=dumps(doc), headers={"Content-Type": "application/json; charset=utf-8"})
    assert json.loads(r.content)["partialSuccess"]["rejectedSpans"] == "1"


def test_collect_loads_nothing_of_the_retriever():
    """``collect`` stays cheap to start: the receiver, its store and its server import no model, numpy or
    search code (checked in a fresh interpreter)."""
    import subprocess
    import sys

    code = ("import sys; import searchtrace.cli as c; c.build_parser(); "
            "import searchtrace.traces.receive.cli, searchtrace.traces.receive.app, uvicorn; "
            "from searchtrace.traces.store.opening import open_trace_store; "
            "open_trace_store('unused.sqlite').__class__; "
            "print(sorted(m for m in ('numpy', 'onnxruntime', 'torch', 'searchtrace.retriever.search', "
            "'searchtrace.retriever.embedding', 'searchtrace.retriever.serve.service', 'fastapi') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
