"""The shared store's trace tables (schema version 1): what ``traces.postgres`` reads and writes.

``st_traces`` holds one row per trace, its columns those of the SQLite store's
``traces`` table (see ``traces._sqlite``), booleans as booleans; ``st_spans``
holds every span with its attributes and events as ``jsonb``. ``st_trace_docs``
lists, for each trace, every document id its spans name (any string in an array
attribute), with the trace's start: the document filter reads it along
``(doc_id, start_ns)`` whatever the store's size. The attribute filter's exact
value (or array item) is found by containment along the spans' ``jsonb_path_ops``
index; a substring of a value is checked span by span over the whole store.
``st_export_drops`` is where each process says how many spans it dropped while
the store was out of reach and its buffer full (one row per process, updated).
``pg_trgm``'s trigram index serves the query-text filter (a substring).

The list is newest first and every filter has a ``(column, start_ns)`` index,
so a page of 200 is read along an index in every case.
"""

from __future__ import annotations

__all__ = ["TRACES_V1"]

TRACES_V1 = """
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE st_traces (
    trace_id text PRIMARY KEY, start_ns bigint NOT NULL, end_ns bigint NOT NULL,
    duration_ms double precision NOT NULL, has_root boolean NOT NULL DEFAULT false, root_name text,
    status text, mode text, query text, query_fold text, run_id text, query_id text, top_k integer,
    best_score double precision, no_confident boolean, degraded text NOT NULL DEFAULT '',
    bands integer NOT NULL DEFAULT 0, n_results integer, error_code text, n_spans integer NOT NULL DEFAULT 0,
    resource jsonb, source text, dataset text, session_id text, result_ids jsonb, fetched_ids jsonb,
    fetch_of text, kind text, cold boolean, status_code integer);
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
CREATE TABLE st_spans (
    trace_id text NOT NULL, span_id text NOT NULL, parent_id text, name text NOT NULL, kind text NOT NULL,
    start_ns bigint NOT NULL, end_ns bigint NOT NULL, status text NOT NULL, status_message text, scope text,
    attributes jsonb NOT NULL, events jsonb NOT NULL, PRIMARY KEY (trace_id, span_id));
CREATE INDEX st_spans_name ON st_spans (name, trace_id);
CREATE TABLE st_trace_docs (
    doc_id text NOT NULL, trace_id text NOT NULL, start_ns bigint NOT NULL, PRIMARY KEY (doc_id, trace_id));
CREATE INDEX st_trace_docs_recent ON st_trace_docs (doc_id, start_ns, trace_id);
CREATE INDEX st_trace_docs_trace ON st_trace_docs (trace_id);
CREATE TABLE st_export_drops (
    host text NOT NULL, pid integer NOT NULL, started_ns bigint NOT NULL, dropped bigint NOT NULL,
    buffer_size integer NOT NULL, noted_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (host, pid, started_ns));
CREATE INDEX st_spans_attributes ON st_spans USING gin (attributes jsonb_path_ops);
"""
