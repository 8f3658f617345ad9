"""What the receiver's tests share: real SDK spans, their OTLP protobuf and JSON bodies, and a receiver app
over a store in a temporary folder, driven by Starlette's TestClient (no port)."""

from __future__ import annotations

import json

from google.protobuf import json_format
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from searchtrace.traces.store.records import TraceDetail

PROTOBUF = {"Content-Type": "application/x-protobuf"}
JSON = {"Content-Type": "application/json"}


def sdk_spans(n_docs: int = 3, service: str = "their-rag", content_chars: int = 0) -> list[ReadableSpan]:
    """A foreign retrieval as an instrumented app records it: a CHAIN root and a RETRIEVER child with
    documents (each with ``content_chars`` of content), an event, and an error status on the child."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service,
                                                        "openinference.project.name": "docs-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("openinference.instrumentation.langchain", "0.1.2")
    with tracer.start_as_current_span("RetrievalQA", kind=trace.SpanKind.SERVER) as root:
        root.set_attribute("openinference.span.kind", "CHAIN")
        root.set_attribute("input.value", "which river runs past the harbour?")
        with tracer.start_as_current_span("BM25Retriever") as child:
            child.set_attribute("openinference.span.kind", "RETRIEVER")
            for i in range(n_docs):
                child.set_attribute(f"retrieval.documents.{i}.document.id", f"doc-{i}")
                child.set_attribute(f"retrieval.documents.{i}.document.score", 1.0 / (i + 1))
                if content_chars:
                    child.set_attribute(f"retrieval.documents.{i}.document.content", f"{i}" * content_chars)
            child.set_attribute("tags", ["a", "b"])
            child.add_event("cache miss", {"shard": 3})
            child.set_status(Status(StatusCode.ERROR, "index cold"))
    provider.shutdown()
    return list(memory.get_finished_spans())


def protobuf_body(spans: list[ReadableSpan]) -> bytes:
    """The body the standard OTLP/HTTP exporter sends for ``spans``."""
    return encode_spans(spans).SerializeToString()


def json_body(spans: list[ReadableSpan]) -> dict:
    """``spans`` in OTLP JSON: protobuf's JSON mapping with the ids turned to hex, as the specification says."""
    document = json_format.MessageToDict(encode_spans(spans))
    for rs in document["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _hex(span[key])
    return document


def _hex(b64: str) -> str:
    import base64

    return base64.b64decode(b64).hex()


def dumps(document: dict) -> bytes:
    return json.dumps(document).encode()


def stored(store, span) -> TraceDetail:
    trace_id = format(span.context.trace_id, "032x")
    detail = store.load_trace(trace_id)
    assert detail is not None, f"trace {trace_id} not stored"
    return detail


def assert_stored_as_sent(store, spans) -> None:
    """Every span back from the store with its name, ids, parent, kind, status, attributes, events, scope,
    and the trace's resource attributes."""
    detail = stored(store, spans[0])
    by_id = {s.span_id: s for s in detail.spans}
    assert len(by_id) == len(spans)
    for sent in spans:
        got = by_id[format(sent.context.span_id, "016x")]
        assert got.name == sent.name
        assert got.parent_id == (format(sent.parent.span_id, "016x") if sent.parent else None)
        assert got.kind == sent.kind.name
        assert (got.start_ns, got.end_ns) == (sent.start_time, sent.end_time)
        assert got.status == sent.status.status_code.name
        assert got.status_message == sent.status.description
        assert dict(got.attributes) == dict(sent.attributes)
        assert [(e.name, e.time_ns, dict(e.attributes)) for e in got.events] == \
            [(e.name, e.timestamp, dict(e.attributes)) for e in sent.events]
        assert got.scope == sent.instrumentation_scope.name
    assert detail.resource["service.name"] == "their-rag"
    assert detail.resource["openinference.project.name"] == "docs-bot"
