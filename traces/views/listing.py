"""The trace list's columns (``traces list``): a table fitted to a width, the whole table, or TSV.

A fitted table keeps the columns in :data:`KEPT_FIRST` order while they fit at
their narrowest (a column nobody's trace fills is left out), then gives the room
left to the columns that may be cut, query first. The trace id is cut to its first
:data:`SHORT_ID` digits there: ``traces show`` takes such a prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from searchtrace.terminal import cells, fit, one_line

if TYPE_CHECKING:  # the CLI imports SHORT_ID to describe its flags: --help need not load the records
    from searchtrace.traces.store.records import TraceSummary

__all__ = ["COLUMNS", "KEPT_FIRST", "SHORT_ID", "Column", "table", "tsv"]

SHORT_ID = 12
"""Digits of a trace id a fitted table shows (unique in any store of realistic size)."""

GAP = "  "


@dataclass(frozen=True)
class Column:
    """One column: its header, its text for a trace (whole, and in a fitted table), how far it may be cut."""

    header: str
    whole: Callable[[TraceSummary], str]
    fitted: Callable[[TraceSummary], str] | None = None
    right: bool = False
    cut_to: int | None = None
    """A fitted table may cut this column's text down to this many cells (None: never cut)."""

    def text(self, summary: TraceSummary, whole: bool) -> str:
        """The cell's text on one line (control characters, newlines and tabs as spaces)."""
        make = self.whole if whole or self.fitted is None else self.fitted
        return one_line(make(summary))


def _flags(s: TraceSummary) -> str:
    failed = s.status == "ERROR"
    flags = (("no-confident", s.no_confident), ("degraded:" + ",".join(s.degraded), s.degraded),
             (f"error:{s.error_code}", s.error_code), ("error", failed and not s.error_code), ("cold", s.cold))
    return " ".join(flag for flag, on in flags if on)


COLUMNS = (
    Column("start", lambda s: f"{s.start.astimezone():%Y-%m-%d %H:%M:%S%z}",
           lambda s: f"{s.start.astimezone():%m-%d %H:%M:%S}"),
    Column("trace id", lambda s: s.trace_id, lambda s: s.trace_id[:SHORT_ID]),
    Column("ms", lambda s: f"{s.duration_ms:.1f}", right=True),
    Column("mode", lambda s: s.mode or ""),
    Column("best", lambda s: "" if s.best_score is None else f"{s.best_score:.3f}", right=True),
    Column("bands", lambda s: ",".join(s.bands), cut_to=8),
    Column("flags", _flags, cut_to=12),
    Column("query", lambda s: s.query or "", cut_to=20),
    Column("root", lambda s: s.root_name or ""),
)
"""Every column, in the order they are shown."""

KEPT_FIRST = ("trace id", "query", "start", "ms", "best", "flags", "bands", "mode")
"""Which columns a narrow table keeps first (and gives room to first). The root span's name is left to the
whole table (``--wide``, TSV, JSON): a served trace's (``POST /v1/search``) would take the query's room at
80 columns; ``error`` and ``cold`` are among the flags."""

_BY_HEADER = {c.header: c for c in COLUMNS}


def tsv(summaries: Sequence[TraceSummary]) -> str:
    """Every column, whole, tab-separated, under a header row."""
    rows = [[c.header for c in COLUMNS], *([c.text(s, whole=True) for c in COLUMNS] for s in summaries)]
    return "".join("\t".join(row) + "\n" for row in rows)


def table(summaries: Sequence[TraceSummary], columns: int | None) -> list[str]:
    """The table's lines: every column whole when ``columns`` is None (``--wide``), else fitted to ``columns``."""
    whole = columns is None
    texts = {c.header: [c.text(s, whole) for s in summaries] for c in COLUMNS}
    natural = {h: max([cells(h), *map(cells, column)]) for h, column in texts.items()}
    widths = natural if columns is None else _fitted(natural, texts, columns)
    shown = [c for c in COLUMNS if c.header in widths]
    rows = [[c.header for c in shown], *([texts[c.header][i] for c in shown] for i in range(len(summaries)))]
    return [GAP.join(_cell(text, widths[c.header], c.right) for text, c in zip(row, shown)).rstrip() for row in rows]


def _fitted(natural: dict[str, int], texts: dict[str, list[str]], columns: int) -> dict[str, int]:
    """The width of each column kept: each at its narrowest while they fit, then the room left to the cut ones."""
    kept: dict[str, int] = {}
    for header in KEPT_FIRST:
        cut_to = _BY_HEADER[header].cut_to
        least = natural[header] if cut_to is None else min(cut_to, natural[header])
        if any(texts[header]) and _total({**kept, header: least}) <= columns:
            kept[header] = least
        elif not kept and any(texts[header]):  # even the first column does not fit: cut it rather than show nothing
            kept[header] = max(1, columns)
    room = columns - _total(kept)
    for header in kept:
        grow = max(0, min(room, natural[header] - kept[header]))
        kept[header] += grow
        room -= grow
    return kept


def _total(widths: dict[str, int]) -> int:
    return sum(widths.values()) + len(GAP) * max(0, len(widths) - 1)


def _cell(text: str, width: int, right: bool) -> str:
    text = fit(text, width)
    pad = " " * (width - cells(text))
    return pad + text if right else text + pad
