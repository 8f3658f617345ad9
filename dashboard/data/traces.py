"""Stored traces as tables: a filtered list, and one trace as a span tree with its documents."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from searchtrace.dashboard.data.documents import documents
from searchtrace.dashboard.data.runs import run_folder
from searchtrace.dashboard.data.span_tree import span_label, tree_order
from searchtrace.dashboard.data.trace_errors import TraceError, exceptions, first_error
from searchtrace.dashboard.data.trace_titles import Triple, dataset_path, recorded_titles, relation_triples, triple_text
from searchtrace.dashboard.data.tracestore import trace_store
from searchtrace.errors import SearchtraceError
from searchtrace.traces import SpanRecord, TraceDetail, TraceFilter, TraceKind, TraceSummary
from searchtrace.traces import vocabulary as v

__all__ = ["COLD_MS", "COUNT_LIMIT", "KINDS", "LIST_COLUMNS", "SEARCHES", "Waterfall", "count_traces", "list_traces",
           "span_documents", "waterfall"]

LIST_COLUMNS = ("start", "status", "source", "root", "query", "duration_ms", "cold", "error_code", "message",
                "status_code", "service", "mode", "best_score", "no_confident", "bands", "degraded", "n_results",
                "run_id", "query_id", "n_spans", "trace_id")
KINDS = {"searches": TraceKind.SEARCH.value, "model loads": TraceKind.MODEL_LOAD.value,
         "other requests": TraceKind.OTHER.value, "all": None}
"""The list's kinds, by label: searches by default (a model load is no search, nor is a refused request)."""
SHOWN_ITEMS = 20  # array attributes are cut to this many items for display
COUNT_LIMIT = 1000
"""Most traces the attribute filter counts (the spans of every trace it passes are read): the page says "or
more" at this many. Every other filter, the document's included, is counted along an index over the whole store."""
COLD_MS = 1000.0  # an embed span this slow, on a query not embedded ahead, loaded the model


SEARCHES = TraceFilter(kind=TraceKind.SEARCH, limit=200)
"""The list's default: the newest 200 searches (a model load is no search, nor is a refused request)."""


def _row(summary: TraceSummary, cold: str) -> dict[str, Any]:
    """A list row: the summary's fields, its status, source and root as shown, and its cold mark."""
    status = "error" if summary.status == "ERROR" else "ok" if summary.complete else "open"
    source = summary.source or ("eval" if summary.run_id else "")  # eval runs stored before the source was
    return summary.to_dict() | {"status": status, "source": source, "root": summary.root_name or "", "cold": cold}


def _likely_cold(summary: TraceSummary) -> str:
    """``yes`` for a search its process ran first after loading the model; for a search stored before that
    was recorded, ``likely`` when it took :data:`COLD_MS` outside an eval run (whose queries are embedded ahead)."""
    if summary.cold is not None:
        return "yes" if summary.cold else ""
    searched = summary.kind in (None, TraceKind.SEARCH) and summary.root_name != v.EMBEDDER_LOAD_SPAN
    return "likely" if searched and summary.duration_ms >= COLD_MS and not summary.run_id else ""


def list_traces(home: str | Path, flt: TraceFilter = SEARCHES) -> pd.DataFrame:
    """Traces matching ``flt`` in its order (newest first by default), at most its limit (columns
    :data:`LIST_COLUMNS`): the store's own filter and order, every filter over the whole store.

    ``status`` is error, ok, or open (its root span not stored yet); ``root`` the root span's name;
    ``source`` the surface that called (``eval`` for an eval run's search stored before the source was).
    ``cold`` is ``yes`` for the first search its process ran after loading the model, ``likely`` for an older
    search outside an eval run (whose queries are embedded ahead) that took :data:`COLD_MS` or more, else empty.
    ``message`` is the error's status message (the root span's, else the first span in error's).
    """
    store = trace_store(home)
    summaries = store.list_traces(flt) if store else []
    failed = [s.trace_id for s in summaries if s.status == "ERROR"]
    messages = store.error_messages(failed) if store and failed else {}
    rows = [_row(s, _likely_cold(s)) | {"message": messages.get(s.trace_id, "")} for s in summaries]
    frame = pd.DataFrame(rows, columns=[*LIST_COLUMNS, "start_ns"])
    frame["start"] = pd.to_datetime(frame["start_ns"], unit="ns", utc=True)
    for column in ("bands", "degraded"):
        frame[column] = frame[column].map(lambda x: ", ".join(x))
    frame["cold"] = frame["cold"].fillna("").astype(str)
    frame["status_code"] = frame["status_code"].astype("Int64")
    frame["error_code"] = frame["error_code"].fillna("").astype(str)
    return frame[list(LIST_COLUMNS)]


