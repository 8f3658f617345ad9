"""Each run against its baseline, its trend on run order, and the forest plot's rows: the numbers the Runs and
Compare pages colour by significance.

A run's baseline is what a person means by "did this run make things worse":
the run of its dataset tagged ``baseline`` (the newest such run older than it),
else the run just before it on its dataset. Significance is never recomputed
here: deltas, intervals and p-values are the rows of :func:`compare_metrics`,
which are :func:`searchtrace.evals.compare`'s own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from searchtrace.dashboard.data.compare import compare_metrics

__all__ = ["BASELINE_TAG", "BETTER", "NOT_SIGNIFICANT", "VERDICTS", "WORSE", "baselines", "forest_rows", "p_text",
           "run_deltas", "run_order", "verdict"]

BASELINE_TAG = "baseline"  # ``eval --tag baseline``: the run others on its dataset are measured against
BETTER, WORSE, NOT_SIGNIFICANT = "better", "worse", "not significant"
#: Every verdict, in the order a legend lists them.
VERDICTS = (BETTER, WORSE, NOT_SIGNIFICANT)
DELTA_COLUMNS = ["run_id", "baseline", "baseline_kind", "metric", "delta", "ci_low", "ci_high", "p", "verdict"]


def _tags(value: object) -> set[str]:
    return {t.strip() for t in str(value or "").split(",") if t.strip()}


def baselines(runs: pd.DataFrame) -> pd.DataFrame:
    """Each run's baseline, for a :func:`~searchtrace.dashboard.data.runs.list_runs` table (newest first).

    Returns:
        One row per run, in the table's order: run_id, baseline (None for a dataset's first run with no
        tagged run before it) and baseline_kind (``tagged``, ``previous`` or None).
    """
    rows: list[tuple[str, str | None, str | None]] = []
    oldest_first = runs.iloc[::-1]
    for _, group in oldest_first.groupby("dataset", sort=False):
        tagged: str | None = None
        previous: str | None = None
        for run_id, tags in zip(group["run_id"], group["tags"]):
            if tagged is not None:
                rows.append((run_id, tagged, "tagged"))
            else:
                rows.append((run_id, previous, None if previous is None else "previous"))
            if BASELINE_TAG in _tags(tags):
                tagged = run_id
            previous = run_id
    found = pd.DataFrame(rows, columns=["run_id", "baseline", "baseline_kind"]).astype(object)
    order = pd.DataFrame({"run_id": runs["run_id"]})
    out = order.merge(found, on="run_id", how="left")
    return out.astype(object).where(out.notna(), None)


def verdict(delta: float, significant: bool) -> str:
    """better, worse or not significant: the one meaning a delta's colour has on every page."""
    if not significant or delta != delta or delta == 0:
        return NOT_SIGNIFICANT
    return BETTER if delta > 0 else WORSE


def p_text(p: float | None) -> str:
    """A p-value as read at a glance: ``< 0.001`` below it (never ``0.000``), else 3 decimals; ``n/a`` when
    undefined."""
    if p is None or p != p:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def forest_rows(metrics: pd.DataFrame) -> pd.DataFrame:
    """The forest plot's rows from a comparison's metric table (``RunComparison.metrics``): metric, delta,
    ci_low, ci_high, p (randomization, Holm), p_text and verdict, in the table's order; rows whose interval
    is undefined (a metric no query scored) are left out."""
    rows = metrics.dropna(subset=["ci_low", "ci_high"])
    return pd.DataFrame({
        "metric": rows["metric"].astype(str),
        "delta": rows["delta"].astype(float),
        "ci_low": rows["ci_low"].astype(float),
        "ci_high": rows["ci_high"].astype(float),
        "p": rows["p_randomization"].astype(float),
        "p_text": [p_text(p) for p in rows["p_randomization"]],
        "verdict": [verdict(d, s) for d, s in zip(rows["delta"], rows["significant"])],
    }).reset_index(drop=True)


def run_deltas(home: str | Path, runs: pd.DataFrame, metric: str, *, n_resamples: int = 10_000, seed: int = 0,
               compared: Callable[..., pd.DataFrame] = compare_metrics) -> pd.DataFrame:
    """Each run's ``metric`` against its baseline (see :func:`baselines`), with the evals comparison's
    interval and Holm-corrected randomization p-value: run_id, baseline, baseline_kind, metric, delta,
    ci_low, ci_high, p, verdict. A run without a baseline, or a pair that does not share ``metric``, gets
    NaN numbers and no verdict. ``compared`` is :func:`compare_metrics`, or a cached copy of it: a completed
    run does not change, so a page need not test each pair again."""
    rows = []
    for pair in baselines(runs).itertuples(index=False):
        row: dict[str, object] = {"run_id": pair.run_id, "baseline": pair.baseline,
                                  "baseline_kind": pair.baseline_kind, "metric": metric, "delta": math.nan,
                                  "ci_low": math.nan, "ci_high": math.nan, "p": math.nan, "verdict": None}
        if pair.baseline is not None:
            table = compared(home, str(pair.baseline), str(pair.run_id), n_resamples=n_resamples, seed=seed)
            found = table[table["metric"] == metric]
            if not found.empty:
                one = found.iloc[0]
                row |= {"delta": one["delta"], "ci_low": one["ci_low"], "ci_high": one["ci_high"],
                        "p": one["p_randomization"], "verdict": verdict(one["delta"], bool(one["significant"]))}
        rows.append(row)
    out = pd.DataFrame(rows, columns=DELTA_COLUMNS)
    text = ["baseline", "baseline_kind", "verdict"]  # None, not NaN, where there is none
    out[text] = out[text].astype(object).where(out[text].notna(), None)
    return out


def run_order(points: pd.DataFrame) -> pd.DataFrame:
    """A trend's points (oldest first, see :func:`~searchtrace.dashboard.data.runs.trend`) with ``order``:
    1 for the dataset's oldest run, then 2, 3…, so runs seconds apart stand one step apart like any others."""
    keys = ["created_at", "run_id"] if "run_id" in points else ["created_at"]
    ordered = points.sort_values(keys, ignore_index=True, kind="stable")
    return ordered.assign(order=range(1, len(ordered) + 1))
