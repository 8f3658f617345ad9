"""``per_query.parquet`` and ``results.parquet``: a run's outcomes as columns.

``per_query.parquet``: one row per query: ``query_id``, ``category``, one
column per metric (NaN for unjudged queries), ``bestScore``, ``bands`` (the
bands of the results shown, best first, comma-separated), ``noConfidentResults``,
``error``, ``trace_id`` (the search's trace; runs written before it have none:
the journal has it) and ``latency_<stage>_ms`` per stage.
``results.parquet``: the top results of each query: ``query_id``, ``category``,
``rank``, ``doc_id``, ``relevance``, ``band``, ``grade``, ``label`` (grade > 0)
and ``f_<feature>`` per relevance-model feature (what ``calibrate`` fits on).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from searchtrace.evals.runs.runfolder.records import QueryOutcome
from searchtrace.evals.scoring.metrics import Evaluation
from searchtrace.names import Band

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BANDS", "BEST_SCORE", "NO_CONFIDENT", "RESULT_COLUMNS", "TRACE_ID", "best_bands", "feature_column",
           "latency_column", "latency_stage", "per_query_table", "results_table"]

RESULT_COLUMNS = ("query_id", "category", "rank", "doc_id", "relevance", "band", "grade", "label")
"""The columns of ``results.parquet`` before its feature columns."""

_LATENCY = re.compile(r"^latency_(.+)_ms$")


BEST_SCORE = "bestScore"
"""``per_query.parquet``'s column of each query's best relevance (the response's field of that name)."""

NO_CONFIDENT = "noConfidentResults"
"""``per_query.parquet``'s column saying nothing was confident (the response's field of that name)."""


BANDS = "bands"
"""``per_query.parquet``'s column of the bands of the results shown, in rank order, comma-separated."""

TRACE_ID = "trace_id"
"""``per_query.parquet``'s column of each query's trace id (absent from runs written before it)."""


def best_bands(column: Iterable[str | None]) -> np.ndarray:
    """Each row's best band of a :data:`BANDS` column, as its index in :class:`~searchtrace.names.Band` (0 is
    the best); ``len(Band)`` for a query without results."""
    rank = {band.value: i for i, band in enumerate(Band)}
    rows = list(column)
    return np.fromiter((min((rank[b] for b in (text or "").split(",") if b in rank), default=len(rank))
                        for text in rows), dtype=np.int8, count=len(rows))


def latency_column(stage: str) -> str:
    """The ``per_query.parquet`` column of a stage's latency."""
    return f"latency_{stage}_ms"


def latency_stage(column: str) -> str | None:
    """The stage of a latency column, or None for another column."""
    match = _LATENCY.match(column)
    return match.group(1) if match else None


def feature_column(feature: str) -> str:
    """The ``results.parquet`` column of a relevance-model feature."""
    return f"f_{feature}"


def per_query_table(outcomes: Sequence[QueryOutcome], ev: Evaluation) -> pd.DataFrame:
    """One row per query (see the module docstring)."""
    import pandas as pd

    values = {m: dict(zip(ev.query_ids, ev[m])) for m in ev.metrics}
    stages = sorted({s for o in outcomes for s in o.latency_ms})
    columns = ["query_id", "category", *(str(m) for m in ev.metrics), BEST_SCORE, BANDS, NO_CONFIDENT, "error",
               TRACE_ID, *(latency_column(s) for s in stages)]
    if not outcomes or len(set(columns)) < len(columns):  # no rows, or a column twice: as rows of dicts
        return pd.DataFrame([_per_query_row(o, ev, values, stages) for o in outcomes])
    by_metric = [values[m] for m in ev.metrics]
    nan = np.nan
    # rows of tuples take pandas' path for rows of dicts (one object array, converted column by column)
    return pd.DataFrame([(o.query_id, o.category, *(v.get(o.query_id, nan) for v in by_metric), o.best_score,
                          ",".join(b.value for b in o.bands), o.no_confident, o.error, o.trace_id,
                          *(o.latency_ms.get(s, nan) for s in stages)) for o in outcomes], columns=columns)


def _per_query_row(o: QueryOutcome, ev: Evaluation, values: dict[Any, dict[str, float]],
                   stages: Sequence[str]) -> dict[str, object]:
    row: dict[str, object] = {"query_id": o.query_id, "category": o.category}
    row |= {str(m): values[m].get(o.query_id, np.nan) for m in ev.metrics}
    row |= {BEST_SCORE: o.best_score, BANDS: ",".join(b.value for b in o.bands),
            NO_CONFIDENT: o.no_confident, "error": o.error, TRACE_ID: o.trace_id}
    row |= {latency_column(s): o.latency_ms.get(s, np.nan) for s in stages}
    return row


def results_table(outcomes: Sequence[QueryOutcome], features: Sequence[str]) -> pd.DataFrame:
    """The top results of each query, with a column per name in ``features`` (see the module docstring)."""
    import pandas as pd

    columns = [*RESULT_COLUMNS, *(feature_column(n) for n in features)]
    nan = np.nan
    # rows of tuples take pandas' path for rows of dicts (one object array, converted column by column)
    rows = [(o.query_id, o.category, rank, res.doc_id, res.relevance, res.band.value, res.grade, int(res.grade > 0),
             *map(res.features.get, features, repeat(nan)))
            for o in outcomes for rank, res in enumerate(o.results, 1)]
    return pd.DataFrame(rows, columns=columns)
