"""End to end on datasets/sample: graph mode finds multi-hop gold that fast mode misses,
unanswerable queries come back with noConfidentResults, and a failing graph degrades."""

import pytest

from searchtrace.errors import ValidationError
from searchtrace.names import Mode

pytestmark = pytest.mark.slow

TOP_K = 10


def chunk_ids(response):
    return [r.id for r in response.chunks]


def by_category(dataset, category):
    return [q for q in dataset.queries if q.category == category]


def test_graph_mode_finds_multi_hop_gold_fast_mode_misses(traced, sample_dataset):
    retriever, _ = traced()
    found = {"fast": 0, "graph": 0}
    graph_only = []
    for q in by_category(sample_dataset, "multi-hop"):
        gold = {d for d, g in sample_dataset.qrels.get(q.id, {}).items() if g > 0}
        hits = {}
        for mode in ("fast", "graph"):
            response = retriever.search({"query": q.text, "mode": mode, "top_k": TOP_K})
            hits[mode] = gold & set(chunk_ids(response))
            found[mode] += len(hits[mode])
        if hits["graph"] - hits["fast"]:
            graph_only.append(q.id)
    assert found["graph"] > found["fast"], found
    assert len(graph_only) >= 3, (found, graph_only)


def test_graph_mode_fills_kg_and_fast_mode_leaves_it_empty(traced, sample_dataset):
    retriever, _ = traced()
    q = by_category(sample_dataset, "multi-hop")[0]
    graph = retriever.search({"query": q.text, "mode": "graph"})
    fast = retriever.search({"query": q.text, "mode": "fast"})
    assert graph.kg and graph.mode is Mode.GRAPH
    if graph.retry_hints is not None:
        assert graph.retry_hints.detected_entities
    assert fast.kg == () and fast.rewrite_terms == () and fast.mode is Mode.FAST
    assert fast.results == fast.chunks
    result_ids = set(chunk_ids(graph)) | {r.id for r in graph.results}
    kg_keys = [(t.subject, t.relation, t.object) for t in graph.kg]
    assert len(kg_keys) == len(set(kg_keys))
    assert any(t.doc_id in result_ids for t in graph.kg)


def test_unanswerable_queries_have_no_confident_results(traced, sample_dataset):
    retriever, _ = traced()
    unanswerable = by_category(sample_dataset, "unanswerable")
    assert len(unanswerable) >= 10
    flagged = [q.id for q in unanswerable
               if retriever.search({"query": q.text, "top_k": 5}).no_confident_results]
    assert flagged == [q.id for q in unanswerable]


def test_answerable_queries_are_mostly_confident(traced, sample_dataset):
    retriever, _ = traced()
    answerable = [q for q in sample_dataset.queries if q.category in ("keyword-exact", "paraphrase")]
    confident = sum(not retriever.search({"query": q.text}).no_confident_results for q in answerable)
    assert confident >= 0.8 * len(answerable)


def test_weak_results_carry_retry_hints(traced, sample_dataset):
    retriever, _ = traced()
    q = by_category(sample_dataset, "unanswerable")[0]
    hints = retriever.search({"query": q.text}).retry_hints
    assert hints is not None
    assert hints.broader_query and hints.broader_query != q.text


class BrokenGraph:
    """A graph backend whose every call fails, like a Neo4j server that went away."""

    def __init__(self, inner):
        self.inner = inner

    def match_entities(self, names):
        return self.inner.match_entities(names)

    def neighbourhood(self, *args, **kwargs):
        raise ConnectionError("graph backend unreachable")

    def degree(self, *args):
        raise ConnectionError("graph backend unreachable")

    def close(self):
        self.inner.close()


def test_failing_graph_degrades_to_fast_results(traced, sample_dataset, sample_index_path, sample_config):
    from dataclasses import replace

    from searchtrace.retriever.index import open_index

    index = open_index(sample_index_path, sample_config)
    index = replace(index, graph=BrokenGraph(index.graph))
    retriever, exporter = traced(index=index)
    q = by_category(sample_dataset, "multi-hop")[0]
    response = retriever.search({"query": q.text, "mode": "graph", "top_k": 5})
    fast = retriever.search({"query": q.text, "mode": "fast", "top_k": 5})
    assert response.degraded == ("graph",)
    assert chunk_ids(response) == chunk_ids(fast)
    graph_span = next(s for s in exporter.get_finished_spans() if s.name == "graph")
    assert graph_span.status.status_code.name == "ERROR"
    assert graph_span.events[0].name == "exception"


def test_get_docs_and_chunks(traced, sample_dataset):
    from searchtrace.errors import NotFoundError

    retriever, _ = traced()
    ids = [d.id for d in sample_dataset.docs[:3]]
    docs = retriever.get_docs(ids)
    assert [d["id"] for d in docs] == ids
    assert docs[0]["text"] == sample_dataset.docs[0].text
    chunks = retriever.get_chunks(ids[:1])
    assert chunks[0]["component_type"] == "chunk" and sample_dataset.docs[0].text in chunks[0]["content"]
    with pytest.raises(NotFoundError):
        retriever.get_docs(["no-such-doc"])


