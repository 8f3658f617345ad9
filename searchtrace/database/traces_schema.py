"""The shared store's trace tables (schema version 1): what ``traces.postgres`` reads and writes.

``st_traces`` holds one row per trace, its columns those of the SQLite store's
``traces`` table (see ``traces._sqlite``), booleans as booleans and JSON as
``jsonb``; ``st_spans`` holds every span with its attributes and events as the
SQLite store does: JSON, zlib-compressed above 1 KiB, compressed by the writer's
export thread (stored as ``jsonb``, the server's parsing and compression of them
halved the throughput of a server whose answers wait for their traces). ``st_traces.doc_ids`` lists every document id the trace's spans name
(any id in an id list: candidates, results, fetches), under a GIN index: the
document filter finds a rare document's traces by that index and a common one's
by walking the newest traces, whichever the planner reckons cheaper, over the
whole store. (A row per document and trace, with its b-tree indexes, cost 8 µs per
row to write, a hundred rows a search: three times the GIN's cost.) The spans'
attributes carry no index: the attribute filter reads the spans of the traces
the other filters leave, as it does in SQLite.
``pg_trgm``'s trigram index serves the query-text filter (a substring).
``st_export_drops`` is where each process says how many spans it dropped while
the store was out of reach and its buffer full (one row per process, updated).

The list is newest first and every filter has a ``(column, start_ns)`` index,
so a page of 200 is read along an index in every case.
"""

from __future__ import annotations

__all__ = ["TRACES_V1"]

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
CREATE TABLE st_export_drops (
    host text NOT NULL, pid integer NOT NULL, started_ns bigint NOT NULL, dropped bigint NOT NULL,
    buffer_size integer NOT NULL, noted_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (host, pid, started_ns));
"""
