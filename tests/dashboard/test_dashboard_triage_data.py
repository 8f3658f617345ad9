"""What the triage pages read: settings diffs, gold ranks, side-by-side moves, span documents, skipped stages.

Gold ranks are checked against ``run.trec`` and the dataset's qrels, read here
independently of the journal the dashboard reads them from.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from searchtrace.dashboard.data import (
    SEARCHES,
    calibration,
    compare_runs,
    differing_settings,
    list_traces,
    query_run,
    settings_table,
    side_by_side,
    span_documents,
    waterfall,
)
from searchtrace.dashboard.data.documents import documents, find_queries, snippet
from searchtrace.traces import vocabulary as v

pytestmark = pytest.mark.slow
SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def trec_ranks(home, run_id, query_id) -> dict[str, int]:
    """Document -> rank of one query, from the rank column of the run's run.trec (query Q0 doc rank score tag)."""
    rows = (line.split() for line in (home / "runs" / run_id / "run.trec").read_text().splitlines())
    return {doc: int(rank) for query, _, doc, rank, *_ in rows if query == query_id}


def test_settings_table_and_differing_columns(dashboard_home, run_ids):
    table = settings_table(dashboard_home)
    assert table.loc[run_ids["nodense"], "dense weight"] == "0" and table.loc[run_ids["base"], "dense weight"] == "1"
    assert table.loc[run_ids["nodense"], "fusion"] == "rrf"
    assert differing_settings(table, [run_ids["base"], run_ids["fast"]]) == ["mode"]
    assert set(differing_settings(table, list(run_ids.values()))) == {"mode", "depth", "fusion", "dense weight"}


def test_compare_says_what_changed_and_where_gold_went(dashboard_home, run_ids, sample_dataset):
    base, nodense = run_ids["base"], run_ids["nodense"]
    view = compare_runs(dashboard_home, base, nodense, n_resamples=200)
    assert view.settings == (("fusion", "dbsf", "rrf"), ("dense weight", "1", "0"))
    assert view.names == ("sample · graph", "no dense, rrf")
    metrics = view.metrics.set_index("metric")
    assert (metrics["significant"] == (metrics["p_randomization"] < 0.05)).all()
    pairs = view.queries["ndcg@10"]
    texts = {q.id: q.text for q in sample_dataset.queries}
    assert pairs["text"].tolist() == [texts[q] for q in pairs["query_id"]]
    for row in pairs.head(15).itertuples(index=False):
        gold = [d for d, g in sample_dataset.qrels[row.query_id].items() if g > 0]
        for side, run_id in (("base_rank", base), ("candidate_rank", nodense)):
            ranks = trec_ranks(dashboard_home, run_id, row.query_id)
            expected = min((ranks[d] for d in gold if d in ranks), default=None)
            got = getattr(row, side)
            assert (None if pd.isna(got) else int(got)) == expected
    cats = view.categories[view.categories["metric"] == "ndcg@10"].set_index("category")
    for category, rows in pairs.groupby("category"):
        assert cats.loc[category, "queries"] == len(rows)
        assert cats.loc[category, "delta"] == pytest.approx(rows["delta"].mean())


def test_side_by_side_moves_match_the_run_files(dashboard_home, run_ids, sample_dataset):
    base, fast = run_ids["base"], run_ids["fast"]
    query_id = compare_runs(dashboard_home, base, fast, n_resamples=100).regressed["ndcg@10"]["query_id"].iloc[0]
    pair = side_by_side(dashboard_home, base, fast, query_id)
    gold = {d: g for d, g in sample_dataset.qrels[query_id].items() if g > 0}
    assert dict(zip(pair.gold["doc_id"], pair.gold["grade"])) == gold
    ranks = [trec_ranks(dashboard_home, r, query_id) for r in (base, fast)]
    for row in pair.gold.itertuples(index=False):
        assert (row.base_rank, row.candidate_rank) == (ranks[0].get(row.doc_id), ranks[1].get(row.doc_id))
        assert row.move.startswith(str(row.base_rank))
    corpus = {d.id: d.title for d in sample_dataset.docs}
    assert pair.candidate_results["title"].tolist() == [corpus[d] for d in pair.candidate_results["doc_id"]]
    other = pair.candidate_results["other_rank"].tolist()
    assert other == [ranks[0].get(d) for d in pair.candidate_results["doc_id"]]


