"""Stored traces as OTLP/JSON: the exact shape, and agreement with the SDK's own OTLP encoder."""

from __future__ import annotations

import base64
import io
import json

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from trace_fixtures import T0, FakeSearch, record

from searchtrace.traces.export import otlp_json
from searchtrace.traces.export.otlp_json import export_jsonl, trace_json
from searchtrace.traces.store.records import EventRecord, SpanRecord, TraceDetail, TraceFilter, TraceSummary
from searchtrace.traces.store.sqlite import TraceStore

TRACE = "0af7651916cd43dd8448eb211c80319c"


def _summary_stub():
    return TraceSummary(TRACE, 1000, 0.002, True, "ERROR", "fast", "q", None, None, 3, 0.5, False, (), ("high",), 1,
                        None, 2)


def test_exact_json_of_a_small_trace():
    root = SpanRecord(TRACE, "b7ad6b7169203331", None, "search", "INTERNAL", 1000, 3000, "ERROR", "bad request",
                      "searchtrace", {"searchtrace.mode": "fast", "searchtrace.top_k": 3, "searchtrace.best_score": 0.5,
                                      "searchtrace.no_confident_results": False,
                                      "searchtrace.result.ids": ("d1", "d2"),
                                      "searchtrace.candidate.scores": (0.5, 0.25), "x.ints": (1, 2),
                                      "x.bools": (True,), "x.nan": float("nan")})
    child = SpanRecord(TRACE, "00f067aa0ba902b7", "b7ad6b7169203331", "dense", "CLIENT", 1500, 2500, "UNSET", None,
                       "searchtrace", {}, (EventRecord("exception", 2000, {"exception.type": "TimeoutError"}),))
    detail = TraceDetail(_summary_stub(), (child, root), {"service.name": "searchtrace"})
    assert trace_json(detail) == {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "searchtrace"}}]},
        "scopeSpans": [{"scope": {"name": "searchtrace"}, "spans": [
            {"traceId": TRACE, "spanId": "b7ad6b7169203331", "parentSpanId": "", "name": "search", "kind": 1,
             "startTimeUnixNano": "1000", "endTimeUnixNano": "3000",
             "attributes": [
                 {"key": "searchtrace.mode", "value": {"stringValue": "fast"}},
                 {"key": "searchtrace.top_k", "value": {"intValue": "3"}},
                 {"key": "searchtrace.best_score", "value": {"doubleValue": 0.5}},
                 {"key": "searchtrace.no_confident_results", "value": {"boolValue": False}},
                 {"key": "searchtrace.result.ids", "value": {"arrayValue": {"values": [
                     {"stringValue": "d1"}, {"stringValue": "d2"}]}}},
                 {"key": "searchtrace.candidate.scores", "value": {"arrayValue": {"values": [
                     {"doubleValue": 0.5}, {"doubleValue": 0.25}]}}},
                 {"key": "x.ints", "value": {"arrayValue": {"values": [{"intValue": "1"}, {"intValue": "2"}]}}},
                 {"key": "x.bools", "value": {"arrayValue": {"values": [{"boolValue": True}]}}},
                 {"key": "x.nan", "value": {"doubleValue": "NaN"}},
             ],
             "events": [], "status": {"code": 2, "message": "bad request"}},
            {"traceId": TRACE, "spanId": "00f067aa0ba902b7", "parentSpanId": "b7ad6b7169203331", "name": "dense",
             "kind": 3, "startTimeUnixNano": "1500", "endTimeUnixNano": "2500", "attributes": [],
             "events": [{"timeUnixNano": "2000", "name": "exception", "attributes": [
                 {"key": "exception.type", "value": {"stringValue": "TimeoutError"}}]}],
             "status": {"code": 0}},
        ]}],
    }]}


def _as_proto(line: dict) -> ExportTraceServiceRequest:
    """Parse OTLP/JSON with protobuf's own parser (which wants base64 ids, not OTLP's hex)."""
    for rs in line["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.ParseDict(line, ExportTraceServiceRequest())


def _by_span_id(request: ExportTraceServiceRequest) -> dict[bytes, object]:
    out = {}
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                span.ClearField("flags")  # the SDK adds W3C trace flags the store does not keep
                out[span.span_id] = span
    return out


def test_agrees_with_the_sdk_otlp_encoder(tmp_path):
    spans, (trace_id,) = record(FakeSearch(degraded=("graph",), candidates=8))
    store = TraceStore(tmp_path / "traces.sqlite")
    store.write(spans)
    ours = _as_proto(trace_json(store.load_trace(trace_id)))
    sdk = encode_spans(spans)
    assert _by_span_id(ours) == _by_span_id(sdk)
    resource = lambda r: {kv.key: kv.value for kv in r.resource_spans[0].resource.attributes}  # noqa: E731
    assert resource(ours) == resource(sdk)


@pytest.fixture
def store(tmp_path):
    s = TraceStore(tmp_path / "traces.sqlite")
    spans, ids = record(*(FakeSearch(start_ns=T0 + i, mode="fast" if i % 2 else "graph") for i in range(5)))
    s.write(spans)
    yield s, ids
    s.close()


def test_export_jsonl_writes_one_valid_trace_per_line(store, monkeypatch):
    s, ids = store
    monkeypatch.setattr(otlp_json, "_PAGE", 2)  # several pages
    out = io.StringIO()
    assert export_jsonl(s, out) == 5
    lines = out.getvalue().splitlines()
    assert [json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] for line in lines] == ids[::-1]
    for line in lines:
        request = _as_proto(json.loads(line))
        assert len(_by_span_id(request)) == 11


@pytest.mark.parametrize("flt, expected", [
    (TraceFilter(mode="fast", limit=None), [3, 1]),
    (TraceFilter(limit=3), [4, 3, 2]),
    (TraceFilter(limit=None, offset=3), [1, 0]),
])
def test_export_jsonl_filters(store, monkeypatch, flt, expected):
    s, ids = store
    monkeypatch.setattr(otlp_json, "_PAGE", 2)
    out = io.StringIO()
    assert export_jsonl(s, out, flt) == len(expected)
    got = [json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
           for line in out.getvalue().splitlines()]
    assert got == [ids[i] for i in expected]
