"""Every search opens a root span and one child per stage, with the stage's data."""

import pytest

from searchtrace.errors import ValidationError
from searchtrace.traces import vocabulary as v

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
    assert format(root.context.trace_id, "032x") == response.trace_id

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
    assert dense[v.CANDIDATE_COUNT] == len(ids) == 100  # candidates default
    assert len(dense[v.CANDIDATE_SCORES]) == len(ids)
    assert list(dense[v.CANDIDATE_SCORES]) == sorted(dense[v.CANDIDATE_SCORES], reverse=True)
    assert len(set(by["keyword"].attributes[v.CANDIDATE_IDS])) == by["keyword"].attributes[v.CANDIDATE_COUNT]
    rerank = by["rerank"].attributes
    assert list(rerank[v.RERANK_INPUT_IDS]) == list(by["fuse"].attributes[v.CANDIDATE_IDS])

    assert list(root.attributes[v.RESULT_IDS]) == [r.id for r in response.results]
    assert list(root.attributes[v.RESULT_BANDS]) == [r.band.value for r in response.results]
    assert root.attributes[v.BEST_SCORE] == pytest.approx(response.best_score)
    assert root.attributes[v.NO_CONFIDENT_RESULTS] == response.no_confident_results
    assert list(root.attributes[v.RESULT_TITLES]) == [getattr(r, "title", "") for r in response.results]
    facts = [r for r in response.results if r.component_type.value == "relation"]
    assert list(root.attributes.get(v.RELATION_IDS, ())) == [r.id for r in facts]
    assert list(zip(*(root.attributes.get(k, ()) for k in (v.RELATION_SUBJECTS, v.RELATION_PREDICATES,
                                                           v.RELATION_OBJECTS)))) == [
        (r.subject, r.relation, r.object) for r in facts]
    assert root.attributes[v.INDEX_KEY] == retriever.index_key and root.attributes[v.DATASET] == "sample"
    assert isinstance(root.attributes[v.SEARCH_COLD], bool)  # recorded on every search (test_onnx_embedder: when)
    assert by["fuse"].attributes[v.FUSION_METHOD] == "dbsf"
    assert by["fuse"].attributes[v.FUSION_K0] == 60
    assert by["rerank"].attributes[v.RERANKER_TOP_K] == 3
    for span in spans:
        assert span.end_time >= span.start_time


@pytest.mark.slow
def test_privacy_switches_and_cap(traced):
    from searchtrace.traces.spans.attributes import CaptureConfig

    retriever, exporter = traced(capture=CaptureConfig(capture_query=False, max_candidates=4))
    retriever.search({"query": "harbour", "mode": "fast"})
    by = spans_by_name(exporter)
    assert v.INPUT_VALUE not in by["search"].attributes
    dense = by["dense"].attributes
    assert len(dense[v.CANDIDATE_IDS]) == 4 and len(dense[v.CANDIDATE_SCORES]) == 4
    assert dense[v.CANDIDATE_COUNT] > 4
    assert v.CANDIDATE_CONTENTS not in dense


@pytest.mark.slow
def test_content_capture_records_candidate_texts(traced, sample_dataset):
    from searchtrace.traces.spans.attributes import CaptureConfig

    retriever, exporter = traced(capture=CaptureConfig(capture_content=True, max_candidates=3))
    retriever.search({"query": "harbour", "mode": "fast"})
    dense = spans_by_name(exporter)["dense"].attributes
    texts = {d.id: d.text for d in sample_dataset.docs}
    assert list(dense[v.CANDIDATE_CONTENTS]) == [texts[i] for i in dense[v.CANDIDATE_IDS]]


@pytest.mark.slow
def test_exported_spans_carry_openinference_documents(traced):
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from searchtrace.traces.spans.openinference import OpenInferenceExporter

    retriever, exporter = traced()
    retriever.search({"query": "harbour", "mode": "fast", "top_k": 3})
    sink = InMemorySpanExporter()
    OpenInferenceExporter(sink).export(exporter.get_finished_spans())
    by = {s.name: s.attributes for s in sink.get_finished_spans()}
    dense = by["dense"]
    for i, (doc, score) in enumerate(zip(dense[v.CANDIDATE_IDS], dense[v.CANDIDATE_SCORES])):
        assert dense[f"{v.RETRIEVAL_DOCUMENTS}.{i}.{v.DOCUMENT_ID}"] == doc
        assert dense[f"{v.RETRIEVAL_DOCUMENTS}.{i}.{v.DOCUMENT_SCORE}"] == score
    rerank = by["rerank"]
    assert rerank[f"{v.RERANKER_INPUT_DOCUMENTS}.0.{v.DOCUMENT_ID}"] == rerank[v.RERANK_INPUT_IDS][0]
    assert rerank[f"{v.RERANKER_OUTPUT_DOCUMENTS}.0.{v.DOCUMENT_ID}"] == rerank[v.RERANK_OUTPUT_IDS][0]
    assert not any(k.startswith(v.RETRIEVAL_DOCUMENTS) for k in by["fuse"])  # CHAIN-less spans unchanged


