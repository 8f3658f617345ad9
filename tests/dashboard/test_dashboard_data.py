"""The dashboard's data functions: pinned on small inputs, and checked against run.json on a real home."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from searchtrace.dashboard.config import resolve_home
from searchtrace.dashboard.data import (
    SEARCHES,
    calibration,
    compare_runs,
    count_traces,
    gold_ranks_across,
    list_runs,
    list_traces,
    load_run,
    per_query,
    query_across_runs,
    query_run,
    stage_latency,
    stage_percentiles,
    trend,
    waterfall,
)
from searchtrace.dashboard.data.calibration import _reliability
from searchtrace.dashboard.data.runs import run_folder
from searchtrace.errors import NotFoundError, ValidationError
from searchtrace.evals import RunFolder
from searchtrace.names import Band

# --- without a home ------------------------------------------------------------


def test_run_folder_refuses_paths_and_unknown_runs(tmp_path):
    (tmp_path / "runs" / "r1").mkdir(parents=True)
    for bad in ("../etc", "a/b", "", ".hidden"):
        with pytest.raises(ValidationError):
            run_folder(tmp_path, bad)
    with pytest.raises(NotFoundError):
        run_folder(tmp_path, "r1")  # no run.json: interrupted


def test_created_at_reads_the_folder_stamp_else_mtime(tmp_path):
    stamped = tmp_path / "sample-graph-20250314T151617-abc"
    stamped.mkdir()
    assert RunFolder(stamped).created_at() == datetime(2025, 3, 14, 15, 16, 17, tzinfo=UTC)
    plain = tmp_path / "mine"
    plain.mkdir()
    (plain / "run.json").write_text("{}")  # unreadable as a summary: the file's time
    assert abs(RunFolder(plain).created_at().timestamp() - (plain / "run.json").stat().st_mtime) < 1e-3


def test_home_from_arguments_then_environment(tmp_path):
    env = {"SEARCHTRACE_HOME": str(tmp_path / "env")}
    assert resolve_home(["--home", str(tmp_path / "arg")], env) == (tmp_path / "arg").resolve()
    assert resolve_home(["--ho", "x"], env) == (tmp_path / "env").resolve()  # no abbreviations
    assert resolve_home([], {}).name == ".searchtrace"


def test_empty_home_gives_empty_tables(tmp_path):
    assert list_runs(tmp_path).empty and list(list_runs(tmp_path).columns)[:2] == ["run_id", "dataset"]
    assert list_traces(tmp_path).empty and count_traces(tmp_path) == 0
    assert waterfall(tmp_path, "0" * 32) is None
    assert not (tmp_path / "traces.sqlite").exists()  # reading never creates a store


def test_reliability_bins():
    rel = np.array([0.05, 0.15, 0.12, 0.95, 1.0])
    y = np.array([0, 1, 0, 1, 1])
    bins = _reliability(rel, y, 10)
    assert bins["lower"].tolist() == [0.0, 0.1, 0.9]
    assert bins["count"].tolist() == [1, 2, 2]
    assert bins["mean_relevance"].tolist() == pytest.approx([0.05, (0.15 + 0.12) / 2, (0.95 + 1.0) / 2])
    assert bins["observed"].tolist() == pytest.approx([0.0, 0.5, 1.0])


def test_cli_binds_loopback_unless_told(tmp_path):
    import argparse

    from searchtrace.dashboard.cli import register, streamlit_command

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["dashboard", "--home", str(tmp_path)])
    assert (args.address, args.port) == ("127.0.0.1", 8501)
    assert parser.parse_args(["dashboard", "--address", "0.0.0.0", "--port", "9000"]).address == "0.0.0.0"
    cmd = streamlit_command(tmp_path, "127.0.0.1", 8601)
    assert cmd[1:5] == ["-m", "searchtrace.dashboard.door", "--", "run"] and cmd[5].endswith("dashboard/app.py")
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1" and cmd[cmd.index("--server.port") + 1] == "8601"
    assert cmd[-3:] == ["--", "--home", str(tmp_path)]


# --- on the fixture home ------------------------------------------------------

slow = pytest.mark.slow


@slow
def test_list_runs_matches_run_json(dashboard_home, run_ids):
    runs = list_runs(dashboard_home)
    assert len(runs) == 4
    assert runs["run_id"].tolist() == [run_ids[r] for r in ("nodense", "top20", "fast", "base")]  # newest first
    assert runs["previous"].tolist() == [run_ids[r] for r in ("top20", "fast", "base")] + [None]
    assert runs["name"].tolist() == ["no dense, rrf", "sample · graph · depth=20", "sample · fast", "sample · graph"]
    assert runs["group"].tolist() == ["graph · fusion=rrf · dense weight=0", "graph · depth=20", "fast", "graph"]
    assert runs["tags"].iloc[0] == "ablation, rrf" and runs["note"].iloc[0] == "dense stage off"
    for row in runs.to_dict("records"):
        summary = load_run(dashboard_home, row["run_id"])
        assert row["mode"] == summary.retriever.mode and row["dataset"] == "sample" and row["queries"] == 100
        assert {m: row[m] for m in summary.metrics} == summary.metrics
    fast = runs.set_index("run_id").loc[run_ids["fast"]]
    assert fast["created_at"] == pd.Timestamp("2025-01-02 09:00", tz="UTC")


@slow
def test_trend_is_oldest_first(dashboard_home, run_ids):
    points = trend(dashboard_home, "sample", "recall@100")
    assert points["run_id"].tolist() == [run_ids[r] for r in ("base", "fast", "top20", "nodense")]
    assert points["value"].iloc[2] == load_run(dashboard_home, run_ids["top20"]).metrics["recall@100"]
    assert trend(dashboard_home, "nope", "ndcg@10").empty


@slow
def test_compare_runs(dashboard_home, run_ids):
    base, fast = run_ids["base"], run_ids["fast"]
    view = compare_runs(dashboard_home, base, fast, n_resamples=1000)
    assert view.same_dataset and view.n_queries == load_run(dashboard_home, base).evaluated_queries
    assert len(view.metrics) == 7
    for row in view.metrics.itertuples(index=False):
        assert row.base == pytest.approx(load_run(dashboard_home, base).metrics[row.metric], abs=1e-6)
        assert row.candidate == pytest.approx(load_run(dashboard_home, fast).metrics[row.metric], abs=1e-6)
        assert row.wins + row.ties + row.losses == view.n_queries
        assert row.ci_low <= row.delta <= row.ci_high
    ndcg = view.metrics.set_index("metric").loc["ndcg@10"]
    regressed = view.regressed["ndcg@10"]
    assert ndcg["losses"] > 0 and len(regressed) == min(10, ndcg["losses"])
    assert (regressed["delta"] < 0).all() and regressed["delta"].is_monotonic_increasing
    pairs = view.queries["ndcg@10"]
    assert len(pairs) == view.n_queries and (pairs["outcome"] == "loss").sum() == ndcg["losses"]
    assert pairs["delta"].to_numpy() == pytest.approx((pairs["candidate"] - pairs["base"]).to_numpy())


@slow
def test_query_across_runs_and_in_one_run(dashboard_home, run_ids, sample_dataset):
    base, fast = run_ids["base"], run_ids["fast"]
    query_id = compare_runs(dashboard_home, base, fast, n_resamples=100).regressed["ndcg@10"]["query_id"].iloc[0]
    across = query_across_runs(dashboard_home, query_id)
    assert len(across) == 4
    pq = per_query(dashboard_home, fast, ["query_id", "ndcg@10"]).set_index("query_id")
    assert across.set_index("run_id").loc[fast, "ndcg@10"] == pq.loc[query_id, "ndcg@10"]

    view = query_run(dashboard_home, base, query_id)
    record = run_folder(dashboard_home, base).query(query_id)
    gold = {d: g for d, g in sample_dataset.qrels[query_id].items() if g > 0}
    assert view.text == next(q.text for q in sample_dataset.queries if q.id == query_id)
    assert view.mode == "graph" and view.trace is not None and view.trace.trace_id == record.trace_id
    assert len(view.results) == 20 and view.results["rank"].tolist() == list(range(1, 21))
    assert view.results["gold"].tolist() == [gold.get(d, 0) > 0 for d in view.results["doc_id"]]
    assert dict(zip(view.gold["doc_id"], view.gold["grade"])) == gold
    funnel = view.funnel.set_index("stage")["gold"]
    for stage in ("dense", "keyword", "graph"):
        assert funnel[stage] == sum(stage in t.stages for t in record.attribution)
    k = run_folder(dashboard_home, base).settings().attribution_k  # the funnel names the cutoff it used
    assert funnel.index[-1] == f"in top {k}" and funnel[f"in top {k}"] == sum(t.lost_at.value == "found" for t in record.attribution)
    assert view.retry_hints == record.retry_hints
    assert query_run(dashboard_home, base, "no-such-query") is None


@slow
def test_graph_context_only_in_graph_mode(dashboard_home, run_ids):
    view = query_run(dashboard_home, run_ids["base"], "test-001")  # names Orsolya Venn, an entity
    assert "Orsolya Venn" in view.trace.entities and not view.kg.empty
    assert set(view.kg["doc_id"]) <= set(view.results["doc_id"]) & set(view.trace.graph_ids)
    fast = query_run(dashboard_home, run_ids["fast"], "test-001")
    assert fast.kg.empty and fast.trace.rewrite_terms == ()


@slow
def test_traces_list_and_waterfall(dashboard_home, run_ids):
    # every search of the four runs is a trace; so is each load of the embedding model (a trace of its own)
    import sqlite3

    from searchtrace.traces.spans.vocabulary import EMBEDDER_LOAD_SPAN

    conn = sqlite3.connect(Path(dashboard_home) / "traces.sqlite")
    loads = conn.execute("SELECT COUNT(*) FROM traces WHERE root_name = ?", (EMBEDDER_LOAD_SPAN,)).fetchone()[0]
    conn.close()
    assert loads <= 4  # at most one per eval; none when the process had the model loaded already
    assert count_traces(dashboard_home) == 400 and count_traces(dashboard_home, replace(SEARCHES, kind=None)) == 400 + loads
    assert len(list_traces(dashboard_home)) == 200 and len(list_traces(dashboard_home, replace(SEARCHES, limit=500))) == 400  # searches
    assert len(list_traces(dashboard_home, replace(SEARCHES, kind=None, limit=500))) == 400 + loads
    fast = list_traces(dashboard_home, replace(SEARCHES, run_id=run_ids["fast"], limit=500))
    assert len(fast) == 100 and set(fast["mode"]) == {"fast"}
    assert count_traces(dashboard_home, replace(SEARCHES, mode="fast")) == 100
    assert count_traces(dashboard_home, replace(SEARCHES, no_confident=True)) == len(
        list_traces(dashboard_home, replace(SEARCHES, no_confident=True, limit=1000)))
    assert list_traces(dashboard_home, replace(SEARCHES, query_text="Orsolya Venn", limit=500))["query"].str.contains("Orsolya").all()
    view = waterfall(dashboard_home, fast["trace_id"].iloc[0])
    spans = view.spans
    assert len(spans) == 11 and spans["name"].iloc[0] == "search" and spans["depth"].tolist() == [0] + [1] * 10
    assert spans["start_ms"].iloc[0] == 0 and spans["duration_ms"].iloc[0] == pytest.approx(view.summary["duration_ms"])
    assert (spans["end_ms"] - spans["start_ms"]).to_numpy() == pytest.approx(spans["duration_ms"].to_numpy())
    assert "searchtrace.mode" in set(view.attributes.loc[view.attributes["name"] == "search", "key"])


@slow
def test_calibration_matches_run_json(dashboard_home, run_ids):
    view = calibration(dashboard_home, run_ids["base"])
    conf = load_run(dashboard_home, run_ids["base"]).confidence
    bins = view.reliability
    assert bins["count"].sum() == conf.results
    ece = float((bins["count"] * (bins["observed"] - bins["mean_relevance"]).abs()).sum() / bins["count"].sum())
    assert ece == pytest.approx(conf.ece, abs=1e-9)
    for row in view.bands.itertuples(index=False):
        expected = conf.band_precision[Band(row.band)]
        assert row.count == expected.count
        assert (row.precision is None and expected.precision is None) or row.precision == pytest.approx(
            expected.precision)
    curve = view.risk_coverage
    assert curve["coverage"].iloc[-1] == 1.0 and curve["coverage"].is_monotonic_increasing
    assert 0 <= view.aurc <= 1
    assert len(view.best_vs_ndcg) == load_run(dashboard_home, run_ids["base"]).evaluated_queries


@slow
def test_latency_matches_run_json(dashboard_home, run_ids):
    latency = stage_latency(dashboard_home, run_ids["base"])
    table = stage_percentiles(latency).set_index("stage")
    expected = load_run(dashboard_home, run_ids["base"]).latency_ms
    assert set(table.index) == set(expected)
    assert table.index[0] == "validate" and table.index[-1] == "total"
    for stage, p in expected.items():
        assert table.loc[stage, "n"] == p.n
        for q in ("p50", "p95", "p99"):
            assert math.isclose(table.loc[stage, q], getattr(p, q), abs_tol=6e-4)


def test_gold_ranks_across_runs_in_the_order_given(dashboard_home, run_ids, sample_dataset):
    base, top20 = run_ids["base"], run_ids["top20"]
    ranks = gold_ranks_across(dashboard_home, "test-001", [top20, base])
    gold = {d for d, g in sample_dataset.qrels["test-001"].items() if g > 0}
    assert list(dict.fromkeys(ranks["run_id"])) == [top20, base]
    for run_id, depth in ((top20, 20), (base, 100)):
        rows = ranks[ranks["run_id"] == run_id]
        ranking = [d for d, _ in RunFolder.completed(dashboard_home / "runs" / run_id).query("test-001").ranking]
        assert set(rows["doc_id"]) == gold and set(rows["depth"]) == {depth} == {len(ranking)}
        for doc, rank in zip(rows["doc_id"], rows["rank"]):
            assert (ranking.index(doc) + 1 if doc in ranking else None) == (None if pd.isna(rank) else rank)
    # a gold document base ranks below 20 is not ranked in top20 (the same retriever scored to depth 20)
    deep = next((o.query_id, t.doc_id) for o in RunFolder.completed(dashboard_home / "runs" / base).outcomes()
                for t in o.attribution if t.final_rank is not None and t.final_rank > 20)
    both = gold_ranks_across(dashboard_home, deep[0], [base, top20]).set_index(["run_id", "doc_id"])["rank"]
    assert both[(base, deep[1])] > 20 and pd.isna(both[(top20, deep[1])])
    assert gold_ranks_across(dashboard_home, "no-such-query", [base]).empty
