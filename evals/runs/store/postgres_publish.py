"""Publishing a run to the shared store: one transaction, idempotent by run id.

A run already there with the same content (the hash of its files) is left as
it is; one with other content under the same id is refused. Rankings, metrics
and files are written with binary ``COPY``, so scores arrive bit for bit.
``run.trec`` and ``rankings.parquet`` are stored as bytes only when the
rankings do not rebuild them byte for byte (``rebuild``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.runfolder import RunFolder
from searchtrace.evals.runs.store.rebuild import REBUILT, rebuilt_files
from searchtrace.evals.runs.store.snapshot import RunFile, RunSnapshot, sha256

if TYPE_CHECKING:
    import psycopg

__all__ = ["insert_run", "stored_files"]


def stored_files(snapshot: RunSnapshot) -> list[RunFile]:
    """The run's files as the store keeps them: content None for each one its rankings rebuild exactly."""
    rebuilt = rebuilt_files(snapshot.rankings, snapshot.trec_tag)
    return [RunFile(f.name, f.sha256, f.size, None) if f.name in REBUILT and sha256(rebuilt[f.name]) == f.sha256
            else f for f in snapshot.files]


def insert_run(conn: psycopg.Connection[Any], snapshot: RunSnapshot, where: str) -> bool:
    """Insert the run in one transaction; False when the same run was there already.

    Raises:
        ValidationError: another run with this id is there.
    """
    s = snapshot.summary
    files = stored_files(snapshot)
    digest = snapshot.content_hash()
    with conn.transaction():
        row = conn.execute(
            "INSERT INTO st_runs (run_id, name, created_at, dataset, mode, trec_tag, settings, fingerprints, summary,"
            " doc_ids, content_sha256) VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb, %s, %s)"
            " ON CONFLICT (run_id) DO NOTHING RETURNING run_id",
            (s.run_id, s.name, snapshot.created_at, s.dataset.name, s.retriever.mode, snapshot.trec_tag,
             _text(snapshot, RunFolder.SETTINGS), _fingerprints(snapshot), _text(snapshot, RunFolder.SUMMARY),
             snapshot.rankings.docs.tolist(), digest)).fetchone()
        if row is None:
            found = conn.execute("SELECT content_sha256 FROM st_runs WHERE run_id = %s", (s.run_id,)).fetchone()
            if found is not None and found[0] == digest:
                return False
            raise ValidationError(f"{where} has another run with id {s.run_id!r} (other content); give this "
                                  "run a folder name of its own (eval without --out names it uniquely)", field="run")
        for tag in dict.fromkeys(s.tags):
            conn.execute("INSERT INTO st_run_tags (tag, created_at, run_id) VALUES (%s, %s, %s)",
                         (tag, snapshot.created_at, s.run_id))
        _copy_rankings(conn, snapshot)
        _copy_metrics(conn, snapshot)
        with conn.cursor().copy("COPY st_run_files (run_id, name, sha256, size, content) FROM STDIN "
                                "(FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "text", "int8", "bytea"])
            for f in files:
                copy.write_row((s.run_id, f.name, f.sha256, f.size, f.content))
    return True


def _text(snapshot: RunSnapshot, name: str) -> str:
    """The JSON file as ``jsonb`` takes it: a NaN or infinity (which JSON lacks) as null; its bytes stay as they are."""
    return json.dumps(_finite(json.loads(snapshot.file(name).content or b"null")))


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _fingerprints(snapshot: RunSnapshot) -> str | None:
    prints = snapshot.summary.dataset.fingerprints
    return json.dumps(prints.to_json()) if prints is not None else None


def _copy_rankings(conn: psycopg.Connection[Any], snapshot: RunSnapshot) -> None:
    run = snapshot.rankings
    bounds = np.searchsorted(run.query_index, np.arange(len(run.queries) + 1))
    docs = run.docs[run.doc_index]
    with conn.cursor().copy("COPY st_run_rankings (run_id, position, query_id, doc_ids, scores) FROM STDIN "
                            "(FORMAT BINARY)") as copy:
        copy.set_types(["text", "int4", "text", "text[]", "float8[]"])
        for position, query in enumerate(run.queries.tolist()):
            lo, hi = int(bounds[position]), int(bounds[position + 1])
            copy.write_row((snapshot.run_id, position, query, docs[lo:hi].tolist(), run.scores[lo:hi].tolist()))


def _copy_metrics(conn: psycopg.Connection[Any], snapshot: RunSnapshot) -> None:
    with conn.cursor().copy("COPY st_run_metrics (run_id, metric, query_id, value) FROM STDIN "
                            "(FORMAT BINARY)") as copy:
        copy.set_types(["text", "text", "text", "float8"])
        for metric, (query_ids, values) in snapshot.metrics.items():
            for query, value in zip(query_ids, values.tolist()):
                copy.write_row((snapshot.run_id, metric, query, value))
