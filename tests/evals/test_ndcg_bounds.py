"""nDCG@k's bounds under partial labels (issue 36): ``ndcg_min@k`` and ``ndcg_max@k`` are the least and the greatest
nDCG@k over every grading of the unjudged documents of the top k, exactly, checked against every completion."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchtrace.evals.scoring.metrics import QueryRules, evaluate
from searchtrace.evals.scoring.rankings import Qrels, Run


def _ndcg(ranked: list[str], grades: dict[str, int], k: int) -> float:
    """nDCG@k from its definition: linear gains, log2(rank + 1), the ideal over every judged grade."""
    dcg = sum(max(grades.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def _completions(ranked: list[str], grades: dict[str, int], k: int, top: int) -> list[float]:
    """nDCG@k of every grading 0..top of the unjudged documents of the top k (the rest keep their labels)."""
    open_ = [d for d in ranked[:k] if d not in grades]
    return [_ndcg(ranked, {**grades, **dict(zip(open_, chosen))}, k)
            for chosen in itertools.product(range(top + 1), repeat=len(open_))]


@st.composite
def partial_labels(draw):
    """A few queries, each a ranking of up to k + 2 documents, some judged 0..top, some not, and judged documents
    the ranking missed."""
    top = draw(st.sampled_from([2, 3]))
    k = draw(st.integers(1, 6))
    queries = {}
    for q in range(draw(st.integers(1, 3))):
        ranked = [f"d{i}" for i in range(draw(st.integers(1, k + 2)))]
        grade = st.one_of(st.none(), st.integers(0, top))
        grades = {d: g for d in ranked if (g := draw(grade)) is not None}
        for i in range(draw(st.integers(0, 3))):
            grades[f"missed{i}"] = draw(st.integers(0, top))
        grades.setdefault("anchor", 0)  # every query has a judgment, so every query is scored
        queries[f"q{q}"] = (ranked, grades)
    return top, k, queries


@settings(max_examples=300, deadline=None)
@given(partial_labels())
def test_the_bounds_are_the_least_and_greatest_ndcg_of_every_completion(case):
    top, k, queries = case
    qrels = Qrels.from_dict({q: grades for q, (_, grades) in queries.items()})
    run = Run.from_dict({q: {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
                         for q, (ranked, _) in queries.items()})
    ev = evaluate(qrels, run, [f"ndcg@{k}", f"ndcg_min@{k}", f"ndcg_max@{k}"],
                  QueryRules(no_relevant=True, top_grade=top))
    for i, q in enumerate(ev.query_ids.tolist()):
        ranked, grades = queries[q]
        values = _completions(ranked, grades, k, top)
        low, high = ev[f"ndcg_min@{k}"][i], ev[f"ndcg_max@{k}"][i]
        assert low == pytest.approx(min(values), abs=1e-9) and high == pytest.approx(max(values), abs=1e-9), q
        assert low - 1e-12 <= ev[f"ndcg@{k}"][i] <= high + 1e-12


def test_an_unjudged_document_low_in_the_top_k_can_lower_ndcg():
    """Grading the unjudged rank 10 up raises the ideal's rank 1 more than the ranking's rank 10: nDCG@10 falls, so
    the unjudged counted as not relevant (ndcg@10) is the greatest value here, and grade 2 the least."""
    judged = {"a": 1, **{f"n{i}": 0 for i in range(8)}}
    ranked = ["a", *(f"n{i}" for i in range(8)), "open"]
    ev = evaluate(Qrels.from_dict({"q": judged}), Run.from_dict({"q": {d: 10.0 - i for i, d in enumerate(ranked)}}),
                  ["ndcg@10", "ndcg_min@10", "ndcg_max@10"], QueryRules(top_grade=2))
    assert ev["ndcg@10"].tolist() == [1.0] and ev["ndcg_max@10"].tolist() == [1.0]
    low = (1 + 2 / math.log2(11)) / (2 + 1 / math.log2(3))
    assert ev["ndcg_min@10"].tolist() == [pytest.approx(low, abs=1e-12)]


@pytest.mark.parametrize("seed", range(3))
def test_deep_cutoffs_hold_every_sampled_completion(seed):
    """At k = 20 (too many gradings to list) a thousand random completions per query stay within the bounds, and
    the bounds are no looser than the grading the Dinkelbach search ends on: each is some completion's value."""
    from test_metrics import synthetic

    rng = np.random.default_rng(40 + seed)
    qrels, run = synthetic(rng, [f"q{i}" for i in range(12)], [f"doc{i}" for i in range(80)], 10, 30)
    run = Run.from_dict({q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in run.to_dict().items()})
    k, top = 20, max(int(qrels.grades.max()), 1)
    ev = evaluate(qrels, run, [f"ndcg_min@{k}", f"ndcg_max@{k}"], QueryRules())
    labels, ranked = qrels.to_dict(), {q: list(d) for q, d in run.to_dict().items()}
    widened = 0
    for i, q in enumerate(ev.query_ids.tolist()):
        grades = labels[q]
        open_ = [d for d in ranked.get(q, [])[:k] if d not in grades]
        for _ in range(1000 if open_ else 1):
            value = _ndcg(ranked.get(q, []), {**grades, **dict(zip(open_, rng.integers(0, top + 1, len(open_))))}, k)
            assert ev[f"ndcg_min@{k}"][i] - 1e-12 <= value <= ev[f"ndcg_max@{k}"][i] + 1e-12
        widened += ev[f"ndcg_min@{k}"][i] < ev[f"ndcg_max@{k}"][i]
    assert widened  # the unjudged documents leave room


def test_the_bounds_span_the_scale_the_labels_were_judged_on(tmp_path):
    """A dataset judged here grades on its ``judging.toml`` (else the default 0..2): ``eval`` records its top grade
    in the settings, and the bounds let an unjudged document take it though no judge gave it yet; a benchmark's
    folder (no scale, no judgments) keeps its qrels' own highest grade."""
    from searchtrace.evals.labels.judgments.folder import top_grade
    from searchtrace.evals.runs.runfolder import EvalSettings

    assert top_grade(tmp_path) is None
    (tmp_path / "judgments.jsonl").write_text("")
    assert top_grade(tmp_path) == 2
    (tmp_path / "judging.toml").write_text('[grades]\n0 = "no"\n1 = "some"\n2 = "good"\n3 = "perfect"\n')
    assert top_grade(tmp_path) == 3
    settings = EvalSettings(dataset="d", top_grade=3)
    assert EvalSettings.from_json(settings.to_json(), "settings.json") == settings
    assert settings.rules.top_grade == 3 and "top_grade" not in EvalSettings(dataset="d").to_json()
    qrels = Qrels.from_dict({"q": {"a": 1}})
    run = Run.from_dict({"q": {"a": 2.0, "open": 1.0}})
    binary = evaluate(qrels, run, ["ndcg_min@2"])["ndcg_min@2"][0]
    scaled = evaluate(qrels, run, ["ndcg_min@2"], QueryRules(top_grade=3))["ndcg_min@2"][0]
    assert binary == pytest.approx((1 + 1 / math.log2(3)) / (1 + 1 / math.log2(3)))  # grade 1 or 0: no lower
    assert scaled == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))  # grade 3 at rank 2
