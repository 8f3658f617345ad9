"""Read a run folder back: its summary, per-query metrics as an Evaluation, its ranked results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evals.metrics import Evaluation
from retriever.errors import DataError, NotFoundError


def run_dir(path: str | Path) -> Path:
    """A run folder from its path or the path of its run.json; errors name what is missing."""
    path = Path(path)
    folder = path.parent if path.name == "run.json" else path
    if not (folder / "run.json").exists():
        raise NotFoundError(f"{folder}: not a completed run folder (no run.json)", field="run")
    return folder


def summary(folder: str | Path) -> dict:
    path = run_dir(folder) / "run.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(str(path), exc.lineno, f"invalid JSON: {exc.msg}") from None


def evaluation(folder: str | Path) -> Evaluation:
    """Per-query values of every metric in run.json, over the judged queries."""
    import pandas as pd

    folder = run_dir(folder)
    metrics = list(summary(folder)["metrics"])
    table = pd.read_parquet(folder / "per_query.parquet", columns=["query_id", *metrics])
    judged = table.dropna(subset=metrics)
    return Evaluation.from_arrays(judged["query_id"].tolist(), {m: judged[m].to_numpy(np.float64) for m in metrics})


def results(folder: str | Path):
    import pandas as pd

    return pd.read_parquet(run_dir(folder) / "results.parquet")
