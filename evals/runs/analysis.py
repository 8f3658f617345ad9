"""A run's journal turned into its scores and the analysis sections of ``run.json``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, repeat

import numpy as np

from searchtrace.evals.runs.runfolder import (
    Abstention,
    Attribution,
    BandPrecision,
    ConfidenceReport,
    Percentiles,
    QueryOutcome,
)
from searchtrace.evals.scoring import stats
from searchtrace.evals.scoring.attribution import summarize
from searchtrace.evals.scoring.latency import percentiles
from searchtrace.evals.scoring.metrics import Evaluation, QueryRules, coverage_metrics, evaluate
from searchtrace.evals.scoring.rankings import Qrels, Run
from searchtrace.names import Band, Stage

__all__ = ["abstention_section", "attribution_section", "band_precision", "confidence_section", "evaluation",
           "latency_section", "run_of"]


def run_of(outcomes: Sequence[QueryOutcome]) -> Run:
    """The ranking of every query as a :class:`Run`."""
    rows = list(chain.from_iterable(o.ranking for o in outcomes))
    queries = chain.from_iterable(repeat(o.query_id, len(o.ranking)) for o in outcomes)
    return Run.from_arrays(queries, [r[0] for r in rows], [r[1] for r in rows])


def evaluation(outcomes: Sequence[QueryOutcome], qrels: Mapping[str, Mapping[str, int]],
               metrics: Sequence[str], rules: QueryRules | None = None, run: Run | None = None) -> Evaluation:
    """The metrics of the outcomes' rankings over the queries with judgments, and Judged@k for their cutoffs
    (``run``: :func:`run_of` the outcomes, when the caller has it already).

    A query whose search failed is left out (its qrels too): it has no ranking to score, and scoring it as an
    empty one would call a failing target a bad retriever. The metrics are over the queries that answered.
    """
    failed = {o.query_id for o in outcomes if o.error}
    judged = {q: docs for q, docs in qrels.items() if docs and q not in failed}
    return evaluate(Qrels.from_dict(judged), run_of(outcomes) if run is None else run,
                    [*metrics, *coverage_metrics(metrics)], rules)


def band_precision(bands: Sequence[Band], labels: Sequence[int]) -> tuple[dict[Band, BandPrecision], bool]:
    """Share of relevant results per band, with counts; and whether high > medium > low holds."""
    out = {}
    b = np.asarray([x.value for x in bands])
    y = np.asarray(labels, dtype=float)
    for band in Band:
        mask = b == band.value
        out[band] = BandPrecision(float(y[mask].mean()) if mask.any() else None, int(mask.sum()))
    present = [p.precision for p in out.values() if p.precision is not None]
    return out, all(a > c for a, c in zip(present, present[1:]))


def _finite(value: float | None) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


def confidence_section(outcomes: Sequence[QueryOutcome], ev: Evaluation, k: int = 10) -> ConfidenceReport:
    """How well relevance, bands and bestScore say what they mean (over the top ``k`` results)."""
    top = [res for o in outcomes for res in o.results[:k]]
    rel = np.array([res.relevance for res in top])
    labels = np.array([int(res.grade > 0) for res in top])
    ndcg = dict(zip(ev.query_ids, ev["ndcg@10"])) if "ndcg@10" in {str(m) for m in ev.metrics} else {}
    best = np.array([o.best_score for o in outcomes])
    has_relevant = np.array([int(any(res.grade > 0 for res in o.results[:k])) for o in outcomes])
    answered = [o for o in outcomes if o.query_id in ndcg]
    precision, ordered = band_precision([res.band for res in top], labels.tolist())
    return ConfidenceReport(
        results=len(top), band_precision=precision, ordered=ordered,
        ece=_finite(stats.expected_calibration_error(rel, labels)) if len(top) else None,
        brier=_finite(stats.brier_score(rel, labels)) if len(top) else None,
        auroc=_finite(stats.auroc(rel, labels)) if len(top) else None,
        best_score_auroc_no_relevant=_finite(stats.auroc(-best, 1 - has_relevant)) if len(outcomes) else None,
        best_score_kendall_tau_ndcg10=(_finite(stats.kendall_tau([o.best_score for o in answered],
                                                                 [ndcg[o.query_id] for o in answered]))
                                       if len(answered) > 1 else None),
    )


def abstention_section(outcomes: Sequence[QueryOutcome], qrels: Mapping[str, Mapping[str, int]]) -> Abstention | None:
    """Precision and recall of noConfidentResults at spotting unanswerable queries."""
    unanswerable = {o.query_id for o in outcomes
                    if o.category == "unanswerable" or not any(g > 0 for g in qrels.get(o.query_id, {}).values())}
    if not unanswerable:
        return None
    flagged = {o.query_id for o in outcomes if o.no_confident}
    hit = len(flagged & unanswerable)
    return Abstention(unanswerable=len(unanswerable), flagged=len(flagged),
                      precision=hit / len(flagged) if flagged else None, recall=hit / len(unanswerable))


def attribution_section(outcomes: Sequence[QueryOutcome]) -> Attribution:
    """Candidate recall per retrieval stage and where gold documents were lost."""
    traces = [t for o in outcomes for t in o.attribution]
    stages = sorted({s for t in traces for s in t.stages} | {Stage.DENSE.value, Stage.KEYWORD.value})
    return Attribution(**summarize(traces, stages))


def latency_section(outcomes: Sequence[QueryOutcome]) -> dict[str, Percentiles]:
    """Per-stage latency percentiles over the queries that did not fail."""
    table = percentiles(o.latency_ms for o in outcomes if not o.error)
    return {stage: Percentiles(p["p50"], p["p95"], p["p99"], int(p["n"])) for stage, p in table.items()}
