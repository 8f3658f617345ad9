"""The PostgreSQL trace store's SQL and row conversions (private to ``traces.postgres``).

The tables are the shared store's schema version 1 (``searchtrace.database.traces_schema``):
the columns of the SQLite store's ``traces`` table, booleans as booleans and JSON as
``jsonb``. A batch of spans is written in one transaction, its statements pipelined (sent
without waiting for each answer: one round trip for the batch): a span per row,
the trace rows as arrays (``unnest``), and the documents the spans name joined to
their trace's ``doc_ids``, deduplicated. A server whose answers wait for their
trace's commit writes a few spans at a time, so the round trips are what count. The trace-level upserts mirror ``traces._sqlite``'s: a span
that is not the root widens its trace's window until the root comes, the root fills
timing, kind and the served columns, the ``search`` span the search columns.

PostgreSQL's text and ``jsonb`` refuse the NUL character: one in a span's text is stored as U+FFFD.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from opentelemetry.sdk.trace import ReadableSpan

from searchtrace.names import Band
from searchtrace.traces import _sqlite as lite
from searchtrace.traces import vocabulary as v
from searchtrace.traces.records import TraceFilter, to_ns
from searchtrace.traces.vocabulary import TraceKind

DOC_ID_KEYS = frozenset({v.CANDIDATE_IDS, v.RERANK_INPUT_IDS, v.RERANK_OUTPUT_IDS, v.RESULT_IDS,
                         v.FILTER_DROPPED_IDS, v.FEEDBACK_IDS, v.FETCH_IDS})
"""The array attributes that name documents: what the document filter finds a trace by."""

INSERT_SPAN = """INSERT INTO st_spans VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (trace_id, span_id) DO UPDATE SET parent_id = excluded.parent_id, name = excluded.name,
    kind = excluded.kind, start_ns = excluded.start_ns, end_ns = excluded.end_ns, status = excluded.status,
    status_message = excluded.status_message, scope = excluded.scope, attributes = excluded.attributes,
    events = excluded.events"""
TRACE_COLUMNS = ('trace_id', 'start_ns', 'end_ns', 'duration_ms', 'resource', 'has_root', 'root_name', 'status',
                 'session_id', 'fetched_ids', 'fetch_of', 'status_code', 'has_search', 'mode',
                 'query', 'query_fold', 'run_id', 'query_id', 'top_k', 'best_score', 'no_confident',
                 'degraded', 'bands', 'n_results', 'result_ids', 'cold', 'dataset', 'source',
                 'error_code', 'kind', 'n_spans', 'doc_ids')
"""The columns of a batch's one row per trace, in :data:`UPSERT_TRACES` order."""
UPSERT_TRACES = """INSERT INTO st_traces AS t (trace_id, start_ns, end_ns, duration_ms, resource, has_root, root_name,
    status,
    session_id, fetched_ids, fetch_of, status_code, has_search, mode, query, query_fold, run_id, query_id,
    top_k, best_score, no_confident, degraded, bands, n_results, result_ids, cold, dataset, source, error_code,
    kind, n_spans, doc_ids)
SELECT u.trace_id, u.start_ns, u.end_ns, u.duration_ms, u.resource::jsonb, u.has_root, u.root_name, u.status,
    u.session_id, u.fetched_ids::jsonb, u.fetch_of, u.status_code, u.has_search, u.mode, u.query, u.query_fold,
    u.run_id, u.query_id, u.top_k, u.best_score, u.no_confident, u.degraded, u.bands, u.n_results,
    u.result_ids::jsonb, u.cold, u.dataset, u.source, u.error_code, u.kind, u.n_spans, CASE WHEN u.doc_ids IS
    NULL THEN NULL ELSE ARRAY(SELECT DISTINCT x FROM jsonb_array_elements_text(u.doc_ids::jsonb) AS x ORDER BY
    x) END
FROM unnest(%s::text[], %s::int8[], %s::int8[], %s::float8[], %s::text[], %s::bool[], %s::text[], %s::text[],
    %s::text[], %s::text[], %s::text[], %s::int4[], %s::bool[], %s::text[], %s::text[], %s::text[], %s::text[],
    %s::text[], %s::int4[], %s::float8[], %s::bool[], %s::text[], %s::int4[], %s::int4[], %s::text[],
    %s::bool[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int4[], %s::text[])
    AS u(trace_id, start_ns, end_ns, duration_ms, resource, has_root, root_name, status, session_id,
        fetched_ids, fetch_of, status_code, has_search, mode, query, query_fold, run_id, query_id, top_k,
        best_score, no_confident, degraded, bands, n_results, result_ids, cold, dataset, source, error_code,
        kind, n_spans, doc_ids)
ON CONFLICT (trace_id) DO UPDATE SET
    start_ns = CASE WHEN excluded.has_root THEN excluded.start_ns WHEN t.has_root THEN t.start_ns ELSE
        least(t.start_ns, excluded.start_ns) END,
    end_ns = CASE WHEN excluded.has_root THEN excluded.end_ns WHEN t.has_root THEN t.end_ns ELSE
        greatest(t.end_ns, excluded.end_ns) END,
    duration_ms = CASE WHEN excluded.has_root THEN excluded.duration_ms WHEN t.has_root THEN t.duration_ms ELSE
        (greatest(t.end_ns, excluded.end_ns) - least(t.start_ns, excluded.start_ns)) / 1e6 END,
    resource = CASE WHEN excluded.has_root THEN excluded.resource ELSE coalesce(t.resource, excluded.resource)
        END,
    has_root = t.has_root OR excluded.has_root,
    root_name = CASE WHEN excluded.has_root THEN excluded.root_name ELSE t.root_name END,
    status = CASE WHEN excluded.has_root THEN excluded.status ELSE t.status END,
    session_id = CASE WHEN excluded.has_root THEN excluded.session_id ELSE t.session_id END,
    fetched_ids = CASE WHEN excluded.has_root THEN excluded.fetched_ids ELSE t.fetched_ids END,
    fetch_of = CASE WHEN excluded.has_root THEN excluded.fetch_of ELSE t.fetch_of END,
    status_code = CASE WHEN excluded.has_root THEN excluded.status_code ELSE t.status_code END,
    has_search = t.has_search OR excluded.has_search,
    mode = CASE WHEN excluded.has_search THEN excluded.mode ELSE t.mode END,
    query = CASE WHEN excluded.has_search THEN excluded.query ELSE t.query END,
    query_fold = CASE WHEN excluded.has_search THEN excluded.query_fold ELSE t.query_fold END,
    run_id = CASE WHEN excluded.has_search THEN excluded.run_id ELSE t.run_id END,
    query_id = CASE WHEN excluded.has_search THEN excluded.query_id ELSE t.query_id END,
    top_k = CASE WHEN excluded.has_search THEN excluded.top_k ELSE t.top_k END,
    best_score = CASE WHEN excluded.has_search THEN excluded.best_score ELSE t.best_score END,
    no_confident = CASE WHEN excluded.has_search THEN excluded.no_confident ELSE t.no_confident END,
    degraded = CASE WHEN excluded.has_search THEN excluded.degraded ELSE t.degraded END,
    bands = CASE WHEN excluded.has_search THEN excluded.bands ELSE t.bands END,
    n_results = CASE WHEN excluded.has_search THEN excluded.n_results ELSE t.n_results END,
    result_ids = CASE WHEN excluded.has_search THEN excluded.result_ids ELSE t.result_ids END,
    cold = CASE WHEN excluded.has_search THEN excluded.cold ELSE t.cold END,
    dataset = CASE WHEN excluded.has_search THEN coalesce(excluded.dataset, t.dataset) ELSE coalesce(t.dataset,
        excluded.dataset) END,
    source = CASE WHEN excluded.has_search THEN coalesce(excluded.source, t.source) ELSE coalesce(t.source,
        excluded.source) END,
    error_code = CASE WHEN excluded.has_search THEN coalesce(excluded.error_code, t.error_code) ELSE
        coalesce(t.error_code, excluded.error_code) END,
    kind = CASE WHEN excluded.has_search OR t.kind = 'search' THEN 'search' WHEN excluded.has_root THEN
        excluded.kind ELSE t.kind END,
    n_spans = (SELECT count(*) FROM st_spans AS s WHERE s.trace_id = excluded.trace_id),
    doc_ids = CASE WHEN excluded.doc_ids IS NULL THEN t.doc_ids WHEN t.doc_ids IS NULL THEN excluded.doc_ids
        ELSE ARRAY(SELECT DISTINCT x FROM unnest(t.doc_ids || excluded.doc_ids) AS x ORDER BY x) END"""
