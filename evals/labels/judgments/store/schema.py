"""The shared store's judgment tables (schema version 3): what the judgments store and the judge queue use.

``st_judgments`` holds every judgment of every dataset, only ever appended to:
one row per judgment, keyed by ``seq`` (an identity column: the order of
appends, a reader's cursor). A dataset is named as its folder is
(``dataset_name``: the name its runs and traces record), so judges on several
machines with the dataset in other folders share its labels. Appends to one
dataset take a transaction-level advisory lock before their rows get their
``seq``, so a dataset's rows become visible in ``seq`` order and a reader that
resumes after the last ``seq`` it read misses none.

``st_judge_queue`` holds the pairs handed out to judges: one row per (dataset,
query id, doc id) offered, with the judge holding it and until when (both null:
free). A judge takes a pair with ``SELECT ... FOR UPDATE SKIP LOCKED``, so
judges taking at once never wait on, or get, the same row.
"""

from __future__ import annotations

from searchtrace.database.migrations import Migration

__all__ = ["JUDGMENTS_MIGRATION", "JUDGMENTS_V3"]

JUDGMENTS_V3 = """
CREATE TABLE st_judgments (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, dataset text NOT NULL, query_id text NOT NULL,
    doc_id text NOT NULL, grade integer, judge text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('human', 'implicit', 'imported')), time timestamptz NOT NULL,
    note text, trace_id text);
CREATE INDEX st_judgments_dataset ON st_judgments (dataset, seq);
CREATE TABLE st_judge_queue (
    dataset text NOT NULL, query_id text NOT NULL, doc_id text NOT NULL, holder text, expires timestamptz,
    PRIMARY KEY (dataset, query_id, doc_id), CHECK ((holder IS NULL) = (expires IS NULL)));
CREATE UNIQUE INDEX st_judge_queue_holder ON st_judge_queue (dataset, holder) WHERE holder IS NOT NULL;
"""
JUDGMENTS_MIGRATION = Migration(3, "judgments: judgments per dataset, the judge queue", JUDGMENTS_V3)
"""This schema's step of the shared store's migrations (the roof lists it: ``searchtrace.cli.migrations``)."""
