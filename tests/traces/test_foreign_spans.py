"""Another retriever's spans read as searches (``traces.spans.foreign``): both conventions, document ids from
``document.id`` or a named metadata key, unidentified documents counted, missing scores None, stages, and our
own spans never foreign."""

from __future__ import annotations

import json

import pytest
from foreign_fixtures import genai, record_foreign, reranker, retriever
from trace_fixtures import FakeSearch, record

from searchtrace.traces.spans import foreign
from searchtrace.traces.spans.foreign import Document
from searchtrace.traces.spans.openinference import expand
from searchtrace.traces.spans.vocabulary import Convention


def test_an_openinference_retriever_span_is_a_search_with_its_documents_in_index_order():
    attrs = retriever("harbour town", [{"id": "d1", "score": 0.9, "content": "The harbour"},
                                       {"id": 7, "score": 1}])
    attrs["retrieval.documents.10.document.id"] = "d11"  # index 10 sorts after 7 as a number, not as text
    search = foreign.read_search(attrs)
    assert search is not None and search.convention is Convention.OPENINFERENCE
    assert search.query == "harbour town"
    assert search.documents == (Document("d1", 0.9, "The harbour"), Document("7", 1.0), Document("d11", None))
    assert search.unidentified == 0 and search.top_k is None and search.data_source is None


@pytest.mark.parametrize("metadata", [json.dumps({"source": "kb/a.md", "page": 3}), {"source": "kb/a.md"}],
                         ids=["json-string", "mapping"])
def test_the_id_comes_from_the_named_metadata_key_when_document_id_is_missing(metadata):
    attrs = retriever("q", [{"metadata": metadata, "content": "text"}, {"id": "given", "metadata": metadata}])
    assert foreign.read_search(attrs, "source").ids == ("kb/a.md", "given")  # document.id wins when sent
    assert foreign.read_search(attrs, "page").ids == ((None, "given") if isinstance(metadata, dict)
                                                      else ("3", "given"))  # an integer id as its digits


def test_a_document_without_an_id_is_counted_unidentified_never_guessed():
    attrs = retriever("q", [{"content": "one", "metadata": "{not json"}, {"content": "two", "metadata": "[1]"},
                            {"id": "d3"}])
    search = foreign.read_search(attrs, "source")
    assert search.ids == (None, None, "d3") and search.unidentified == 2
    assert [d.content for d in search.documents] == ["one", "two", None]


def test_a_missing_score_is_none_not_zero():
    search = foreign.read_search(retriever("q", [{"id": "a"}, {"id": "b", "score": 0.0},
                                                 {"id": "c", "score": "high"}]))
    assert search.scores == (None, 0.0, None)


def test_a_genai_retrieval_span_is_a_search():
    attrs = genai("tide tables", [{"id": "doc_123", "score": 0.95}, {"id": "doc_456"}, {"score": 0.5}], top_k=3)
    search = foreign.read_search(attrs)
    assert search.convention is Convention.GENAI and search.query == "tide tables"
    assert search.ids == ("doc_123", "doc_456", None) and search.scores == (0.95, None, 0.5)
    assert (search.top_k, search.data_source, search.unidentified) == (3, "kb-main", 1)


def test_a_genai_span_of_the_older_conventions_gives_its_top_k_by_the_request_key():
    assert foreign.read_search(genai("q", [], top_k=4, top_k_key="gen_ai.request.top_k")).top_k == 4


@pytest.mark.parametrize("documents", ["not json", json.dumps({"id": "a"}), json.dumps(["a", 1])])
def test_genai_documents_that_are_not_a_list_of_objects_are_no_documents(documents):
    attrs = {**genai("q", []), "gen_ai.retrieval.documents": documents}
    search = foreign.read_search(attrs)
    assert search is not None and search.documents == ()


def test_rerankers_and_embeddings_are_stages_not_searches():
    rr = reranker("q", [{"id": "a", "score": 0.1}, {"id": "b", "score": 0.2}], [{"id": "b", "score": 0.9}], 1)
    assert foreign.read_search(rr) is None and foreign.is_stage(rr)
    stage = foreign.read_rerank(rr)
    assert stage.query == "q" and stage.top_k == 1
    assert [d.id for d in stage.inputs] == ["a", "b"] and stage.outputs == (Document("b", 0.9),)
    embedding = {"openinference.span.kind": "EMBEDDING", "embedding.model_name": "m"}
    assert foreign.read_search(embedding) is None and foreign.is_stage(embedding)
    assert foreign.is_stage({"gen_ai.operation.name": "embeddings"})
    assert not foreign.is_stage(retriever("q", []))


def test_other_spans_are_not_searches():
    assert foreign.read_search({"openinference.span.kind": "CHAIN", "input.value": "q"}) is None
    assert foreign.read_search({"gen_ai.operation.name": "chat"}) is None
    assert foreign.read_search({}) is None


def test_our_own_spans_are_never_foreign_searches():
    spans, _ = record(FakeSearch(candidates=3))
    retrievers = [s for s in spans if s.attributes.get("openinference.span.kind") == "RETRIEVER"]
    assert retrievers  # dense, keyword, graph
    for span in spans:
        attrs = expand(span.attributes)  # as our OTLP export sends them, OpenInference documents added
        assert foreign.read_search(attrs, scope=span.instrumentation_scope.name) is None
        assert foreign.read_search(attrs) is None  # the searchtrace.* attributes say so without the scope
    assert foreign.convention(retriever("q", []), "searchtrace.serve") is None


def test_resource_names_service_and_project():
    (span,) = record_foreign(lambda t: t.start_span("r", attributes=retriever("q", [])).end(),
                             service="rag-app", project="support")
    assert foreign.source_of(span.resource.attributes) == ("rag-app", "support")
    assert foreign.source_of({}) == (None, None)