"""One statement for every trace of a batch, one row version each (every extra UPDATE of a row wrote all
its index entries again): the root's columns when the batch has the root, the search span's when it has
it, else what the trace already holds; the window widened by children until the root comes."""

SUMMARY_COLUMNS = (f"{lite.SUMMARY_COLUMNS}, " + ", ".join(lite.NEWER_SUMMARY_COLUMNS))


_NUL_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")  # an escaped NUL, not an escaped backslash before "u0000"


def _json(value: Any) -> str:
    text = lite.dump(value)
    return _NUL_ESCAPE.sub(r"\1\\ufffd", text) if "\\u0000" in text else text


def _packed(value: Any) -> bytes:
    """A span's attributes or events as the SQLite store keeps them: JSON, zlib-compressed above 1 KiB (on the
    export thread, so the server stores bytes it need not parse)."""
    packed = lite.pack(value)
    return packed.encode() if isinstance(packed, str) else packed


def _clean(value: Any) -> Any:
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value


@dataclass(frozen=True)
class Batch:
    """One batch's parameters: its span rows, and its traces' columns (:data:`TRACE_COLUMNS`) as arrays."""

    spans: list[tuple]
    traces: list[list]


@dataclass
class _Trace:
    """What one batch says of one trace."""

    start: int
    end: int
    resource: str | None
    spans: int = 0
    root: tuple | None = None  # start, end, name, status, then lite.root_columns
    search: tuple | None = None  # _search's columns
    docs: dict[str, None] | None = None


