"""Relevance that agrees with the order shown: the options measured (issue 24, part 1).

Usage:
    python benchmarks/bench_shown_order.py --home HOME [--shared ../shared/datasets]

Runs the eval (in process, the default settings but ``confidence.order``) on the sample, SciFact
test (fast) and MuSiQue dev (graph), once per option:

* ``fused``: the fused order kept; each result shows the running minimum of relevance down it;
* ``relevance``: results ordered by relevance itself.

and, from the ``fused`` runs' stored features, the relevance as shown before (the fused order with
each result's own relevance, not monotone). Prints JSON per dataset and option: nDCG@10, and over
the top 10 results of every query ECE, AUROC and the precision of each band (share relevant), with
the share of shown lists that were not monotone.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def _confidence(results: list[Any], relevance: np.ndarray, config: Any) -> dict[str, Any]:
    from searchtrace.evals.runs.analysis import band_precision
    from searchtrace.evals.scoring import stats
    from searchtrace.retriever.search.confidence import bands

    labels = np.array([int(r.grade > 0) for r in results])
    precision, ordered = band_precision(bands(np.round(relevance, 3), config.confidence), labels.tolist())
    return {"ece": round(float(stats.expected_calibration_error(relevance, labels)), 4),
            "auroc": round(float(stats.auroc(relevance, labels)), 4),
            "band_precision": {b.value: (None if p.precision is None else round(p.precision, 3), p.count)
                               for b, p in precision.items()},
            "bands_ordered": ordered}


def _raw_relevance(outcomes: list[Any]) -> tuple[list[Any], np.ndarray, float]:
    """The top-10 results of every query with the relevance they showed before (their own), and the share of
    queries whose list was not monotone that way."""
    from searchtrace.retriever.search.confidence import FEATURES, SimilarityRelevance

    model = SimilarityRelevance()
    results: list[Any] = []
    raw: list[float] = []
    broken = 0
    for o in outcomes:
        top = o.results[:10]
        x = np.array([[r.features[f] for f in FEATURES] for r in top]) if top else np.empty((0, len(FEATURES)))
        rel = model.predict(x) if len(top) else np.empty(0)
        broken += int(np.any(np.diff(np.round(rel, 3)) > 0))
        results += top
        raw += rel.tolist()
    return results, np.array(raw), broken / max(len(outcomes), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "datasets")
    args = parser.parse_args()

    from searchtrace.evals import EvalSettings
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.types import ShownOrder
    from searchtrace.traces import TraceSettings

    config = resolve_config(home=args.home, environ={})
    embedder = Embedder(config.home)
    runs = [("sample", REPO / "datasets" / "sample", None), ("scifact", args.shared / "scifact", "fast"),
            ("musique", args.shared / "musique", "graph")]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, mode in runs:
            if not path.is_dir():
                continue
            out[name] = {}
            for order in ShownOrder:
                cfg = replace(config, confidence=replace(config.confidence, order=order))
                folder = run_eval(EvalSettings(dataset=str(path), mode=mode), cfg, out=Path(tmp) / f"{name}-{order.value}",
                                  embedder=embedder, progress=False, trace_settings=TraceSettings(store=False))
                outcomes = folder.outcomes()
                top = [r for o in outcomes for r in o.results[:10]]
                shown = np.array([r.relevance for r in top])
                out[name][order.value] = {"ndcg@10": round(float(folder.summary().metrics["ndcg@10"] or 0), 4),
                                          **_confidence(top, shown, cfg)}
                if order is ShownOrder.FUSED:
                    results, raw, broken = _raw_relevance(outcomes)
                    out[name]["before (own relevance, fused order)"] = {
                        "ndcg@10": out[name]["fused"]["ndcg@10"], **_confidence(results, raw, cfg),
                        "queries_not_monotone": round(broken, 3)}
            print(json.dumps({name: out[name]}, indent=1), flush=True)


if __name__ == "__main__":
    main()