def test_filters_apply_end_to_end(traced, sample_dataset):
    retriever, _ = traced()
    doc = sample_dataset.docs[0]
    response = retriever.search({"query": doc.title, "collection": doc.collection, "top_k": 10})
    assert response.results
    assert all(r.metadata.collection == doc.collection for r in response.chunks)
    only = retriever.search({"query": doc.title, "doc_ids": [doc.id]})
    assert chunk_ids(only) == [doc.id]
    plain = retriever.search({"query": doc.title, "mode": "fast", "top_k": 10})
    strict = retriever.search({"query": doc.title, "min_relevance": 0.999, "mode": "fast", "top_k": 10})
    assert all(r.score >= 0.999 for r in strict.results)
    assert len(strict.results) < len(plain.results)  # the filter dropped something
    assert strict.best_score == plain.best_score > 0  # bestScore is taken before min_relevance


def test_debug_score_components(traced, sample_dataset):
    retriever, _ = traced()
    r = retriever.search({"query": sample_dataset.docs[0].title, "debug": True, "mode": "fast"}).chunks[0]
    assert r.detail is not None and r.detail.fused_rank == 1
    assert set(r.to_json()["score_components"]) == {"dense", "keyword", "graph", "fused"}
    assert 0 <= r.score <= 1 and r.score == round(r.score, 3)


def test_search_detailed_exposes_stage_candidates_and_deep_ranking(traced, sample_dataset):
    retriever, _ = traced()
    q = by_category(sample_dataset, "multi-hop")[0]
    response, detail = retriever.search_detailed({"query": q.text, "mode": "graph", "top_k": 5, "candidates": 50})
    shown = len(response.chunks)  # facts take some of the top_k places
    assert len(response.results) == 5 and chunk_ids(response) == list(detail.ranking[:shown])
    assert len(detail.ranking) > 5 and len(detail.ranking) == len(detail.relevance) == len(detail.features)
    assert set(detail.stage_ids) >= {"dense", "keyword"}
    assert len(detail.stage_ids["dense"]) == 50
    union = set().union(*detail.stage_ids.values())
    assert set(detail.fused_ids) == union
    assert [r.score for r in response.chunks] == [round(r, 3) for r in detail.relevance[:shown]]
    with pytest.raises(ValidationError) as bad:
        retriever.search_detailed({"query": ""})
    assert bad.value.field == "query"


def test_keyword_then_dense_fusion_orders_keyword_candidates_by_cosine(sample_index_path, sample_config, model):
    from dataclasses import replace

    from searchtrace.retriever.config.model import FusionConfig
    from searchtrace.retriever.index import open_index
    from searchtrace.retriever.search.pipeline import Retriever
    from searchtrace.retriever.types import FusionMethod

    config = replace(sample_config, fusion=FusionConfig(method=FusionMethod.KEYWORD_THEN_DENSE))
    index = open_index(sample_index_path, config)
    try:
        retriever = Retriever(index, model, config)
        _, detail = retriever.search_detailed({"query": "harbour dues at Port Vell", "mode": "fast", "debug": True})
        assert detail.ranking_scores == tuple(sorted(detail.ranking_scores, reverse=True))
        assert set(detail.ranking) == set(detail.stage_ids["keyword"])
        vector = model.encode_query("harbour dues at Port Vell")
        (_, _, top_vec), = index.store.retrieve([index.point_of[detail.ranking[0]]], with_vectors=True)
        assert detail.ranking_scores[0] == pytest.approx(float(top_vec @ vector), abs=1e-5)
    finally:
        index.close()


def test_document_filters_also_hold_for_relation_hits_and_kg(traced, sample_dataset):
    """A relation hit is a fact of one document: a filter that drops the document drops the fact."""
    retriever, _ = traced()

    def relation_docs(response):
        docs = {(t.subject, t.relation, t.object): t.doc_id for t in response.kg}
        return [docs[r.subject, r.relation, r.object] for r in response.relations]

    for q in sample_dataset.queries:
        unfiltered = retriever.search({"query": q.text, "mode": "graph", "top_k": 10})
        keep = chunk_ids(unfiltered)[:1]
        if set(relation_docs(unfiltered)) - set(keep):
            break
    else:
        pytest.fail("no query of the sample returns a relation hit from a document other than its best chunk's")
    filtered = retriever.search({"query": q.text, "mode": "graph", "top_k": 10, "doc_ids": keep})
    assert chunk_ids(filtered) == keep
    assert {t.doc_id for t in filtered.kg} <= set(keep)
    assert set(relation_docs(filtered)) <= set(keep)
    tagged = retriever.search({"query": q.text, "mode": "graph", "top_k": 10, "collection": "no-such-collection"})
    assert tagged.results == () and tagged.kg == ()


def test_a_request_refused_for_another_field_keeps_its_valid_query_in_its_trace(traced):
    """A bad ``top_k`` leaves a good query to title the trace; a bad query records none; queries not captured
    are never recorded, refused or not."""
    from searchtrace.traces import vocabulary as v
    from searchtrace.traces.spans.attributes import CaptureConfig

    retriever, exporter = traced()
    for request in ({"query": "harbour master of Port Vell", "top_k": 0}, {"query": "   ", "top_k": 3}):
        with pytest.raises(ValidationError):
            retriever.search(request)
    kept, empty = [s for s in exporter.get_finished_spans() if s.name == v.SEARCH_SPAN]
    assert kept.attributes[v.INPUT_VALUE] == "harbour master of Port Vell"
    assert kept.attributes[v.ERROR_CODE] == "VALIDATION_ERROR"
    assert v.INPUT_VALUE not in empty.attributes
    private, spans = traced(capture=CaptureConfig(capture_query=False))
    with pytest.raises(ValidationError):
        private.search({"query": "harbour master of Port Vell", "top_k": 0})
    assert all(v.INPUT_VALUE not in s.attributes for s in spans.get_finished_spans())
