"""Another retriever's spans, built by hand with the OpenTelemetry SDK as the conventions define them: an
OpenInference instrumentation's (RETRIEVER, RERANKER, EMBEDDING spans under a CHAIN) and a GenAI retrieval
span, under a resource naming the service and the OpenInference project."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

SCOPE = "openinference.instrumentation.langchain"


def documents(prefix: str, docs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{prefix}.{i}.document.{field}`` for each document's fields (id, score, content, metadata)."""
    return {f"{prefix}.{i}.document.{k}": value for i, doc in enumerate(docs) for k, value in doc.items()}


def retriever(query: str, docs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """An OpenInference RETRIEVER span's attributes."""
    return {"openinference.span.kind": "RETRIEVER", "input.value": query,
            **documents("retrieval.documents", docs)}


def reranker(query: str, inputs: Sequence[Mapping[str, Any]], outputs: Sequence[Mapping[str, Any]],
             top_k: int) -> dict[str, Any]:
    return {"openinference.span.kind": "RERANKER", "reranker.query": query, "reranker.top_k": top_k,
            **documents("reranker.input_documents", inputs), **documents("reranker.output_documents", outputs)}


def genai(query: str, docs: Sequence[Mapping[str, Any]], *, top_k: int = 5, source: str = "kb-main",
          top_k_key: str = "gen_ai.retrieval.top_k") -> dict[str, Any]:
    """A GenAI retrieval span's attributes (its documents a JSON string, as spans carry them)."""
    return {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": query,
            "gen_ai.retrieval.documents": json.dumps(list(docs)), "gen_ai.data_source.id": source, top_k_key: top_k}


def record_foreign(build: Callable[[Tracer], None], *, service: str = "rag-app", project: str | None = "support",
                   scope: str = SCOPE) -> list[ReadableSpan]:
    """The finished spans ``build`` makes with a tracer of ``scope`` under a resource naming ``service`` and
    ``project``, children before their parents (as a batch processor exports them)."""
    exporter = InMemorySpanExporter()
    attributes = {"service.name": service}
    if project is not None:
        attributes["openinference.project.name"] = project
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    build(provider.get_tracer(scope))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def span_id(span: ReadableSpan) -> str:
    return format(span.context.span_id, "016x")


def trace_id(span: ReadableSpan) -> str:
    return format(span.context.trace_id, "032x")


def as_fifth_schema(path: Path) -> None:
    """The store as schema 5 left it: without the ``trace_docs``, ``trace_attrs`` and ``trace_attrs_long`` tables,
    the source and failed indexes (schema 6)."""
    conn = sqlite3.connect(path)
    for index in ("traces_source", "traces_failed"):
        conn.execute(f"DROP INDEX {index}")
    for table in ("trace_docs", "trace_attrs", "trace_attrs_long"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("PRAGMA user_version = 5")
    conn.commit()
    conn.close()


def as_fourth_schema(path: Path) -> None:
    """The store as schema 4 left it: without the service and project columns, the searches and the settings
    tables (schema 5)."""
    as_fifth_schema(path)
    conn = sqlite3.connect(path)
    for index in ("traces_service", "traces_project"):
        conn.execute(f"DROP INDEX {index}")
    for column in ("service", "project"):
        conn.execute(f"ALTER TABLE traces DROP COLUMN {column}")
    for table in ("searches", "settings"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()
