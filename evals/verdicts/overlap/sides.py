"""What one run folder gives a label-free comparison: its rankings and, per query, band, latency and trace.

The rankings come from ``rankings.parquet`` (``run.trec`` for a run written before it),
the rest from ``per_query.parquet`` (read by pyarrow alone: no pandas): the best
band of the results shown, the total latency and the trace id. A run written
before ``per_query.parquet`` had a trace id column has its trace ids read from
the journal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from searchtrace.evals.runs.runfolder import BANDS, TRACE_ID, RunFolder, RunSummary, best_bands, latency_column
from searchtrace.evals.scoring.rankings import Run

__all__ = ["Side", "read_side"]

TOTAL = latency_column("total")
"""The caller's wall time of each search."""


@dataclass(frozen=True, eq=False)
class Side:
    """One run, as the comparison reads it.

    Attributes:
        folder, summary: the run.
        run: every query's ranking (a query without results has no rows).
        query_ids: (n,) every query the run searched, as ``per_query.parquet`` lists them.
        bands: (n,) each query's best band, its index in ``Band`` (``len(Band)``: no result).
        latency_ms: (n,) each search's total time (NaN when not recorded).
        trace_ids: (n,) each search's trace id (``""`` when none).
    """

    folder: RunFolder
    summary: RunSummary
    run: Run
    query_ids: np.ndarray
    bands: np.ndarray
    latency_ms: np.ndarray
    trace_ids: np.ndarray


def _trace_ids(folder: RunFolder, table_ids: np.ndarray, column: np.ndarray | None) -> np.ndarray:
    if column is not None:
        return np.array(["" if t is None else t for t in column.tolist()], dtype=object)
    traced = {o.query_id: o.trace_id for o in folder.outcomes()}  # a run written before the column
    return np.array([traced.get(q, "") for q in table_ids.tolist()], dtype=object)


def read_side(folder: RunFolder) -> Side:
    """Read one completed run.

    Raises:
        NotFoundError: the run lacks ``per_query.parquet``; DataError: a malformed file.
    """
    summary = folder.summary()
    run = folder.rankings()
    table = folder.per_query_columns(["query_id", BANDS, TOTAL, TRACE_ID])
    ids = table["query_id"]
    latency = table[TOTAL].astype(np.float64) if TOTAL in table else np.full(len(ids), np.nan)
    bands = best_bands(table[BANDS] if BANDS in table else [""] * len(ids))
    return Side(folder, summary, run, ids, bands, latency, _trace_ids(folder, ids, table.get(TRACE_ID)))
