"""The shared store's trace tables (schema version 1): what ``traces.store.postgres`` reads and writes.

``st_traces`` holds one row per trace, its columns those of the SQLite store's
``traces`` table (see ``traces.store.sqlite_sql``), booleans as booleans and JSON as
``jsonb``, written by one call of ``st_upsert_traces`` per batch. ``st_spans``
holds every span with its attributes and events packed as the SQLite store packs
them (JSON, zlib-compressed above 1 KiB, by the writer's export thread), so the
server parses none of it. ``st_traces.doc_ids`` lists every document id the
trace's spans name (any id in an id list: candidates, results, fetches) under a
GIN index; the store's document filter chooses between that index and
walking the newest traces. The spans' attributes carry no index: the attribute
filter reads the spans of the traces the other filters leave. What each choice
cost and saved is measured in BENCHMARKS.md ("The shared store on PostgreSQL").
``pg_trgm``'s trigram index serves the query-text filter (a substring).
``st_export_drops`` is where each process says how many spans it dropped while
the store was out of reach and its buffer full (one row per process, updated).

The list is newest first and every filter has a ``(column, start_ns)`` index,
so a page of 200 is read along an index in every case.
"""

from __future__ import annotations

from searchtrace.database import Migration

__all__ = ["FOREIGN_MIGRATION", "TRACES_MIGRATION", "TRACES_V1", "TRACES_V4"]

TRACES_V1 = """
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE st_traces (
    trace_id text PRIMARY KEY, start_ns bigint NOT NULL, end_ns bigint NOT NULL,
    duration_ms double precision NOT NULL, has_root boolean NOT NULL DEFAULT false, has_search boolean NOT NULL
    DEFAULT false, root_name text,
    status text, mode text, query text, query_fold text, run_id text, query_id text, top_k integer,
    best_score double precision, no_confident boolean, degraded text NOT NULL DEFAULT '',
    bands integer NOT NULL DEFAULT 0, n_results integer, error_code text, n_spans integer NOT NULL DEFAULT 0,
    resource jsonb, source text, dataset text, session_id text, result_ids jsonb, fetched_ids jsonb,
    fetch_of text, kind text, cold boolean, status_code integer, doc_ids text[]);
CREATE INDEX st_traces_recent ON st_traces (start_ns, trace_id);
CREATE INDEX st_traces_kind ON st_traces (kind, start_ns, trace_id);
CREATE INDEX st_traces_status ON st_traces (status, start_ns, trace_id);
CREATE INDEX st_traces_mode ON st_traces (mode, start_ns);
CREATE INDEX st_traces_run ON st_traces (run_id, start_ns);
CREATE INDEX st_traces_source ON st_traces (source, start_ns);
CREATE INDEX st_traces_dataset ON st_traces (dataset, start_ns);
CREATE INDEX st_traces_no_confident ON st_traces (no_confident, start_ns);
CREATE INDEX st_traces_duration ON st_traces (duration_ms);
CREATE INDEX st_traces_query ON st_traces USING gin (query_fold gin_trgm_ops);
CREATE INDEX st_traces_docs ON st_traces USING gin (doc_ids);
CREATE TABLE st_spans (
    trace_id text NOT NULL, span_id text NOT NULL, parent_id text, name text NOT NULL, kind text NOT NULL,
    start_ns bigint NOT NULL, end_ns bigint NOT NULL, status text NOT NULL, status_message text, scope text,
    attributes bytea NOT NULL, events bytea NOT NULL, PRIMARY KEY (trace_id, span_id));
CREATE INDEX st_spans_name ON st_spans (name, trace_id);
CREATE FUNCTION st_pick(flag boolean, new anyelement, old anyelement) RETURNS anyelement
    LANGUAGE sql IMMUTABLE AS 'SELECT CASE WHEN flag THEN new ELSE old END';
CREATE FUNCTION st_prefer(flag boolean, new anyelement, old anyelement) RETURNS anyelement
    LANGUAGE sql IMMUTABLE AS 'SELECT CASE WHEN flag THEN coalesce(new, old) ELSE coalesce(old, new) END';
CREATE FUNCTION st_upsert_traces(
    p_trace_id text[], p_start_ns int8[], p_end_ns int8[], p_duration_ms float8[], p_resource text[],
    p_has_root bool[], p_root_name text[], p_status text[], p_session_id text[], p_fetched_ids text[],
    p_fetch_of text[], p_status_code int4[], p_has_search bool[], p_mode text[], p_query text[],
    p_query_fold text[], p_run_id text[], p_query_id text[], p_top_k int4[], p_best_score float8[],
    p_no_confident bool[], p_degraded text[], p_bands int4[], p_n_results int4[], p_result_ids text[],
    p_cold bool[], p_dataset text[], p_source text[], p_error_code text[], p_kind text[], p_n_spans
    int4[], p_doc_ids text[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO st_traces AS t (trace_id, start_ns, end_ns, duration_ms, resource, has_root, root_name,
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
    FROM unnest(p_trace_id, p_start_ns, p_end_ns, p_duration_ms, p_resource, p_has_root, p_root_name, p_status,
        p_session_id, p_fetched_ids, p_fetch_of, p_status_code, p_has_search, p_mode, p_query, p_query_fold,
        p_run_id, p_query_id, p_top_k, p_best_score, p_no_confident, p_degraded, p_bands, p_n_results, p_result_ids,
        p_cold, p_dataset, p_source, p_error_code, p_kind, p_n_spans, p_doc_ids)
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
        root_name = st_pick(excluded.has_root, excluded.root_name, t.root_name),
        status = st_pick(excluded.has_root, excluded.status, t.status),
        session_id = st_pick(excluded.has_root, excluded.session_id, t.session_id),
        fetched_ids = st_pick(excluded.has_root, excluded.fetched_ids, t.fetched_ids),
        fetch_of = st_pick(excluded.has_root, excluded.fetch_of, t.fetch_of),
        status_code = st_pick(excluded.has_root, excluded.status_code, t.status_code),
        has_search = t.has_search OR excluded.has_search,
        mode = st_pick(excluded.has_search, excluded.mode, t.mode),
        query = st_pick(excluded.has_search, excluded.query, t.query),
        query_fold = st_pick(excluded.has_search, excluded.query_fold, t.query_fold),
        run_id = st_pick(excluded.has_search, excluded.run_id, t.run_id),
        query_id = st_pick(excluded.has_search, excluded.query_id, t.query_id),
        top_k = st_pick(excluded.has_search, excluded.top_k, t.top_k),
        best_score = st_pick(excluded.has_search, excluded.best_score, t.best_score),
        no_confident = st_pick(excluded.has_search, excluded.no_confident, t.no_confident),
        degraded = st_pick(excluded.has_search, excluded.degraded, t.degraded),
        bands = st_pick(excluded.has_search, excluded.bands, t.bands),
        n_results = st_pick(excluded.has_search, excluded.n_results, t.n_results),
        result_ids = st_pick(excluded.has_search, excluded.result_ids, t.result_ids),
        cold = st_pick(excluded.has_search, excluded.cold, t.cold),
        dataset = st_prefer(excluded.has_search, excluded.dataset, t.dataset),
        source = st_prefer(excluded.has_search, excluded.source, t.source),
        error_code = st_prefer(excluded.has_search, excluded.error_code, t.error_code),
        kind = CASE WHEN excluded.has_search OR t.kind = 'search' THEN 'search' WHEN excluded.has_root THEN
            excluded.kind ELSE t.kind END,
        n_spans = (SELECT count(*) FROM st_spans AS s WHERE s.trace_id = excluded.trace_id),
        doc_ids = CASE WHEN excluded.doc_ids IS NULL THEN t.doc_ids WHEN t.doc_ids IS NULL THEN excluded.doc_ids
            ELSE ARRAY(SELECT DISTINCT x FROM unnest(t.doc_ids || excluded.doc_ids) AS x ORDER BY x) END;
END $$;
CREATE TABLE st_export_drops (
    host text NOT NULL, pid integer NOT NULL, started_ns bigint NOT NULL, dropped bigint NOT NULL,
    buffer_size integer NOT NULL, noted_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (host, pid, started_ns));
"""
TRACES_MIGRATION = Migration(1, "traces: traces, spans, their documents", TRACES_V1)
"""This schema's step of the shared store's migrations (the roof lists it: ``searchtrace.cli.migrations``)."""


