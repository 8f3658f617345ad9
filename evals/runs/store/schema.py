"""The shared store's run tables (schema version 2): what the runs store's PostgreSQL backend reads and writes.

``st_runs`` holds one row per published run: its id, name, when it was made,
its dataset and mode, the tag its ``run.trec`` carries, ``settings.json`` and
``run.json`` as ``jsonb`` (the fingerprints are the summary's
``dataset.fingerprints``, kept in their own column to be read without it), and
the hash of its whole content, which makes a second publish of the same run a
no-op and a different run under the same id an error. ``st_run_tags`` lists each
run under each of its tags by creation time, so the newest run with a tag is the
first entry of one index range. ``st_run_rankings`` holds each query's ranking
(its id, document ids and ``float8`` scores, bit for bit) in ranking order,
``st_runs.doc_ids`` the rankings' document ids in the order their codes number
them (what ``rankings.parquet``'s dictionary holds);
``st_run_metrics`` each judged query's value of each metric. ``st_run_files``
lists every file of the run folder with its sha256 and size; its ``content`` is
the file's bytes, or null for ``run.trec`` and ``rankings.parquet`` when the
rankings rebuild them byte for byte.
"""

from __future__ import annotations

from searchtrace.database.migrations import Migration

__all__ = ["RUNS_MIGRATION", "RUNS_V2"]

RUNS_V2 = """
CREATE TABLE st_runs (
    run_id text PRIMARY KEY, name text, created_at timestamptz NOT NULL,
    published_at timestamptz NOT NULL DEFAULT now(), dataset text NOT NULL, mode text,
    trec_tag text NOT NULL, settings jsonb NOT NULL, fingerprints jsonb, summary jsonb NOT NULL,
    doc_ids text[] NOT NULL, content_sha256 text NOT NULL);
CREATE INDEX st_runs_recent ON st_runs (created_at DESC, run_id DESC);
CREATE INDEX st_runs_name ON st_runs (name, created_at DESC, run_id DESC);
CREATE TABLE st_run_tags (
    tag text NOT NULL, created_at timestamptz NOT NULL,
    run_id text NOT NULL REFERENCES st_runs ON DELETE CASCADE,
    PRIMARY KEY (tag, created_at, run_id));
CREATE INDEX st_run_tags_run ON st_run_tags (run_id);
CREATE TABLE st_run_rankings (
    run_id text NOT NULL REFERENCES st_runs ON DELETE CASCADE, position integer NOT NULL,
    query_id text NOT NULL, doc_ids text[] NOT NULL, scores float8[] NOT NULL, PRIMARY KEY (run_id, position));
CREATE TABLE st_run_metrics (
    run_id text NOT NULL REFERENCES st_runs ON DELETE CASCADE, metric text NOT NULL, query_id text NOT NULL,
    value float8 NOT NULL, PRIMARY KEY (run_id, metric, query_id));
CREATE TABLE st_run_files (
    run_id text NOT NULL REFERENCES st_runs ON DELETE CASCADE, name text NOT NULL, sha256 text NOT NULL,
    size bigint NOT NULL, content bytea, PRIMARY KEY (run_id, name));
"""
RUNS_MIGRATION = Migration(2, "runs: published runs, their tags, rankings, metrics and files", RUNS_V2)
"""This schema's step of the shared store's migrations (the roof lists it: ``searchtrace.cli.migrations``)."""