@pytest.mark.slow
def test_validation_error_marks_root_span(traced):
    retriever, exporter = traced()
    with pytest.raises(ValidationError, match="query"):
        retriever.search({"query": "", "top_k": 3})
    by = spans_by_name(exporter)
    assert by["search"].status.status_code.name == "ERROR"
    assert by["search"].attributes[v.ERROR_CODE] == "VALIDATION_ERROR"
    assert by["validate"].status.status_code.name == "ERROR"
    assert "dense" not in by


@pytest.mark.slow
def test_deferred_attributes_arrive_at_every_exporter(sample_index_path, sample_config, model):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from searchtrace.retriever.index import open_index
    from searchtrace.retriever.search.pipeline import Retriever
    from searchtrace.traces.export.deferred import DeferredAttributes, MaterializingExporter

    deferred = DeferredAttributes(consumers=2)
    sinks = [InMemorySpanExporter(), InMemorySpanExporter()]
    provider = TracerProvider()
    for sink in sinks:
        provider.add_span_processor(SimpleSpanProcessor(MaterializingExporter(sink, deferred)))
    index = open_index(sample_index_path, sample_config)
    try:
        retriever = Retriever(index, model, sample_config, tracer=provider.get_tracer("t"), deferred=deferred)
        response = retriever.search({"query": "harbour", "mode": "fast", "top_k": 3})
    finally:
        index.close()
    for sink in sinks:
        by = spans_by_name(sink)
        assert len(by["dense"].attributes[v.CANDIDATE_IDS]) == 100
        assert list(by["rerank"].attributes[v.RERANK_OUTPUT_IDS][:3]) == [r.id for r in response.results[:3]]
        assert by["search"].attributes[v.MODE] == "fast"
        assert list(by["search"].attributes[v.RESULT_IDS]) == [r.id for r in response.results]  # parked too
    assert len(deferred) == 0  # every consumer took its copy; nothing is left behind


@pytest.mark.slow
def test_an_unexpected_failure_is_one_error_whose_text_stays_in_the_trace(traced):
    """A bug in a stage is a SEARCH_ERROR: the answer names the trace, never the exception's text."""
    from searchtrace.errors import SearchFailed, error_object

    class Failing:
        name = "failing"

        def rerank(self, query, fused, top_k):
            raise RuntimeError("secret detail at /srv/private/index")

    retriever, exporter = traced(reranker=Failing())
    with pytest.raises(SearchFailed) as caught:
        retriever.search({"query": "harbour", "mode": "fast"})
    root = spans_by_name(exporter)["search"]
    trace_id = format(root.context.trace_id, "032x")
    body = error_object(caught.value)["error"]
    assert body["code"] == "SEARCH_ERROR" and "secret" not in body["message"] and trace_id in body["message"]
    assert root.attributes[v.ERROR_CODE] == "SEARCH_ERROR"
    assert "secret detail" in root.events[0].attributes["exception.message"]


def test_the_outcome_records_titles_and_the_triples_of_relation_hits():
    from searchtrace.traces import attributes as attrs

    out = attrs.outcome(["d1", "rel:ab", "d2"], ["high", "high", "low"], [0.9, 0.8, 0.2], 0.9, False, [], None,
                        titles=["River Vell", "", ""], relations=[("rel:ab", "Vell", "flows past", "Amberlow")])
    assert out[v.RESULT_TITLES] == ["River Vell", "", ""]
    assert (out[v.RELATION_IDS], out[v.RELATION_SUBJECTS], out[v.RELATION_PREDICATES], out[v.RELATION_OBJECTS]) == (
        ["rel:ab"], ["Vell"], ["flows past"], ["Amberlow"])
    bare = attrs.outcome(["d1"], ["high"], [0.9], 0.9, False, [], None)
    assert v.RESULT_TITLES not in bare and v.RELATION_IDS not in bare


def test_a_cold_start_is_taken_once():
    from searchtrace.retriever.search.cold import ColdStart

    flag = ColdStart()
    assert (flag.take(), flag.take()) == (True, False)  # a process's first search is cold, load seen or not
    flag.loaded()
    assert (flag.take(), flag.take()) == (True, False)
