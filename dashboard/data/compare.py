"""Two runs side by side: per-metric deltas with intervals and p-values, per-query pairs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import numpy as np
import pandas as pd

from searchtrace.dashboard.data.runs import load_run, per_query

if TYPE_CHECKING:
    from searchtrace.evals import Evaluation

__all__ = ["RunComparison", "compare_runs", "evaluation_of"]


@dataclass(frozen=True)
class RunComparison:
    """What the Compare page shows.

    Attributes:
        base, candidate: the run ids.
        metrics: one row per metric: metric, base, candidate, delta, ci_low, ci_high,
            p_t_test, p_randomization (both Holm-corrected), wins, ties, losses.
        queries: per metric, one row per paired query: query_id, category, base,
            candidate, delta, outcome (win, tie or loss).
        regressed: per metric, the most regressed queries, worst first (same columns).
        n_queries: paired queries (the union of both runs' evaluated queries).
        same_dataset: whether both runs scored the same dataset bytes.
    """

    base: str
    candidate: str
    metrics: pd.DataFrame
    queries: Mapping[str, pd.DataFrame]
    regressed: Mapping[str, pd.DataFrame]
    n_queries: int
    same_dataset: bool


def evaluation_of(frame: pd.DataFrame, metrics: list[str]) -> Evaluation:
    """An :class:`searchtrace.evals.Evaluation` from a per-query table (its evaluated queries only)."""
    from searchtrace.evals import Evaluation

    scored = frame.dropna(subset=metrics, how="all")
    return Evaluation.from_arrays(scored["query_id"].tolist(),
                                  {m: scored[m].fillna(0.0).to_numpy() for m in metrics})


def _pairs(categories: Mapping[str, str], ids: list[str], a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    from searchtrace.evals import TIE

    delta = b - a
    outcome = np.where(delta >= TIE, "win", np.where(delta <= -TIE, "loss", "tie"))
    return pd.DataFrame({"query_id": ids, "category": [categories.get(q) for q in ids], "base": a,
                         "candidate": b, "delta": delta, "outcome": outcome})


def compare_runs(home: str | Path, base_id: str, cand_id: str, *, n_regressed: int = 10,
                 n_resamples: int = 10_000, seed: int = 0) -> RunComparison:
    """Compare ``cand_id`` to ``base_id`` on the metrics both runs have (see :func:`searchtrace.evals.compare`).

    Raises:
        ValidationError, NotFoundError: an unknown run id.
    """
    from searchtrace.evals import compare  # scipy: imported when a comparison is asked for

    base_run, cand_run = load_run(home, base_id), load_run(home, cand_id)
    metrics = [m for m in base_run.metrics if m in cand_run.metrics]
    frames = [per_query(home, r, ["query_id", "category", *metrics]) for r in (base_id, cand_id)]
    evals = [evaluation_of(f, metrics) for f in frames]
    result = compare(evals[0], evals[1], metrics, n_regressed=n_regressed, n_resamples=n_resamples, seed=seed)
    categories = dict(zip(frames[0]["query_id"], frames[0]["category"])) | dict(
        zip(frames[1]["query_id"], frames[1]["category"]))
    ids = list(dict.fromkeys([*evals[0].query_ids.tolist(), *evals[1].query_ids.tolist()]))
    queries, regressed, rows = {}, {}, []
    for item in result.metrics:
        m = str(item.metric)
        sides = [dict(zip(e.query_ids.tolist(), e[m].tolist())) for e in evals]
        a, b = (np.array([s.get(q, 0.0) for q in ids]) for s in sides)
        pairs = _pairs(categories, ids, a, b)
        queries[m] = pairs
        worst = [q.query_id for q in item.most_regressed]
        regressed[m] = pairs.set_index("query_id").loc[worst].reset_index() if worst else pairs.iloc[:0]
        rows.append({"metric": m, "base": item.base_mean, "candidate": item.candidate_mean, "delta": item.delta,
                     "ci_low": item.ci.low, "ci_high": item.ci.high, "p_t_test": item.p_t_test_holm,
                     "p_randomization": item.p_randomization_holm, "wins": item.wins, "ties": item.ties,
                     "losses": item.losses})
    same = base_run.dataset.fingerprint == cand_run.dataset.fingerprint
    return RunComparison(base_id, cand_id, pd.DataFrame(rows), queries, regressed, result.n_queries, same)
