"""Fuzzing the receiver with hypothesis: protobuf and JSON bodies, whole or damaged (truncated, bytes flipped,
invalid UTF-8, wrong types), with 10,000 documents in a span, 1 MB values, unknown span kinds and missing or
bad ids. Every answer is one the OTLP/HTTP specification names (200, 400, 413, 415: never 500), and nothing
acknowledged is missing from the store: each 200's kept spans are there, counted by the store itself."""

from __future__ import annotations

import gzip
import itertools
import json
import sqlite3

import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from starlette.testclient import TestClient

from searchtrace.traces.receive.app import collector_app, receiver_for_store
from searchtrace.traces.receive.limits import ReceiveLimits
from searchtrace.traces.store.opening import open_trace_store

IDS = itertools.count(1)  # ids drawn from a counter: every example's spans are new to the store
ID_KINDS = ("valid", "valid", "valid", "missing", "zeros", "short")
LIMITS = ReceiveLimits(body_bytes=8 * 2**20, decoded_bytes=16 * 2**20, value_chars=256 * 1024)

span_specs = st.fixed_dictionaries({
    "trace": st.sampled_from(ID_KINDS), "span": st.sampled_from(ID_KINDS),
    "kind": st.integers(-3, 12), "status": st.integers(-1, 5),
    "name": st.text(max_size=20),
    "docs": st.sampled_from((0, 3)),
    "big": st.booleans(),  # a 1 MB attribute value
    "value": st.one_of(st.text(max_size=30), st.integers(-2**63, 2**63 - 1), st.floats(allow_nan=False),
                       st.booleans(), st.lists(st.integers(0, 9), max_size=4)),
})
damages = st.sampled_from(("none", "none", "truncate", "flip", "bad_utf8", "wrong_types"))


def _id(kind: str, size: int) -> bytes:
    n = next(IDS)
    return {"valid": n.to_bytes(size, "big"), "missing": b"", "zeros": bytes(size),
            "short": n.to_bytes(size, "big")[:size - 1]}[kind]


def _any(value) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, list):
        out = AnyValue()
        out.array_value.values.extend(_any(x) for x in value)
        return out
    return AnyValue(string_value=value)


def _span(spec: dict) -> Span:
    span = Span(trace_id=_id(spec["trace"], 16), span_id=_id(spec["span"], 8), name=spec["name"],
                kind=spec["kind"], start_time_unix_nano=1_700_000_000_000_000_000,
                end_time_unix_nano=1_700_000_000_001_000_000)  # type: ignore[arg-type]
    span.status.code = spec["status"]  # type: ignore[assignment]
    span.attributes.append(KeyValue(key="v", value=_any(spec["value"])))
    for i in range(spec["docs"]):
        span.attributes.append(KeyValue(key=f"retrieval.documents.{i}.document.id",
                                        value=AnyValue(string_value=f"doc-{i}")))
    if spec["big"]:
        span.attributes.append(KeyValue(key="output.value", value=AnyValue(string_value="x" * 2**20)))
    return span


def _request(specs: list[dict]) -> ExportTraceServiceRequest:
    scope = ScopeSpans(spans=[_span(s) for s in specs])
    resource = ResourceSpans(scope_spans=[scope])
    resource.resource.attributes.append(KeyValue(key="service.name", value=AnyValue(string_value="fuzz")))
    return ExportTraceServiceRequest(resource_spans=[resource])


def _json(request: ExportTraceServiceRequest) -> dict:
    doc = json_format.MessageToDict(request)
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in ("traceId", "spanId"):
                    if key in span:
                        import base64

                        span[key] = base64.b64decode(span[key]).hex()
    return doc


def _damage(body: bytes, damage: str, is_json: bool, data) -> bytes:
    if damage == "truncate" and body:
        return body[:data.draw(st.integers(0, len(body) - 1))]
    if damage == "flip" and body:
        at = data.draw(st.integers(0, len(body) - 1))
        return body[:at] + bytes([body[at] ^ data.draw(st.integers(1, 255))]) + body[at + 1:]
    if damage == "bad_utf8":
        at = body.find(b"fuzz")
        return body[:at] + b"\xff\xfe" + body[at + 2:] if at >= 0 else body
    if damage == "wrong_types" and is_json:
        doc = json.loads(body)
        spans = doc["resourceSpans"][0]["scopeSpans"][0].get("spans", [])
        if spans:
            field = data.draw(st.sampled_from(("name", "kind", "traceId", "attributes", "startTimeUnixNano")))
            spans[0][field] = data.draw(st.sampled_from((5, "weird", None, [1], {"a": 1}, "-1")))
        return json.dumps(doc).encode()
    return body


def _valid(span) -> bool:
    return (len(span.trace_id) == 16 and any(span.trace_id) and len(span.span_id) == 8 and any(span.span_id)
            and len(span.parent_span_id) in (0, 8))


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "traces.sqlite"
    store = open_trace_store(path)
    receiver = receiver_for_store(store, limits=LIMITS, close_store=False)
    with TestClient(collector_app(receiver, "127.0.0.1"), base_url="http://127.0.0.1") as client:
        yield client, receiver, store, path
    store.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(specs=st.lists(span_specs, min_size=0, max_size=4), encoding=st.sampled_from(("protobuf", "json")),
       damage=damages, gzipped=st.booleans(), many=st.sampled_from((False, False, False, True)), data=st.data())
def test_every_answer_is_specified_and_nothing_acknowledged_is_lost(rig, specs, encoding, damage, gzipped, many,
                                                                   data):
    client, receiver, store, path = rig
    if many and specs:  # 10,000 documents in the first span (one such span a request keeps the test quick)
        specs = [{**specs[0], "docs": 10_000}, *specs[1:]]
    request = _request(specs)
    is_json = encoding == "json"
    body = json.dumps(_json(request)).encode() if is_json else request.SerializeToString()
    body = _damage(body, damage, is_json, data)
    headers = {"Content-Type": f"application/{'json' if is_json else 'x-protobuf'}"}
    if gzipped:
        body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
    before = receiver.tally.totals()
    r = client.post("/v1/traces", content=body, headers=headers)
    assert r.status_code in (200, 400, 413, 415), r.text[:300]
    after = receiver.tally.totals()
    assert _spans_in(path) == after.stored  # every span ever acknowledged, counted by the store itself
    if r.status_code != 200:
        assert after.stored == before.stored
        return
    rejected = int(r.json().get("partialSuccess", {}).get("rejectedSpans", 0)) if is_json else \
        _rejected(r.content)
    assert after.stored - before.stored == (after.received - before.received) - rejected
    if damage == "none":  # the body as built: each valid span is there under its id, and only those
        kept = [s for s in request.resource_spans[0].scope_spans[0].spans if _valid(s)]
        assert after.stored - before.stored == len(kept)
        for span in kept:
            detail = store.load_trace(span.trace_id.hex())
            assert detail is not None and span.span_id.hex() in {s.span_id for s in detail.spans}


def _spans_in(path) -> int:
    """Spans in the store's file, read by SQLite itself (0 before the first write creates it)."""
    db = sqlite3.connect(path)
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return db.execute("SELECT count(*) FROM spans").fetchone()[0] if "spans" in tables else 0
    finally:
        db.close()


def _rejected(content: bytes) -> int:
    response = ExportTraceServiceResponse()
    response.ParseFromString(content)
    return response.partial_success.rejected_spans
