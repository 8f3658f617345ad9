"""normalize_name and candidate_spans: exact outputs and invariants."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchtrace.errors import ValidationError
from searchtrace.retriever.graph.normalize import _words, candidate_spans, normalize_name, strip_article


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("The Beatles", "beatles"),
        ("  the   BEATLES  ", "beatles"),
        ("A Tribe Called Quest", "tribe called quest"),
        ("An American in Paris", "american in paris"),
        ("Theodore", "theodore"),  # an article only as a whole word
        ("the", "the"),  # a lone article stays
        ("The A Team", "the a team"),  # two articles: nothing stripped (idempotence)
        ("Café Müller", "cafe muller"),
        ("Ελληνικά", "ελληνικα"),
        ("Straße", "strasse"),
        ("İstanbul", "istanbul"),
        ("ﬁnal Ｆａｎｔａｓｙ Ⅻ", "final fantasy xii"),
        ("Jean-Paul Sartre", "jean paul sartre"),
        ("Person–centered therapy", "person centered therapy"),  # en dash
        ("O'Brien", "obrien"),
        ("O\u2019Brien", "obrien"),
        ("don't", "dont"),
        ("Carl Rogers's theory", "carl rogers theory"),
        ("The Beatles' song", "beatles song"),
        ("McDonald’s", "mcdonald"),
        ("'Quoted' name", "quoted name"),
        ("U.S. Route 66", "u s route 66"),
        ("1.355 in 2018", "1 355 in 2018"),
        ("AT&T / C++", "at t c"),
        ("x'}) DETACH DELETE n //", "x detach delete n"),
        ("北京大学", "北京大学"),
        ("हिन्दी", "हिन्दी"),  # the virama is part of the word, not an accent
        ("tab\tand\nnewline", "tab and newline"),
        ("!!!", ""),
        ("", ""),
    ],
)
def test_normalize_name(name, key):
    assert normalize_name(name) == key


def test_normalize_name_rejects_non_strings():
    with pytest.raises(ValidationError, match="entity name must be a str, got int"):
        normalize_name(3)  # type: ignore[arg-type]


def test_candidate_spans_longest_first_then_left_to_right():
    assert candidate_spans("Who founded the Beatles?", max_len=6) == [
        "who founded the beatles",
        "who founded the",
        "founded the beatles",
        "who founded",
        "founded the",
        "beatles",  # "the beatles" minus its article
        "who",
        "founded",
        "the",
    ]


def test_candidate_spans_max_len_and_dedup():
    assert candidate_spans("x y x y", max_len=2) == ["x y", "y x", "x", "y"]
    assert candidate_spans("a b a b", max_len=2) == ["b a", "b", "a"]  # "a b" is "b" once stripped
    assert candidate_spans("New York, New York", max_len=1) == ["new", "york"]


def test_candidate_spans_normalize_like_names():
    spans = candidate_spans("Where did Carl Rogers's Person-Centered Therapy start?")
    assert normalize_name("Carl Rogers") in spans
    assert normalize_name("Person-centered therapy") in spans
    assert spans[0] == "where did carl rogers person centered"


def test_candidate_spans_of_empty_text():
    assert candidate_spans("") == []
    assert candidate_spans(" ?! ") == []


@pytest.mark.parametrize("max_len", [0, -1, 1.5, True, None])
def test_candidate_spans_rejects_bad_max_len(max_len):
    with pytest.raises(ValidationError, match="max_len must be an int >= 1") as err:
        candidate_spans("q", max_len=max_len)  # type: ignore[arg-type]
    assert err.value.field == "max_len"


@given(st.text())
def test_normalize_name_is_idempotent_and_clean(s):
    key = normalize_name(s)
    assert normalize_name(key) == key
    assert key == key.strip() and "  " not in key
    assert all(ch == " " or ch.isalnum() or unicodedata.category(ch).startswith("M") for ch in key)


@given(st.text(), st.integers(min_value=1, max_value=4))
def test_candidate_spans_invariants(query, max_len):
    spans = candidate_spans(query, max_len)
    assert len(spans) == len(set(spans))
    assert all(s and normalize_name(s) == s for s in spans)
    lengths = [len(s.split()) for s in spans]
    assert lengths == sorted(lengths, reverse=True) and all(n <= max_len for n in lengths)
    words = normalize_name(query).split()
    assert all(w in spans for w in words)


def _spans_by_definition(query: str, max_len: int) -> list[str]:
    """Every n-gram, article stripped, longest first then left to right, each once (the first version)."""
    words = _words(query)
    seen: dict[str, None] = {}
    for n in range(min(max_len, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            seen.setdefault(" ".join(strip_article(words[i : i + n])))
    return sorted(seen, key=lambda span: -len(span.split()))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["the", "The", "a", "an", "x", "y", "Beatles'", "O'Brien"]), max_size=12),
       st.integers(1, 8))
def test_candidate_spans_match_their_definition(words, max_len):
    query = " ".join(words)
    assert candidate_spans(query, max_len) == _spans_by_definition(query, max_len)
