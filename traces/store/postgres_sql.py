"""The PostgreSQL trace store's SQL and row conversions (private to ``traces.postgres``).

The tables are the shared store's schema version 1 (``searchtrace.traces.store.postgres_schema``):
the columns of the SQLite store's ``traces`` table, booleans as booleans and JSON as
``jsonb``. A batch of spans is written in one transaction, its statements pipelined (sent
without waiting for each answer: one round trip for the batch): a row per span, then one
call of ``st_upsert_traces`` with a row per trace, which merges what the batch says of
the trace with what the store holds as the SQLite store's statements do: a span that is
not the root widens the trace's window until the root comes, the root fills timing, kind
and the served columns, the ``search`` span the search columns, and the documents the
spans name join the trace's ``doc_ids``.

PostgreSQL's text and ``jsonb`` refuse the NUL character: one in a span's text is stored as U+FFFD.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from opentelemetry.sdk.trace import ReadableSpan

from searchtrace.traces.spans import vocabulary as v
from searchtrace.traces.spans.foreign import source_of
from searchtrace.traces.spans.vocabulary import TraceKind
from searchtrace.traces.store import rows as shared
from searchtrace.traces.store import searches
from searchtrace.traces.store.span_match import DOC_ID_KEYS

INSERT_SPAN = """INSERT INTO st_spans VALUES (%b, %b, %b, %b, %b, %b, %b, %b, %b, %b, %b, %b)
ON CONFLICT (trace_id, span_id) DO UPDATE SET parent_id = excluded.parent_id, name = excluded.name,
    kind = excluded.kind, start_ns = excluded.start_ns, end_ns = excluded.end_ns, status = excluded.status,
    status_message = excluded.status_message, scope = excluded.scope, attributes = excluded.attributes,
    events = excluded.events"""
TRACE_COLUMNS = ('trace_id', 'start_ns', 'end_ns', 'duration_ms', 'resource', 'has_root', 'root_name', 'status',
                 'session_id', 'fetched_ids', 'fetch_of', 'status_code', 'has_search', 'mode',
                 'query', 'query_fold', 'run_id', 'query_id', 'top_k', 'best_score', 'no_confident',
                 'degraded', 'bands', 'n_results', 'result_ids', 'cold', 'dataset', 'source',
                 'error_code', 'kind', 'n_spans', 'doc_ids', 'service', 'project')
"""The columns of a batch's one row per trace, in :data:`UPSERT_TRACES` order."""
TRACE_TYPES = ("text", "int8", "int8", "float8", "text", "bool", "text", "text", "text", "text", "text", "int4",
               "bool", "text", "text", "text", "text", "text", "int4", "float8", "bool", "text", "int4", "int4",
               "text", "bool", "text", "text", "text", "text", "int4", "text", "text", "text")
UPSERT_TRACES = "SELECT st_upsert_traces(" + ", ".join(f"%b::{t}[]" for t in TRACE_TYPES) + ")"
"""One statement for every trace of a batch (the schema's ``st_upsert_traces``), one row version each (every extra UPDATE of a row wrote all
its index entries again): the root's columns when the batch has the root, the search span's when it has
it, else what the trace already holds; the window widened by children until the root comes."""

SUMMARY_COLUMNS = (f"{shared.SUMMARY_COLUMNS}, " + ", ".join(shared.NEWER_SUMMARY_COLUMNS))

