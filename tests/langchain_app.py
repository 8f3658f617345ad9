"""A foreign retriever for the joined-traces test: LangChain's BM25Retriever behind a small HTTP app.

Run as a child: ``python tests/langchain_app.py CORPUS.jsonl PORT_FILE``. It
indexes the corpus's texts with ``rank_bm25`` (no model), instruments
LangChain with OpenInference, exports its spans with the standard OTLP/HTTP
exporter (the endpoint from ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) and
serves ``POST /search`` (``{"query", "k"}``; answers
``{"hits": [{"doc_id", "text"}]}``) on a free loopback port, written to
PORT_FILE once it listens. Each request's span continues the caller's trace
from its ``traceparent`` header, and is exported before the answer is sent
(a simple span processor), so whoever reads the receiver after the eval finds
every span of it.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

from langchain_community.retrievers import BM25Retriever
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry import propagate, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

SERVICE = "langchain-bm25-app"
SERVER_SPAN = "POST /search"


def corpus(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The texts (title and text) of a BEIR ``corpus.jsonl``, and each one's id as metadata."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [f"{r.get('title', '')} {r['text']}" for r in rows], [{"doc_id": r["_id"]} for r in rows]


def build(path: Path) -> tuple[BM25Retriever, trace.Tracer, TracerProvider]:
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: SERVICE}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    LangChainInstrumentor().instrument(tracer_provider=provider)
    texts, metadatas = corpus(path)
    return BM25Retriever.from_texts(texts, metadatas=metadatas), provider.get_tracer(SERVICE), provider


def handler(retriever: BM25Retriever, tracer: trace.Tracer) -> type[BaseHTTPRequestHandler]:
    class Search(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            parent = propagate.extract(dict(self.headers.items()))
            with tracer.start_as_current_span(SERVER_SPAN, context=parent, kind=trace.SpanKind.SERVER):
                retriever.k = int(body.get("k", 10))
                docs = retriever.invoke(str(body["query"]))
            answer: dict[str, Any] = {"hits": [{"doc_id": d.metadata["doc_id"], "text": d.page_content[:200]}
                                               for d in docs]}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
            pass

    return Search


def main(argv: list[str]) -> None:
    retriever, tracer, provider = build(Path(argv[0]))
    server = HTTPServer(("127.0.0.1", 0), handler(retriever, tracer))
    Path(argv[1]).write_text(str(server.server_address[1]))
    try:
        server.serve_forever()
    finally:
        provider.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
