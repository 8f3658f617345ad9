"""The width human output is laid out for, and text cut to it.

Every command that prints for a person fits its lines to :func:`width`:
``$COLUMNS`` when set, else the terminal's width, else 80 (a pipe, a file, a
CI log). Output for programs (``--json``, ``--format tsv``) is never cut.
Widths are counted in terminal cells, so a wide character counts two.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

from searchtrace.environment import COLUMNS
from searchtrace.envvalues import integer

__all__ = ["DEFAULT_WIDTH", "ELLIPSIS", "cells", "command_lines", "fit", "one_line", "signed", "width"]

DEFAULT_WIDTH = 80
"""Columns when neither ``$COLUMNS`` nor a terminal says: a pipe is read at 80 columns too."""

ELLIPSIS = "…"
"""What ends a cut text."""

_CONTROLS = re.compile(r"[\x00-\x1f\x7f]+")


def width(environ: Mapping[str, str] | None = None, stream: TextIO | None = None) -> int:
    """``$COLUMNS`` (a whole number >= 1), else ``stream``'s terminal width, else :data:`DEFAULT_WIDTH`.

    Raises:
        ConfigError: ``$COLUMNS`` is set to something else than a whole number >= 1.
    """
    columns = integer(os.environ if environ is None else environ, COLUMNS, minimum=1)
    if columns is not None:
        return columns
    stream = sys.stdout if stream is None else stream
    try:
        return os.get_terminal_size(stream.fileno()).columns if stream.isatty() else DEFAULT_WIDTH
    except (OSError, ValueError, AttributeError):  # closed, replaced (pytest's capture) or not a file
        return DEFAULT_WIDTH


def cells(text: str) -> int:
    """The terminal cells ``text`` takes (a wide character takes two)."""
    from rich.cells import cell_len

    return cell_len(text)


def fit(text: str, columns: int) -> str:
    """``text`` as it is when it fits in ``columns`` cells, else cut to them, ending in an ellipsis."""
    if cells(text) <= columns:
        return text
    if columns <= 0:
        return ""
    from rich.cells import set_cell_size

    return set_cell_size(text, columns - 1).rstrip() + ELLIPSIS


def one_line(text: str) -> str:
    """``text`` with its control characters (newlines and tabs too) as single spaces: one line, one cell."""
    return _CONTROLS.sub(" ", text)


def signed(value: float, digits: int = 4) -> str:
    """A change with its sign, ``-0.0123`` or ``+0.0123``; one that rounds to zero is ``+0.0000``, never ``-0.0000``.

    ``nan`` is ``n/a``.
    """
    if value != value:
        return "n/a"
    rounded = round(value, digits)
    return f"{rounded + 0.0 if rounded else 0.0:+.{digits}f}"


def command_lines(words: Sequence[str], columns: int, indent: str = "  ") -> list[str]:
    """A shell command to copy, quoted, in lines of at most ``columns`` cells joined by `` \\`` continuations.

    Never cut: pasted into a shell, the lines run as one command; a word longer than a line has a line of its own.
    """
    lines: list[str] = []
    line = indent
    for word in (shlex.quote(w) for w in words):
        if line.strip() and cells(f"{line} {word} \\") > columns:
            lines.append(f"{line} \\")
            line = f"{indent}  {word}"
        else:
            line = f"{line} {word}" if line.strip() else f"{line}{word}"
    return [*lines, line]
