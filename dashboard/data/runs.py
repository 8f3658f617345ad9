"""Run folders as tables: one row per run, a run's per-query values, metric trends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from dashboard.data.home import created_at, run_dir, runs_dir
from retriever.errors import NotFoundError

__all__ = ["RUN_COLUMNS", "list_runs", "load_run", "metric_names", "per_query", "per_query_rows", "trend"]

#: Columns of :func:`list_runs` before the metric columns.
RUN_COLUMNS = ("run_id", "dataset", "split", "mode", "created_at", "queries", "evaluated", "errors", "wall_s",
               "fingerprint")


def load_run(home: str | Path, run_id: str) -> dict[str, Any]:
    """A run's ``run.json``.

    Raises:
        ValidationError, NotFoundError: see :func:`dashboard.data.home.run_dir`.
    """
    return json.loads((run_dir(home, run_id) / "run.json").read_text(encoding="utf-8"))


def _row(folder: Path, summary: dict[str, Any]) -> dict[str, Any]:
    dataset = summary.get("dataset") or {}
    return {
        "run_id": summary.get("run_id") or folder.name,
        "dataset": dataset.get("name"),
        "split": dataset.get("split"),
        "mode": (summary.get("retriever") or {}).get("mode"),
        "created_at": created_at(folder),
        "queries": dataset.get("queries"),
        "evaluated": summary.get("evaluated_queries"),
        "errors": summary.get("errors"),
        "wall_s": (summary.get("timings") or {}).get("wall_s"),
        "fingerprint": dataset.get("fingerprint"),
    } | {str(m): v for m, v in (summary.get("metrics") or {}).items()}


def list_runs(home: str | Path) -> pd.DataFrame:
    """Every completed run under ``<home>/runs``, newest first.

    Columns: :data:`RUN_COLUMNS`, then one per metric (NaN where a run lacks it).
    The row's ``run_id`` is the folder name. Folders without a readable ``run.json``
    (interrupted runs) are left out.
    """
    rows = []
    root = runs_dir(home)
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        try:
            summary = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        rows.append(_row(folder, summary) | {"run_id": folder.name})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=list(RUN_COLUMNS))
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True)
    return frame.sort_values(["created_at", "run_id"], ascending=False, ignore_index=True)


def metric_names(runs: pd.DataFrame) -> list[str]:
    """The metric columns of a :func:`list_runs` table."""
    return [c for c in runs.columns if c not in RUN_COLUMNS]


def trend(home: str | Path, dataset: str, metric: str) -> pd.DataFrame:
    """One metric of every run on ``dataset`` over time: run_id, mode, created_at, value (oldest first)."""
    runs = list_runs(home)
    if runs.empty or metric not in runs:
        return pd.DataFrame(columns=["run_id", "mode", "created_at", "value"])
    picked = runs[runs["dataset"] == dataset]
    out = picked[["run_id", "mode", "created_at", metric]].rename(columns={metric: "value"})
    return out.sort_values("created_at", ignore_index=True)


def per_query(home: str | Path, run_id: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A run's ``per_query.parquet``, reading only ``columns`` when given (those it has).

    Raises:
        NotFoundError: the run or its per-query file is missing.
    """
    path = run_dir(home, run_id) / "per_query.parquet"
    if not path.is_file():
        raise NotFoundError(f"run {run_id!r} has no per_query.parquet", field="run")
    if columns is None:
        return pd.read_parquet(path)
    import pyarrow.parquet as pq

    present = set(pq.read_schema(path).names)
    return pd.read_parquet(path, columns=[c for c in columns if c in present])


def per_query_rows(home: str | Path, run_ids: Sequence[str], query_id: str, columns: Sequence[str]) -> pd.DataFrame:
    """One query's row of ``per_query.parquet`` in each of ``run_ids``: run_id, then ``columns``
    (those some run has; null where a run lacks one). Runs without the query or the file are left out.

    Reads every file in one pyarrow dataset scan filtered on ``query_id``, which reads the
    files in parallel and skips row groups by their statistics.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    paths = {str(run_dir(home, r) / "per_query.parquet"): r for r in run_ids}
    paths = {p: r for p, r in paths.items() if Path(p).is_file()}
    wanted = ["query_id", *[c for c in columns if c != "query_id"]]
    parts = [pa.schema([s.field(c) for c in wanted if c in s.names]) for s in map(pq.read_schema, paths)]
    schema = pa.unify_schemas(parts) if parts else None
    if schema is None or "query_id" not in schema.names:
        return pd.DataFrame(columns=["run_id", *wanted[1:]])
    scan = ds.dataset(list(paths), format="parquet", schema=schema)
    table = scan.to_table(columns=["__filename", *schema.names], filter=ds.field("query_id") == query_id)
    frame = table.to_pandas()
    frame.insert(0, "run_id", frame.pop("__filename").map(paths))
    return frame.drop(columns="query_id").reindex(columns=["run_id", *wanted[1:]])
