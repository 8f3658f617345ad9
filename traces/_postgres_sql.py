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

DOC_ID_KEYS = frozenset({v.CANDIDATE_IDS, v.RERANK_INPUT_IDS, v.RERANK_OUTPUT_IDS, v.RESULT_IDS,
                         v.FILTER_DROPPED_IDS, v.FEEDBACK_IDS, v.FETCH_IDS})
"""The array attributes that name documents: what the document filter finds a trace by."""

INSERT_SPAN = """INSERT INTO st_spans VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (trace_id, span_id) DO UPDATE SET parent_id = excluded.parent_id, name = excluded.name,
    kind = excluded.kind, start_ns = excluded.start_ns, end_ns = excluded.end_ns, status = excluded.status,
    status_message = excluded.status_message, scope = excluded.scope, attributes = excluded.attributes,
    events = excluded.events"""
UPSERT_PARTIAL = """INSERT INTO st_traces AS t (trace_id, start_ns, end_ns, duration_ms, resource)
SELECT u.trace_id, u.start_ns, u.end_ns, u.duration_ms, u.resource::jsonb
FROM unnest(%s::text[], %s::bigint[], %s::bigint[], %s::float8[], %s::text[])
    AS u(trace_id, start_ns, end_ns, duration_ms, resource)
ON CONFLICT (trace_id) DO UPDATE SET start_ns = least(t.start_ns, excluded.start_ns),
    end_ns = greatest(t.end_ns, excluded.end_ns),
    duration_ms = (greatest(t.end_ns, excluded.end_ns) - least(t.start_ns, excluded.start_ns)) / 1e6,
    resource = coalesce(t.resource, excluded.resource)
WHERE NOT t.has_root"""
UPSERT_ROOT = """INSERT INTO st_traces AS t (trace_id, start_ns, end_ns, duration_ms, resource, has_root, root_name,
    status, session_id, fetched_ids, fetch_of, dataset, kind, source, error_code, status_code)
SELECT u.trace_id, u.start_ns, u.end_ns, u.duration_ms, u.resource::jsonb, true, u.root_name, u.status, u.session_id,
    u.fetched_ids::jsonb, u.fetch_of, u.dataset, u.kind, u.source, u.error_code, u.status_code
FROM unnest(%s::text[], %s::bigint[], %s::bigint[], %s::float8[], %s::text[], %s::text[], %s::text[], %s::text[],
    %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[])
    AS u(trace_id, start_ns, end_ns, duration_ms, resource, root_name, status, session_id, fetched_ids, fetch_of,
    dataset, kind, source, error_code, status_code)
ON CONFLICT (trace_id) DO UPDATE SET start_ns = excluded.start_ns, end_ns = excluded.end_ns,
    duration_ms = excluded.duration_ms, resource = excluded.resource, has_root = true,
    root_name = excluded.root_name, status = excluded.status, session_id = excluded.session_id,
    fetched_ids = excluded.fetched_ids, fetch_of = excluded.fetch_of, dataset = coalesce(t.dataset, excluded.dataset),
    kind = CASE WHEN t.kind = 'search' THEN t.kind ELSE excluded.kind END,
    source = coalesce(t.source, excluded.source), error_code = coalesce(t.error_code, excluded.error_code),
    status_code = excluded.status_code"""
UPDATE_SEARCH = """UPDATE st_traces AS t SET mode = u.mode, query = u.query, query_fold = u.query_fold,
    run_id = u.run_id, query_id = u.query_id, top_k = u.top_k, best_score = u.best_score,
    no_confident = u.no_confident, degraded = u.degraded, bands = u.bands, n_results = u.n_results,
    error_code = coalesce(u.error_code, t.error_code), source = coalesce(u.source, t.source), dataset = u.dataset,
    result_ids = u.result_ids::jsonb, kind = u.kind, cold = u.cold
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[], %s::float8[], %s::bool[],
    %s::text[], %s::int[], %s::int[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::bool[],
    %s::text[]) AS u(mode, query, query_fold, run_id, query_id, top_k, best_score, no_confident, degraded, bands,
    n_results, error_code, source, dataset, result_ids, kind, cold, trace_id)
WHERE t.trace_id = u.trace_id"""
COUNT_SPANS = """UPDATE st_traces AS t SET n_spans = (SELECT count(*) FROM st_spans s WHERE s.trace_id = t.trace_id)
WHERE t.trace_id = ANY(%s::text[])"""
ADD_DOCS = """UPDATE st_traces SET doc_ids = ARRAY(SELECT DISTINCT x FROM unnest(coalesce(doc_ids, '{}') || %s::text[])
    AS x ORDER BY x) WHERE trace_id = %s"""
