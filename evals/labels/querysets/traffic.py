"""Traffic as queries: stored searches grouped by their normalized text, each under a stable id."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from searchtrace.traces import TraceSummary

__all__ = ["Traffic", "TrafficQuery", "gather", "normalize", "query_id"]

_ID_DIGITS = 16  # 64 bits: a million distinct queries collide with odds of about 3 in 100 million


def normalize(text: str) -> str:
    """A query's text as compared for de-duplication: Unicode NFC, case folded, whitespace runs as one space."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def query_id(text: str) -> str:
    """A query's id in every query set: ``q`` and 16 hex digits of the sha256 of its :func:`normalize` d text."""
    return "q" + hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()[:_ID_DIGITS]


@dataclass(frozen=True)
class TrafficQuery:
    """One distinct query of the traffic.

    Attributes:
        id: :func:`query_id` of its text.
        text: the spelling first seen.
        trace_ids: the traces that asked it, oldest first.
    """

    id: str
    text: str
    trace_ids: tuple[str, ...]

    @property
    def count(self) -> int:
        """How many times it was asked."""
        return len(self.trace_ids)


@dataclass(frozen=True)
class Traffic:
    """The distinct queries of some traces, in the order first asked.

    Attributes:
        queries: the distinct queries.
        searches: traces whose search ran (past validation), with or without a recorded query text.
        uncaptured: those of them whose query text was not recorded (``SEARCHTRACE_CAPTURE_QUERY=0``).
    """

    queries: tuple[TrafficQuery, ...]
    searches: int
    uncaptured: int


def gather(batches: Iterable[Sequence[TraceSummary]], done: Callable[[int], object] = lambda n: None) -> Traffic:
    """The distinct queries of traces read oldest first, a batch at a time (``done`` is told each batch's size).

    A trace counts when its search ran past validation (its mode is recorded); one without a query text is
    counted as uncaptured, never guessed.
    """
    texts: dict[str, str] = {}
    traces: dict[str, list[str]] = {}
    searches = uncaptured = 0
    for batch in batches:
        for summary in batch:
            if summary.mode is None:
                continue
            searches += 1
            if summary.query is None:
                uncaptured += 1
                continue
            key = normalize(summary.query)
            texts.setdefault(key, summary.query)
            traces.setdefault(key, []).append(summary.trace_id)
        done(len(batch))
    queries = tuple(TrafficQuery(query_id(texts[key]), texts[key], tuple(ids)) for key, ids in traces.items())
    return Traffic(queries, searches, uncaptured)