def test_skipped_stages_in_funnel_waterfall_and_calibration(dashboard_home, run_ids):
    view = query_run(dashboard_home, run_ids["nodense"], "test-001")
    funnel = view.funnel.set_index("stage")
    assert funnel.loc["dense", "skipped"] == "fusion weight 0" and funnel.loc["keyword", "skipped"] == ""
    trace = waterfall(dashboard_home, view.trace_id)
    skipped = dict(zip(trace.spans["name"], trace.spans["skipped"]))
    assert skipped["dense"] == skipped["embed"] == "fusion weight 0" and skipped["graph"] == ""
    assert calibration(dashboard_home, run_ids["nodense"]).rank_only
    assert not calibration(dashboard_home, run_ids["base"]).rank_only
    assert calibration(dashboard_home, run_ids["nodense"]).skipped["dense"] == "fusion weight 0"


def test_span_documents_carry_titles_and_gold(dashboard_home, run_ids, sample_dataset):
    outcome_trace = query_run(dashboard_home, run_ids["base"], "test-001").trace_id
    view = waterfall(dashboard_home, outcome_trace)
    dense = view.spans.set_index("name").loc["dense", "span_id"]
    table = span_documents(dashboard_home, view, dense)
    from searchtrace.dashboard.data.tracestore import trace_store

    spans = {s.name: s for s in trace_store(dashboard_home).load_trace(outcome_trace).spans}
    assert table["doc_id"].tolist() == list(spans["dense"].attributes[v.CANDIDATE_IDS])
    assert table["score"].tolist() == pytest.approx(list(spans["dense"].attributes[v.CANDIDATE_SCORES]))
    corpus = {d.id: d.title for d in sample_dataset.docs}
    assert table["title"].tolist() == [corpus[d] for d in table["doc_id"]]
    qrels = sample_dataset.qrels["test-001"]
    graded = {d: int(g) for d, g in zip(table["doc_id"], table["grade"]) if pd.notna(g) and g > 0}
    assert graded == {d: g for d, g in qrels.items() if g > 0 and d in set(table["doc_id"])}
    attrs = set(view.attributes.loc[view.attributes["span_id"] == dense, "key"])
    assert v.CANDIDATE_IDS not in attrs and v.DENSE_PARTS_WEIGHT in attrs  # ids go to the table, the rest stays


def test_trace_filters_by_document_attribute_and_source(dashboard_home, run_ids):
    by_attribute = list_traces(dashboard_home, replace(SEARCHES, attribute=(v.FUSION_METHOD, "RRF"), limit=1000))
    assert len(by_attribute) == 100 and set(by_attribute["run_id"]) == {run_ids["nodense"]}
    some = list_traces(dashboard_home, replace(SEARCHES, run_id=run_ids["fast"], limit=1))["trace_id"].iloc[0]
    doc = waterfall(dashboard_home, some).documents
    doc_id = next(iter(doc.values()))["doc_id"].iloc[0]
    with_doc = list_traces(dashboard_home, replace(SEARCHES, doc_id=doc_id, limit=1000))
    assert some in set(with_doc["trace_id"]) and 0 < len(with_doc) <= 400
    assert len(list_traces(dashboard_home, replace(SEARCHES, sources=("eval",), limit=1000))) == 400  # eval runs' traces
    assert list_traces(dashboard_home, replace(SEARCHES, sources=("http",), limit=1000)).empty


def test_documents_snippets_and_query_search():
    docs = documents(str(SAMPLE))
    assert docs["bio-orsolya-venn"][0] == "Orsolya Venn"
    assert documents(None) == {} and documents(str(SAMPLE / "nope")) == {}
    found = find_queries(str(SAMPLE), ["test-001", "test-002"], "orsolya VENN")
    assert found["query_id"].tolist() == ["test-001"]
    assert snippet("a " * 200, 20) == "a a a a a a a a a a …"
    assert snippet("short text") == "short text"
