"""Two runs side by side: per-metric deltas with intervals and p-values, per-query pairs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import numpy as np
import pandas as pd

from searchtrace.dashboard.data.query_context import query_text
from searchtrace.dashboard.data.runs import load_run, per_query, run_folder

if TYPE_CHECKING:
    from searchtrace.evals import Comparison, Evaluation, MetricComparison, RunSummary

__all__ = ["SIGNIFICANCE", "RunComparison", "compare_metrics", "compare_runs", "evaluation_of", "gold_ranks"]

SIGNIFICANCE = 0.05  # a delta whose Holm-corrected randomization p-value is below this is marked significant


@dataclass(frozen=True)
class RunComparison:
    """What the Compare page shows.

    Attributes:
        base, candidate: the run ids.
        metrics: one row per metric: metric, base, candidate, delta, ci_low, ci_high,
            p_t_test, p_randomization (both Holm-corrected), significant, wins, ties, losses.
        queries: per metric, one row per paired query: query_id, text, category, base,
            candidate, delta, outcome (win, tie or loss), base_rank and candidate_rank (the
            best final rank of a gold document in each run; None when none was ranked),
            base_gold_ranks and candidate_gold_ranks (every gold document's rank, as text).
        regressed: per metric, the most regressed queries, worst first (same columns).
        n_queries: paired queries (the union of both runs' evaluated queries).
        same_dataset: whether both runs scored the same dataset bytes.
        settings: (setting, base value, candidate value) of each setting that differs.
        categories: per metric and query category: metric, category, queries, base,
            candidate, delta, wins, losses.
        names: the two runs' names.
    """

    base: str
    candidate: str
    metrics: pd.DataFrame
    queries: Mapping[str, pd.DataFrame]
    regressed: Mapping[str, pd.DataFrame]
    n_queries: int
    same_dataset: bool
    settings: tuple[tuple[str, str, str], ...] = ()
    categories: pd.DataFrame = field(default_factory=pd.DataFrame)
    names: tuple[str, str] = ("", "")


def evaluation_of(frame: pd.DataFrame, metrics: list[str]) -> Evaluation:
    """An :class:`searchtrace.evals.Evaluation` from a per-query table (its evaluated queries only)."""
    from searchtrace.evals import Evaluation

    scored = frame.dropna(subset=metrics, how="all")
    return Evaluation.from_arrays(scored["query_id"].tolist(),
                                  {m: scored[m].fillna(0.0).to_numpy() for m in metrics})


def gold_ranks(home: str | Path, run_id: str) -> dict[str, tuple[int | None, str]]:
    """Each query's best final rank of a gold document in a run (None when none was ranked), and the
    final ranks of all its gold documents, highest grade first, as text (``1, 6, -``)."""
    out: dict[str, tuple[int | None, str]] = {}
    for outcome in run_folder(home, run_id).outcomes():
        gold = sorted((t for t in outcome.attribution if t.grade > 0), key=lambda t: (-t.grade, t.doc_id))
        ranks = [t.final_rank for t in gold if t.final_rank is not None]
        out[outcome.query_id] = (min(ranks) if ranks else None,
                                 ", ".join("-" if t.final_rank is None else str(t.final_rank) for t in gold))
    return out


def _pairs(categories: Mapping[str, str], ids: list[str], a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    from searchtrace.evals import TIE

    delta = b - a
    outcome = np.where(delta >= TIE, "win", np.where(delta <= -TIE, "loss", "tie"))
    return pd.DataFrame({"query_id": ids, "category": [categories.get(q) for q in ids], "base": a,
                         "candidate": b, "delta": delta, "outcome": outcome})


def _by_category(metric: str, pairs: pd.DataFrame) -> pd.DataFrame:
    grouped = pairs.assign(category=pairs["category"].fillna("-")).groupby("category", sort=True)
    out = grouped.agg(queries=("query_id", "size"), base=("base", "mean"), candidate=("candidate", "mean"),
                      delta=("delta", "mean"), wins=("outcome", lambda o: int((o == "win").sum())),
                      losses=("outcome", lambda o: int((o == "loss").sum())))
    return out.reset_index().assign(metric=metric)[["metric", "category", "queries", "base", "candidate", "delta",
                                                     "wins", "losses"]]


def _with_context(pairs: pd.DataFrame, texts: Mapping[str, str | None],
                  ranks: tuple[Mapping[str, tuple[int | None, str]], ...]) -> pd.DataFrame:
    out = pairs.copy()
    out.insert(1, "text", [texts.get(q) for q in out["query_id"]])
    for side, side_ranks in zip(("base", "candidate"), ranks):
        got = [side_ranks.get(q, (None, "")) for q in out["query_id"]]
        out[f"{side}_rank"] = pd.array([r for r, _ in got], dtype="Int64")
        out[f"{side}_gold_ranks"] = [text for _, text in got]
    return out


def _metric_row(item: MetricComparison) -> dict[str, object]:
    """One row of the metric table: the evals comparison's own numbers, renamed for the page."""
    return {"metric": str(item.metric), "base": item.base_mean, "candidate": item.candidate_mean,
            "delta": item.delta, "ci_low": item.ci.low, "ci_high": item.ci.high, "p_t_test": item.p_t_test_holm,
            "p_randomization": item.p_randomization_holm,
            "significant": bool(item.p_randomization_holm < SIGNIFICANCE), "wins": item.wins,
            "ties": item.ties, "losses": item.losses}


def _compared(home: str | Path, base_id: str, cand_id: str, n_regressed: int, n_resamples: int,
              seed: int) -> tuple[RunSummary, RunSummary, list[pd.DataFrame], list[Evaluation], Comparison]:
    from searchtrace.evals import compare, is_coverage  # scipy: imported when a comparison is asked for

    base_run, cand_run = load_run(home, base_id), load_run(home, cand_id)
    metrics = [m for m in base_run.metrics if m in cand_run.metrics and not is_coverage(m)]
    frames = [per_query(home, r, ["query_id", "category", *metrics]) for r in (base_id, cand_id)]
    evals = [evaluation_of(f, metrics) for f in frames]
    result = compare(evals[0], evals[1], metrics, n_regressed=n_regressed, n_resamples=n_resamples, seed=seed)
    return base_run, cand_run, frames, evals, result


def compare_metrics(home: str | Path, base_id: str, cand_id: str, *, n_resamples: int = 10_000,
                    seed: int = 0) -> pd.DataFrame:
    """The metric table of :func:`compare_runs` alone (``RunComparison.metrics``, the same numbers for the
    same seed), without the per-query context: what the Runs page needs for every run and its baseline.

    Raises:
        ValidationError, NotFoundError: an unknown run id.
    """
    result = _compared(home, base_id, cand_id, 0, n_resamples, seed)[-1]
    return pd.DataFrame([_metric_row(item) for item in result.metrics])


def compare_runs(home: str | Path, base_id: str, cand_id: str, *, n_regressed: int = 10,
                 n_resamples: int = 10_000, seed: int = 0) -> RunComparison:
    """Compare ``cand_id`` to ``base_id`` on the metrics both runs have (see :func:`searchtrace.evals.compare`).

    Raises:
        ValidationError, NotFoundError: an unknown run id.
    """
    from searchtrace.evals import default_run_name, run_settings, settings_diff

    base_run, cand_run, frames, evals, result = _compared(home, base_id, cand_id, n_regressed, n_resamples, seed)
    categories = dict(zip(frames[0]["query_id"], frames[0]["category"])) | dict(
        zip(frames[1]["query_id"], frames[1]["category"]))
    ids = list(dict.fromkeys([*evals[0].query_ids.tolist(), *evals[1].query_ids.tolist()]))
    texts = {q: query_text(base_run.dataset.path, q) or query_text(cand_run.dataset.path, q) for q in ids}
    ranks = (gold_ranks(home, base_id), gold_ranks(home, cand_id))
    queries, regressed, rows, per_category = {}, {}, [], []
    for item in result.metrics:
        m = str(item.metric)
        sides = [dict(zip(e.query_ids.tolist(), e[m].tolist())) for e in evals]
        a, b = (np.array([s.get(q, 0.0) for q in ids]) for s in sides)
        pairs = _with_context(_pairs(categories, ids, a, b), texts, ranks)
        queries[m] = pairs
        per_category.append(_by_category(m, pairs))
        worst = [q.query_id for q in item.most_regressed]
        regressed[m] = pairs.set_index("query_id").loc[worst].reset_index() if worst else pairs.iloc[:0]
        rows.append(_metric_row(item))
    same = base_run.dataset.fingerprint == cand_run.dataset.fingerprint
    diff = tuple(settings_diff(run_settings(base_run), run_settings(cand_run)))
    names = (base_run.name or default_run_name(base_run), cand_run.name or default_run_name(cand_run))
    return RunComparison(base_id, cand_id, pd.DataFrame(rows), queries, regressed, result.n_queries, same,
                         diff, pd.concat(per_category, ignore_index=True), names)