def count_traces(home: str | Path, flt: TraceFilter = SEARCHES) -> int:
    """How many traces match ``flt`` over the whole store (its limit and offset aside; 0 when the home has no
    store); with an attribute filter, at most :data:`COUNT_LIMIT` (the first found, newest first)."""
    store = trace_store(home)
    if store is None:
        return 0
    if flt.attribute is not None:
        return len(store.list_traces(replace(flt, limit=COUNT_LIMIT, offset=0)))
    return store.count(flt)


@dataclass(frozen=True)
class Waterfall:
    """One trace for display.

    Attributes:
        summary: the trace's summary (see :meth:`traces.records.TraceSummary.to_dict`).
        spans: one row per span in tree order (each parent before its children, siblings by
            start): span_id, parent_id, name, label (its depth marked: ``span_tree.span_label``), depth, start_ms and end_ms (from the
            trace's start), duration_ms, status, message (the status message of a span in
            error), skipped (why the stage did not run, else "").
        attributes: one row per span attribute: span_id, name, key, value (readable text;
            the id, score and band arrays shown as :attr:`documents` are left out).
        documents: per span id, the documents the span produced: rank, doc_id, score, band
            (of returned results), content (when captured).
        cold_ms: the embed stage's duration when it loaded the model (traces stored before
            the load was a trace of its own), else None.
        error: where the trace's first error began (None: no span ended in error).
        exceptions: the exception events of its spans (``trace_errors.EXCEPTION_COLUMNS``).
        cold: the search was its process's first after the model loaded.
        titles: the titles the search recorded of its results, by id.
        triples: the triple of each relation hit it returned, by id.
        dataset, index_key: the dataset's folder name and the index the search searched, as recorded.
    """

    summary: dict[str, Any]
    spans: pd.DataFrame
    attributes: pd.DataFrame
    documents: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    cold_ms: float | None = None
    error: TraceError | None = None
    exceptions: pd.DataFrame = field(default_factory=lambda: exceptions(()))
    cold: bool = False
    titles: Mapping[str, str] = field(default_factory=dict)
    triples: Mapping[str, Triple] = field(default_factory=dict)
    dataset: str | None = None
    index_key: str | None = None


#: (ids, scores, contents) attribute keys of the arrays shown as a documents table, in preference order.
DOCUMENT_ARRAYS = ((v.RERANK_OUTPUT_IDS, v.RERANK_OUTPUT_SCORES, None),
                   (v.CANDIDATE_IDS, v.CANDIDATE_SCORES, v.CANDIDATE_CONTENTS),
                   (v.RESULT_IDS, v.RESULT_RELEVANCE, None))
TABLE_KEYS = {v.CANDIDATE_IDS, v.CANDIDATE_SCORES, v.CANDIDATE_CONTENTS, v.RESULT_IDS, v.RESULT_BANDS,
              v.RESULT_RELEVANCE, v.RERANK_INPUT_IDS, v.RERANK_INPUT_SCORES, v.RERANK_OUTPUT_IDS,
              v.RERANK_OUTPUT_SCORES, v.RESULT_TITLES, v.RELATION_IDS, v.RELATION_SUBJECTS, v.RELATION_PREDICATES,
              v.RELATION_OBJECTS}


def _text(value: Any) -> str:
    if isinstance(value, str) and value.startswith("{"):
        try:  # a JSON summary (output.value): its fields as text
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, dict):
            return ", ".join(f"{k}: {_text(x)}" for k, x in parsed.items())
    if isinstance(value, tuple):
        items = [_text(x) for x in value[:SHOWN_ITEMS]]
        more = f" … ({len(value)} items)" if len(value) > SHOWN_ITEMS else ""
        return (", ".join(items) + more) if items else "(none)"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _documents(span: SpanRecord, bands: Mapping[str, str]) -> pd.DataFrame | None:
    attrs = span.attributes
    for ids_key, scores_key, contents_key in DOCUMENT_ARRAYS:
        ids = attrs.get(ids_key)
        if isinstance(ids, tuple) and ids:
            scores = attrs.get(scores_key) or ()
            contents = attrs.get(contents_key) if contents_key else None
            return pd.DataFrame({
                "rank": range(1, len(ids) + 1), "doc_id": [str(i) for i in ids],
                "score": [float(scores[i]) if i < len(scores) else None for i in range(len(ids))],
                "band": [bands.get(str(i), "") for i in ids],
                "content": [str(contents[i]) if contents and i < len(contents) else "" for i in range(len(ids))]})
    return None


