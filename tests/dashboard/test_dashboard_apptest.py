"""Every dashboard page through Streamlit's AppTest on the fixture home (row clicks are in the browser test)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from searchtrace.dashboard.data import SEARCHES, calibration, compare_runs, count_traces, stage_latency
from searchtrace.dashboard.ui.explain import explain

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
    assert len(table) == 4 and table["run_id"].iloc[0] == run_ids["nodense"]
    assert table["name"].iloc[0] == "no dense, rrf"
    # the settings that differ between the listed runs are columns; the rest are not
    assert {"mode", "depth", "fusion", "dense weight"} <= set(table.columns) and "graph.depth" not in table
    assert table["compare"].iloc[2] == f"compare?base={run_ids['base']}&cand={run_ids['fast']}"
    assert pd.isna(table["compare"].iloc[3])  # the first run of its dataset
    assert [h.value for h in app.header] == ["Trend"]
    app.selectbox(key="runs-tag").set_value("ablation").run()
    assert frames(app)[0]["run_id"].tolist() == [run_ids["nodense"]]
    app.selectbox(key="runs-tag").set_value("all").run()
    app.multiselect(key="runs-settings").set_value(["mode=fast"]).run()
    table = frames(app)[0]
    assert table["run_id"].tolist() == [run_ids["fast"]] and "mode" not in table  # one run: nothing differs


def test_runs_page_holds_a_pick_by_its_id_through_filters(app, run_ids):
    fast, nodense = run_ids["fast"], run_ids["nodense"]
    at = page(app, "views/runs.py", pick=fast, tag="all")
    ok(at, "Runs")
    assert at.button(key="runs-open-compare") and at.query_params["pick"] == fast
    assert any(m.value.startswith("**sample · fast**") for m in at.markdown)
    # a filter that keeps the picked run: still picked, by id, wherever its row now stands
    at.multiselect(key="runs-settings").set_value(["mode=fast"]).run()
    ok(at, "Runs")
    assert at.query_params["settings"] in ("mode=fast", ["mode=fast"]) and at.query_params["pick"] == fast
    assert any(m.value.startswith("**sample · fast**") for m in at.markdown)
    # a filter that hides it: the pick is cleared with a notice, and no button acts on another run
    at.multiselect(key="runs-settings").set_value([]).run()
    at.selectbox(key="runs-tag").set_value("ablation").run()
    ok(at, "Runs")
    assert [i.value for i in at.info if "not among the rows shown" in i.value]
    assert "pick" not in at.query_params and not [b for b in at.button if b.key == "runs-open-compare"]
    # the filter is in the URL too: a link with both reopens the filtered table with its pick (clicks on
    # rows are in the browser test; AppTest cannot click a table row)
    assert at.query_params["tag"] == "ablation"
    fresh = page(app, "views/runs.py", pick=nodense, tag="ablation")
    assert fresh.selectbox(key="runs-tag").value == "ablation" and frames(fresh)[0]["run_id"].tolist() == [nodense]
    assert any(m.value.startswith("**no dense\\, rrf**") for m in fresh.markdown)  # md() escapes the comma


def test_compare_page_says_what_changed(app, dashboard_home, run_ids):
    base, nodense = run_ids["base"], run_ids["nodense"]
    at = page(app, "views/compare.py", base=base, cand=nodense)
    ok(at, "Compare")
    assert at.selectbox(key="compare-base").value == base and at.selectbox(key="compare-cand").value == nodense
    text = " ".join(m.value for m in at.markdown)
    assert "dense weight** 1 → 0" in text and "fusion** dbsf → rrf" in text
    expected = compare_runs(dashboard_home, base, nodense).queries["ndcg@10"]
    metrics, regressed, categories, several = frames(at)
    assert len(metrics) == 7 and metrics.columns[0] == "metric"
    losses = expected[expected["outcome"] == "loss"].sort_values("delta")
    assert regressed["query_id"].tolist() == losses["query_id"].tolist()
    assert regressed["text"].notna().all() and {"base_rank", "candidate_rank"} <= set(regressed.columns)
    assert set(categories["category"]) == set(expected["category"])
    assert several.shape == (12, 2)  # the metrics, and coverage too
    assert {"judged@10", "ndcg_min@10", "ndcg_max@10", "ndcg@10"} <= set(several.index)
    at.segmented_control(key="compare-view").set_value("improved").run()
    improved = frames(at)[1]
    assert (improved["delta"] > 0).all() and improved["delta"].is_monotonic_decreasing


def test_compare_without_runs_in_the_url_reopens_the_pair_compared_last(app, run_ids):
    base, nodense = run_ids["base"], run_ids["nodense"]
    at = page(app, "views/compare.py")  # nothing named, nothing compared yet: the newest pair, said so
    assert any("No runs named" in c.value for c in at.caption)
    assert (at.query_params["base"], at.query_params["cand"]) == (run_ids["top20"], nodense)
    at = page(app, "views/compare.py", base=base, cand=nodense)
    at = page(app, "views/query.py", query="test-001", run=nodense, base=base)
    at = page(app, "views/compare.py")  # the sidebar's link: the pair compared last, not the newest
    ok(at, "Compare")
    assert (at.selectbox(key="compare-base").value, at.selectbox(key="compare-cand").value) == (base, nodense)
    assert any("compared last in this session" in c.value for c in at.caption)


def test_metric_table_colours_by_verdict_and_a_delta_that_shows_as_zero_is_not_significant():
    from searchtrace.dashboard.ui.charts import VERDICT_BACKGROUND
    from searchtrace.dashboard.ui.compare_parts import styled_metrics

    frame = pd.DataFrame({"metric": ["a", "b", "c", "d"], "delta": [0.0002, -0.004, 0.0, 0.02],
                          "significant": [True, True, True, False], "p_randomization": [0.01, 0.0002, 0.5, 0.2]})
    styled = styled_metrics(frame)
    assert styled.data["verdict"].tolist() == ["not significant", "worse", "not significant", "not significant"]
    assert styled.data["p_randomization"].tolist() == ["0.010", "< 0.001", "0.500", "0.200"]
    html = styled.to_html()
    shown = {row: html.split(f">{row}<")[1].split("</tr>")[0] for row in ("a", "b", "c")}
    assert "0.000<" in shown["a"] and "+0.000" not in shown["a"] and "-0.004" in shown["b"]
    styled._compute()  # the cells' CSS, by (row, column): column 1 is the delta
    colours = {r: dict(styled.ctx.get((r, 1), [])).get("background-color") for r in range(4)}
    grey, red = VERDICT_BACKGROUND["not significant"], VERDICT_BACKGROUND["worse"]
    assert colours == {0: grey, 1: red, 2: grey, 3: grey}  # one meaning per colour: only the real drop is red


def test_query_page_side_by_side(app, run_ids, sample_dataset):
    at = page(app, "views/query.py", query="test-001", run=run_ids["base"], base=run_ids["fast"])
    ok(at, "Query")
    assert at.selectbox(key="query-base").value == run_ids["fast"]
    base_results, cand_results, gold, cand_path, base_path, kg, across, gold_across = frames(at)
    assert sorted(cand_path["doc_id"]) == sorted(base_path["doc_id"]) == sorted(gold["doc_id"])
    assert len(base_results) == len(cand_results) == 20 and len(across) == 4
    # the gold documents' ranks in the two runs picked by default (baseline first), a column per run, agreeing
    # with the side-by-side's gold moves (computed from the two rankings apart from this table)
    assert at.multiselect(key="query-gold-runs").value == [run_ids["fast"], run_ids["base"]]
    assert len(gold_across.columns) == 5
    ranks = gold_across.set_index("doc_id").iloc[:, 2:].astype("Float64")
    moves = gold.set_index("doc_id")[["base_rank", "candidate_rank"]].astype("Float64")
    assert ranks.loc[moves.index].fillna(-1).to_numpy().tolist() == moves.fillna(-1).to_numpy().tolist()
    assert sorted(gold_across["doc_id"]) == sorted(gold["doc_id"])
    assert base_results["title"].str.len().gt(0).all() and set(cand_results["moved"]) - {"="}
    assert len(gold) == sum(g > 0 for g in sample_dataset.qrels["test-001"].values())
    assert {"base_rank", "candidate_rank", "move"} <= set(gold.columns)
    assert len(kg) > 0 and "→" in kg.iloc[0, 0]  # triples as text, not JSON
    assert any("Orsolya Venn" in m.value for m in at.markdown)
    assert any("Related terms" in m.value for m in at.markdown)
    at.text_input(key="query-find").input("Orsolya").run()
    assert all("Orsolya" in o or "orsolya" in o.lower() for o in at.selectbox(key="query-id").options)
    # a search that does not match the query shown lists the matches and says the one shown does not match
    texts = {q.id: q.text for q in sample_dataset.queries}
    word = next(w for q, t in texts.items() for w in t.split() if len(w) > 6 and w.isalpha()
                and w.lower() not in texts["test-001"].lower())
    at.text_input(key="query-find").input(word).run()
    assert at.selectbox(key="query-id").value is None and at.query_params["query"] == "test-001"
    assert all(word.lower() in o.lower() for o in at.selectbox(key="query-id").options)
    assert any("which does not match the search" in c.value for c in at.caption)
    other = at.selectbox(key="query-id").options[0].split()[0]
    at.selectbox(key="query-id").set_value(other).run()
    assert at.query_params["query"] == other and at.selectbox(key="query-id").value == other
    at.text_input(key="query-find").input("Orsolya").run()
    at.button(key="query-open-trace-candidate").click().run()
    ok(at, "Traces")
    assert at.query_params["trace"]


def test_query_page_explains_skipped_stages(app, run_ids):
    at = page(app, "views/query.py", query="test-001", run=run_ids["nodense"], base=run_ids["top20"])
    ok(at, "Query")
    assert any("dense: fusion weight 0" in c.value for c in at.caption)


def test_traces_page_opens_the_trace_and_span_a_link_names(app, dashboard_home, run_ids):
    from searchtrace.dashboard.data import list_traces, span_documents, waterfall

    newest, *older = list_traces(dashboard_home, replace(SEARCHES, limit=50))["trace_id"].tolist()
    other, view, keyword = next(  # an older eval trace whose keyword stage found a gold document
        (t, w, k) for t in older for w in [waterfall(dashboard_home, t)]
        for k in w.spans[w.spans["name"] == "keyword"]["span_id"]
        if k in w.documents and span_documents(dashboard_home, w, k)["grade"].fillna(0).gt(0).any())
    at = page(app, "views/traces.py", trace=other, span=keyword)  # the second row, and a span below its root
    ok(at, "Traces")
    assert any(h.value == "Span: keyword" for h in at.subheader)
    assert at.query_params["trace"] == other and at.query_params["span"] == keyword
    docs = span_documents(dashboard_home, view, keyword)
    ranks = [str(r) for r, g in zip(docs["rank"], docs["grade"].fillna(0)) if g > 0]
    said = f"{len(docs)} documents · {len(ranks)} gold (★ grade in the eval run, shaded) at rank {', '.join(ranks)}"
    assert said in [c.value for c in at.caption]
    assert not any("newest listed" in c.value for c in at.caption)
    # a span of another trace is not this trace's: dropped, the trace's root span shown
    at = page(app, "views/traces.py", trace=newest, span=keyword)
    assert any(h.value == "Span: search" for h in at.subheader) and "span" not in at.query_params
    # a trace id that does not exist: one line, no traceback
    at = page(app, "views/traces.py", trace="0" * 32)
    assert not at.exception and [w.value for w in at.warning] == ["That trace is not in the store (pruned?)."]
    # no trace named (the sidebar's link): the trace shown last in this session, said so
    at = page(app, "views/traces.py")
    assert any("shown last in this session" in c.value for c in at.caption) and at.query_params["trace"] == newest


def test_traces_page(app, dashboard_home, run_ids):
    at = page(app, "views/traces.py")
    ok(at, "Traces")
    assert any("No trace picked: the newest listed is shown" in c.value for c in at.caption)
    listed, spans, documents, attributes = frames(at)
    assert len(listed) == 200 and len(spans) == 11 and len(documents) > 0 and len(attributes) > 0
    assert spans["label"].iloc[0] == "search" and spans["label"].iloc[4].endswith("└ dense")
    assert any(f"{count_traces(dashboard_home):,} matching" in c.value for c in at.caption)
    at.selectbox(key="tf-run").set_value(run_ids["fast"]).run()
    at.selectbox(key="tf-mode").set_value("fast").run()
    ok(at, "Traces")
    listed = frames(at)[0]
    assert len(listed) == 100 and set(listed["run_id"]) == {run_ids["fast"]}
    at.selectbox(key="tf-mode").set_value("graph").run()
    assert len(frames(at)[0]) == 0 and not at.exception


def test_trace_of_a_run_without_dense_marks_skipped_spans(app, dashboard_home, run_ids):
    from searchtrace.dashboard.data import query_run

    trace_id = query_run(dashboard_home, run_ids["nodense"], "test-001").trace_id
    at = page(app, "views/traces.py", trace=trace_id)
    ok(at, "Traces")
    spans = frames(at)[1].set_index("label")
    assert spans.loc["└ dense", "skipped"] == "fusion weight 0"
    assert any(s.value == "Span: search" for s in at.subheader)


def test_calibration_page(app, dashboard_home, run_ids):
    at = page(app, "views/calibration.py", run=run_ids["base"])
    ok(at, "Calibration")
    bins, bands = frames(at)
    assert len(bins) == len(calibration(dashboard_home, run_ids["base"]).reliability) and len(bands) == 3
    assert [s.value for s in at.subheader] == ["Reliability diagram", "Band precision", "Risk-coverage",
                                                "bestScore against nDCG@10"]
    assert [m.label for m in at.metric] == ["ECE", "Brier", "AUROC", "AURC"]
    assert all(m.help and m.help == explain(m.label) for m in at.metric)  # each explained in one sentence
    assert not at.info
    page(at, "views/latency.py")  # leaving the page drops its run picker's state
    at = page(at, "views/calibration.py", run=run_ids["nodense"])
    assert at.selectbox(key="calibration-run").value == run_ids["nodense"]
    assert "rank-only" in at.info[0].value


def test_latency_page(app, dashboard_home, run_ids):
    at = page(app, "views/latency.py", run=run_ids["nodense"])
    ok(at, "Latency")
    table = frames(at)[0].set_index("stage")
    assert len(table) == stage_latency(dashboard_home, run_ids["nodense"])["stage"].nunique()
    assert table.loc["dense", "skipped"] == "fusion weight 0" and table.loc["graph", "skipped"] == ""
    assert [h.value for h in at.header] == ["Across runs"]


def test_unknown_run_in_the_url_falls_back(app, run_ids):
    at = page(app, "views/calibration.py", run="../../etc")
    ok(at, "Calibration")
    assert at.selectbox(key="calibration-run").value == run_ids["nodense"]


def test_a_run_missing_its_files_is_reported_not_raised(dashboard_home, run_ids, tmp_path, monkeypatch):
    import shutil

    from streamlit.testing.v1 import AppTest

    shutil.copytree(dashboard_home / "runs" / run_ids["base"], tmp_path / "runs" / run_ids["base"])
    (tmp_path / "runs" / run_ids["base"] / "results.parquet").unlink()
    monkeypatch.setenv("SEARCHTRACE_HOME", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at = page(at, "views/runs.py")  # the folder does not verify: listed as damaged, naming the file (issue 35)
    ok(at, "Runs")
    warning = " ".join(w.value for w in at.warning).replace("\\", "")
    assert run_ids["base"] in warning and "results.parquet" in warning
    at = page(at, "views/calibration.py")
    ok(at, "Calibration")
    at = page(at, "views/query.py", query="test-001")  # no trace store in this home
    ok(at, "Query")


def test_a_damaged_run_is_listed_with_its_error_not_dropped(dashboard_home, run_ids, tmp_path, monkeypatch):
    import shutil

    from streamlit.testing.v1 import AppTest

    from searchtrace.dashboard.data import damaged_runs, list_runs

    for key in ("base", "fast"):
        shutil.copytree(dashboard_home / "runs" / run_ids[key], tmp_path / "runs" / run_ids[key])
    (tmp_path / "runs" / run_ids["fast"] / "run.json").write_text('{"format": 2, "metrics": ')  # cut short
    assert list_runs(tmp_path)["run_id"].tolist() == [run_ids["base"]]
    damaged = damaged_runs(tmp_path)
    assert damaged["run_id"].tolist() == [run_ids["fast"]] and "run.json" in damaged["error"][0]
    monkeypatch.setenv("SEARCHTRACE_HOME", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at = page(at, "views/runs.py")
    ok(at, "Runs")
    warning = " ".join(w.value for w in at.warning).replace("\\", "")
    assert run_ids["fast"] in warning and "cannot be read" in warning
