"""The Compare page for runs without labels, through Streamlit's AppTest: the rankings compared, the most changed
queries, and a button to each side's trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchtrace.dashboard.data import overlap_runs
from searchtrace.dashboard.ui.explain import explain
from searchtrace.evals import compare_overlap

pytestmark = pytest.mark.slow

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"


@pytest.fixture
def app(unlabelled_home, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(unlabelled_home[0]))
    return AppTest.from_file(str(APP), default_timeout=120).run()


def test_overlap_runs_are_the_comparison_as_tables(unlabelled_home):
    home, runs, _ = unlabelled_home
    view = overlap_runs(home, runs["graph"].name, runs["fast"].name)
    comparison = compare_overlap(runs["graph"], runs["fast"])
    assert view.queries["rbo"].tolist() == comparison.ext(0.9).tolist()
    assert view.queries["rbo_deep"].tolist() == comparison.ext(0.98).tolist()
    assert view.most_changed["query_id"].tolist() == [q.query_id for q in comparison.most_changed(1000)]
    assert view.queries["text"].notna().all() and view.queries["base_trace"].str.len().eq(32).all()
    weighted = comparison.weighted_means()
    assert weighted is not None
    assert view.summary.set_index("measure").at["RBO p=0.9", "traffic-weighted"] == weighted.rbo[0].ext
    assert view.counts == (40, 0, 0)


def test_the_compare_page_without_labels_compares_the_rankings_and_opens_both_traces(app, unlabelled_home):
    home, runs, _ = unlabelled_home
    base, cand = runs["graph"].name, runs["fast"].name
    app.query_params.clear()
    app.query_params.update({"base": base, "cand": cand})
    at = app.switch_page("views/compare.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert [t.value for t in at.title] == ["Compare"]
    assert any("compared by their rankings" in m.value for m in at.markdown)
    expected = overlap_runs(home, base, cand)
    summary, changed = (d.value for d in at.dataframe)
    assert summary["measure"].tolist() == expected.summary["measure"].tolist()
    assert list(summary.columns) == ["measure", "mean", "traffic-weighted"]
    assert changed["query_id"].tolist() == expected.most_changed["query_id"].tolist()
    assert changed["rbo"].is_monotonic_increasing and (changed["rbo"] < 1).all()
    helps = {n: c.get("help") for n, c in json.loads(at.dataframe[1].proto.columns).items()}
    assert helps["rbo"] == explain("rbo") and helps["jaccard"] == explain("jaccard")  # the help marks
    second = expected.most_changed.iloc[1]
    at.selectbox(key="overlap-query").set_value(second["query_id"]).run()
    at.button(key="overlap-open-candidate").click().run()
    assert not at.exception and [t.value for t in at.title] == ["Traces"]
    assert at.query_params["trace"] in (second["candidate_trace"], [second["candidate_trace"]])
