"""The typed readers of environment variables: values, blanks, bounds, and the error that names the variable."""

from __future__ import annotations

import enum
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchtrace.envvalues import choice, flag, integer, number, pick, text
from searchtrace.errors import ConfigError, ErrorCode, ValidationError
from searchtrace.home import DEFAULT_HOME, Home
from searchtrace.progress import DEFAULT_EVERY_S, every_s

NAME = "SEARCHTRACE_EXAMPLE"


class Color(str, enum.Enum):
    RED = "red"
    DARK_BLUE = "dark-blue"


def env(value: str) -> dict[str, str]:
    return {NAME: value}


@pytest.mark.parametrize("reader", [text, flag, integer, number, lambda e, n: choice(e, n, Color)])
@pytest.mark.parametrize("environ", [{}, env(""), env("   "), env("\t\n")])
def test_unset_and_blank_read_as_none(reader, environ):
    assert reader(environ, NAME) is None


def test_text_is_kept_as_set():
    assert text(env(" secret "), NAME) == " secret "


@pytest.mark.parametrize("value, expected", [("1", True), ("true", True), ("YES", True), (" On ", True),
                                             ("0", False), ("False", False), ("no", False), ("OFF", False)])
def test_flag(value, expected):
    assert flag(env(value), NAME) is expected


@pytest.mark.parametrize("value, minimum, expected", [("0", 0, 0), (" 42 ", 0, 42), ("+7", 1, 7), ("1", 1, 1)])
def test_integer(value, minimum, expected):
    assert integer(env(value), NAME, minimum=minimum) == expected


@pytest.mark.parametrize("value, minimum, expected", [("2", None, 2.0), ("0.5", 0, 0.5), ("1e-3", 0, 0.001),
                                                      ("-1.5", None, -1.5), ("0", 0, 0.0)])
def test_number(value, minimum, expected):
    assert number(env(value), NAME, minimum=minimum) == expected


def test_choice_is_a_member_in_any_case():
    assert choice(env("Dark-Blue "), NAME, Color) is Color.DARK_BLUE


@pytest.mark.parametrize("read, value, message", [
    (flag, "maybe", "SEARCHTRACE_EXAMPLE must be one of 1, true, yes, on, 0, false, no, off, got 'maybe'"),
    (integer, "-3", "SEARCHTRACE_EXAMPLE must be a whole number >= 0, got '-3'"),
    (integer, "1.5", "SEARCHTRACE_EXAMPLE must be a whole number >= 0, got '1.5'"),
    (integer, "1_000", "SEARCHTRACE_EXAMPLE must be a whole number >= 0, got '1_000'"),
    (lambda e, n: integer(e, n, minimum=1), "0", "SEARCHTRACE_EXAMPLE must be a whole number >= 1, got '0'"),
    (number, "soon", "SEARCHTRACE_EXAMPLE must be a number, got 'soon'"),
    (number, "nan", "SEARCHTRACE_EXAMPLE must be a number, got 'nan'"),
    (number, "inf", "SEARCHTRACE_EXAMPLE must be a number, got 'inf'"),
    (lambda e, n: number(e, n, minimum=0), "-0.5", "SEARCHTRACE_EXAMPLE must be a number >= 0, got '-0.5'"),
    (lambda e, n: number(e, n, minimum=0.25), "0.2", "SEARCHTRACE_EXAMPLE must be a number >= 0.25, got '0.2'"),
    (lambda e, n: choice(e, n, Color), "blue", "SEARCHTRACE_EXAMPLE must be one of red, dark-blue, got 'blue'"),
])
def test_a_bad_value_names_the_variable_the_value_and_what_is_allowed(read, value, message):
    with pytest.raises(ConfigError) as caught:
        read(env(value), NAME)
    assert str(caught.value) == message
    assert caught.value.field == NAME
    assert isinstance(caught.value, (ValidationError, ValueError)) and caught.value.code is ErrorCode.VALIDATION_ERROR


@given(st.text(max_size=12), st.integers(-5, 5))
def test_integer_returns_a_bounded_int_or_names_the_variable(value, minimum):
    try:
        got = integer(env(value), NAME, minimum=minimum)
    except ConfigError as exc:
        assert exc.field == NAME and repr(value.strip()) in exc.message
    else:
        assert got is None or (isinstance(got, int) and got >= minimum)


@given(st.text(max_size=12))
def test_number_returns_a_finite_float_or_names_the_variable(value):
    try:
        got = number(env(value), NAME, minimum=0)
    except ConfigError as exc:
        assert exc.field == NAME and repr(value.strip()) in exc.message
    else:
        assert got is None or 0 <= got < float("inf")


def test_pick_takes_the_argument_then_the_variable_then_the_default():
    assert pick(3, 2, 1) == 3
    assert pick(None, 2, 1) == 2
    assert pick(None, None, 1) == 1
    assert pick(0, 2, 1) == 0 and pick(False, True, True) is False  # a falsy argument still wins


def test_the_home_variable_blank_is_the_default():
    assert Home.resolve(None, {"SEARCHTRACE_HOME": " "}) == Home(Path(DEFAULT_HOME))
    assert Home.resolve(None, {"SEARCHTRACE_HOME": "/data/st"}) == Home(Path("/data/st"))


@pytest.mark.parametrize("value, seconds", [("", DEFAULT_EVERY_S), ("2.5", 2.5), ("-1", 0.0), ("soon", DEFAULT_EVERY_S)])
def test_progress_seconds_are_read_leniently(value, seconds):
    """Progress lines space out long work already under way: a bad value there falls back, never stops it."""
    assert every_s({"SEARCHTRACE_PROGRESS_SECONDS": value}) == seconds
