"""The response record and the error object: one writer each, a reader that names what is wrong."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from searchtrace.errors import (
    ErrorCode,
    NotFoundError,
    SearchFailed,
    SearchtraceError,
    ValidationError,
    error_from_object,
    error_object,
)
from searchtrace.names import Band, Mode
from searchtrace.retriever.response import (
    Metadata,
    RelationHit,
    Result,
    RetryHints,
    ScoreDetail,
    SearchResponse,
    Triple,
)

RESPONSE = SearchResponse(
    results=(
        Result("d1", "Dorian Fleet\nA physician.", 0.724, Band.HIGH,
               Metadata("Dorian Fleet", "https://x", "en", "2020-01-02", ("people", "ember"), "gazetteer"),
               ScoreDetail(0.61, None, 0.2, 0.9, 1, None, 3, 1)),
        Result("d2", "text only", 0.3, Band.LOW, Metadata()),
        RelationHit("rel:1", "Dorian Fleet", "wrote", "The Waters", 0.51, Band.MEDIUM,
                    Metadata("Dorian Fleet", "https://x", "en", "2020-01-02", ("people",), "gazetteer"), ("d1", "d3")),
    ),
    kg=(Triple("Dorian Fleet", "wrote", "The Waters", "d1"),),
    rewrite_terms=("Emberly",),
    best_score=0.724,
    no_confident_results=False,
    retry_hints=RetryHints(("Emberly",), ("springs",), "Emberly springs", "Emberly"),
    trace_id="ab" * 16,
    mode=Mode.GRAPH,
    degraded=("graph",),
)


def test_to_json_writes_the_contract_in_its_key_order():
    wire = RESPONSE.to_json()
    assert list(wire) == ["results", "kg", "rewrite_terms", "bestScore", "noConfidentResults", "retryHints",
                          "traceId", "mode", "degraded"]
    chunk, plain, relation = wire["results"]
    assert list(chunk) == ["id", "content", "score", "confidenceBand", "component_type", "metadata",
                           "score_components", "ranks"]
    assert chunk["score_components"] == {"dense": 0.61, "keyword": None, "graph": 0.2, "fused": 0.9}
    assert chunk["ranks"] == {"dense": 1, "keyword": None, "graph": 3, "fused": 1}
    assert "score_components" not in plain and plain["metadata"]["tags"] == []
    assert list(relation) == ["id", "content", "score", "confidenceBand", "component_type", "metadata", "subject",
                              "relation", "object", "doc_ids"]
    assert relation["content"] == "Dorian Fleet wrote The Waters"
    assert (relation["metadata"]["title"], relation["metadata"]["collection"]) == ("Dorian Fleet", "gazetteer")
    assert relation["doc_ids"] == ["d1", "d3"]
    assert wire["retryHints"] == {"detectedEntities": ["Emberly"], "relatedTerms": ["springs"],
                                  "narrowerQuery": "Emberly springs", "broaderQuery": "Emberly"}
    assert wire["kg"] == [{"subject": "Dorian Fleet", "relation": "wrote", "object": "The Waters", "doc_id": "d1"}]
    assert "traceUrl" not in wire and RESPONSE.with_trace_url(None) is RESPONSE
    assert RESPONSE.with_trace_url("http://d/t").to_json()["traceUrl"] == "http://d/t"


def test_from_json_reads_back_what_to_json_wrote():
    assert SearchResponse.from_json(json.loads(json.dumps(RESPONSE.to_json()))) == RESPONSE
    linked = RESPONSE.with_trace_url("http://d/t")
    assert SearchResponse.from_json(linked.to_json()) == linked
    assert RESPONSE.chunks == RESPONSE.results[:2] and RESPONSE.relations == RESPONSE.results[2:]


def test_from_json_accepts_what_another_retriever_leaves_out():
    minimal = SearchResponse.from_json({"results": [{"id": "x", "score": 1}]})
    assert minimal.results == (Result("x", "", 1.0, Band.LOW, Metadata()),)
    assert (minimal.mode, minimal.kg, minimal.retry_hints, minimal.best_score) == (Mode.FAST, (), None, 0.0)
    fact = SearchResponse.from_json({"results": [{"id": "r", "score": 1, "component_type": "relation",
                                                  "subject": "A", "relation": "r", "object": "B"}]}).results[0]
    assert fact == RelationHit("r", "A", "r", "B", 1.0, Band.LOW, Metadata(), ())


@pytest.mark.parametrize("payload,field", [
    ([], None),
    ({"results": {}}, "results"),
    ({"results": [None]}, "results[0]"),
    ({"results": [{"id": "x", "score": 1}, "x"]}, "results[1]"),
    ({"results": [{"score": 1}]}, "results[0].id"),
    ({"results": [{"id": "", "score": 1}]}, "results[0].id"),
    ({"results": [{"id": "x", "score": "high"}]}, "results[0].score"),
    ({"results": [{"id": "x", "score": float("nan")}]}, "results[0].score"),
    ({"results": [{"id": "x", "score": 1, "confidenceBand": "sure"}]}, "results[0].confidenceBand"),
    ({"results": [{"id": "x", "score": 1, "component_type": "table"}]}, "results[0].component_type"),
    ({"results": [{"id": "x", "score": 1, "metadata": {"tags": "a"}}]}, "results[0].metadata.tags"),
    ({"results": [{"id": "r", "score": 1, "component_type": "relation", "subject": "A"}]}, "results[0].relation"),
    ({"results": [], "kg": [{"subject": "A", "relation": 1, "object": "B"}]}, "kg[0].relation"),
    ({"results": [{"id": "r", "score": 1, "component_type": "relation", "subject": "A", "relation": "r",
                   "object": "B", "doc_ids": "d1"}]}, "results[0].doc_ids"),
    ({"results": [], "mode": "turbo"}, "mode"),
    ({"results": [], "retryHints": {"detectedEntities": []}}, "retryHints.relatedTerms"),
])
def test_from_json_names_the_field_at_fault(payload, field):
    with pytest.raises(ValidationError) as caught:
        SearchResponse.from_json(payload)
    assert caught.value.field == field
    assert field is None or caught.value.message.startswith(field)


def test_the_error_object_is_written_once_and_read_back_as_its_error():
    exc = NotFoundError("unknown document ids: x", field="ids")
    assert error_object(exc) == {"error": {"code": "NOT_FOUND", "message": "unknown document ids: x",
                                           "field": "ids"}}
    for code in ErrorCode:
        back = error_from_object({"error": {"code": code.value, "message": "m", "field": None}})
        assert isinstance(back, SearchtraceError) and back.code is code and back.message == "m"
    back = error_from_object(error_object(exc))
    assert type(back) is NotFoundError and back.field == "ids"
    unknown = error_from_object({"error": {"code": "X"}})
    assert isinstance(unknown, SearchFailed) and unknown.message == "X"
    assert error_from_object({"results": []}) is None and error_from_object("error") is None


_GONE = object()
_ODD_VALUES = [_GONE, None, True, False, 0, 1, -1, 2.5, float("nan"), float("inf"), "", "x", "high", "medium", "low",
               "chunk", "relation", "0.5", [], ["a"], ["a", 1], ("a",), {}, {"title": "T"}]
_PLAIN_META = {"title": "T", "url": "u", "language": "en", "timestamp": "t", "tags": ["a", "b"], "collection": "c"}
_PLAIN_HIT = {"id": "d1", "content": "c", "score": 0.5, "confidenceBand": "high", "component_type": "chunk",
              "metadata": _PLAIN_META, "score_components": {"dense": 0.5}, "ranks": {"fused": 2}}


def _edited(base: dict, key: str, value: object) -> dict:
    return {k: v for k, v in {**base, key: value}.items() if v is not _GONE}


_EDITED_HITS = [_edited(_PLAIN_HIT, key, value) for key in [*_PLAIN_HIT, "other"] for value in _ODD_VALUES] + [
    _edited(_PLAIN_HIT, "metadata", _edited(_PLAIN_META, key, value))
    for key in [*_PLAIN_META, "other"] for value in _ODD_VALUES] + [_PLAIN_HIT, *_ODD_VALUES[1:]]


def test_a_plain_passage_read_fast_is_what_the_checked_reader_reads():
    """The fast read of a plain passage (exact types) gives what the field-by-field reader gives, and
    anything it does not take goes to that reader: the same record, or the same error naming the field.
    Each field of a served passage (and of its metadata) is changed to each odd value in turn, or left out."""
    from searchtrace.retriever.response import _hit_from_json

    refused = 0
    for hit in _EDITED_HITS:
        try:
            expected = _hit_from_json(hit, 0)
        except ValidationError as exc:
            refused += 1
            with pytest.raises(ValidationError) as caught:
                SearchResponse.from_json({"results": [hit]})
            assert (caught.value.message, caught.value.field) == (exc.message, exc.field), hit
            continue
        assert SearchResponse.from_json({"results": [hit]}).results == (expected,), hit
    assert 0 < refused < len(_EDITED_HITS)


def test_a_served_answer_takes_the_fast_read():
    from searchtrace.retriever.response import _plain_chunk

    wire = json.loads(json.dumps(RESPONSE.to_json()))
    passage = wire["results"][0]
    assert _plain_chunk(passage) == RESPONSE.results[0]
    assert _plain_chunk({**passage, "score": 1}) == replace(RESPONSE.results[0], score=1.0)
    assert _plain_chunk({**passage, "score": "0.5"}) is None and _plain_chunk(wire["results"][2]) is None


_SERVED_HIT = {k: v for k, v in _PLAIN_HIT.items() if k not in ("score_components", "ranks")}
_SERVED_EDITS = [_edited(_SERVED_HIT, key, value) for key in [*_SERVED_HIT, "other"] for value in _ODD_VALUES] + [
    _edited(_SERVED_HIT, "metadata", _edited(_PLAIN_META, key, value))
    for key in [*_PLAIN_META, "other"] for value in _ODD_VALUES] + [
    {k: v for k, v in _SERVED_HIT.items() if k != "metadata"}, {**_SERVED_HIT, "metadata": None}]
_TRIPLE_JSON = {"subject": "A", "relation": "r", "object": "B", "doc_id": "d1"}
_KG_EDITS = [[_edited(_TRIPLE_JSON, key, value)] for key in [*_TRIPLE_JSON, "other"] for value in _ODD_VALUES] + [
    None, "ab", {}, {"a": 1}, [], [_TRIPLE_JSON, _TRIPLE_JSON]]


def _read(read, payload):
    """What ``read(payload)`` gives, or the (message, field) of its refusal; records compared by repr, so a
    score read as an int rather than a float, or tags as a list, differs."""
    try:
        return repr(read(payload))
    except ValidationError as exc:
        return exc.message, exc.field


def test_each_fast_read_gives_what_the_checked_reader_gives():
    """A served passage (and its metadata), each field changed to each odd value or left out, and a triple
    likewise, read as a response: the same records (types included) as field by field, or the same refusal."""
    from searchtrace.retriever.response import _hit_from_json, _triple_from_json

    def checked(payload):
        return (tuple(_hit_from_json(r, i) for i, r in enumerate(payload["results"])),
                tuple(_triple_from_json(t, i) for i, t in enumerate(payload.get("kg") or [])))

    cases = [{"results": [_SERVED_HIT, hit, _SERVED_HIT]} for hit in _SERVED_EDITS + _EDITED_HITS] + [
        {"results": [_SERVED_HIT], "kg": kg} for kg in _KG_EDITS]
    refused = 0
    for payload in cases:
        expected = _read(checked, payload)
        refused += isinstance(expected, tuple)
        assert _read(lambda p: (lambda r: (r.results, r.kg))(SearchResponse.from_json(p)), payload) == expected, \
            payload
    assert 0 < refused < len(cases)


@pytest.mark.parametrize("shown", [0, 1, 2, 3, 10, -1])
def test_the_ranked_read_is_the_full_read_cut(shown):
    """``ranked_from_json`` is ``from_json`` with the results cut to the first ``shown`` passages, and the
    ranking every passage's id, score and band; the same refusal for each malformed answer."""
    from searchtrace.retriever.response import Ranking

    def full(payload):
        response = SearchResponse.from_json(payload)
        chunks = response.chunks
        return (replace(response, results=chunks[:shown]),
                Ranking(tuple(c.id for c in chunks), tuple(c.score for c in chunks), tuple(c.band for c in chunks)))

    wire = json.loads(json.dumps(RESPONSE.to_json()))
    answers = [{**wire, "results": [_SERVED_HIT, hit, *wire["results"], _SERVED_HIT, hit]}
               for hit in _SERVED_EDITS + _EDITED_HITS] + [
        wire, {"results": []}, {"results": [_SERVED_HIT] * 12}, [], {"results": {}}, {"results": [], "mode": "x"}]
    for payload in answers:
        assert _read(lambda p: SearchResponse.ranked_from_json(p, shown), payload) == _read(full, payload), payload