def _cold_ms(detail: TraceDetail) -> float | None:
    for s in detail.spans:
        if s.name == "embed" and s.duration_ms >= COLD_MS and not s.attributes.get(v.EMBED_PRECOMPUTED):
            return s.duration_ms
    return None


def _waterfall(detail: TraceDetail) -> Waterfall:
    t0 = min((s.start_ns for s in detail.spans), default=detail.summary.start_ns)
    tree = tree_order(detail.spans)
    spans = pd.DataFrame([{"span_id": s.span_id, "parent_id": s.parent_id, "name": s.name,
                           "label": span_label(s.name, d), "depth": d,
                           "start_ms": (s.start_ns - t0) / 1e6, "end_ms": (s.end_ns - t0) / 1e6,
                           "duration_ms": s.duration_ms, "status": s.status,
                           "message": (s.status_message or "") if s.status == "ERROR" else "",
                           "skipped": str(s.attributes.get(v.SKIPPED, ""))} for s, d in tree],
                         columns=["span_id", "parent_id", "name", "label", "depth", "start_ms", "end_ms",
                                  "duration_ms", "status", "message", "skipped"])
    attributes = pd.DataFrame([{"span_id": s.span_id, "name": s.name, "key": k, "value": _text(val)}
                               for s, _ in tree for k, val in sorted(s.attributes.items()) if k not in TABLE_KEYS],
                              columns=["span_id", "name", "key", "value"])
    root = next((s for s in detail.spans if s.name == v.SEARCH_SPAN), None)
    search = root.attributes if root else {}
    ids, bands = search.get(v.RESULT_IDS, ()), search.get(v.RESULT_BANDS, ())
    band_of = {str(d): str(b) for d, b in zip(ids, bands)}
    docs = {s.span_id: table for s, _ in tree if (table := _documents(s, band_of)) is not None}
    dataset, index_key = search.get(v.DATASET), search.get(v.INDEX_KEY)
    return Waterfall(detail.summary.to_dict(), spans, attributes, docs, _cold_ms(detail),
                     first_error(detail.spans), exceptions([s for s, _ in tree]), bool(search.get(v.SEARCH_COLD)),
                     recorded_titles(search), relation_triples(search),
                     dataset if isinstance(dataset, str) else None, index_key if isinstance(index_key, str) else None)


def waterfall(home: str | Path, trace_id: str) -> Waterfall | None:
    """The trace's spans, attributes and documents, or None when it is not stored."""
    store = trace_store(home)
    detail = store.load_trace(trace_id.strip()) if store and trace_id else None
    return _waterfall(detail) if detail else None


def _grades(home: str | Path, run_id: object, query_id: object) -> dict[str, int]:
    """The gold grade of each document the eval run's query attributed, by id (empty outside an eval run)."""
    if not (run_id and query_id):
        return {}
    try:
        outcome = run_folder(home, str(run_id)).query(str(query_id))
    except (SearchtraceError, OSError):
        return {}
    return {t.doc_id: t.grade for t in outcome.attribution} if outcome is not None else {}


def span_documents(home: str | Path, view: Waterfall, span_id: str) -> pd.DataFrame | None:
    """The documents table of one span, with each document's title (a relation hit's triple) and, when the
    trace belongs to an eval run, its gold grade: rank, doc_id, title, score, band, grade, content. None for
    a span without documents.

    Titles come from the dataset's corpus (see :mod:`dashboard.data.trace_titles`), else from those the
    search recorded of its results."""
    table = view.documents.get(span_id)
    if table is None:
        return None
    run_id = view.summary.get("run_id")
    grades = _grades(home, run_id, view.summary.get("query_id"))
    docs = documents(dataset_path(home, run_id, view.dataset, view.index_key))
    titles = [triple_text(view.triples[d]) if d in view.triples else docs[d][0] if d in docs
              else view.titles.get(d, "") for d in table["doc_id"]]
    out = table.assign(title=titles,
                       grade=pd.array([grades.get(d) if grades else None for d in table["doc_id"]], dtype="Int64"))
    return out[["rank", "doc_id", "title", "score", "band", "grade", "content"]]
