"""The Traces page's presets and time ranges: named filters a person picks instead of setting five widgets."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from searchtrace.dashboard.data.traffic import LIVE_SOURCES
from searchtrace.traces import TraceFilter, TraceKind
from searchtrace.traces import vocabulary as v

__all__ = ["PRESETS", "TIME_RANGES", "Preset", "range_start"]

@dataclass(frozen=True)
class Preset:
    """A named filter: what it sets on the filter the other widgets made, and what it means in words.

    Attributes:
        name: its label on the page (and its value in the URL).
        about: one sentence saying what it lists.
        sources: the surfaces it keeps (empty: any).
        kind: the kind of trace it keeps (None: any; a preset that sets sources or failures keeps every kind).
        failed: True: only traces that failed in any way (``TraceFilter.failed``).
    """

    name: str
    about: str
    sources: tuple[str, ...] = ()
    kind: TraceKind | None = None
    failed: bool | None = None

    def apply(self, flt: TraceFilter) -> TraceFilter:
        """``flt`` with what this preset sets (its sources, kind and failure) in place of the widgets'."""
        return replace(flt, sources=self.sources, kind=self.kind, failed=self.failed)


PRESETS = {p.name: p for p in (
    Preset("live traffic", "every trace but an eval run's, of any kind or outcome: requests served over HTTP "
                           "and MCP, the command line's and Python's searches, another retriever's traces",
           sources=LIVE_SOURCES),
    Preset("errors of any kind", "every trace that failed: an error status, an error code (a refused request, "
                                 "bad JSON, an unknown field, a failed fetch) or an HTTP status of 400 or more",
           failed=True),
    Preset("eval runs", "the searches eval runs made", sources=(v.Source.EVAL.value,), kind=TraceKind.SEARCH))}
"""The presets, by label. None of them (the page's "custom") leaves the widgets' filter as it is."""

TIME_RANGES: dict[str, timedelta | None] = {
    "any time": None, "last 15 minutes": timedelta(minutes=15), "last hour": timedelta(hours=1),
    "last 24 hours": timedelta(days=1), "last 7 days": timedelta(days=7), "last 30 days": timedelta(days=30)}
"""The time ranges offered, by label: how far back from now the list starts."""


def range_start(label: str, now: datetime) -> datetime | None:
    """The start of the time range ``label`` before ``now``, to the minute (so a cached list is reused within
    it); None for any time. Raises KeyError naming the labels for an unknown one."""
    if label not in TIME_RANGES:
        raise KeyError(f"time range must be one of {', '.join(TIME_RANGES)}, got {label!r}")
    span = TIME_RANGES[label]
    return None if span is None else (now - span).replace(second=0, microsecond=0)
