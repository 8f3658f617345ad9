"""One query across runs, and in one run: results, the stage funnel, graph context and hints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from searchtrace.dashboard.data.documents import documents, snippet
from searchtrace.dashboard.data.gold_path import gold_paths
from searchtrace.dashboard.data.query_context import TraceContext, dataset_triples, query_text, trace_context
from searchtrace.dashboard.data.runs import list_runs, per_query_rows, run_folder
from searchtrace.evals import BEST_SCORE, NO_CONFIDENT, QueryOutcome
from searchtrace.names import FUSED_STAGES
from searchtrace.retriever import RetryHints

__all__ = ["STAGES", "QueryRun", "SideBySide", "gold_ranks_across", "query_across_runs", "query_run", "side_by_side"]

#: Retrieval stages a gold document can be found by, in funnel order.
STAGES = tuple(s.value for s in FUSED_STAGES)


@dataclass(frozen=True)
class QueryRun:
    """One query in one run.

    Attributes:
        results: rank, doc_id, title, snippet, relevance, band, grade, gold (grade > 0).
        gold: one row per gold document: doc_id, grade, one bool per stage, fused_rank,
            filtered, final_rank, lost_at.
        funnel: stage, documents (candidates the stage produced), gold (gold documents it holds),
            skipped (why the stage did not run; empty when it ran); its last stage, ``in top <k>``, names
            the cutoff the run's attribution used.
        kg: subject, relation, object, doc_id of the graph context (see :func:`query_run`).
        trace: what the run's trace recorded (None when the store lacks it).
        gold_path: each gold document's rank at every stage and the stage that lost it, in words
            (:func:`dashboard.data.gold_path.gold_paths`).
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
    retry_hints: RetryHints | None
    degraded: tuple[str, ...] = ()
    trace: TraceContext | None = None
    error: str | None = field(default=None)
    ranking: tuple[str, ...] = ()
    dataset_path: str | None = None
    gold_path: pd.DataFrame = field(default_factory=pd.DataFrame)


def query_across_runs(home: str | Path, query_id: str, metrics: tuple[str, ...] = ("ndcg@10",)) -> pd.DataFrame:
    """The query's row in every run that has it, newest first: run_id, dataset, mode, created_at,
    the ``metrics`` asked for, bestScore, noConfidentResults, bands."""
    values = [BEST_SCORE, NO_CONFIDENT, "bands"]
    runs = list_runs(home)
    rows = per_query_rows(home, runs["run_id"].tolist(), query_id, [*metrics, *values])
    info = runs[["run_id", "dataset", "mode", "created_at"]]
    return info.merge(rows, on="run_id", how="inner").reset_index(drop=True)


GOLD_RANK_COLUMNS = ("run_id", "doc_id", "title", "grade", "rank", "depth")


def gold_ranks_across(home: str | Path, query_id: str, run_ids: Sequence[str]) -> pd.DataFrame:
    """Where each gold document of the query ranked in each of ``run_ids`` (in the order given).

    One row per (run, gold document of that run's labels): ``rank`` is the document's position in the
    run's ranking (None when the run did not rank it within ``depth``, the length of the ranking it kept).
    A run without a record of the query has no rows.
    """
    rows: list[dict[str, object]] = []
    for run_id in run_ids:
        outcome = run_folder(home, run_id).query(query_id)
        if outcome is None:
            continue
        docs = documents(run_folder(home, run_id).summary().dataset.path)
        ranking = tuple(doc for doc, _ in outcome.ranking)
        for t in sorted(outcome.attribution, key=lambda t: (-t.grade, t.doc_id)):
            rows.append({"run_id": run_id, "doc_id": t.doc_id, "title": docs.get(t.doc_id, ("", ""))[0],
                         "grade": t.grade, "rank": _rank_in(ranking, t.doc_id), "depth": len(ranking)})
    frame = pd.DataFrame(rows, columns=list(GOLD_RANK_COLUMNS))
    frame["rank"] = frame["rank"].astype("Int64")
    return frame


def _gold(outcome: QueryOutcome) -> pd.DataFrame:
    rows = [{"doc_id": t.doc_id, "grade": t.grade} | {s: s in t.stages for s in STAGES}
            | {"fused_rank": t.fused_rank, "filtered": t.filtered, "final_rank": t.final_rank,
               "lost_at": t.lost_at.value} for t in outcome.attribution]
    return pd.DataFrame(rows, columns=["doc_id", "grade", *STAGES, "fused_rank", "filtered", "final_rank", "lost_at"])


def _funnel(gold: pd.DataFrame, trace: TraceContext | None, k: int) -> pd.DataFrame:
    counts = trace.candidate_counts if trace else {}
    skipped = trace.skipped if trace else {}
    rows = [{"stage": s, "documents": counts.get(s), "gold": int(gold[s].sum()), "skipped": skipped.get(s, "")}
            for s in STAGES]
    rows.append({"stage": "fused", "documents": counts.get("fuse"), "gold": int(gold["fused_rank"].notna().sum()),
                 "skipped": ""})
    kept = gold["fused_rank"].notna() & ~gold["filtered"].astype(bool)
    rows.append({"stage": "kept by filter", "documents": None, "gold": int(kept.sum()), "skipped": ""})
    rows.append({"stage": f"in top {k}", "documents": None, "gold": int((gold["lost_at"] == "found").sum()),
                 "skipped": ""})
    return pd.DataFrame(rows, columns=["stage", "documents", "gold", "skipped"])


