"""compare(): paired per-metric deltas, tests, Holm, win/tie/loss, regressions, renderers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from rich.console import Console

from searchtrace.errors import ValidationError
from searchtrace.evals.scoring import stats
from searchtrace.evals.scoring.metrics import Evaluation, Metric
from searchtrace.evals.verdicts.comparison import compare, to_json, to_markdown, to_table

BASE = Evaluation.from_arrays(["q1", "q2", "q3"], {"ndcg@10": [0.5, 0.4, 0.9], "map": [0.2, 0.2, 0.2]})
CAND = Evaluation.from_arrays(["q1", "q2", "q3"], {"ndcg@10": [0.6, 0.4, 0.7], "map": [0.3, 0.3, 0.3]})


def test_means_delta_and_counts():
    item = compare(BASE, CAND)["ndcg@10"]
    assert item.base_mean == pytest.approx((0.5 + 0.4 + 0.9) / 3)
    assert item.candidate_mean == pytest.approx((0.6 + 0.4 + 0.7) / 3)
    assert item.delta == pytest.approx((0.1 + 0.0 - 0.2) / 3)
    assert (item.wins, item.ties, item.losses) == (1, 1, 1)
    [worst] = item.most_regressed
    assert (worst.query_id, worst.base, worst.candidate) == ("q3", 0.9, 0.7)
    assert worst.delta == pytest.approx(-0.2)


def test_tests_and_holm_per_family():
    result = compare(BASE, CAND, n_resamples=999, seed=1)
    a, b = BASE["ndcg@10"], CAND["ndcg@10"]
    item = result["ndcg@10"]
    assert item.p_t_test == stats.paired_t_test(a, b)
    assert item.p_randomization == stats.randomization_test(a, b, n_resamples=999, seed=1)
    assert item.ci == stats.paired_bootstrap_ci(a, b, n_resamples=999, seed=1)
    assert result["map"].p_t_test == 0.0  # constant +0.1: zero variance
    t = stats.holm([m.p_t_test for m in result.metrics])
    r = stats.holm([m.p_randomization for m in result.metrics])
    assert [m.p_t_test_holm for m in result.metrics] == t.tolist()
    assert [m.p_randomization_holm for m in result.metrics] == r.tolist()


def test_tie_threshold():
    base = Evaluation.from_arrays(["a", "b"], {"map": [0.5, 0.5]})
    cand = Evaluation.from_arrays(["a", "b"], {"map": [0.5 + 1e-12, 0.5 + 1e-6]})
    item = compare(base, cand)["map"]
    assert (item.wins, item.ties, item.losses) == (1, 1, 0)
    assert item.most_regressed == ()


def test_queries_missing_on_one_side_score_zero():
    base = Evaluation.from_arrays(["q1", "q2"], {"map": [0.4, 0.8]})
    cand = Evaluation.from_arrays(["q2", "q3"], {"map": [0.6, 0.3]})
    result = compare(base, cand)
    assert (result.n_queries, result.only_in_base, result.only_in_candidate) == (3, 1, 1)
    item = result["map"]
    assert item.base_mean == pytest.approx((0.4 + 0.8 + 0.0) / 3)
    assert item.candidate_mean == pytest.approx((0.0 + 0.6 + 0.3) / 3)
    regressed = [(q.query_id, q.delta) for q in item.most_regressed]
    assert regressed == [("q1", pytest.approx(-0.4)), ("q2", pytest.approx(-0.2))]


def test_most_regressed_is_capped_and_ordered():
    ids = [f"q{i}" for i in range(8)]
    base = Evaluation.from_arrays(ids, {"map": [1.0] * 8})
    cand = Evaluation.from_arrays(ids, {"map": [0.9, 0.1, 0.5, 0.1, 1.0, 0.8, 0.7, 0.6]})
    worst = compare(base, cand, n_regressed=3)["map"].most_regressed
    assert [q.query_id for q in worst] == ["q1", "q3", "q2"]  # equal deltas by id


def test_metric_selection_and_errors():
    result = compare(BASE, CAND, ["map"])
    assert [m.metric for m in result.metrics] == [Metric("map")]
    with pytest.raises(ValidationError, match="recall@5"):
        compare(BASE, CAND, ["recall@5"])
    with pytest.raises(KeyError):
        result["ndcg@10"]


def test_to_json_is_plain_json():
    data = to_json(compare(BASE, CAND, n_resamples=200))
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text)["metrics"]["ndcg@10"]["most_regressed"] == [
        {"query_id": "q3", "base": 0.9, "candidate": 0.7, "delta": pytest.approx(-0.2)}
    ]
    assert set(data["metrics"]["map"]["p"]) == {"t_test", "randomization", "t_test_holm", "randomization_holm"}
    assert data["n_queries"] == 3


def test_to_json_turns_nan_into_null():
    one = Evaluation.from_arrays(["q"], {"map": [0.5]})
    data = to_json(compare(one, one, n_resamples=10))
    assert data["metrics"]["map"]["p"]["t_test"] is None
    json.dumps(data, allow_nan=False)


def test_markdown_and_table():
    result = compare(BASE, CAND, n_resamples=200)
    md = to_markdown(result)
    assert "| metric | base | candidate | delta |" in md
    assert "| ndcg@10 | 0.6000 | 0.5667 | -0.0333 |" in md
    assert "- `q3`: 0.9000 → 0.7000 (-0.2000)" in md
    table = to_table(result)
    assert table.row_count == 2 and len(table.columns) == 8
    console = Console(record=True, width=200)
    console.print(table)
    assert "ndcg@10" in console.export_text()


def test_evaluation_from_arrays_validates_lengths():
    with pytest.raises(ValidationError, match="one value per query"):
        Evaluation.from_arrays(["a"], {"map": [0.1, 0.2]})
    assert np.isnan(Evaluation.from_arrays([], {"map": []}).mean("map"))
