"""Run folders as tables: one row per run, a run's per-query values, metric trends."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from searchtrace.dashboard.data.shared import store_run, store_runs
from searchtrace.errors import NotFoundError, SearchtraceError
from searchtrace.evals import RunFolder, RunSummary, default_run_name, outside_runs, run_settings, show_setting
from searchtrace.home import Home

__all__ = ["RUN_COLUMNS", "all_runs", "damaged_runs", "differing_settings", "gone_runs", "list_runs", "load_run", "metric_names", "per_query", "per_query_rows",
           "run_folder", "settings_table", "skipped_stages", "trend"]

#: Columns of :func:`list_runs` before the metric columns.
RUN_COLUMNS = ("run_id", "dataset", "name", "tags", "note", "group", "previous", "split", "mode", "created_at",
               "queries", "evaluated", "errors", "wall_s", "fingerprint")


def run_folder(home: str | Path, run_id: str) -> RunFolder:
    """The completed run ``run_id`` of a home folder, else of the shared store (through the home's cache).

    Raises:
        ValidationError: ``run_id`` is not a plain folder name (it may come from a URL).
        NotFoundError: no completed run by that id.
    """
    try:
        return RunFolder.in_home(Home(Path(home)), run_id)
    except NotFoundError:
        found = store_run(home, run_id)
        if found is None:
            raise
        return found


def all_runs(home: str | Path) -> list[RunFolder]:
    """The home's completed run folders (those written with ``eval --out`` included), then the shared store's runs
    the home does not have (by run id)."""
    local = RunFolder.all_in_home(Home(Path(home)))
    ids = {f.run_id for f in local}
    return [*local, *(f for f in store_runs(home) if f.run_id not in ids)]


def load_run(home: str | Path, run_id: str) -> RunSummary:
    """A run's summary (``run.json``).

    Raises:
        ValidationError, NotFoundError: see :func:`run_folder`; DataError: a damaged summary.
    """
    return run_folder(home, run_id).summary()


def _row(folder: RunFolder, summary: RunSummary) -> dict[str, Any]:
    group = default_run_name(summary)
    return {
        "run_id": folder.run_id,
        "dataset": summary.dataset.name,
        "name": summary.name or group,
        "tags": ", ".join(summary.tags),
        "note": summary.note or "",
        "group": group.partition(" · ")[2] or group,
        "previous": None,
        "split": summary.dataset.split,
        "mode": summary.retriever.mode,
        "created_at": folder.created_at(summary),
        "queries": summary.dataset.queries,
        "evaluated": summary.evaluated_queries,
        "errors": summary.errors,
        "wall_s": summary.timings.wall_s,
        "fingerprint": summary.dataset.fingerprint,
    } | {str(m): v for m, v in summary.metrics.items()}


def list_runs(home: str | Path) -> pd.DataFrame:
    """Every completed run under ``<home>/runs``, written with ``eval --out`` elsewhere, and in the shared store
    (when there is one), newest first.

    Columns: :data:`RUN_COLUMNS`, then one per metric (NaN where a run lacks it).
    The row's ``run_id`` is the folder name; ``name`` the run's name (its default for
    unnamed runs); ``group`` its mode and the settings that differ from the defaults
    (runs of one group are comparable over time); ``previous`` the run before it on
    the same dataset (None for the first). Interrupted runs are left out, and so are
    runs whose ``run.json`` cannot be read (:func:`damaged_runs` lists those, with why).
    """
    rows = []
    for folder in all_runs(home):
        try:
            rows.append(_row(folder, folder.summary()))
        except (SearchtraceError, OSError):
            continue
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=list(RUN_COLUMNS))
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True)
    frame = frame.sort_values(["created_at", "run_id"], ascending=False, ignore_index=True)
    frame["previous"] = frame.groupby("dataset", sort=False)["run_id"].shift(-1).astype(object)
    frame["previous"] = frame["previous"].where(frame["previous"].notna(), None)
    return frame


def damaged_runs(home: str | Path) -> pd.DataFrame:
    """The completed runs :func:`list_runs` leaves out because their ``run.json`` cannot be read: run_id, error.

    A damaged run is shown with what is wrong, never dropped without a word.
    """
    rows = []
    for folder in all_runs(home):
        try:
            folder.summary()
        except SearchtraceError as exc:
            rows.append({"run_id": folder.run_id, "error": exc.message})
        except OSError as exc:
            rows.append({"run_id": folder.run_id, "error": f"{folder.summary_file}: {exc.strerror or exc}"})
    return pd.DataFrame(rows, columns=["run_id", "error"])


def gone_runs(home: str | Path) -> list[Path]:
    """The run folders written with ``eval --out`` that the home lists and that are gone (moved or deleted)."""
    return list(outside_runs(Home(Path(home))).gone)


def metric_names(runs: pd.DataFrame) -> list[str]:
    """The metric columns of a :func:`list_runs` table."""
    return [c for c in runs.columns if c not in RUN_COLUMNS]


def trend(home: str | Path, dataset: str, metric: str) -> pd.DataFrame:
    """One metric of every run on ``dataset`` over time, oldest first: run_id, name, group (runs of
    identical settings share one), mode, created_at, value."""
    columns = ["run_id", "name", "group", "mode", "created_at", "value"]
    runs = list_runs(home)
    if runs.empty or metric not in runs:
        return pd.DataFrame(columns=columns)
    picked = runs[runs["dataset"] == dataset]
    out = picked[[*columns[:-1], metric]].rename(columns={metric: "value"})
    return out.sort_values("created_at", ignore_index=True)


def settings_table(home: str | Path) -> pd.DataFrame:
    """Each run's settings (see :func:`searchtrace.evals.run_settings`) as text, one row per run id."""
    rows = {}
    for folder in all_runs(home):
        try:
            settings = run_settings(folder.summary())
        except (SearchtraceError, OSError):
            continue
        rows[folder.run_id] = {k: show_setting(v) for k, v in settings.items()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("run_id")


def differing_settings(settings: pd.DataFrame, run_ids: Sequence[str]) -> list[str]:
    """The settings whose value differs between ``run_ids`` (rows of :func:`settings_table`)."""
    rows = settings.reindex([r for r in run_ids if r in settings.index])
    return [c for c in rows.columns if rows[c].nunique(dropna=False) > 1]


def per_query(home: str | Path, run_id: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A run's ``per_query.parquet``, reading only ``columns`` when given (those it has).

    Raises:
        NotFoundError: the run or its per-query file is missing.
    """
    return run_folder(home, run_id).per_query(columns)


def per_query_rows(home: str | Path, run_ids: Sequence[str], query_id: str, columns: Sequence[str]) -> pd.DataFrame:
    """One query's row of ``per_query.parquet`` in each of ``run_ids``: run_id, then ``columns``
    (those some run has; null where a run lacks one). Runs without the query or the file are left out.

    Reads every file in one pyarrow dataset scan filtered on ``query_id``, which reads the
    files in parallel and skips row groups by their statistics.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    files = {str(run_folder(home, r).per_query_file): r for r in run_ids}
    paths = {p: r for p, r in files.items() if Path(p).is_file()}
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


def skipped_stages(summary: RunSummary) -> dict[str, str]:
    """The stages a run's searches skipped, with why: a fusion weight of 0 skips its stage (and a
    skipped dense stage needs no query embedding)."""
    weights = summary.retriever.setting("fusion", "weights")
    out = {str(stage): "fusion weight 0" for stage, w in (weights or {}).items() if w == 0}
    if "dense" in out:
        out["embed"] = "dense stage skipped"
    return out
