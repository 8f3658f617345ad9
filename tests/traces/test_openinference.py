from searchtrace.traces import vocabulary as v
from searchtrace.traces.spans.openinference import documents, expand


def test_documents_keys():
    assert documents("retrieval.documents", ["a", "b"], [0.5, 0.25], ["x", "y"]) == {
        "retrieval.documents.0.document.id": "a", "retrieval.documents.0.document.score": 0.5,
        "retrieval.documents.0.document.content": "x",
        "retrieval.documents.1.document.id": "b", "retrieval.documents.1.document.score": 0.25,
        "retrieval.documents.1.document.content": "y",
    }


def test_expand_retriever_and_reranker_only():
    retriever = {v.OPENINFERENCE_SPAN_KIND: "RETRIEVER", v.CANDIDATE_IDS: ("d1",), v.CANDIDATE_SCORES: (0.9,)}
    assert expand(retriever) == retriever | {"retrieval.documents.0.document.id": "d1",
                                             "retrieval.documents.0.document.score": 0.9}
    reranker = {v.OPENINFERENCE_SPAN_KIND: "RERANKER", v.RERANK_INPUT_IDS: ("a", "b"), v.RERANK_INPUT_SCORES: (2.0, 1.0),
                v.RERANK_OUTPUT_IDS: ("b",), v.RERANK_OUTPUT_SCORES: (3.0,)}
    out = expand(reranker)
    assert out["reranker.input_documents.1.document.id"] == "b"
    assert out["reranker.output_documents.0.document.score"] == 3.0
    chain = {v.OPENINFERENCE_SPAN_KIND: "CHAIN", v.CANDIDATE_IDS: ("d1",), v.CANDIDATE_SCORES: (0.9,)}
    assert expand(chain) == chain
