"""One query across runs, and in one run: results, the stage funnel, graph context and hints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from searchtrace.dashboard.data.query_context import TraceContext, dataset_triples, query_text, trace_context
from searchtrace.dashboard.data.runs import list_runs, per_query_rows, run_folder
from searchtrace.evals import QueryOutcome
from searchtrace.names import FUSED_STAGES

__all__ = ["QueryRun", "STAGES", "query_across_runs", "query_run"]

#: Retrieval stages a gold document can be found by, in funnel order.
STAGES = tuple(s.value for s in FUSED_STAGES)


@dataclass(frozen=True)
class QueryRun:
    """One query in one run.

    Attributes:
        results: rank, doc_id, relevance, band, grade, gold (grade > 0).
        gold: one row per gold document: doc_id, grade, one bool per stage, fused_rank,
            filtered, final_rank, lost_at.
        funnel: stage, documents (candidates the stage produced), gold (gold documents it holds).
        kg: subject, relation, object, doc_id of the graph context (see :func:`query_run`).
        trace: what the run's trace recorded (None when the store lacks it).
    """

    run_id: str
    query_id: str
    text: str | None
    mode: str | None
    best_score: float
    no_confident: bool
    trace_id: str | None
    results: pd.DataFrame
    gold: pd.DataFrame
    funnel: pd.DataFrame
    kg: pd.DataFrame
    retry_hints: Mapping[str, Any] | None
    degraded: tuple[str, ...] = ()
    trace: TraceContext | None = None
    error: str | None = field(default=None)


def query_across_runs(home: str | Path, query_id: str, metrics: tuple[str, ...] = ("ndcg@10",)) -> pd.DataFrame:
    """The query's row in every run that has it, newest first: run_id, dataset, mode, created_at,
    the ``metrics`` asked for, bestScore, noConfidentResults, bands."""
    values = ["bestScore", "noConfidentResults", "bands"]
    runs = list_runs(home)
    rows = per_query_rows(home, runs["run_id"].tolist(), query_id, [*metrics, *values])
    info = runs[["run_id", "dataset", "mode", "created_at"]]
    return info.merge(rows, on="run_id", how="inner").reset_index(drop=True)


def _gold(outcome: QueryOutcome) -> pd.DataFrame:
    rows = [{"doc_id": t.doc_id, "grade": t.grade} | {s: s in t.stages for s in STAGES}
            | {"fused_rank": t.fused_rank, "filtered": t.filtered, "final_rank": t.final_rank,
               "lost_at": t.lost_at.value} for t in outcome.attribution]
    return pd.DataFrame(rows, columns=["doc_id", "grade", *STAGES, "fused_rank", "filtered", "final_rank", "lost_at"])


def _funnel(gold: pd.DataFrame, trace: TraceContext | None) -> pd.DataFrame:
    counts = trace.candidate_counts if trace else {}
    rows = [{"stage": s, "documents": counts.get(s), "gold": int(gold[s].sum())} for s in STAGES]
    rows.append({"stage": "fused", "documents": counts.get("fuse"), "gold": int(gold["fused_rank"].notna().sum())})
    kept = gold["fused_rank"].notna() & ~gold["filtered"].astype(bool)
    rows.append({"stage": "kept by filter", "documents": None, "gold": int(kept.sum())})
    rows.append({"stage": "in top k", "documents": None, "gold": int((gold["lost_at"] == "found").sum())})
    return pd.DataFrame(rows, columns=["stage", "documents", "gold"])


def _results(outcome: QueryOutcome) -> pd.DataFrame:
    rows = [{"rank": i, "doc_id": r.doc_id, "relevance": r.relevance, "band": r.band.value,
             "grade": r.grade, "gold": r.grade > 0} for i, r in enumerate(outcome.results, 1)]
    return pd.DataFrame(rows, columns=["rank", "doc_id", "relevance", "band", "grade", "gold"])


def query_run(home: str | Path, run_id: str, query_id: str) -> QueryRun | None:
    """The query in one run, or None when the run has no record of it.

    ``kg`` is the response's ``kg`` as the run journaled it; for runs journaled
    before that was recorded, the dataset's triples of the result documents the
    graph stage reached that touch a detected entity or related term.
    """
    folder = run_folder(home, run_id)
    outcome = folder.query(query_id)
    if outcome is None:
        return None
    summary = folder.summary()
    trace = trace_context(home, outcome.trace_id)
    results = _results(outcome)
    hints = outcome.retry_hints
    names = set(trace.entities if trace else ()) | set((hints or {}).get("relatedTerms", []))
    reached = set(trace.graph_ids if trace else ()) & set(results["doc_id"])
    gold = _gold(outcome)
    kg = (pd.DataFrame(list(outcome.kg), columns=["subject", "relation", "object", "doc_id"])
          if outcome.kg is not None else dataset_triples(summary.dataset.path, reached, names))
    return QueryRun(
        run_id=run_id, query_id=query_id,
        text=(trace.text if trace and trace.text else None) or query_text(summary.dataset.path, query_id),
        mode=summary.retriever.mode, best_score=outcome.best_score, no_confident=outcome.no_confident,
        trace_id=outcome.trace_id or None, results=results, gold=gold, funnel=_funnel(gold, trace), kg=kg,
        retry_hints=hints, degraded=outcome.degraded, trace=trace, error=outcome.error)
