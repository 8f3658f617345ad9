"""Request validation at the boundary."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchtrace.errors import ValidationError, error_object
from searchtrace.retriever.request import validate_request


def error_of(raw):
    with pytest.raises(ValidationError) as info:
        validate_request(raw)
    return info.value


def test_null_is_the_default_only_where_the_schema_admits_it():
    from searchtrace.retriever.request import request_schema

    properties = request_schema()["properties"]
    nullable = sorted(n for n, p in properties.items() if isinstance(p["type"], list) and "null" in p["type"])
    req = validate_request({"query": "q", **{name: None for name in nullable}})
    assert all(getattr(req, name) is None for name in nullable)
    for name in set(properties) - set(nullable) - {"query"}:
        assert error_of({"query": "q", name: None}).field == name


def test_what_the_schema_allows_the_checks_accept():
    """JSON Schema's integers include 5.0; fewer candidates than top_k are raised to it; RFC 3339 date-times
    of any precision; a query of one shown character among blanks."""
    req = validate_request({"query": "\u200b q \u200b", "top_k": 5.0, "candidates": 2, "depth": 3.0,
                            "created_after": "2020-01-01T00:00:00.1234567z", "created_before": "2021-02-03"})
    assert (req.top_k, req.candidates, req.depth) == (5, 5, 3) and type(req.top_k) is int
    assert req.created_after.microsecond == 123456


def test_the_query_pattern_and_the_check_agree_on_every_character():
    import re

    from searchtrace.retriever.request import _blank, request_schema

    pattern = re.compile(request_schema()["properties"]["query"]["pattern"])
    disagree = [c for c in range(0x10000) if (not _blank(chr(c))) != bool(pattern.search(chr(c)))]
    assert disagree == list(range(0xD800, 0xE000))  # lone surrogates: no text holds one, the check refuses them
    assert pattern.search("\U0001f600") and validate_request({"query": "\U0001f600"})  # beyond the BMP: shown
    assert not pattern.search("\u200b\u3164 \t") and error_of({"query": "\u200b\u3164 \t"}).field == "query"


def test_defaults():
    req = validate_request({"query": "tides"})
    assert (req.top_k, req.candidates, req.mode, req.depth, req.min_relevance) == (5, 100, None, None, None)


@pytest.mark.parametrize("raw, field", [
    ({}, "query"),
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({"query": "x" * 8193}, "query"),
    ({"query": "é" * 8193}, "query"),  # characters, as JSON Schema's maxLength counts
    ({"query": 3}, "query"),
    ({"query": "q", "top_k": 0}, "top_k"),
    ({"query": "q", "top_k": 501}, "top_k"),
    ({"query": "q", "top_k": "5"}, "top_k"),
    ({"query": "q", "top_k": 2.5}, "top_k"),
    ({"query": "q", "top_k": True}, "top_k"),
    ({"query": "q", "candidates": 501}, "candidates"),
    ({"query": "q", "candidates": 0}, "candidates"),
    ({"query": "q", "doc_ids": ["d"] * 1001}, "doc_ids"),
    ({"query": "q", "min_relevance": 1.5}, "min_relevance"),
    ({"query": "q", "min_relevance": -0.1}, "min_relevance"),
    ({"query": "q", "mode": "turbo"}, "mode"),
    ({"query": "q", "depth": 4}, "depth"),
    ({"query": "q", "depth": -1}, "depth"),
    ({"query": "q", "colour": "red"}, "colour"),
    ({"query": "\x00\u200b\u200f\u2066\ufeff \t"}, "query"),  # NUL, zero-width space, bidi marks, BOM
    ({"query": "\u200d\u3164"}, "query"),
    ({"query": "q", "created_after": "2025"}, "created_after"),  # a bare year, not seconds since 1970
    ({"query": "q", "created_after": "0"}, "created_after"),
    ({"query": "q", "created_after": 2025}, "created_after"),
    ({"query": "q", "created_before": 1.5e9}, "created_before"),
    ({"query": "q", "created_before": "2025-01-01T10:00:00"}, "created_before"),  # no zone
    ({"query": "q", "created_before": "2025-02-30"}, "created_before"),
    ({"query": "q", "created_before": "01/02/2025"}, "created_before"),
    ({"query": "q", "created_before": True}, "created_before"),
    ({"query": None}, "query"),  # null where the schema has no null: refused by name, never a TypeError later
    ({"query": "q", "top_k": None}, "top_k"),
    ({"query": "q", "candidates": None}, "candidates"),
    ({"query": "q", "debug": None}, "debug"),
])
def test_rejections_name_the_field(raw, field):
    err = error_of(raw)
    assert err.field == field
    assert error_object(err)["error"]["code"] == "VALIDATION_ERROR"
    assert field in err.message


@pytest.mark.parametrize("value, expected", [
    ("2025-01-31", "2025-01-31T00:00:00+00:00"),
    ("2025-01-31T08:00:00Z", "2025-01-31T08:00:00+00:00"),
    ("2025-01-31T08:00Z", "2025-01-31T08:00:00+00:00"),
    ("2025-01-31T08:00:00.5+02:00", "2025-01-31T08:00:00.500000+02:00"),
    ("2025-01-31 08:00:00-0130", "2025-01-31T08:00:00-01:30"),
])
def test_iso_dates_accepted(value, expected):
    assert validate_request({"query": "q", "created_after": value}).created_after.isoformat() == expected


def test_a_query_with_one_visible_character_among_invisible_ones_is_kept():
    assert validate_request({"query": "\u200bé\u200f"}).query == "\u200bé\u200f"


def test_messages_list_allowed_values():
    assert "fast" in error_of({"query": "q", "mode": "x"}).message
    assert "allowed fields" in error_of({"query": "q", "bogus": 1}).message


def test_limits_accepted():
    assert validate_request({"query": "x" * 8192, "top_k": 500, "candidates": 500, "depth": 3}).top_k == 500
    assert validate_request({"query": "q", "top_k": 1, "candidates": 1}).candidates == 1


def test_non_mapping():
    assert error_of(["query"]).field is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)
keys = st.sampled_from(["query", "top_k", "candidates", "min_relevance", "mode", "depth", "tags_any",
                        "created_after", "debug", "gap_cutoff", "unknown"])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(keys, json_values, max_size=6) | json_values)
def test_any_request_validates_or_gives_validation_error(raw):
    try:
        validate_request(raw)
    except ValidationError as exc:
        assert error_object(exc)["error"]["code"] == "VALIDATION_ERROR"
        assert exc.message
