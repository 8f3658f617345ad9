"""The corrective loop: re-query weak searches with their retry hints, keep the better answer.

A search is weak when the retriever returned retry hints (best score below the
high threshold). Each weak query is re-run with its narrower query, its
broader query and the query plus its related terms; the answer with the
highest bestScore is kept (the retriever's own judgement, never the labels),
and the report gives the metric gain over the plain run and the latency added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from searchtrace.evals.runs import analysis
from searchtrace.evals.runs.execution.loop import RunContext, search_one
from searchtrace.evals.runs.runfolder import (
    CorrectiveOutcome,
    CorrectiveReport,
    JournalRecord,
    QueryOutcome,
    RetryAttempt,
)
from searchtrace.evals.scoring.metrics import Evaluation
from searchtrace.retriever import Query, RetryHints

__all__ = ["CHOICES", "correct", "corrective_section", "run_corrective", "variants"]

CHOICES = ("original", "narrower", "broader", "related")
"""The answers the loop can keep: the original, or a retry by one hint."""


def variants(query: str, hints: RetryHints | None) -> list[tuple[str, str]]:
    """(name, text) of each distinct retry query a hint suggests."""
    if hints is None:
        return []
    related = " ".join(hints.related_terms[:3])
    out, seen = [], {query.strip().lower()}
    for name, text in (("narrower", hints.narrower_query), ("broader", hints.broader_query),
                       ("related", f"{query} {related}" if related else "")):
        if text and text.strip().lower() not in seen:
            seen.add(text.strip().lower())
            out.append((name, text))
    return out


def correct(ctx: RunContext, outcome: QueryOutcome, query: Query) -> CorrectiveOutcome:
    """Try every variant; the record of the chosen answer."""
    tried, best = [], None
    for name, text in variants(query.text, outcome.retry_hints):
        retry = search_one(ctx, replace(query, text=text))
        tried.append(RetryAttempt(name, text, retry.best_score, retry.latency_ms["total"]))
        if not retry.error and (best is None or retry.best_score > best[1].best_score):
            best = (name, retry)
    chosen = best if best and best[1].best_score > outcome.best_score else ("original", outcome)
    return CorrectiveOutcome(corrective_of=outcome.query_id, chosen=chosen[0], ranking=chosen[1].ranking,
                             best_score=chosen[1].best_score, added_ms=round(sum(t.ms for t in tried), 3),
                             tried=tuple(tried))


def run_corrective(ctx: RunContext, progress: bool) -> None:
    """Correct every weak query not corrected yet, journaling each as it is done."""
    from tqdm import tqdm

    records = ctx.folder.records()
    done = {r.corrective_of for r in records if isinstance(r, CorrectiveOutcome)}
    by_id = {q.id: q for q in ctx.dataset.queries}
    weak = [r for r in records if isinstance(r, QueryOutcome) and r.weak and r.query_id not in done]
    for outcome in tqdm(weak, desc="corrective", unit="query", disable=not progress):
        fixed = correct(ctx, outcome, by_id[outcome.query_id])
        if ctx.traces is not None:
            ctx.traces.flush_store()
        ctx.folder.append([fixed])


def corrective_section(records: Sequence[JournalRecord], qrels: Mapping[str, Mapping[str, int]],
                       metrics: Sequence[str], base: Evaluation) -> CorrectiveReport:
    """Metric gain of the corrected run over the plain one, and the latency added."""
    fixes = {r.corrective_of: r for r in records if isinstance(r, CorrectiveOutcome)}
    plain = [r for r in records if isinstance(r, QueryOutcome)]
    corrected = [replace(o, ranking=fixes[o.query_id].ranking) if o.query_id in fixes else o for o in plain]
    ev = analysis.evaluation(corrected, qrels, metrics)
    added = [f.added_ms for f in fixes.values()]
    return CorrectiveReport(
        weak_queries=len(fixes),
        changed_answers=sum(f.chosen != "original" for f in fixes.values()),
        chosen={name: sum(f.chosen == name for f in fixes.values()) for name in CHOICES},
        metrics={str(m): round(float(ev.means[m]), 6) for m in ev.metrics},
        gain={str(m): round(float(ev.means[m] - base.means[m]), 6) for m in ev.metrics},
        added_latency_ms={"total": round(sum(added), 3),
                          "per_weak_query": round(sum(added) / len(added), 3) if added else 0.0,
                          "per_query": round(sum(added) / len(plain), 3) if plain else 0.0},
    )