INSERT_SEARCH = (f"INSERT INTO st_searches VALUES ({', '.join(['%s'] * len(searches.COLUMNS))}) ON CONFLICT (trace_id, "
                 "span_id) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in searches.COLUMNS[2:]))
MARK_FOREIGN = """UPDATE st_traces AS t SET kind = 'search', source = coalesce(t.source, %s), query = f.query,
    query_fold = f.query_fold
FROM (SELECT DISTINCT ON (trace_id) trace_id, query, query_fold FROM st_searches WHERE trace_id = ANY(%s)
    ORDER BY trace_id, start_ns, duration_ms DESC, span_id) AS f
WHERE t.trace_id = f.trace_id"""
"""A trace with another retriever's search is a search: its query the first search's, its source ``otlp``."""
ID_KEYS = "SELECT service, value FROM st_trace_settings WHERE name = %s"
SETTINGS_LOCK = 0x5EA2C47B
"""The advisory lock a key being set holds (exclusive) and a write of foreign searches takes (shared)."""
SHARE_SETTINGS = "SELECT pg_advisory_xact_lock_shared(%s)"
LOCK_SETTINGS = "SELECT pg_advisory_xact_lock(%s)"


def search_row(p: searches.Pending, keys: dict[str, str]) -> tuple:
    """The search row of ``p``, any NUL in its text made U+FFFD (PostgreSQL text cannot hold it)."""
    return tuple(_clean(x) for x in searches.row(p, keys))


_NUL_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")  # an escaped NUL, not an escaped backslash before "u0000"


def _json(value: Any) -> str:
    text = shared.dump(value)
    return _NUL_ESCAPE.sub(r"\1\\ufffd", text) if "\\u0000" in text else text


def _packed(value: Any) -> bytes:
    """A span's attributes or events as the SQLite store keeps them: JSON, zlib-compressed above 1 KiB (on the
    export thread, so the server stores bytes it need not parse)."""
    packed = shared.pack(value)
    return packed.encode() if isinstance(packed, str) else packed


def _clean(value: Any) -> Any:
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value


@dataclass(frozen=True)
class Batch:
    """One batch's parameters: its span rows, and its traces' columns (:data:`TRACE_COLUMNS`) as arrays."""

    spans: list[tuple]
    traces: list[list]
    foreign: list[searches.Pending]


@dataclass
class _Trace:
    """What one batch says of one trace."""

    start: int
    end: int
    resource: str | None
    spans: int = 0
    root: tuple | None = None  # start, end, name, status, then shared.root_columns
    search: tuple | None = None  # _search's columns
    docs: dict[str, None] | None = None
    service: str | None = None
    project: str | None = None


def _columns(rows: Sequence[Sequence[Any]], width: int) -> list[list]:
    """The rows as one list per column, any NUL in a text value made U+FFFD (PostgreSQL text cannot hold it)."""
    return [[_clean(x) for x in c] for c in zip(*rows)] if rows else [[] for _ in range(width)]


def plan(spans: Sequence[ReadableSpan]) -> Batch:
    """The parameters of one batch: a row per span, and one per trace merging what its spans here say."""
    span_rows: list[tuple] = []
    traces: dict[str, _Trace] = {}
    resources: dict[int, tuple[str | None, str | None, str | None]] = {}
    foreign: list[searches.Pending] = []
    for span in spans:
        ctx = span.context
        trace_id, span_id = format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")
        attrs = dict(span.attributes or {})
        events = [{"name": e.name, "time_ns": e.timestamp, "attributes": dict(e.attributes or {})}
                  for e in span.events]
        start, end = int(span.start_time or 0), int(span.end_time or 0)
        status = span.status.status_code.name
        span_rows.append((*(_clean(x) for x in (trace_id, span_id, format(span.parent.span_id, "016x")
                                                 if span.parent else None, span.name, span.kind.name)),
                          start, end, status, _clean(span.status.description),
                          _clean(span.instrumentation_scope.name) if span.instrumentation_scope else None,
                          _packed(attrs), _packed(events)))
        if id(span.resource) not in resources:
            resource = dict(span.resource.attributes) if span.resource else {}
            resources[id(span.resource)] = (_json(resource) if span.resource else None,
                                            *(_clean(x) for x in source_of(resource)))
        packed_resource, service, project = resources[id(span.resource)]
        trace = traces.get(trace_id)
        if trace is None:
            trace = traces[trace_id] = _Trace(start, end, packed_resource, service=service, project=project)
        trace.spans += 1
        trace.service, trace.project = trace.service or service, trace.project or project
        if span.parent is None or span.parent.is_remote:
            trace.root = (start, end, span.name, status, *shared.root_columns(span.name, attrs))
            trace.resource = packed_resource
        else:
            trace.start, trace.end = min(trace.start, start), max(trace.end, end)
        if span.name == v.SEARCH_SPAN:
            trace.search = _search(attrs)
        elif (found := searches.pending(span, trace_id, span_id, span_rows[-1][2])) is not None:
            foreign.append(found)
        for key in DOC_ID_KEYS.intersection(attrs):
            ids = attrs[key]
            named = trace.docs = trace.docs if trace.docs is not None else {}
            for doc in ids if isinstance(ids, (list, tuple)) else ():
                named[str(doc)] = None
    rows = [_trace_row(trace_id, traces[trace_id]) for trace_id in sorted(traces)]
    return Batch(span_rows, _columns(rows, len(TRACE_COLUMNS)), foreign)


def _trace_row(trace_id: str, t: _Trace) -> tuple:
    """A trace's row of :data:`TRACE_COLUMNS`: its root's timing and columns if the batch has its root, its search
    span's if it has that (dataset, source and error code: the search span's, else the root's)."""
    start, end = (t.root[0], t.root[1]) if t.root else (t.start, t.end)
    if t.root:
        _, _, name, status, session, fetched, fetch_of, r_dataset, r_kind, r_source, r_error, status_code = t.root
    else:
        name = status = session = fetched = fetch_of = r_dataset = r_kind = r_source = r_error = status_code = None
    (mode, query, fold, run_id, query_id, top_k, best, no_confident, degraded, bands, n_results, s_error, s_source,
     s_dataset, result_ids, _, cold) = t.search or (None,) * 8 + ("", 0) + (None,) * 7
    kind = TraceKind.SEARCH.value if t.search else r_kind
    docs = None if t.docs is None else _json(list(t.docs))
    return (trace_id, start, end, (end - start) / 1e6, t.resource, t.root is not None, name, status, session,
            fetched, fetch_of, status_code, t.search is not None, mode, query, fold, run_id, query_id, top_k, best,
            no_confident, degraded, bands, n_results, result_ids, cold,
            s_dataset if s_dataset is not None else r_dataset, s_source if s_source is not None else r_source,
            s_error if s_error is not None else r_error, kind, t.spans, docs, t.service, t.project)


def _search(attrs: dict[str, Any]) -> tuple:
    (mode, query, fold, run_id, query_id, top_k, best, no_confident, degraded, bands, n_results, error_code, source,
     dataset, result_ids, kind, cold) = shared.search_columns(attrs)
    return (mode, query, fold, run_id, query_id, top_k, best, None if no_confident is None else bool(no_confident),
            degraded, bands, n_results, error_code, source, dataset, result_ids, kind, cold)


def summary(row: Sequence[Any]) -> Any:
    """A :class:`TraceSummary` of a row read by :data:`SUMMARY_COLUMNS`."""
    return shared.summary(row)
