"""OpenInference document keys, derived from our compact candidate arrays at export time.

On the search path a stage records its candidates as two arrays
(``searchtrace.candidate.ids`` / ``.scores``). Standard viewers expect
``retrieval.documents.{i}.document.id`` / ``.score`` / ``.content`` on RETRIEVER
spans and ``reranker.input_documents.*`` / ``reranker.output_documents.*`` on
RERANKER spans; :class:`OpenInferenceExporter` adds them to each span in the
batch processor's thread before handing the batch to the wrapped exporter.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from searchtrace.traces.spans import vocabulary as v

_EXPANSIONS = (
    # (span kind, ids key, scores key, contents key, OpenInference prefix)
    (v.SpanKind.RETRIEVER.value, v.CANDIDATE_IDS, v.CANDIDATE_SCORES, v.CANDIDATE_CONTENTS, v.RETRIEVAL_DOCUMENTS),
    (v.SpanKind.RERANKER.value, v.RERANK_INPUT_IDS, v.RERANK_INPUT_SCORES, None, v.RERANKER_INPUT_DOCUMENTS),
    (v.SpanKind.RERANKER.value, v.RERANK_OUTPUT_IDS, v.RERANK_OUTPUT_SCORES, None, v.RERANKER_OUTPUT_DOCUMENTS),
)


def documents(prefix: str, ids: Sequence[str], scores: Sequence[float],
              contents: Sequence[str] | None = None) -> dict:
    """``{prefix}.{i}.document.id/score[/content]`` for every document."""
    out: dict = {}
    for i, doc in enumerate(ids):
        out[f"{prefix}.{i}.{v.DOCUMENT_ID}"] = doc
        out[f"{prefix}.{i}.{v.DOCUMENT_SCORE}"] = scores[i]
        if contents is not None and i < len(contents):
            out[f"{prefix}.{i}.{v.DOCUMENT_CONTENT}"] = contents[i]
    return out


def expand(attributes: Mapping) -> dict:
    """The span's attributes plus the OpenInference document keys its kind calls for."""
    kind = attributes.get(v.OPENINFERENCE_SPAN_KIND)
    out = dict(attributes)
    for span_kind, ids_key, scores_key, contents_key, prefix in _EXPANSIONS:
        if kind == span_kind and ids_key in attributes:
            contents = attributes.get(contents_key) if contents_key else None
            out.update(documents(prefix, attributes[ids_key], attributes.get(scores_key, ()), contents))
    return out


def expanded_span(span: ReadableSpan) -> ReadableSpan:
    """A copy of ``span`` with :func:`expand` applied to its attributes."""
    if span.attributes is None or v.OPENINFERENCE_SPAN_KIND not in span.attributes:
        return span
    return ReadableSpan(
        name=span.name, context=span.context, parent=span.parent, resource=span.resource,
        attributes=expand(span.attributes), events=span.events, links=span.links, kind=span.kind,
        status=span.status, start_time=span.start_time, end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class OpenInferenceExporter(SpanExporter):
    """Wraps an exporter (OTLP) so what it sends carries the OpenInference document keys."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([expanded_span(s) for s in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)
