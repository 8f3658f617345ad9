"""The corrective loop: re-query weak searches with their retry hints, keep the better answer.

A search is weak when the retriever returned retry hints (best score below the
high threshold). Each weak query is re-run with its narrower query, its
broader query and the query plus its related terms; the answer with the
highest bestScore is kept (the retriever's own judgement, never the labels),
and the report gives the metric gain over the plain run and the latency added.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

from evals import report
from evals.journal import Journal
from evals.metrics import Evaluation
from evals.runner import RunContext, search_record


def variants(query: str, hints: Mapping) -> list[tuple[str, str]]:
    """(name, text) of each distinct retry query a hint suggests."""
    related = " ".join(hints.get("relatedTerms", [])[:3])
    out, seen = [], {query.strip().lower()}
    for name, text in (("narrower", hints.get("narrowerQuery", "")), ("broader", hints.get("broaderQuery", "")),
                       ("related", f"{query} {related}" if related else "")):
        if text and text.strip().lower() not in seen:
            seen.add(text.strip().lower())
            out.append((name, text))
    return out


def correct(ctx: RunContext, record: dict, query) -> dict:
    """Try every variant; the journal record of the chosen answer."""
    tried, best = [], None
    for name, text in variants(query.text, record["retryHints"]):
        rec = search_record(ctx, replace(query, text=text), None)
        tried.append({"variant": name, "text": text, "bestScore": rec["bestScore"],
                      "ms": rec["latency_ms"]["total"]})
        if not rec.get("error") and (best is None or rec["bestScore"] > best[1]["bestScore"]):
            best = (name, rec)
    chosen = best if best and best[1]["bestScore"] > record["bestScore"] else ("original", record)
    return {"corrective_of": record["query_id"], "chosen": chosen[0], "ranking": chosen[1]["ranking"],
            "bestScore": chosen[1]["bestScore"], "added_ms": round(sum(t["ms"] for t in tried), 3), "tried": tried}


def run_corrective(ctx: RunContext, journal: Journal, progress: bool) -> None:
    from tqdm import tqdm

    records = journal.read()
    done = {r["corrective_of"] for r in records if r.get("corrective_of")}
    by_id = {q.id: q for q in ctx.dataset.queries}
    weak = [r for r in records if not r.get("corrective_of") and r.get("weak") and r["query_id"] not in done]
    for r in tqdm(weak, desc="corrective", unit="query", disable=not progress):
        fixed = correct(ctx, r, by_id[r["query_id"]])
        ctx.flush()
        journal.append([fixed])


def corrective_section(records: Sequence[dict], qrels, metrics: Sequence[str], base: Evaluation) -> dict:
    """Metric gain of the corrected run over the plain one, and the latency added."""
    fixes = {r["corrective_of"]: r for r in records if r.get("corrective_of")}
    plain = [r for r in records if not r.get("corrective_of")]
    corrected = [r | {"ranking": fixes[r["query_id"]]["ranking"]} if r["query_id"] in fixes else r for r in plain]
    ev = report.evaluation(corrected, qrels, metrics)
    added = [f["added_ms"] for f in fixes.values()]
    return {
        "weak_queries": len(fixes),
        "changed_answers": sum(f["chosen"] != "original" for f in fixes.values()),
        "chosen": {name: sum(f["chosen"] == name for f in fixes.values())
                   for name in ("original", "narrower", "broader", "related")},
        "metrics": {str(m): round(float(ev.means[m]), 6) for m in ev.metrics},
        "gain": {str(m): round(float(ev.means[m] - base.means[m]), 6) for m in ev.metrics},
        "added_latency_ms": {"total": round(sum(added), 3),
                             "per_weak_query": round(sum(added) / len(added), 3) if added else 0.0,
                             "per_query": round(sum(added) / len(plain), 3) if plain else 0.0},
    }
