"""Coverage of the labels: Judged@k against ir_measures, bpref and condensed lists (trec_eval -J) against
pytrec_eval, on seeded random runs with unjudged documents (issue 25, part 5)."""

from __future__ import annotations

import ir_measures
import numpy as np
import pytest
import pytrec_eval
from test_metrics import synthetic

from searchtrace.evals.scoring.metrics import Metric, QueryRules, evaluate
from searchtrace.evals.scoring.rankings import Qrels, Run


def _distinct(run: Run) -> dict[str, dict[str, float]]:
    """The run with distinct scores in its own order (ir_measures breaks ties its own way)."""
    return {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in run.to_dict().items()}


@pytest.mark.parametrize("seed", range(4))
def test_judged_at_k_equals_ir_measures(seed):
    rng = np.random.default_rng(seed)
    qrels, run = synthetic(rng, [f"q{i}" for i in range(30)], [f"doc{i}" for i in range(200)], 12, 40)
    run = Run.from_dict(_distinct(run))
    ks = (1, 5, 10, 20, 100)
    ev = evaluate(qrels, run, [f"judged@{k}" for k in ks], QueryRules.trec_eval())
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.iter_calc([ir_measures.Judged @ k for k in ks], qrels.to_dict(), run.to_dict())}
    compared = 0
    for k in ks:
        for q, value in zip(ev.query_ids.tolist(), ev[f"judged@{k}"].tolist()):
            if (q, f"Judged@{k}") in theirs:
                assert value == pytest.approx(theirs[(q, f"Judged@{k}")], abs=1e-12), (q, k)
                compared += 1
    assert compared >= 100 and 0 < np.mean(ev["judged@10"]) < 1  # some ranked documents are unjudged


@pytest.mark.parametrize("seed", range(4))
def test_bpref_and_condensed_lists_equal_trec_eval(seed):
    rng = np.random.default_rng(10 + seed)
    qrels, run = synthetic(rng, [f"q{i}" for i in range(30)], [f"doc{i}" for i in range(200)], 15, 50)
    qd, rd = qrels.to_dict(), run.to_dict()
    measures = {"bpref", "ndcg_cut_10", "map", "P_5"}
    plain = pytrec_eval.RelevanceEvaluator(qd, measures).evaluate(rd)
    condensed = pytrec_eval.RelevanceEvaluator(qd, measures, judged_docs_only_flag=True).evaluate(rd)
    ours = evaluate(qrels, run, ["bpref", "ndcg@10", "map", "precision@5"], QueryRules.trec_eval())
    cond = evaluate(qrels, run, ["ndcg@10", "map", "precision@5"], QueryRules.trec_eval(judged_only=True))
    compared = [i for i, q in enumerate(ours.query_ids.tolist()) if q in plain]
    assert len(compared) > 10
    for metric, name in (("bpref", "bpref"),):
        np.testing.assert_allclose(ours[metric][compared], [plain[ours.query_ids[i]][name] for i in compared],
                                   atol=1e-9, err_msg=metric)
    for metric, name in (("ndcg@10", "ndcg_cut_10"), ("map", "map"), ("precision@5", "P_5")):
        ids = cond.query_ids.tolist()
        shared = [i for i, q in enumerate(ids) if q in condensed]
        np.testing.assert_allclose(cond[metric][shared], [condensed[ids[i]][name] for i in shared], atol=1e-9,
                                   err_msg=f"condensed {metric}")
    differs = ours["ndcg@10"][compared] != cond["ndcg@10"][compared]
    assert differs.any()  # the unjudged documents did move the condensed lists


def test_judged_and_bpref_as_formulas():
    qrels = Qrels.from_dict({"q": {"a": 2, "b": 0, "c": 1, "z": 0}})
    run = Run.from_dict({"q": {"b": 5.0, "x": 4.0, "a": 3.0, "y": 2.0, "c": 1.0}})
    ev = evaluate(qrels, run, ["judged@2", "judged@4", "judged@10", "bpref"])
    assert ev["judged@2"].tolist() == [1 / 2]
    assert ev["judged@4"].tolist() == [2 / 4]
    assert ev["judged@10"].tolist() == [3 / 5]  # a ranking shorter than k: over its length
    # R = 2 relevant, N = 2 judged non-relevant; b is above both a and c: 1 - 1/2 each
    assert ev["bpref"].tolist() == [pytest.approx(((1 - 1 / 2) + (1 - 1 / 2)) / 2)]
    assert Metric.parse("Judged@10") == Metric.parse("judged@10")
