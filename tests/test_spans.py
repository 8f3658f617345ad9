"""Every search opens a root span and one child per stage, with the stage's data."""

import pytest

from traces import vocabulary as v

STAGES = ["validate", "rewrite", "embed", "dense", "keyword", "graph", "fuse", "rerank", "filter", "shape"]


def spans_by_name(exporter):
    return {s.name: s for s in exporter.get_finished_spans()}


@pytest.mark.slow
def test_root_and_stage_spans(traced):
    retriever, exporter = traced()
    response = retriever.search({"query": "Which river runs past the harbour town?", "mode": "graph", "top_k": 3})
    spans = exporter.get_finished_spans()
    names = [s.name for s in spans]
    assert sorted(names) == sorted(["search", *STAGES])
    by = spans_by_name(exporter)
    root = by["search"]
    assert root.parent is None
    for stage in STAGES:
        assert by[stage].parent.span_id == root.context.span_id
        assert by[stage].context.trace_id == root.context.trace_id
    # stage order = start order
    started = [s.name for s in sorted(spans, key=lambda s: s.start_time) if s.name != "search"]
    assert started == STAGES
    assert format(root.context.trace_id, "032x") == response["traceId"]

    assert root.attributes[v.OPENINFERENCE_SPAN_KIND] == "CHAIN"
    assert by["embed"].attributes[v.OPENINFERENCE_SPAN_KIND] == "EMBEDDING"
    for name in ("dense", "keyword", "graph"):
        assert by[name].attributes[v.OPENINFERENCE_SPAN_KIND] == "RETRIEVER"
    assert by["rerank"].attributes[v.OPENINFERENCE_SPAN_KIND] == "RERANKER"
    assert root.attributes[v.INPUT_VALUE] == "Which river runs past the harbour town?"
    assert root.attributes[v.MODE] == "graph"
    assert root.attributes[v.TOP_K] == 3

    dense = by["dense"].attributes
    ids = list(dense[v.CANDIDATE_IDS])
    assert dense[v.CANDIDATE_COUNT] == len(ids) > 0
    assert dense[f"{v.RETRIEVAL_DOCUMENTS}.0.{v.DOCUMENT_ID}"] == ids[0]
    assert dense[f"{v.RETRIEVAL_DOCUMENTS}.0.{v.DOCUMENT_SCORE}"] == pytest.approx(dense[v.CANDIDATE_SCORES][0])
    assert list(dense[v.CANDIDATE_SCORES]) == sorted(dense[v.CANDIDATE_SCORES], reverse=True)

    assert list(root.attributes[v.RESULT_IDS]) == [r["id"] for r in response["results"]]
    assert list(root.attributes[v.RESULT_BANDS]) == [r["confidenceBand"] for r in response["results"]]
    assert root.attributes[v.BEST_SCORE] == pytest.approx(response["bestScore"])
    assert root.attributes[v.NO_CONFIDENT_RESULTS] == response["noConfidentResults"]
    assert by["fuse"].attributes[v.FUSION_METHOD] == "rrf"
    assert by["fuse"].attributes[v.FUSION_K0] == 60
    assert by["rerank"].attributes[v.RERANKER_TOP_K] == 3
    for span in spans:
        assert span.end_time >= span.start_time


@pytest.mark.slow
def test_privacy_switches_and_cap(traced):
    from traces.attributes import CaptureConfig

    retriever, exporter = traced(capture=CaptureConfig(capture_query=False, max_candidates=4))
    retriever.search({"query": "harbour", "mode": "fast"})
    by = spans_by_name(exporter)
    assert v.INPUT_VALUE not in by["search"].attributes
    dense = by["dense"].attributes
    assert len(dense[v.CANDIDATE_IDS]) == 4
    assert f"{v.RETRIEVAL_DOCUMENTS}.4.{v.DOCUMENT_ID}" not in dense
    assert dense[v.CANDIDATE_COUNT] > 4


@pytest.mark.slow
def test_validation_error_marks_root_span(traced):
    retriever, exporter = traced()
    response = retriever.search({"query": "", "top_k": 3})
    assert response["error"]["code"] == "VALIDATION_ERROR"
    by = spans_by_name(exporter)
    assert by["search"].status.status_code.name == "ERROR"
    assert by["search"].attributes[v.ERROR_CODE] == "VALIDATION_ERROR"
    assert by["validate"].status.status_code.name == "ERROR"
    assert "dense" not in by