def _columns(rows: Sequence[Sequence[Any]], width: int) -> list[list]:
    """The rows as one list per column, any NUL in a text value made U+FFFD (PostgreSQL text cannot hold it)."""
    return [[_clean(x) for x in c] for c in zip(*rows)] if rows else [[] for _ in range(width)]


def plan(spans: Sequence[ReadableSpan]) -> Batch:
    """The parameters of one batch: a row per span, and one per trace merging what its spans here say."""
    span_rows: list[tuple] = []
    traces: dict[str, _Trace] = {}
    resources: dict[int, str | None] = {}
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
            resources[id(span.resource)] = _json(dict(span.resource.attributes)) if span.resource else None
        trace = traces.get(trace_id)
        if trace is None:
            trace = traces[trace_id] = _Trace(start, end, resources[id(span.resource)])
        trace.spans += 1
        if span.parent is None or span.parent.is_remote:
            trace.root = (start, end, span.name, status, *lite.root_columns(span.name, attrs))
            trace.resource = resources[id(span.resource)]
        else:
            trace.start, trace.end = min(trace.start, start), max(trace.end, end)
        if span.name == v.SEARCH_SPAN:
            trace.search = _search(attrs)
        for key in DOC_ID_KEYS.intersection(attrs):
            ids = attrs[key]
            named = trace.docs = trace.docs if trace.docs is not None else {}
            for doc in ids if isinstance(ids, (list, tuple)) else ():
                named[str(doc)] = None
    rows = [_trace_row(trace_id, traces[trace_id]) for trace_id in sorted(traces)]
    return Batch(span_rows, _columns(rows, len(TRACE_COLUMNS)))


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
            s_error if s_error is not None else r_error, kind, t.spans, docs)


def _search(attrs: dict[str, Any]) -> tuple:
    (mode, query, fold, run_id, query_id, top_k, best, no_confident, degraded, bands, n_results, error_code, source,
     dataset, result_ids, kind, cold) = lite.search_columns(attrs)
    return (mode, query, fold, run_id, query_id, top_k, best, None if no_confident is None else bool(no_confident),
            degraded, bands, n_results, error_code, source, dataset, result_ids, kind, cold)


def where(flt: TraceFilter) -> tuple[str, list[Any]]:
    """The WHERE clause of a filter and its parameters (the same meaning as ``traces._sqlite.where``)."""
    conds: list[str] = []
    params: list[Any] = []

    def add(cond: str, *values: Any) -> None:
        conds.append(cond)
        params.extend(values)

    if flt.since is not None:
        add("start_ns >= %s", to_ns(flt.since))
    if flt.until is not None:
        add("start_ns < %s", to_ns(flt.until))
    if flt.mode is not None:
        add("mode = %s", flt.mode)
    if flt.band is not None:
        add("bands & %s != 0", lite.BAND_FLAG[flt.band])
    if flt.best_band is not None:
        higher = sum(lite.BAND_FLAG[b.value] for b in list(Band)[:list(Band).index(Band(flt.best_band))])
        add("bands & %s != 0 AND bands & %s = 0", lite.BAND_FLAG[flt.best_band], higher)
    if flt.no_confident is not None:
        add("no_confident = %s", bool(flt.no_confident))
    if isinstance(flt.degraded, bool):
        add("degraded <> ''" if flt.degraded else "degraded = ''")
    elif flt.degraded is not None:
        add("strpos(degraded, %s) > 0", f",{flt.degraded},")
    if flt.min_latency_ms is not None:
        add("duration_ms >= %s", float(flt.min_latency_ms))
    if flt.run_id is not None:
        add("run_id = %s", flt.run_id)
    if flt.query_text:
        add("query_fold LIKE %s", "%" + _like(flt.query_text.casefold()) + "%")
    if flt.sources:
        add("source = ANY(%s)", list(flt.sources))
    if flt.dataset is not None:
        add("dataset = %s", flt.dataset)
    if flt.kind is not None:
        add("kind = %s", flt.kind.value)
    if flt.errors is not None:
        add("status = 'ERROR'" if flt.errors else "status IS DISTINCT FROM 'ERROR'")
    return (" WHERE " + " AND ".join(conds) if conds else ""), params


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def summary(row: Sequence[Any]) -> Any:
    """A :class:`TraceSummary` of a row read by :data:`SUMMARY_COLUMNS`."""
    return lite.summary(row)
