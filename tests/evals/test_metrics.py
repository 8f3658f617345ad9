"""Metrics: values as formulas on inline TREC text, conventions, properties, pytrec_eval."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.trec import read_qrels, read_run
from searchtrace.evals.scoring.metrics import DEFAULT_METRICS, REGISTRY, Metric, MetricName, evaluate, parse_metrics
from searchtrace.evals.scoring.rankings import Qrels, Run

REPO = Path(__file__).resolve().parents[2]
SAMPLE_QRELS = REPO / "datasets" / "sample" / "qrels" / "test.tsv"
SCIFACT = REPO.parent / "shared" / "datasets" / "scifact"


def log2(x: float) -> float:
    return math.log2(x)


def scores(tmp_path: Path, qrels: str, run: str, *metrics: str) -> dict[str, dict[str, float]]:
    """``{metric: {query: value}}`` for inline TREC qrels and run text."""
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    ev = evaluate(read_qrels(tmp_path / "qrels"), read_run(tmp_path / "run"), metrics)
    return {str(m): dict(zip(ev.query_ids.tolist(), ev.per_query[m].tolist())) for m in ev.metrics}


QRELS = """\
q1 0 d1 2
q1 0 d2 0
q1 0 d3 1
q1 0 d4 1
q1 0 d9 3
"""
RUN = """\
q1 Q0 d1 1 0.9 t
q1 Q0 d2 2 0.8 t
q1 Q0 d3 3 0.7 t
q1 Q0 d5 4 0.6 t
q1 Q0 d4 5 0.5 t
"""
# Relevant: d1 (2), d3 (1), d4 (1), d9 (3, never retrieved): R = 4.
# Ranked relevance: 1 0 1 0 1.


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("precision@2", 1 / 2),
        ("precision@5", 3 / 5),
        ("recall@3", 2 / 4),
        ("recall", 3 / 4),
        ("hit@1", 1.0),
        ("mrr@10", 1 / 1),
        ("map", (1 / 1 + 2 / 3 + 3 / 5) / 4),
        ("map@3", (1 / 1 + 2 / 3) / 4),
        ("rprec", 2 / 4),
        ("ndcg@3", (2 / log2(2) + 1 / log2(4)) / (3 / log2(2) + 2 / log2(3) + 1 / log2(4))),
        (
            "ndcg",
            (2 / log2(2) + 1 / log2(4) + 1 / log2(6)) / (3 / log2(2) + 2 / log2(3) + 1 / log2(4) + 1 / log2(5)),
        ),
    ],
)
def test_values_as_formulas(tmp_path, metric, expected):
    assert scores(tmp_path, QRELS, RUN, metric)[metric]["q1"] == pytest.approx(expected, abs=1e-12)


def test_mrr_is_cut_at_k(tmp_path):
    run = "q1 Q0 d2 1 0.9 t\nq1 Q0 d5 2 0.8 t\nq1 Q0 d3 3 0.7 t\n"
    got = scores(tmp_path, QRELS, run, "mrr@2", "mrr@3", "mrr")
    assert (got["mrr@2"]["q1"], got["mrr@3"]["q1"], got["mrr"]["q1"]) == (0.0, 1 / 3, 1 / 3)


def test_ties_broken_by_doc_id_descending(tmp_path):
    qrels = "q1 0 a 1\nq1 0 d9 1\n"
    # Same score: "b" > "a" and "d9" > "d10" as strings, so b and d9 come first.
    run = "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\nq1 Q0 d10 3 0.5 t\nq1 Q0 d9 4 0.5 t\n"
    got = scores(tmp_path, qrels, run, "mrr", "precision@1", "map")
    assert got["mrr"]["q1"] == 1 / 2
    assert got["precision@1"]["q1"] == 0.0
    assert got["map"]["q1"] == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_rank_column_is_ignored(tmp_path):
    by_score = scores(tmp_path, QRELS, RUN, *map(str, DEFAULT_METRICS))
    lying_ranks = "".join(
        f"{q} Q0 {d} {6 - int(r)} {s} t\n" for q, _, d, r, s, _ in (line.split() for line in RUN.splitlines())
    )
    assert scores(tmp_path, QRELS, lying_ranks, *map(str, DEFAULT_METRICS)) == by_score


def test_missing_slots_count_as_non_relevant(tmp_path):
    run = "q1 Q0 d1 1 0.9 t\nq1 Q0 d3 2 0.8 t\n"
    got = scores(tmp_path, QRELS, run, "precision@10", "rprec", "map@100")
    assert got["precision@10"]["q1"] == 2 / 10
    assert got["rprec"]["q1"] == 2 / 4
    assert got["map@100"]["q1"] == pytest.approx((1 + 1) / 4)


def test_query_without_results_scores_zero_and_counts_in_the_mean(tmp_path):
    qrels = QRELS + "q2 0 x 1\n"
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(RUN)
    ev = evaluate(read_qrels(tmp_path / "q"), read_run(tmp_path / "r"), ["ndcg@10", "recall@100", "precision@10"])
    assert ev.query_ids.tolist() == ["q1", "q2"]
    assert ev.retrieved.tolist() == [True, False]
    for metric in ev.metrics:
        assert ev[metric][1] == 0.0
        assert ev.mean(metric) == pytest.approx(ev[metric][0] / 2)


def test_queries_without_relevant_documents_are_excluded(tmp_path):
    qrels = QRELS + "q3 0 d1 0\nq3 0 d2 -1\n"
    run = RUN + "q3 Q0 d1 1 1.0 t\n"
    got = scores(tmp_path, qrels, run, "ndcg@10")
    assert list(got["ndcg@10"]) == ["q1"]


def test_run_queries_absent_from_qrels_are_ignored(tmp_path):
    alone = scores(tmp_path, QRELS, RUN, "map", "ndcg@10")
    extra = scores(tmp_path, QRELS, RUN + "zz Q0 d1 1 5.0 t\nzz Q0 d9 2 4.0 t\n", "map", "ndcg@10")
    assert extra == alone


def test_graded_gains_are_linear_and_negative_grades_count_as_zero(tmp_path):
    qrels = "q1 0 a 3\nq1 0 b -2\nq1 0 c 1\n"
    run = "q1 Q0 b 1 0.9 t\nq1 Q0 c 2 0.8 t\nq1 Q0 a 3 0.7 t\n"
    got = scores(tmp_path, qrels, run, "ndcg@3", "precision@1", "recall@3")
    dcg = 0 / log2(2) + 1 / log2(3) + 3 / log2(4)
    ideal = 3 / log2(2) + 1 / log2(3)
    assert got["ndcg@3"]["q1"] == pytest.approx(dcg / ideal, abs=1e-12)
    assert got["precision@1"]["q1"] == 0.0
    assert got["recall@3"]["q1"] == 2 / 2


# --- metric values -----------------------------------------------------------


def test_parse_and_canonical_string():
    assert Metric.parse("nDCG@10") == Metric(MetricName.NDCG, 10) == Metric("ndcg", 10)
    assert str(Metric.parse(" map ")) == "map" and str(Metric.parse("Recall@100")) == "recall@100"
    assert hash(Metric.parse("mrr@10")) == hash(Metric("mrr", 10))
    assert [str(m) for m in DEFAULT_METRICS] == [
        "ndcg@10", "recall@5", "recall@100", "mrr@10", "map@100", "precision@10", "hit@10"
    ]
    assert parse_metrics(["map", "MAP", "ndcg@5"]) == (Metric("map"), Metric("ndcg", 5))
    assert set(REGISTRY) == set(MetricName)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bleu@4", "unknown metric 'bleu'; allowed: ndcg[@k], map[@k], mrr[@k], recall[@k], precision@k, hit@k, rprec"),
        ("precision", "precision needs a cutoff"),
        ("hit", "hit needs a cutoff"),
        ("rprec@5", "rprec takes no cutoff"),
        ("ndcg@0", "cutoff of ndcg must be a positive integer"),
        ("ndcg@x", "cannot parse metric"),
        ("", "cannot parse metric"),
    ],
)
def test_bad_metrics_are_validation_errors(text, message):
    with pytest.raises(ValidationError) as info:
        Metric.parse(text)
    assert message in str(info.value)


def test_trec_eval_names():
    names = {str(m): m.trec_eval for m in parse_metrics(["ndcg@10", "ndcg", "map@100", "mrr@10", "mrr", "recall"])}
    assert names == {
        "ndcg@10": "ndcg_cut_10", "ndcg": "ndcg", "map@100": "map_cut_100", "mrr@10": None, "mrr": "recip_rank",
        "recall": "set_recall",
    }


def test_evaluation_is_read_only():
    ev = evaluate(Qrels.from_dict({"q": {"a": 1}}), Run.from_dict({"q": {"a": 1.0}}), ["map"])
    with pytest.raises(ValueError):
        ev["map"][0] = 0.5
    with pytest.raises(TypeError):
        ev.means[Metric("map")] = 0.5  # type: ignore[index]


# --- properties --------------------------------------------------------------

CUT_METRICS = ("ndcg@3", "map@3", "mrr@3", "recall@3", "precision@3", "hit@3")
ALL_METRICS = (*CUT_METRICS, "ndcg", "map", "mrr", "recall", "rprec")


@st.composite
def judged_runs(draw):
    n_docs = draw(st.integers(1, 12))
    docs = [f"d{i}" for i in range(n_docs)]
    grades = draw(st.lists(st.integers(-1, 3), min_size=n_docs, max_size=n_docs))
    judged = draw(st.lists(st.booleans(), min_size=n_docs, max_size=n_docs))
    qrels = {"q": {d: g for d, g, j in zip(docs, grades, judged) if j}}
    retrieved = draw(st.lists(st.sampled_from(docs), unique=True, min_size=0, max_size=n_docs))
    values = draw(st.lists(st.integers(0, 4), min_size=len(retrieved), max_size=len(retrieved)))  # ties
    return qrels, {"q": {d: float(v) for d, v in zip(retrieved, values)}}


def per_query(qrels, run, metrics=ALL_METRICS) -> dict[str, list[float]]:
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics)
    return {str(m): ev.per_query[m].tolist() for m in ev.metrics}


@settings(max_examples=150, deadline=None)
@given(judged_runs())
def test_metrics_are_between_zero_and_one(case):
    qrels, run = case
    if not any(g > 0 for g in qrels["q"].values()) or not run["q"]:
        return
    for metric, values in per_query(qrels, run).items():
        assert all(0.0 <= v <= 1.0 + 1e-12 for v in values), metric


@settings(max_examples=150, deadline=None)
@given(judged_runs(), st.randoms(use_true_random=False))
def test_reordering_below_the_cutoff_changes_nothing(case, rnd):
    qrels, run = case
    if not any(g > 0 for g in qrels["q"].values()) or len(run["q"]) <= 3:
        return
    ranked = list(Run.from_dict(run).to_dict()["q"])  # trec_eval order
    tail = ranked[3:]
    rnd.shuffle(tail)
    # Top 3 keep strictly higher scores; the tail gets a new, distinct order below them.
    reordered = {d: 100.0 - i for i, d in enumerate(ranked[:3])} | {d: -float(i) for i, d in enumerate(tail)}
    assert per_query(qrels, {"q": reordered}, CUT_METRICS) == per_query(
        qrels, {"q": {d: 100.0 - i for i, d in enumerate(ranked)}}, CUT_METRICS
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judged_runs(), st.randoms(use_true_random=False))
def test_permuting_run_lines_changes_nothing(case, rnd):
    qrels, run = case
    rows = [("q", d, s) for d, s in run["q"].items()] + [("p", "x", 1.0), ("p", "y", 1.0)]
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    qrels = qrels | {"p": {"y": 1}}
    a = Run.from_arrays(*zip(*rows))
    b = Run.from_arrays(*zip(*shuffled))
    ev_a = evaluate(Qrels.from_dict(qrels), a, ALL_METRICS)
    ev_b = evaluate(Qrels.from_dict(qrels), b, ALL_METRICS)
    assert ev_a.query_ids.tolist() == ev_b.query_ids.tolist()
    for metric in ev_a.metrics:
        np.testing.assert_array_equal(ev_a[metric], ev_b[metric])


# --- cross-check against pytrec_eval -------------------------------------------


def cut_run(run: Run, k: int) -> dict[str, dict[str, float]]:
    """The top ``k`` of each query in trec_eval order (for recip_rank as mrr@k)."""
    return {q: dict(list(docs.items())[:k]) for q, docs in run.to_dict().items()}


def assert_matches_pytrec_eval(qrels: Qrels, run: Run, ks=(1, 3, 5, 10, 100)) -> int:
    """Every shared metric equal to pytrec_eval within 1e-9; returns queries compared."""
    metrics = [f"{name}@{k}" for k in ks for name in ("ndcg", "map", "recall", "precision", "hit")]
    metrics += ["ndcg", "map", "recall", "rprec", "mrr"]
    ev = evaluate(qrels, run, metrics)
    qd, rd = qrels.to_dict(), run.to_dict()
    compared = [i for i, ok in enumerate(ev.retrieved) if ok]  # pytrec_eval skips queries without results
    theirs = pytrec_eval.RelevanceEvaluator(qd, {str(m.trec_eval) for m in ev.metrics}).evaluate(rd)
    for metric in ev.metrics:
        got = ev[metric][compared]
        want = np.array([theirs[ev.query_ids[i]][str(metric.trec_eval)] for i in compared])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9, err_msg=str(metric))
    for k in ks:
        cut = pytrec_eval.RelevanceEvaluator(qd, {"recip_rank"}).evaluate(cut_run(run, k))
        got = evaluate(qrels, run, [f"mrr@{k}"]).per_query[Metric.parse(f"mrr@{k}")][compared]
        want = np.array([cut[ev.query_ids[i]]["recip_rank"] for i in compared])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9, err_msg=f"mrr@{k}")
    return len(compared)


def synthetic(rng: np.random.Generator, query_ids, doc_ids, judged_per_query: int, depth: int):
    """Seeded graded qrels and a run with score ties over the given ids."""
    doc_ids = np.asarray(doc_ids, dtype=object)
    qrels, run = {}, {}
    for q in query_ids:
        judged = rng.choice(doc_ids, min(judged_per_query, len(doc_ids)), replace=False)
        qrels[q] = {d: int(g) for d, g in zip(judged, rng.integers(-1, 4, len(judged)))}
        pool = np.unique(np.r_[judged, rng.choice(doc_ids, min(depth, len(doc_ids)), replace=False)])
        picked = rng.choice(pool, min(depth, len(pool)), replace=False)
        run[q] = {d: float(s) for d, s in zip(picked, np.round(rng.random(len(picked)), 1))}
    return Qrels.from_dict(qrels), Run.from_dict(run)


@pytest.mark.parametrize("seed", range(5))
def test_random_runs_match_pytrec_eval(seed):
    rng = np.random.default_rng(seed)
    docs = [f"doc{i}" for i in rng.permutation(300)] + ["é", "z", "Z", "a b"]
    qrels, run = synthetic(rng, [f"q{i}" for i in range(40)], docs, 15, 60)
    assert assert_matches_pytrec_eval(qrels, run) > 0


@settings(max_examples=60, deadline=None)
@given(judged_runs())
def test_hypothesis_runs_match_pytrec_eval(case):
    qrels, run = case
    if not any(g > 0 for g in qrels["q"].values()) or not run["q"]:
        return
    assert_matches_pytrec_eval(Qrels.from_dict(qrels), Run.from_dict(run), ks=(1, 2, 3, 5))


@pytest.mark.skipif(not SAMPLE_QRELS.exists(), reason="datasets/sample not built")
def test_sample_dataset_qrels_match_pytrec_eval():
    qrels = read_qrels(SAMPLE_QRELS)
    corpus = SAMPLE_QRELS.parents[1] / "corpus.jsonl"
    docs = _corpus_ids(corpus) if corpus.exists() else qrels.docs.tolist()
    rng = np.random.default_rng(7)
    run = {}
    for q in qrels.queries.tolist():
        picked = rng.choice(np.asarray(docs, dtype=object), min(20, len(docs)), replace=False)
        run[q] = {d: float(s) for d, s in zip(picked, np.round(rng.random(len(picked)), 1))}
    assert assert_matches_pytrec_eval(qrels, Run.from_dict(run), ks=(1, 3, 5, 10)) > 0


def _corpus_ids(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line)["_id"] for line in handle if line.strip()]


@pytest.mark.shared_data
@pytest.mark.skipif(not (SCIFACT / "qrels" / "test.tsv").exists(), reason="../shared/datasets not present")
def test_scifact_qrels_match_pytrec_eval():
    qrels = read_qrels(SCIFACT / "qrels" / "test.tsv")
    docs = np.asarray(_corpus_ids(SCIFACT / "corpus.jsonl"), dtype=object)
    judged = qrels.to_dict()
    rng = np.random.default_rng(11)
    run = {}
    for q in qrels.queries.tolist():
        picked = np.unique(np.r_[rng.choice(docs, 100, replace=False), list(judged[q])])
        run[q] = {d: float(s) for d, s in zip(picked, np.round(rng.random(len(picked)), 2))}
    assert assert_matches_pytrec_eval(qrels, Run.from_dict(run)) == len(qrels.queries)
