"""Two runs compared without labels (:func:`searchtrace.evals.compare_overlap`), as the Compare page's tables."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from searchtrace.dashboard.data.query_context import query_text
from searchtrace.dashboard.data.runs import run_folder

if TYPE_CHECKING:
    from searchtrace.evals import OverlapComparison

__all__ = ["OverlapView", "overlap_runs"]


@dataclass(frozen=True)
class OverlapView:
    """What the Compare page shows when a run has no labels.

    Attributes:
        base, candidate: the run ids; names: the runs' names.
        ps: RBO's persistences (the first orders the most changed); k: Jaccard@k's cutoff.
        summary: one row per measure: measure, mean, and traffic-weighted when the queries came from traffic.
        queries: one row per shared query: query_id, text, rbo (the first p's extrapolated RBO), rbo_deep (the
            second p's), lower, residual (the first p's bounds), jaccard, new_in_top, base_band, candidate_band,
            latency_delta_ms, base_trace, candidate_trace, weight.
        most_changed: the queries whose ranking changed, lowest RBO first (same columns).
        counts: shared, only in base, only in candidate; bands: best band up, same, down; notes: what to know.
    """

    base: str
    candidate: str
    names: tuple[str, str]
    ps: tuple[float, ...]
    k: int
    summary: pd.DataFrame
    queries: pd.DataFrame
    most_changed: pd.DataFrame
    counts: tuple[int, int, int]
    bands: tuple[int, int, int]
    notes: tuple[str, ...]


def _summary(comparison: OverlapComparison) -> pd.DataFrame:
    """One row per measure, a column per kind of mean."""
    sides = [("mean", comparison.means()), ("traffic-weighted", comparison.weighted_means())]
    rows = {}
    for label, means in sides:
        if means is None:
            continue
        values: dict[str, float] = {}
        for r in means.rbo:
            values |= {f"RBO p={r.p:g}": r.ext, f"RBO p={r.p:g} lower bound": r.min, f"RBO p={r.p:g} residual": r.res}
        values |= {f"Jaccard@{comparison.k}": means.jaccard, f"new in top {comparison.k}": means.new_in_top,
                   "latency change (ms)": means.latency_delta_ms}
        rows[label] = values
    return pd.DataFrame(rows).rename_axis("measure").reset_index()


def overlap_runs(home: str | Path, base_id: str, cand_id: str) -> OverlapView:
    """Compare ``cand_id`` to ``base_id`` by their rankings alone.

    Raises:
        ValidationError: an unknown run id, or runs that cannot be compared; NotFoundError: a run's files missing.
    """
    from searchtrace.evals import compare_overlap, default_run_name

    folders = run_folder(home, base_id), run_folder(home, cand_id)
    summaries = [f.summary() for f in folders]
    comparison = compare_overlap(*folders)
    ids = comparison.query_ids.tolist()
    rbo = comparison.rbo
    queries = pd.DataFrame({
        "query_id": ids, "text": [query_text(summaries[0].dataset.path, q) for q in ids],
        "rbo": rbo[0, 0], "rbo_deep": rbo[1, 0] if len(comparison.ps) > 1 else rbo[0, 0],
        "lower": rbo[0, 1], "residual": rbo[0, 2], "jaccard": comparison.jaccard, "new_in_top": comparison.new_in_top,
        "base_band": comparison.band_names(0), "candidate_band": comparison.band_names(1),
        "latency_delta_ms": comparison.latency_delta_ms, "base_trace": comparison.trace_ids[0],
        "candidate_trace": comparison.trace_ids[1],
        "weight": comparison.weights if comparison.weights is not None else None})
    changed = [q.query_id for q in comparison.most_changed(len(ids))]
    bands = comparison.band_changes()
    names = (summaries[0].name or default_run_name(summaries[0]), summaries[1].name or default_run_name(summaries[1]))
    return OverlapView(
        base_id, cand_id, names, comparison.ps, comparison.k, _summary(comparison), queries,
        queries.set_index("query_id").loc[changed].reset_index() if changed else queries.iloc[:0],
        (comparison.shared, comparison.only_in_base, comparison.only_in_candidate), (bands.up, bands.same, bands.down),
        comparison.notes)
