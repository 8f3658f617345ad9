"""``receive.otlp_json`` against protobuf's own JSON parser (``json_format.ParseDict``), the independent
implementation: the same message for every well-formed document hypothesis draws (every kind of value, ids in
hex), and a refusal for each value of the wrong type ParseDict refuses too."""

from __future__ import annotations

import base64

import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from searchtrace.traces.receive.otlp_json import JsonShapeError, request_from_json

primitives = st.one_of(st.text(max_size=8).map(lambda s: AnyValue(string_value=s)),
                       st.booleans().map(lambda b: AnyValue(bool_value=b)),
                       st.integers(-2**63, 2**63 - 1).map(lambda i: AnyValue(int_value=i)),
                       st.floats(allow_nan=False, allow_infinity=True).map(lambda f: AnyValue(double_value=f)),
                       st.binary(max_size=8).map(lambda b: AnyValue(bytes_value=b)))


def _array(items: list[AnyValue]) -> AnyValue:
    value = AnyValue()
    value.array_value.values.extend(items)
    return value


def _kvlist(pairs: list[tuple[str, AnyValue]]) -> AnyValue:
    value = AnyValue()
    value.kvlist_value.values.extend(KeyValue(key=k, value=x) for k, x in pairs)
    return value


values = st.recursive(primitives, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(_array), st.lists(st.tuples(st.text(max_size=5), inner), max_size=3).map(_kvlist)),
    max_leaves=6)
attributes = st.lists(st.builds(KeyValue, key=st.text(max_size=10), value=values), max_size=4)
spans = st.builds(Span, trace_id=st.binary(min_size=16, max_size=16), span_id=st.binary(min_size=8, max_size=8),
                  parent_span_id=st.sampled_from((b"", b"\x01" * 8)), name=st.text(max_size=10),
                  kind=st.integers(0, 9), start_time_unix_nano=st.integers(0, 2**64 - 1),
                  end_time_unix_nano=st.integers(0, 2**64 - 1), attributes=attributes,
                  flags=st.integers(0, 2**32 - 1), trace_state=st.text(max_size=5))


def _hex_ids(document: dict) -> dict:
    for rs in document.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return document


@settings(max_examples=150, deadline=None)
@given(st.lists(spans, max_size=3), attributes, st.booleans())
def test_the_same_message_as_protobuf_s_parser(span_list, resource_attributes, enum_names):
    resource = ResourceSpans(scope_spans=[ScopeSpans(spans=span_list)])
    resource.resource.attributes.extend(resource_attributes)
    request = ExportTraceServiceRequest(resource_spans=[resource])
    document = json_format.MessageToDict(request, use_integers_for_enums=not enum_names)
    expected = json_format.ParseDict(document, ExportTraceServiceRequest())
    assert request_from_json(_hex_ids(document)) == expected == request


@pytest.mark.parametrize("span", [
    {"name": 5}, {"kind": "sideways"}, {"startTimeUnixNano": "soon"}, {"attributes": "a=1"},
    {"attributes": [{"key": "k", "value": {"intValue": "1.5"}}]}, {"attributes": [{"key": 3}]},
    {"attributes": [{"key": "k", "value": {"boolValue": "yes"}}]}, {"events": {}},
    {"status": {"code": [2]}}, {"attributes": [{"key": "k", "value": {"doubleValue": "many"}}]},
])
def test_wrong_types_are_refused_naming_where(span):
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    with pytest.raises(json_format.ParseError):
        json_format.ParseDict(document, ExportTraceServiceRequest())
    with pytest.raises(JsonShapeError, match=r"resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]"):
        request_from_json(document)


def test_ids_that_are_not_hex_are_left_empty_and_base64_of_the_right_size_is_taken():
    span = {"traceId": "not hex", "spanId": base64.b64encode(b"\x01" * 8).decode(),
            "parentSpanId": base64.b64encode(b"\x01" * 9).decode()}
    got = request_from_json({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    parsed = got.resource_spans[0].scope_spans[0].spans[0]
    assert (parsed.trace_id, parsed.span_id, parsed.parent_span_id) == (b"", b"\x01" * 8, b"")