"""The documents a batch's spans name join their trace's (a trace's spans may come in several batches)."""

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
    """Every statement's array parameters for one batch of spans."""

    spans: list[tuple]
    partial: list[list]
    roots: list[list]
    searches: list[list]
    trace_ids: list[str]
    docs: list[tuple[list[str], str]]


def _columns(rows: Sequence[Sequence[Any]], width: int) -> list[list]:
    """The rows as one list per column, any NUL in a text value made U+FFFD (PostgreSQL text cannot hold it)."""
    return [[_clean(x) for x in c] for c in zip(*rows)] if rows else [[] for _ in range(width)]


def plan(spans: Sequence[ReadableSpan]) -> Batch:
    """The arrays of one batch (a trace's several spans of one batch become one row of its trace)."""
    span_rows: list[tuple] = []
    partial: dict[str, list] = {}
    roots: dict[str, tuple] = {}
    searches: dict[str, tuple] = {}
    docs: dict[str, dict[str, None]] = {}
    resources: dict[int, str | None] = {}
    for span in spans:
        ctx = span.context
        trace_id, span_id = format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")
        attrs = dict(span.attributes or {})
        events = [{"name": e.name, "time_ns": e.timestamp, "attributes": dict(e.attributes or {})}
                  for e in span.events]
        start, end = int(span.start_time or 0), int(span.end_time or 0)
        status = span.status.status_code.name
        span_rows.append((trace_id, span_id, format(span.parent.span_id, "016x") if span.parent else None, span.name,
                          span.kind.name, start, end, status, span.status.description,
                          span.instrumentation_scope.name if span.instrumentation_scope else None, _packed(attrs),
                          _packed(events)))
        if id(span.resource) not in resources:
            resources[id(span.resource)] = _json(dict(span.resource.attributes)) if span.resource else None
        resource = resources[id(span.resource)]
        if span.parent is None or span.parent.is_remote:
            roots[trace_id] = (trace_id, start, end, (end - start) / 1e6, resource, span.name, status,
                               *_root(span.name, attrs))
        else:
            seen = partial.setdefault(trace_id, [trace_id, start, end, 0.0, resource])
            seen[1], seen[2] = min(seen[1], start), max(seen[2], end)
            seen[3] = (seen[2] - seen[1]) / 1e6
        if span.name == v.SEARCH_SPAN:
            searches[trace_id] = (*_search(attrs), trace_id)
        for key in DOC_ID_KEYS.intersection(attrs):
            ids = attrs[key]
            named = docs.setdefault(trace_id, {})
            for doc in ids if isinstance(ids, (list, tuple)) else ():
                named[_clean(str(doc))] = None
    trace_ids = sorted(dict.fromkeys(r[0] for r in span_rows))
    return Batch([(*(_clean(x) for x in row[:10]), *row[10:]) for row in span_rows], _columns(sorted(partial.values()), 5),
                 _columns(sorted(roots.values()), 15), _columns(sorted(searches.values(), key=lambda r: r[-1]), 18),
                 trace_ids, [(list(named), trace_id) for trace_id, named in sorted(docs.items()) if named])


def _root(name: str, attrs: dict[str, Any]) -> tuple:
    session, fetched, fetch_of, dataset, kind, source, error_code, status_code = lite.root_columns(name, attrs)
    return (session, fetched, fetch_of, dataset, kind, source, error_code, status_code)


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
