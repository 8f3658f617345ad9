"""The typed-read family: each kind accepts what it says and converts it; a refusal is the caller's own error."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchtrace.errors import DataError, ValidationError
from searchtrace.typedreads import FLAG, INTEGER, LIST, NUMBER, OBJECT, REAL, STRING, STRINGS, Kind, read


class Refused(Exception):
    def __init__(self, where: str, expected: str, got: object) -> None:
        super().__init__(where, expected, got)
        self.where, self.expected, self.got = where, expected, got


def refuse(where: str, expected: str, got: object) -> Refused:
    return Refused(where, expected, got)


@pytest.mark.parametrize(("kind", "value", "want"), [
    (STRING, "", ""), (STRING, "x", "x"),
    (INTEGER, 0, 0), (INTEGER, -3, -3),
    (REAL, 1, 1), (REAL, 0.5, 0.5), (REAL, math.inf, math.inf),
    (NUMBER, 2, 2.0), (NUMBER, -0.5, -0.5),
    (FLAG, True, True), (FLAG, False, False),
    (LIST, [], []), (LIST, [1, "a"], [1, "a"]),
    (OBJECT, {}, {}), (OBJECT, {"a": 1}, {"a": 1}),
    (STRINGS, [], ()), (STRINGS, ["a", "b"], ("a", "b")),
])
def test_a_value_of_the_kind_comes_back_typed(kind, value, want):
    got = read(value, kind, "here", refuse)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize(("kind", "value", "expected"), [
    (STRING, 1, "a string"), (STRING, None, "a string"), (STRING, b"x", "a string"),
    (INTEGER, True, "an integer"), (INTEGER, 1.0, "an integer"), (INTEGER, "1", "an integer"),
    (REAL, False, "a number"), (REAL, "1", "a number"), (REAL, None, "a number"),
    (NUMBER, math.nan, "a number"), (NUMBER, math.inf, "a number"), (NUMBER, True, "a number"),
    (FLAG, 1, "true or false"), (FLAG, "true", "true or false"),
    (LIST, (), "a list"), (LIST, {}, "a list"),
    (OBJECT, [], "an object"), (OBJECT, None, "an object"),
    (STRINGS, ["a", 1], "a list of strings"), (STRINGS, ("a",), "a list of strings"),
])
def test_any_other_value_is_refused_with_where_what_and_the_value(kind, value, expected):
    with pytest.raises(Refused) as refused:
        read(value, kind, "results[3].score", refuse)
    assert (refused.value.where, refused.value.expected, refused.value.got) == ("results[3].score", expected, value)


def test_the_error_is_the_callers_own_class_code_and_words():
    def data_error(where: str, expected: str, got: object) -> DataError:
        return DataError("run.json", 4, f"{where}: expected {expected}, got {got!r}")

    with pytest.raises(DataError) as refused:
        read("7", INTEGER, "queries", data_error)
    assert str(refused.value) == "run.json:4: queries: expected an integer, got '7'"
    with pytest.raises(ValidationError) as invalid:
        read(None, STRING, "query", lambda where, expected, got: ValidationError(f"{where} must be {expected}",
                                                                                 field=where))
    assert (invalid.value.message, invalid.value.field) == ("query must be a string", "query")


def test_a_narrowed_kind_names_the_wider_kind_first_then_its_own_words():
    fraction = NUMBER.such_that(lambda v: 0 <= v <= 1, "in [0, 1]")
    assert read(1, fraction, "x", refuse) == 1.0
    with pytest.raises(Refused) as wrong_type:
        read("high", fraction, "x", refuse)
    assert wrong_type.value.expected == "a number"
    with pytest.raises(Refused) as out_of_range:
        read(1.5, fraction, "x", refuse)
    assert (out_of_range.value.expected, out_of_range.value.got) == ("in [0, 1]", 1.5)


def test_a_kind_worded_differently_accepts_the_same_values():
    finite = NUMBER.saying("a finite number")
    assert read(3, finite, "x", refuse) == 3.0
    with pytest.raises(Refused) as refused:
        read(math.nan, finite, "x", refuse)
    assert refused.value.expected == "a finite number"


def test_or_null_takes_none_and_says_so():
    maybe = STRINGS.or_null()
    assert read(None, maybe, "x", refuse) is None
    assert read(["a"], maybe, "x", refuse) == ("a",)
    with pytest.raises(Refused) as refused:
        read([1], maybe, "x", refuse)
    assert refused.value.expected == "a list of strings or null"


def test_a_kind_of_ones_own_converts_what_it_accepts():
    upper: Kind[str] = Kind("a lower-case word", lambda v: isinstance(v, str) and v.isalpha() and v.islower(),
                            str.upper)
    assert read("abc", upper, "x", refuse) == "ABC"
    assert Kind("a string", lambda v: isinstance(v, str)).refused(3) == "a string"
    assert upper.refused("abc") is None


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                           max_leaves=8)


@given(json_values)
@pytest.mark.parametrize("kind", [STRING, INTEGER, REAL, NUMBER, FLAG, LIST, OBJECT, STRINGS, NUMBER.or_null()])
def test_any_json_value_is_read_or_refused_never_a_crash(kind, value):
    try:
        read(value, kind, "x", refuse)
    except Refused as refused:
        assert refused.expected and refused.got is value
