"""Turn a run's journal into its files and aggregate sections.

``per_query.parquet``: one row per query (id, category, every metric,
bestScore, bands, noConfidentResults, per-stage latency). ``results.parquet``:
the top ranked results of each query with relevance, band, grade and
relevance-model features (what ``searchtrace calibrate`` fits on).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from evals import stats
from evals.attribution import GoldTrace, LostAt, summarize
from evals.latency import percentiles
from evals.metrics import Evaluation, evaluate
from evals.runs import Qrels, Run
from retriever.confidence import FEATURES

BANDS = ("high", "medium", "low")


def run_of(records: Sequence[dict]) -> Run:
    q, d, s = [], [], []
    for r in records:
        for doc, score in r["ranking"]:
            q.append(r["query_id"])
            d.append(doc)
            s.append(score)
    return Run.from_arrays(q, d, s)


def evaluation(records: Sequence[dict], qrels: Mapping[str, Mapping[str, int]], metrics: Sequence[str]) -> Evaluation:
    judged = {q: docs for q, docs in qrels.items() if docs}
    return evaluate(Qrels.from_dict(judged), run_of(records), list(metrics))


def per_query_table(records: Sequence[dict], ev: Evaluation):
    import pandas as pd

    values = {m: dict(zip(ev.query_ids, ev[m])) for m in ev.metrics}
    stages = sorted({s for r in records for s in r["latency_ms"]})
    rows = []
    for r in records:
        row = {"query_id": r["query_id"], "category": r["category"]}
        row |= {str(m): values[m].get(r["query_id"], np.nan) for m in ev.metrics}
        row |= {"bestScore": r["bestScore"], "bands": ",".join(r["bands"]),
                "noConfidentResults": r["noConfidentResults"], "error": r.get("error")}
        row |= {f"latency_{s}_ms": r["latency_ms"].get(s, np.nan) for s in stages}
        rows.append(row)
    return pd.DataFrame(rows)


def results_table(records: Sequence[dict]):
    import pandas as pd

    rows = []
    for r in records:
        for rank, res in enumerate(r["results"], 1):
            rows.append({"query_id": r["query_id"], "category": r["category"], "rank": rank,
                         "doc_id": res["doc_id"], "relevance": res["relevance"], "band": res["band"],
                         "grade": res["grade"], "label": int(res["grade"] > 0)}
                        | {f"f_{name}": res["features"][i] for i, name in enumerate(FEATURES)})
    columns = ["query_id", "category", "rank", "doc_id", "relevance", "band", "grade", "label",
               *[f"f_{n}" for n in FEATURES]]
    return pd.DataFrame(rows, columns=columns)


def band_precision(bands: Sequence[str], labels: Sequence[int]) -> dict:
    """Share of relevant results per band, with counts; ``ordered`` when high > medium > low holds."""
    out = {}
    b = np.asarray(bands)
    y = np.asarray(labels, dtype=float)
    for band in BANDS:
        mask = b == band
        out[band] = {"precision": float(y[mask].mean()) if mask.any() else None, "count": int(mask.sum())}
    present = [out[band]["precision"] for band in BANDS if out[band]["precision"] is not None]
    out["ordered"] = all(a > c for a, c in zip(present, present[1:]))
    return out


def confidence_section(records: Sequence[dict], ev: Evaluation, k: int = 10) -> dict:
    """How well relevance, bands and bestScore say what they mean."""
    top = [res for r in records for res in r["results"][:k]]
    rel = np.array([res["relevance"] for res in top])
    labels = np.array([int(res["grade"] > 0) for res in top])
    ndcg = dict(zip(ev.query_ids, ev["ndcg@10"])) if "ndcg@10" in {str(m) for m in ev.metrics} else {}
    best = np.array([r["bestScore"] for r in records])
    has_relevant = np.array([int(any(res["grade"] > 0 for res in r["results"][:k])) for r in records])
    answered = [r for r in records if r["query_id"] in ndcg]
    section = {
        "results": len(top),
        "band_precision": band_precision([res["band"] for res in top], labels),
        "ece": stats.expected_calibration_error(rel, labels) if len(top) else None,
        "brier": stats.brier_score(rel, labels) if len(top) else None,
        "auroc": stats.auroc(rel, labels) if len(top) else None,
        "best_score_auroc_no_relevant": stats.auroc(-best, 1 - has_relevant) if len(records) else None,
        "best_score_kendall_tau_ndcg10": (stats.kendall_tau([r["bestScore"] for r in answered],
                                                            [ndcg[r["query_id"]] for r in answered])
                                          if len(answered) > 1 else None),
    }
    return {k2: (None if isinstance(v, float) and np.isnan(v) else v) for k2, v in section.items()}


def abstention_section(records: Sequence[dict], qrels: Mapping[str, Mapping[str, int]]) -> dict | None:
    """Precision and recall of noConfidentResults at spotting unanswerable queries."""
    unanswerable = {r["query_id"] for r in records
                    if r["category"] == "unanswerable" or not any(g > 0 for g in qrels.get(r["query_id"], {}).values())}
    if not unanswerable:
        return None
    flagged = {r["query_id"] for r in records if r["noConfidentResults"]}
    hit = len(flagged & unanswerable)
    return {"unanswerable": len(unanswerable), "flagged": len(flagged),
            "precision": hit / len(flagged) if flagged else None, "recall": hit / len(unanswerable)}


def attribution_section(records: Sequence[dict]) -> dict:
    traces = [GoldTrace(**(t | {"stages": tuple(t["stages"]), "lost_at": LostAt(t["lost_at"])}))
              for r in records for t in r["attribution"]]
    stages = sorted({s for t in traces for s in t.stages} | {"dense", "keyword"})
    return summarize(traces, stages)


def latency_section(records: Sequence[dict]) -> dict:
    return percentiles(r["latency_ms"] for r in records if not r.get("error"))