def _upsert_v4() -> str:
    """``st_upsert_traces`` of schema 4: version 1's, taking and keeping each trace's service and project (the
    first a span of the trace named). Derived from version 1's text, which a released migration never changes."""
    start = TRACES_V1.index("CREATE FUNCTION st_upsert_traces(")
    body = TRACES_V1[start:TRACES_V1.index("END $$;") + len("END $$;")]
    for old, new in (
            ("p_n_spans\n    int4[], p_doc_ids text[])", "p_n_spans\n    int4[], p_doc_ids text[], p_service text[], p_project text[])"),
            ("kind, n_spans, doc_ids)\n    SELECT", "kind, n_spans, doc_ids, service, project)\n    SELECT"),
            ("ORDER BY\n        x) END\n    FROM", "ORDER BY\n        x) END, u.service, u.project\n    FROM"),
            ("p_n_spans, p_doc_ids)", "p_n_spans, p_doc_ids, p_service, p_project)"),
            ("kind, n_spans, doc_ids)\n    ON CONFLICT", "kind, n_spans, doc_ids, service, project)\n    ON CONFLICT"),
            ("        n_spans = (SELECT", "        service = coalesce(t.service, excluded.service),\n"
                                       "        project = coalesce(t.project, excluded.project),\n        n_spans = (SELECT")):
        if body.count(old) != 1:
            raise AssertionError(f"st_upsert_traces of schema 1 changed: {old!r}")
        body = body.replace(old, new)
    return body


TRACES_V4 = f"""
ALTER TABLE st_traces ADD COLUMN service text, ADD COLUMN project text;
CREATE INDEX st_traces_service ON st_traces (service, start_ns);
CREATE INDEX st_traces_project ON st_traces (project, start_ns);
CREATE TABLE st_searches (
    trace_id text NOT NULL, span_id text NOT NULL, parent_id text, start_ns bigint NOT NULL,
    duration_ms double precision NOT NULL, service text, project text, query text, query_fold text,
    doc_ids text NOT NULL, scores text NOT NULL, unidentified integer NOT NULL, top_k integer, data_source text,
    convention text NOT NULL, PRIMARY KEY (trace_id, span_id));
CREATE INDEX st_searches_service ON st_searches (service, start_ns);
CREATE INDEX st_searches_start ON st_searches (start_ns);
CREATE TABLE st_trace_settings (service text NOT NULL, name text NOT NULL, value text NOT NULL,
    PRIMARY KEY (service, name));
DROP FUNCTION st_upsert_traces;
{_upsert_v4()}
"""
"""Schema 4 of the shared store, the SQLite store's schema 5: the resource's service and project on each trace,
another retriever's searches (``st_searches``, one row per search span: ``traces.store.searches``) and the
per-service settings (the document-id key)."""
FOREIGN_MIGRATION = Migration(4, "traces: another retriever's searches, services and projects", TRACES_V4)
"""This step of the shared store's migrations (the roof lists it: ``searchtrace.cli.migrations``)."""
