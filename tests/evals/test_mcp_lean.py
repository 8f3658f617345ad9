"""The direct MCP client's reading (:mod:`searchtrace.evals.runs.targets.lean`) against the ``mcp`` SDK's, the
careful path: a ``tools/call`` result it reads is one the SDK accepts and reads to the same text blocks, error
flag and structured content, and anything else it leaves to the SDK (``Unsupported``), for any result
(hypothesis); a message it decodes is the one the standard library decodes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchtrace.evals.runs.targets.lean import (
    PROTOCOL_VERSIONS,
    RpcError,
    Unsupported,
    _answer,
    _initialize,
    decode,
    tool_result,
)

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=5))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                    max_leaves=8)
TEXT_BLOCK = st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)})
BLOCK = st.one_of(
    TEXT_BLOCK,
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=5)},
                          optional={"annotations": st.fixed_dictionaries({}, optional={
                              "priority": st.floats(-1, 2), "audience": st.lists(st.sampled_from(["user", "x"]))}),
                                    "_meta": st.dictionaries(st.text(max_size=3), JSON, max_size=2)}),
    st.fixed_dictionaries({"type": st.sampled_from(["image", "audio"]), "data": st.just("aGk="),
                           "mimeType": st.just("image/png")}),
    st.fixed_dictionaries({"type": st.sampled_from(["text", "resource_link", "nope"])}, optional={
        "text": JSON, "uri": st.just("file:///a"), "name": st.just("a")}),
    JSON,
)
RESULT = st.fixed_dictionaries({}, optional={
    "content": st.one_of(st.lists(BLOCK, max_size=3), st.lists(TEXT_BLOCK, max_size=3), JSON),
    "isError": st.one_of(st.booleans(), JSON),
    "structuredContent": st.one_of(st.none(), st.dictionaries(st.text(max_size=4), JSON, max_size=3), JSON),
    "_meta": st.one_of(st.dictionaries(st.text(max_size=4), JSON, max_size=2), JSON),
    "extra": JSON,
})


def sdk_reads(raw: Any) -> Any:
    """The SDK's reading of a tools/call result, as its session reads one (or the exception it raises)."""
    from mcp.client import session
    from mcp_types import methods

    methods.validate_server_result("tools/call", "2025-11-25", raw)
    return session._CallToolResultAdapter.validate_python(raw, by_name=False)


@settings(max_examples=400, deadline=None)
@given(RESULT)
def test_a_result_read_directly_is_the_one_the_sdk_reads_and_anything_else_is_left_to_it(raw):
    try:
        mine = tool_result(raw)
    except Unsupported:
        return  # the SDK reads it, or refuses it in its own words
    theirs = sdk_reads(raw)  # never raises: whatever the direct client reads, the SDK accepts
    assert [b.text for b in mine.content] == [b.text for b in theirs.content]
    assert all(b.type == "text" for b in theirs.content)
    assert mine.is_error is theirs.is_error
    assert mine.structured_content == theirs.structured_content


def test_the_results_a_search_answers_are_read_directly():
    """What searches answer (text blocks, structured content, an error flag) is not left to the SDK."""
    plain = tool_result({"content": [{"type": "text", "text": "[1]"}], "structuredContent": {"results": []}})
    assert ([b.text for b in plain.content], plain.is_error, plain.structured_content) == (["[1]"], False,
                                                                                            {"results": []})
    assert tool_result({"content": [], "isError": True, "_meta": {}}).is_error is True
    for odd in ({"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]},
                {"content": [{"type": "text", "text": "x", "annotations": {"priority": 1}}]},
                {"structuredContent": {}}, {"content": [], "isError": 1}, {"content": [], "later": 1}):
        with pytest.raises(Unsupported):
            tool_result(odd)


@given(JSON, st.text(st.characters(codec="utf-8"), max_size=30))
def test_a_message_decoded_directly_is_the_one_json_decodes(value, text):
    """Integers beyond 64 bits (and digits in strings) included: read whole, as the SDK reads them."""
    for data in (json.dumps(value).encode(), json.dumps([text, value], ensure_ascii=False).encode()):
        got = decode(data)
        assert got == json.loads(data)
        assert json.dumps(got) == json.dumps(json.loads(data))  # 2**70 stays an int, not a float equal to it


def test_an_id_of_digits_in_a_string_is_read_directly():
    assert decode(b'{"id": "1796000000000000000123", "n": 123456789012345678901}') == {
        "id": "1796000000000000000123", "n": 123456789012345678901}


@pytest.mark.parametrize("data", [b"NaN", b"[1,]", b"\xef\xbb\xbf{}", b'"\\ud800"', b"[Infinity]"])
def test_what_orjson_does_not_read_is_left_to_the_sdk(data):
    with pytest.raises(Unsupported):
        decode(data)


def test_a_response_is_its_result_its_error_or_left_to_the_sdk():
    assert _answer({"jsonrpc": "2.0", "id": 3, "result": {"content": []}}, 3) == {"content": []}
    with pytest.raises(RpcError, match=r"index offline \(MCP error -32603\)") as caught:
        _answer({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "index offline"}}, 3)
    assert caught.value.code == -32603
    for odd in ({"jsonrpc": "2.0", "id": 4, "result": {}}, {"id": 3, "result": {}},
                {"jsonrpc": "2.0", "id": 3, "error": {"code": "x", "message": "m"}},
                {"jsonrpc": "2.0", "id": 3, "result": [1]}, [1]):
        with pytest.raises(Unsupported):
            _answer(odd, 3)


def test_the_handshake_offers_and_reads_the_versions_the_sdk_does_in_legacy_mode():
    """Written out to spare the SDK's import: held equal here, so an upgraded SDK shows."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    assert PROTOCOL_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    assert _initialize(1)["params"]["protocolVersion"] == LATEST_HANDSHAKE_VERSION
