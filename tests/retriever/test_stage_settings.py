"""Search settings end to end: a zero weight skips its stage (and the trace says so), feedback adds a span."""

from dataclasses import replace

import numpy as np
import pytest

from searchtrace.names import Stage
from searchtrace.retriever.config.model import FeedbackConfig, FusionConfig
from searchtrace.retriever.stages.fuse import fuse
from searchtrace.traces import vocabulary as v

pytestmark = pytest.mark.slow

QUERY = "In which shipyard town was the vessel commanded by Meribel Osk constructed?"


def spans_by_name(exporter):
    return {s.name: s for s in exporter.get_finished_spans()}


def weights(**w):
    return FusionConfig(weights={Stage(k): x for k, x in w.items()})


def test_keyword_only_skips_embed_and_dense(traced, sample_config):
    retriever, exporter = traced(config=replace(sample_config, fusion=weights(dense=0)))
    response, detail = retriever.search_detailed({"query": QUERY, "mode": "graph", "top_k": 5})
    by = spans_by_name(exporter)
    for name in ("embed", "dense"):
        assert by[name].attributes[v.SKIPPED] == "fusion weight 0"
        assert v.CANDIDATE_IDS not in by[name].attributes
    assert v.SKIPPED not in by["keyword"].attributes and v.SKIPPED not in by["graph"].attributes
    assert response.results and response.degraded == ()
    assert "dense" not in detail.stage_ids and "keyword" in detail.stage_ids
    assert all(r.band.value != "high" for r in response.results)  # rank-only relevance
    assert by["fuse"].attributes[v.FUSION_WEIGHTS] == ("dense=0", "graph=1", "keyword=1")


def test_dense_only_skips_keyword(traced, sample_config):
    retriever, exporter = traced(config=replace(sample_config, fusion=weights(keyword=0, graph=0)))
    response, detail = retriever.search_detailed({"query": QUERY, "mode": "graph", "top_k": 5})
    by = spans_by_name(exporter)
    assert by["keyword"].attributes[v.SKIPPED] == "fusion weight 0"
    assert by["graph"].attributes[v.SKIPPED] == "fusion weight 0"
    assert v.SKIPPED not in by["dense"].attributes
    assert set(detail.stage_ids) == {"dense"}
    assert list(detail.fused_ids[:5]) == list(detail.stage_ids["dense"][:5])
    assert response.results and response.kg == ()


def test_graph_mode_runs_ppr_by_default(traced):
    retriever, exporter = traced()
    retriever.search({"query": QUERY, "mode": "graph"})
    by = spans_by_name(exporter)
    assert by["graph"].attributes[v.GRAPH_METHOD] == "ppr"
    assert by["fuse"].attributes[v.FUSION_METHOD] == "dbsf"
    assert "feedback" not in by


def test_graph_seed_docs_are_the_first_fusion_of_dense_and_keyword(traced, sample_config):
    retriever, exporter = traced()
    _, detail = retriever.search_detailed({"query": QUERY, "mode": "graph", "top_k": 5})
    seeds = spans_by_name(exporter)["graph"].attributes[v.GRAPH_SEED_DOCS]
    dense_and_keyword = [c for c in detail_lists(exporter) if c.stage in (Stage.DENSE, Stage.KEYWORD)]
    assert list(seeds) == fuse(dense_and_keyword, sample_config.fusion).ids[:1].tolist()
    index = retriever.index
    for graph_off in ({"seed_docs": 0}, {"seed_docs_weight": 0.0}):
        off = replace(sample_config, graph=replace(sample_config.graph, **graph_off))
        retriever, exporter = traced(config=off, index=index)
        retriever.search({"query": QUERY, "mode": "graph"})
        assert list(spans_by_name(exporter)["graph"].attributes[v.GRAPH_SEED_DOCS]) == [], graph_off


def detail_lists(exporter):
    """The dense and keyword candidate lists as their spans recorded them."""
    from searchtrace.retriever.types import Candidates

    by = spans_by_name(exporter)
    return [Candidates(Stage(name), np.array(by[name].attributes[v.CANDIDATE_IDS], dtype=object),
                       np.array(by[name].attributes[v.CANDIDATE_SCORES], dtype=np.float64))
            for name in ("dense", "keyword")]


def test_feedback_adds_a_span_and_replaces_the_dense_list(traced, sample_config):
    config = replace(sample_config, feedback=FeedbackConfig(docs=2, weight=0.5))
    retriever, exporter = traced(config=config)
    response, detail = retriever.search_detailed({"query": QUERY, "mode": "fast", "top_k": 5})
    spans = exporter.get_finished_spans()
    started = [s.name for s in sorted(spans, key=lambda s: s.start_time) if s.name != "search"]
    assert started.index("feedback") == started.index("fuse") - 1
    fb = spans_by_name(exporter)["feedback"].attributes
    assert len(fb[v.FEEDBACK_IDS]) == 2 and fb[v.FEEDBACK_WEIGHT] == 0.5
    first = fuse(detail_lists(exporter), config.fusion)  # the fusion of the lists before feedback
    assert list(fb[v.FEEDBACK_IDS]) == first.ids[:2].tolist()
    assert list(fb[v.CANDIDATE_IDS]) == list(detail.stage_ids["dense"])[: len(fb[v.CANDIDATE_IDS])]
    assert response.results and response.degraded == ()


def test_failing_feedback_degrades_to_the_first_dense_list(traced, sample_config, monkeypatch):
    import searchtrace.retriever.search.traced as traced_stages

    def broken(*args, **kwargs):
        raise RuntimeError("vector fetch failed")

    monkeypatch.setattr(traced_stages, "feedback_dense", broken)
    retriever, exporter = traced(config=replace(sample_config, feedback=FeedbackConfig(docs=3)))
    response, detail = retriever.search_detailed({"query": QUERY, "mode": "fast", "top_k": 5})
    assert response.degraded == ("feedback",) and response.results
    by = spans_by_name(exporter)
    assert not by["feedback"].status.is_ok
    assert list(by["dense"].attributes[v.CANDIDATE_IDS]) == list(detail.stage_ids["dense"])


def test_rocchio_moves_the_query_towards_the_feedback_mean():
    import numpy as np

    from searchtrace.retriever.stages.feedback import rocchio

    q = np.array([1.0, 0.0], dtype=np.float32)
    docs = np.array([[0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    moved = q + 0.5 * docs.mean(axis=0)
    np.testing.assert_allclose(rocchio(q, docs, 0.5), moved / np.linalg.norm(moved), rtol=1e-6)
    np.testing.assert_allclose(rocchio(q, np.empty((0, 2), dtype=np.float32), 0.5), q)
