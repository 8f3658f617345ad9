"""One query across runs, and in one run: results, the stage funnel, graph context and hints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from dashboard.data.journal import journal_record
from dashboard.data.query_context import TraceContext, dataset_triples, query_text, trace_context
from dashboard.data.runs import list_runs, load_run, per_query_rows

__all__ = ["QueryRun", "STAGES", "query_across_runs", "query_run"]

#: Retrieval stages a gold document can be found by, in funnel order.
STAGES = ("dense", "keyword", "graph")


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


def _gold(record: Mapping[str, Any]) -> pd.DataFrame:
    rows = [{"doc_id": t["doc_id"], "grade": t["grade"]} | {s: s in t["stages"] for s in STAGES}
            | {"fused_rank": t["fused_rank"], "filtered": t["filtered"], "final_rank": t["final_rank"],
               "lost_at": t["lost_at"]} for t in record.get("attribution", [])]
    return pd.DataFrame(rows, columns=["doc_id", "grade", *STAGES, "fused_rank", "filtered", "final_rank", "lost_at"])


def _funnel(gold: pd.DataFrame, trace: TraceContext | None) -> pd.DataFrame:
    counts = trace.candidate_counts if trace else {}
    rows = [{"stage": s, "documents": counts.get(s), "gold": int(gold[s].sum())} for s in STAGES]
    rows.append({"stage": "fused", "documents": counts.get("fuse"), "gold": int(gold["fused_rank"].notna().sum())})
    kept = gold["fused_rank"].notna() & ~gold["filtered"].astype(bool)
    rows.append({"stage": "kept by filter", "documents": None, "gold": int(kept.sum())})
    rows.append({"stage": "in top k", "documents": None, "gold": int((gold["lost_at"] == "found").sum())})
    return pd.DataFrame(rows, columns=["stage", "documents", "gold"])


def _results(record: Mapping[str, Any]) -> pd.DataFrame:
    rows = [{"rank": i, "doc_id": r["doc_id"], "relevance": r["relevance"], "band": r["band"],
             "grade": r["grade"], "gold": r["grade"] > 0} for i, r in enumerate(record.get("results", []), 1)]
    return pd.DataFrame(rows, columns=["rank", "doc_id", "relevance", "band", "grade", "gold"])


def query_run(home: str | Path, run_id: str, query_id: str) -> QueryRun | None:
    """The query in one run, or None when the run has no record of it.

    ``kg`` is the response's ``kg`` as the run journaled it; for runs journaled
    before that was recorded, the dataset's triples of the result documents the
    graph stage reached that touch a detected entity or related term.
    """
    record = journal_record(home, run_id, query_id)
    if record is None:
        return None
    summary = load_run(home, run_id)
    trace = trace_context(home, record.get("trace_id") or "")
    results = _results(record)
    hints = record.get("retryHints")
    names = set(trace.entities if trace else ()) | set((hints or {}).get("relatedTerms", []))
    reached = set(trace.graph_ids if trace else ()) & set(results["doc_id"])
    dataset_path = (summary.get("dataset") or {}).get("path")
    gold = _gold(record)
    return QueryRun(
        run_id=run_id, query_id=query_id,
        text=(trace.text if trace and trace.text else None) or query_text(dataset_path, query_id),
        mode=(summary.get("retriever") or {}).get("mode"),
        best_score=float(record.get("bestScore", 0.0)), no_confident=bool(record.get("noConfidentResults")),
        trace_id=record.get("trace_id") or None, results=results, gold=gold, funnel=_funnel(gold, trace),
        kg=(pd.DataFrame(record["kg"], columns=["subject", "relation", "object", "doc_id"]) if "kg" in record
            else dataset_triples(dataset_path, reached, names)), retry_hints=hints,
        degraded=tuple(record.get("degraded") or ()), trace=trace, error=record.get("error"))
