"""Does relevance mean what it says? Reliability, band precision, risk-coverage, bestScore vs nDCG."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from searchtrace.dashboard.data.runs import run_folder, skipped_stages
from searchtrace.evals import BEST_SCORE, ConfidenceReport
from searchtrace.names import Band

__all__ = ["Calibration", "calibration"]



@dataclass(frozen=True)
class Calibration:
    """A run's calibration views over the top ``k`` results of each query.

    Attributes:
        reliability: one row per non-empty equal-width bin of relevance: lower, upper,
            mean_relevance, observed (share relevant), count.
        bands: band, precision, count.
        risk_coverage: threshold (bestScore), coverage, risk (share of answered queries
            without a relevant result in the top k); ``aurc`` its area.
        best_vs_ndcg: query_id, category, bestScore, ndcg@10 (evaluated queries).
        summary: the run's confidence report (ece, brier, auroc, ...).
        skipped: stages the run skipped, with why (see :func:`dashboard.data.runs.skipped_stages`).
        rank_only: every query has the same bestScore, as when relevance falls back to ranks
            (no dense similarity to calibrate), so bestScore cannot rank queries.
    """

    reliability: pd.DataFrame
    bands: pd.DataFrame
    risk_coverage: pd.DataFrame
    aurc: float | None
    best_vs_ndcg: pd.DataFrame
    summary: ConfidenceReport
    skipped: Mapping[str, str] = field(default_factory=dict)
    rank_only: bool = False


def _reliability(relevance: np.ndarray, labels: np.ndarray, n_bins: int) -> pd.DataFrame:
    # Same bins as evals.stats.expected_calibration_error: [i/n, (i+1)/n), the last holds 1.0.
    bins = np.minimum((np.clip(relevance, 0, 1) * n_bins).astype(np.int64), n_bins - 1)
    count = np.bincount(bins, minlength=n_bins)
    seen = count > 0
    mean_rel = np.bincount(bins, weights=relevance, minlength=n_bins)[seen] / count[seen]
    observed = np.bincount(bins, weights=labels, minlength=n_bins)[seen] / count[seen]
    lower = np.flatnonzero(seen) / n_bins
    return pd.DataFrame({"lower": lower, "upper": lower + 1 / n_bins, "mean_relevance": mean_rel,
                         "observed": observed, "count": count[seen]})


def _bands(top: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for band in Band:
        labels = top.loc[top["band"] == band.value, "label"]
        rows.append({"band": band.value, "precision": float(labels.mean()) if len(labels) else None, "count": len(labels)})
    return pd.DataFrame(rows, columns=["band", "precision", "count"])


def _risk_coverage(queries: pd.DataFrame, top: pd.DataFrame) -> tuple[pd.DataFrame, float | None]:
    from searchtrace.evals import risk_coverage

    if queries.empty:
        return pd.DataFrame(columns=["threshold", "coverage", "risk"]), None
    relevant = top.groupby("query_id")["label"].max()
    correct = queries["query_id"].map(relevant).fillna(0).astype(int).to_numpy()
    curve = risk_coverage(queries[BEST_SCORE].to_numpy(dtype=float), correct)
    return pd.DataFrame({"threshold": curve.thresholds, "coverage": curve.coverage, "risk": curve.risk}), curve.aurc


def calibration(home: str | Path, run_id: str, *, k: int = 10, n_bins: int = 10) -> Calibration:
    """Calibration views of one run (the eval report's choices: top ``k`` results, grade > 0 relevant).

    Raises:
        ValidationError, NotFoundError: an unknown run, or one without results.parquet.
    """
    folder = run_folder(home, run_id)
    results = folder.results(["query_id", "rank", "relevance", "band", "label"])
    top = results[results["rank"] <= k]
    queries = folder.per_query(["query_id", "category", BEST_SCORE, "ndcg@10"])
    curve, aurc = _risk_coverage(queries, top)
    scored = queries.dropna(subset=["ndcg@10"]) if "ndcg@10" in queries else queries.iloc[:0]
    summary = folder.summary()
    best = scored[BEST_SCORE].dropna()
    return Calibration(
        reliability=_reliability(top["relevance"].to_numpy(float), top["label"].to_numpy(float), n_bins),
        bands=_bands(top), risk_coverage=curve, aurc=aurc,
        best_vs_ndcg=scored.reset_index(drop=True), summary=summary.confidence, skipped=skipped_stages(summary),
        rank_only=len(best) > 1 and best.nunique() == 1)
