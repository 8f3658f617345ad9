"""Replay without labels: a query set from traffic evaluated with two configurations, compared by their rankings,
the most changed queries linked to both traces, and the gate on an RBO floor (the real retriever)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from searchtrace.cli import main
from searchtrace.evals import QueryOrigin, RunFolder
from searchtrace.home import Home
from searchtrace.retriever import load_dataset
from searchtrace.traces import TraceStore

pytestmark = pytest.mark.slow


def test_an_eval_without_labels_writes_a_complete_run_with_no_metrics(unlabelled_home, capsys):
    from searchtrace.evals.summary_text import print_summary

    _, runs, _ = unlabelled_home
    folder = RunFolder.completed(runs["graph"])
    summary = folder.summary()
    assert summary.evaluated_queries == 0 and set(summary.metrics.values()) == {None}
    assert all((folder.path / name).is_file() for name in (RunFolder.SETTINGS, RunFolder.JOURNAL, RunFolder.SUMMARY,
                                                           RunFolder.PER_QUERY, RunFolder.RESULTS, RunFolder.RUN_FILE))
    outcomes = folder.outcomes()
    assert len(outcomes) == 40 and all(o.trace_id and o.traced and o.ranking for o in outcomes)
    table = folder.per_query_columns(["query_id", "trace_id"])
    assert dict(zip(table["query_id"], table["trace_id"])) == {o.query_id: o.trace_id for o in outcomes}
    print_summary(folder.path, summary)
    assert "no labels yet; 40 queries ranked, no metrics" in capsys.readouterr().out


def test_compare_without_labels_lists_the_most_changed_with_both_traces(unlabelled_home, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    home, runs, queries = unlabelled_home
    assert main(["compare", str(runs["graph"]), str(runs["fast"])]) == 0  # no labels: the rankings, by itself
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == "note: no labels in the base and the candidate: rankings compared (--no-labels)"
    assert all(len(line) <= 80 or line.endswith(str(home)) for line in lines)  # a path is never cut
    assert any(line.split() == ["mean", "traffic-weighted"] for line in lines)
    assert lines[-1] == f"the traces are in another home: add --home {home}"
    assert main(["compare", str(runs["graph"]), str(runs["fast"]), "--json", "--top", "5"]) == 0
    data = json.loads(capsys.readouterr().out)
    changed = data["most_changed"]
    assert len(changed) == 5 and data["shared"] == 40
    ext = [q["rbo"]["0.9"]["ext"] for q in changed]
    assert ext == sorted(ext) and ext[0] < 1
    traces = [q["trace_id"][side] for q in changed for side in ("base", "candidate")]
    store = TraceStore(Home(home).traces).open()
    try:
        stored = store.stored(traces)
    finally:
        store.close()
    assert all(stored.get(t, 0) >= 10 for t in traces), stored  # a search span and its stages, both runs
    for q in changed[:3]:  # the text lists the same queries, each with the commands that open both traces
        assert f"    base: searchtrace traces show {q['trace_id']['base']}" in lines
        assert f"    cand: searchtrace traces show {q['trace_id']['candidate']}" in lines
    assert main(["traces", "show", changed[0]["trace_id"]["candidate"], "--home", str(home)]) == 0
    capsys.readouterr()
    # the query set came from traffic: its means weigh each query by count / inclusion probability (1 here)
    counts = {q.id: QueryOrigin.of(q).count for q in load_dataset(queries, need_queries=True).queries}
    rows = data["queries"]
    weights = np.array([counts[q["query_id"]] for q in rows], dtype=float)
    assert [q["weight"] for q in rows] == weights.tolist() and len(set(weights)) == 4
    values = np.array([q["rbo"]["0.9"]["ext"] for q in rows])
    assert data["weighted_mean"]["rbo"]["0.9"]["ext"] == pytest.approx((weights * values).sum() / weights.sum())
    assert data["mean"]["rbo"]["0.9"]["ext"] == pytest.approx(values.mean())


def test_the_gate_refuses_a_candidate_under_the_rbo_floor_and_passes_an_identical_one(unlabelled_home, tmp_path,
                                                                                     capsys):
    home, runs, _ = unlabelled_home
    config = tmp_path / "gate.toml"
    config.write_text("[overlap]\nmin_mean_rbo = 0.95\nfloor = 0.5\nmax_share_below = 0.2\n")
    assert main(["compare", str(runs["graph"]), str(runs["fast"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mean"]["rbo"]["0.9"]["ext"] < 0.95  # fast mode ranks otherwise
    junit = tmp_path / "gate.xml"
    assert main(["gate", "--baseline", str(runs["graph"]), "--candidate", str(runs["fast"]), "--config", str(config),
                 "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("quality gate failed") and "is below the minimum 0.95" in out and "<failure" in \
        junit.read_text()
    assert main(["gate", "--baseline", str(runs["graph"]), "--candidate", str(runs["graph"]), "--config",
                 str(config)]) == 0
    assert capsys.readouterr().out.startswith("quality gate passed: 0 of 2 rules failed")
    assert main(["gate", "--baseline", str(runs["graph"]), "--candidate", str(runs["fast"])]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "[overlap] table" in err[0] and "--config" in err[0]
