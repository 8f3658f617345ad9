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

PROTOBUF = {"Content-Type": "application/x-protobuf"}
JSON = {"Content-Type": "application/json"}


def sdk_spans(n_docs: int = 3, service: str = "their-rag") -> list[ReadableSpan]:
    """A foreign retrieval as an instrumented app records it: a CHAIN root and a RETRIEVER child with
    documents, an event, and an error status on the child."""
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
