"""Query rules (searchtrace's default, trec_eval's, ``-c``, ``-M``, ``-l``) and 64-bit score ties."""

from __future__ import annotations

import pytest

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.trec import read_run
from searchtrace.evals.scoring.metrics import QueryRules, evaluate
from searchtrace.evals.scoring.rankings import Qrels, Run

QRELS = Qrels.from_dict({
    "q1": {"d1": 1, "d2": 0},
    "q2": {"d3": 0},              # judged, nothing relevant
    "q3": {"d4": 2, "d5": 1},     # judged, absent from the run
})
RUN = Run.from_dict({
    "q1": {"d2": 2.0, "d1": 1.0},
    "q2": {"d3": 1.0},
    "q9": {"d1": 1.0},            # not judged
})


def test_default_leaves_out_queries_without_relevant_docs_and_counts_missing_ones():
    ev = evaluate(QRELS, RUN, ["mrr"])
    assert ev.query_ids.tolist() == ["q1", "q3"]
    assert ev["mrr"].tolist() == [1 / 2, 0.0]


def test_trec_eval_counts_queries_without_relevant_docs_and_leaves_out_missing_ones():
    ev = evaluate(QRELS, RUN, ["mrr", "map", "ndcg", "rprec", "recall"], QueryRules.trec_eval())
    assert ev.query_ids.tolist() == ["q1", "q2"]
    assert ev["mrr"].tolist() == [1 / 2, 0.0]
    assert all(ev[m].tolist()[1] == 0.0 for m in ev.metrics)  # 0, never NaN
    assert ev.mean("map") == pytest.approx((1 / 2 + 0) / 2)


def test_trec_eval_complete_counts_every_judged_query():
    ev = evaluate(QRELS, RUN, ["mrr"], QueryRules.trec_eval(complete=True))
    assert ev.query_ids.tolist() == ["q1", "q2", "q3"]
    assert ev.mean("mrr") == pytest.approx((1 / 2 + 0 + 0) / 3)


def test_max_docs_keeps_each_querys_first_results():
    assert evaluate(QRELS, RUN, ["mrr", "recall"], QueryRules(max_docs=1))["recall"].tolist() == [0.0, 0.0]
    assert evaluate(QRELS, RUN, ["recall"], QueryRules(max_docs=2))["recall"].tolist() == [1.0, 0.0]


def test_relevance_level_moves_relevance_but_not_ndcg_gains():
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 2}})
    run = Run.from_dict({"q": {"a": 2.0, "b": 1.0}})
    ev = evaluate(qrels, run, ["mrr", "ndcg"], QueryRules(relevance_level=2))
    assert ev["mrr"].tolist() == [1 / 2]
    ideal = 2 + 1 / 1.5849625007211563  # grades 2 then 1: log2(3)
    assert ev["ndcg"][0] == pytest.approx((1 + 2 / 1.5849625007211563) / ideal)
    only_ones = Qrels.from_dict({"q": {"a": 1}})
    assert len(evaluate(only_ones, run, ["mrr"], QueryRules(relevance_level=2)).query_ids) == 0


@pytest.mark.parametrize("bad", [{"max_docs": 0}, {"relevance_level": 0}, {"max_docs": True}])
def test_rules_reject_nonsense(bad):
    with pytest.raises(ValidationError):
        QueryRules(**bad)


def write_tie_run(tmp_path):
    path = tmp_path / "tie.trec"
    # d_a's score is larger in 64 bits and equal in 32; d_b (larger id, relevant) wins a tie
    path.write_text("q1 Q0 d_a 1 1.00000001 t\nq1 Q0 d_b 2 1.0 t\n")
    return path


QRELS_TIE = {"q1": {"d_a": 0, "d_b": 1}}


def test_scores_are_64_bit_as_in_trec_eval_10(tmp_path):
    run = read_run(write_tie_run(tmp_path))
    assert list(run.to_dict()["q1"]) == ["d_a", "d_b"]
    assert evaluate(Qrels.from_dict(QRELS_TIE), run, ["mrr"])["mrr"].tolist() == [0.5]


def test_pytrec_eval_ties_scores_equal_in_32_bits(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run = read_run(write_tie_run(tmp_path)).to_dict()
    theirs = pytrec_eval.RelevanceEvaluator(QRELS_TIE, {"recip_rank"}).evaluate(run)["q1"]["recip_rank"]
    assert theirs == 1.0  # the 32-bit tie goes to d_b: the documented difference