def _results(outcome: QueryOutcome, docs: Mapping[str, tuple[str, str]]) -> pd.DataFrame:
    rows = [{"rank": i, "doc_id": r.doc_id, "title": docs.get(r.doc_id, ("", ""))[0],
             "snippet": snippet(docs.get(r.doc_id, ("", ""))[1]), "relevance": r.relevance, "band": r.band.value,
             "grade": r.grade, "gold": r.grade > 0} for i, r in enumerate(outcome.results, 1)]
    return pd.DataFrame(rows, columns=["rank", "doc_id", "title", "snippet", "relevance", "band", "grade", "gold"])


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
    summary, settings = folder.summary(), folder.settings()
    trace = trace_context(home, outcome.trace_id)
    results = _results(outcome, documents(summary.dataset.path))
    hints = outcome.retry_hints
    names = set(trace.entities if trace else ()) | set(hints.related_terms if hints else ())
    reached = set(trace.graph_ids if trace else ()) & set(results["doc_id"])
    gold = _gold(outcome)
    kg = (pd.DataFrame([(t.subject, t.relation, t.object, t.doc_id) for t in outcome.kg],
                       columns=["subject", "relation", "object", "doc_id"])
          if outcome.kg is not None else dataset_triples(summary.dataset.path, reached, names))
    return QueryRun(
        run_id=run_id, query_id=query_id,
        text=(trace.text if trace and trace.text else None) or query_text(summary.dataset.path, query_id),
        mode=summary.retriever.mode, best_score=outcome.best_score, no_confident=outcome.no_confident,
        trace_id=outcome.trace_id or None, results=results, gold=gold,
        funnel=_funnel(gold, trace, settings.attribution_k), kg=kg,
        retry_hints=hints, degraded=outcome.degraded, trace=trace, error=outcome.error,
        ranking=tuple(doc for doc, _ in outcome.ranking), dataset_path=summary.dataset.path,
        gold_path=gold_paths(outcome.attribution, trace, settings.attribution_k, settings.depth))


@dataclass(frozen=True)
class SideBySide:
    """One query in a baseline and a candidate run.

    Attributes:
        base, candidate: the query in each run (None when that run lacks it).
        gold: one row per gold document of either run: doc_id, title, grade, base_rank,
            candidate_rank (final ranks; None when not ranked), move (``14 → 1 ▲13``).
        base_results, candidate_results: each run's results with ``other_rank``, the
            document's rank in the other run's ranking (None when it did not rank it).
    """

    base: QueryRun | None
    candidate: QueryRun | None
    gold: pd.DataFrame
    base_results: pd.DataFrame
    candidate_results: pd.DataFrame


def _move(before: int | None, after: int | None) -> str:
    if before is None and after is None:
        return "not ranked in either"
    if before is None:
        return f"new at {after}"
    if after is None:
        return f"{before} → not ranked ▼"
    if before == after:
        return f"{before} (same)"
    arrow = "▲" if after < before else "▼"
    return f"{before} → {after} {arrow}{abs(before - after)}"


def _rank_in(ranking: tuple[str, ...], doc_id: str) -> int | None:
    return ranking.index(doc_id) + 1 if doc_id in ranking else None


def _gold_moves(base: QueryRun | None, cand: QueryRun | None) -> pd.DataFrame:
    grades: dict[str, int] = {}
    for view in (base, cand):
        if view is not None:
            grades |= dict(zip(view.gold["doc_id"], view.gold["grade"].astype(int)))
    either = cand or base
    docs = documents(either.dataset_path if either else None)
    rows = []
    for doc_id, grade in sorted(grades.items(), key=lambda x: (-x[1], x[0])):
        before = _rank_in(base.ranking, doc_id) if base else None
        after = _rank_in(cand.ranking, doc_id) if cand else None
        rows.append({"doc_id": doc_id, "title": docs.get(doc_id, ("", ""))[0], "grade": grade,
                     "base_rank": before, "candidate_rank": after, "move": _move(before, after)})
    frame = pd.DataFrame(rows, columns=["doc_id", "title", "grade", "base_rank", "candidate_rank", "move"])
    for column in ("base_rank", "candidate_rank"):
        frame[column] = frame[column].astype("Int64")
    return frame


def _other_rank(view: QueryRun | None, other: QueryRun | None) -> pd.DataFrame:
    if view is None:
        return pd.DataFrame()
    ranks = [_rank_in(other.ranking, d) if other else None for d in view.results["doc_id"]]
    return view.results.assign(other_rank=pd.array(ranks, dtype="Int64"))


def side_by_side(home: str | Path, base_id: str, cand_id: str, query_id: str) -> SideBySide:
    """The query in two runs, with where each gold document moved.

    Raises:
        ValidationError, NotFoundError: an unknown run id.
    """
    base, cand = query_run(home, base_id, query_id), query_run(home, cand_id, query_id)
    return SideBySide(base, cand, _gold_moves(base, cand), _other_rank(base, cand), _other_rank(cand, base))
