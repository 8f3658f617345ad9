"""Per-stage latency: a run's per-query distributions, and percentiles across runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from searchtrace.dashboard.data.runs import list_runs, load_run, run_folder, skipped_stages
from searchtrace.evals import latency_stage
from searchtrace.names import Stage
from searchtrace.traces import SEARCH_SPAN

__all__ = ["PERCENTILES", "STAGE_ORDER", "latency_by_run", "stage_latency", "stage_percentiles"]

#: Stages in pipeline order; ``search`` is the root span, ``total`` the caller's wall time.
STAGE_ORDER = (*(s.value for s in Stage), SEARCH_SPAN, "total")
PERCENTILES = (50, 90, 95, 99)


def _order(stage: str) -> tuple[int, str]:
    return (STAGE_ORDER.index(stage) if stage in STAGE_ORDER else len(STAGE_ORDER), stage)


def stage_latency(home: str | Path, run_id: str) -> pd.DataFrame:
    """One row per (query, stage) of a run: query_id, stage, ms (errored queries left out)."""
    folder = run_folder(home, run_id)
    stage_of = {c: stage for c in folder.columns("per_query") if (stage := latency_stage(c)) is not None}
    frame = folder.per_query(["query_id", "error", *stage_of])
    if "error" in frame:
        frame = frame[frame["error"].isna()]
    long = frame.melt(id_vars="query_id", value_vars=list(stage_of), var_name="stage", value_name="ms").dropna()
    long["stage"] = long["stage"].map(stage_of)
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
    """Each run's stage percentiles from its ``run.json``: run_id, name, created_at, mode, stage, p50, p95,
    p99, n, skipped (the run skipped the stage: its time is the span's bookkeeping, not work)."""
    rows = []
    for run in list_runs(home).itertuples(index=False):
        summary = load_run(home, str(run.run_id))
        skipped = skipped_stages(summary)
        for stage, p in summary.latency_ms.items():
            rows.append({"run_id": run.run_id, "name": run.name, "created_at": run.created_at, "mode": run.mode,
                         "stage": stage, "p50": p.p50, "p95": p.p95, "p99": p.p99, "n": p.n,
                         "skipped": stage in skipped})
    return pd.DataFrame(rows, columns=["run_id", "name", "created_at", "mode", "stage", "p50", "p95", "p99", "n",
                                       "skipped"])
