"""Per-stage latency: a run's per-query distributions, and percentiles across runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from dashboard.data.home import run_dir
from dashboard.data.runs import list_runs, per_query
from retriever.errors import NotFoundError
from traces.vocabulary import SpanName

__all__ = ["PERCENTILES", "STAGE_ORDER", "latency_by_run", "stage_latency", "stage_percentiles"]

#: Stages in pipeline order; ``search`` is the root span, ``total`` the caller's wall time.
STAGE_ORDER = (*(s.value for s in SpanName if s is not SpanName.SEARCH), "search", "total")
PERCENTILES = (50, 90, 95, 99)
_COLUMN = re.compile(r"^latency_(.+)_ms$")


def _order(stage: str) -> tuple[int, str]:
    return (STAGE_ORDER.index(stage) if stage in STAGE_ORDER else len(STAGE_ORDER), stage)


def stage_latency(home: str | Path, run_id: str) -> pd.DataFrame:
    """One row per (query, stage) of a run: query_id, stage, ms (errored queries left out)."""
    import pyarrow.parquet as pq

    path = run_dir(home, run_id) / "per_query.parquet"
    if not path.is_file():
        raise NotFoundError(f"run {run_id!r} has no per_query.parquet", field="run")
    columns = [c for c in pq.read_schema(path).names if _COLUMN.match(c)]
    frame = per_query(home, run_id, ["query_id", "error", *columns])
    if "error" in frame:
        frame = frame[frame["error"].isna()]
    long = frame.melt(id_vars="query_id", value_vars=columns, var_name="stage", value_name="ms").dropna()
    long["stage"] = long["stage"].str.replace(_COLUMN, r"\1", regex=True)
    stages = sorted(long["stage"].unique(), key=_order)
    long["stage"] = pd.Categorical(long["stage"], categories=stages, ordered=True)
    return long.sort_values(["stage", "query_id"], ignore_index=True)


def stage_percentiles(latency: pd.DataFrame) -> pd.DataFrame:
    """p50, p90, p95, p99, max, mean and n of each stage of a :func:`stage_latency` table."""
    rows = []
    for stage, ms in latency.groupby("stage", observed=True)["ms"]:
        values = ms.to_numpy(float)
        rows.append({"stage": str(stage)} | {f"p{q}": float(np.percentile(values, q)) for q in PERCENTILES}
                    | {"max": float(values.max()), "mean": float(values.mean()), "n": len(values)})
    return pd.DataFrame(rows, columns=["stage", *(f"p{q}" for q in PERCENTILES), "max", "mean", "n"])


def latency_by_run(home: str | Path) -> pd.DataFrame:
    """Each run's stage percentiles from its ``run.json``: run_id, created_at, mode, stage, p50, p95, p99, n."""
    rows = []
    for run in list_runs(home).itertuples(index=False):
        summary = json.loads((run_dir(home, run.run_id) / "run.json").read_text(encoding="utf-8"))
        for stage, p in (summary.get("latency_ms") or {}).items():
            rows.append({"run_id": run.run_id, "created_at": run.created_at, "mode": run.mode, "stage": stage,
                         "p50": p.get("p50"), "p95": p.get("p95"), "p99": p.get("p99"), "n": p.get("n")})
    return pd.DataFrame(rows, columns=["run_id", "created_at", "mode", "stage", "p50", "p95", "p99", "n"])
