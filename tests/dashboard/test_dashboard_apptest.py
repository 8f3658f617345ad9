"""Every dashboard page through Streamlit's AppTest on the fixture home."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchtrace.dashboard.data import calibration, compare_runs, count_traces, stage_latency

pytestmark = pytest.mark.slow

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"


@pytest.fixture
def app(dashboard_home, monkeypatch):
    """A fresh AppTest of the dashboard on the fixture home (first page run)."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(dashboard_home))
    at = AppTest.from_file(str(APP), default_timeout=120)
    return at.run()


def page(at, script: str, **params: str):
    at.query_params.clear()
    at.query_params.update(params)
    return at.switch_page(script).run()


def ok(at, heading: str) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert [t.value for t in at.title] == [heading]


def frames(at) -> list:
    return [d.value for d in at.dataframe]


def test_runs_page(app, run_ids):
    ok(app, "Runs")
    table = frames(app)[0]
    assert len(table) == 3 and table["run_id"].iloc[0] == run_ids["top20"]
    assert [h.value for h in app.header] == ["Trend"]
    app.selectbox(key="runs-mode").set_value("fast").run()
    assert len(frames(app)[0]) == 1


def test_compare_page_and_navigation_to_a_regressed_query(app, dashboard_home, run_ids):
    base, fast = run_ids["base"], run_ids["fast"]
    at = page(app, "views/compare.py", base=base, cand=fast)
    ok(at, "Compare")
    assert at.selectbox(key="compare-base").value == base and at.selectbox(key="compare-cand").value == fast
    expected = compare_runs(dashboard_home, base, fast).regressed["ndcg@10"]
    metrics, regressed = frames(at)
    assert len(metrics) == 7 and len(regressed) == len(expected) > 0
    assert regressed["query_id"].tolist() == expected["query_id"].tolist()
    assert regressed["open"].iloc[0] == f"query?query={expected['query_id'].iloc[0]}&run={fast}&base={base}"
    assert "Most regressed queries" in [h.value for h in at.header]

    worst = expected["query_id"].iloc[0]
    at.button(key=f"open-{worst}").click().run()
    ok(at, "Query")
    assert at.selectbox(key="query-id").value == worst and at.selectbox(key="query-run").value == fast
    assert at.query_params["query"] == worst


def test_query_page(app, dashboard_home, run_ids, sample_dataset):
    at = page(app, "views/query.py", query="test-001", run=run_ids["base"])
    ok(at, "Query")
    across, results, gold, kg = frames(at)
    assert len(across) == 3 and len(results) == 20
    assert len(gold) == sum(g > 0 for g in sample_dataset.qrels["test-001"].values())
    assert len(kg) > 0  # graph mode, with a detected entity
    assert [s.value for s in at.subheader][:2] == ["Results", "Stage funnel"]
    assert any("Orsolya Venn" in m.value for m in at.markdown)
    at.button(key="query-open-trace").click().run()
    ok(at, "Traces")
    assert at.selectbox(key="traces-pick").value == at.query_params["trace"]


def test_traces_page(app, dashboard_home, run_ids):
    at = page(app, "views/traces.py")
    ok(at, "Traces")
    listed, spans, attributes = frames(at)
    assert len(listed) == 200 and len(spans) == 11 and len(attributes) > 0
    assert any(f"{count_traces(dashboard_home):,} matching" in c.value for c in at.caption)
    at.selectbox(key="tf-run").set_value(run_ids["fast"]).run()
    at.selectbox(key="tf-mode").set_value("fast").run()
    ok(at, "Traces")
    listed = frames(at)[0]
    assert len(listed) == 100 and set(listed["run_id"]) == {run_ids["fast"]}
    at.selectbox(key="tf-mode").set_value("graph").run()
    assert len(frames(at)[0]) == 0 and not at.exception


def test_calibration_page(app, dashboard_home, run_ids):
    at = page(app, "views/calibration.py", run=run_ids["base"])
    ok(at, "Calibration")
    bins, bands = frames(at)
    assert len(bins) == len(calibration(dashboard_home, run_ids["base"]).reliability) and len(bands) == 3
    assert [s.value for s in at.subheader] == ["Reliability diagram", "Band precision", "Risk-coverage",
                                                "bestScore against nDCG@10"]
    assert [m.label for m in at.metric] == ["ECE", "Brier", "AUROC", "AURC"]


def test_latency_page(app, dashboard_home, run_ids):
    at = page(app, "views/latency.py", run=run_ids["fast"])
    ok(at, "Latency")
    table = frames(at)[0]
    assert len(table) == stage_latency(dashboard_home, run_ids["fast"])["stage"].nunique()
    assert [h.value for h in at.header] == ["Across runs"]


def test_unknown_run_in_the_url_falls_back(app, run_ids):
    at = page(app, "views/calibration.py", run="../../etc")
    ok(at, "Calibration")
    assert at.selectbox(key="calibration-run").value == run_ids["top20"]


def test_a_run_missing_its_files_is_reported_not_raised(dashboard_home, run_ids, tmp_path, monkeypatch):
    import shutil

    from streamlit.testing.v1 import AppTest

    shutil.copytree(dashboard_home / "runs" / run_ids["base"], tmp_path / "runs" / run_ids["base"])
    (tmp_path / "runs" / run_ids["base"] / "results.parquet").unlink()
    monkeypatch.setenv("SEARCHTRACE_HOME", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at = page(at, "views/calibration.py")
    ok(at, "Calibration")
    assert "has no results.parquet" in at.error[0].value
    at = page(at, "views/query.py", query="test-001")  # no trace store in this home
    ok(at, "Query")
    assert at.button(key="query-open-trace") is not None
