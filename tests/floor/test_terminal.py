"""The width human output fits, text cut to it, and a change's one sign (searchtrace.terminal)."""

from __future__ import annotations

import io
import math

import pytest

from searchtrace.cli import main
from searchtrace.errors import ConfigError
from searchtrace.terminal import DEFAULT_WIDTH, cells, fit, one_line, signed, width


def test_width_is_columns_else_80_off_a_terminal():
    assert width({"COLUMNS": "132"}, io.StringIO()) == 132
    assert width({"COLUMNS": " "}, io.StringIO()) == DEFAULT_WIDTH == 80  # blank is unset
    assert width({}, io.StringIO()) == 80  # a pipe, a file, a captured stream


@pytest.mark.parametrize("value", ["wide", "0", "-3", "80.5"])
def test_a_bad_columns_is_an_error_naming_it(value, monkeypatch, capsys):
    with pytest.raises(ConfigError, match=rf"COLUMNS must be a whole number >= 1, got '{value}'"):
        width({"COLUMNS": value}, io.StringIO())
    monkeypatch.setenv("COLUMNS", value)
    assert main(["traces", "list", "--home", "/nonexistent-home-for-width"]) == 2
    assert capsys.readouterr().err == f"error: COLUMNS must be a whole number >= 1, got '{value}'\n"


def test_fit_cuts_with_an_ellipsis_counting_cells():
    assert fit("harbour", 7) == "harbour"
    assert fit("harbour town", 8) == "harbour…"
    assert fit("港の町の名前", 5) == "港の…" and cells(fit("港の町の名前", 5)) == 5  # a wide character is two cells
    assert fit("abc", 0) == ""


def test_one_line_turns_controls_into_spaces():
    assert one_line("a\tb\nc\r\n\x1b[31md") == "a b c [31md"


@pytest.mark.parametrize("value, text", [(0.0123, "+0.0123"), (-0.0123, "-0.0123"), (0.0, "+0.0000"),
                                         (-0.0, "+0.0000"), (-1e-17, "+0.0000"), (-0.00004, "+0.0000"),
                                         (math.nan, "n/a")])
def test_signed_has_one_sign_and_no_negative_zero(value, text):
    assert signed(value) == text
    assert signed(-0.0000004, 6) == "+0.000000" and signed(-0.0000006, 6) == "-0.000001"
