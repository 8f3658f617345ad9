"""What the trace store returns, and the filter it takes: frozen records, no I/O."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Mapping, NamedTuple

from searchtrace.names import Band
from searchtrace.traces.spans.vocabulary import Source, TraceKind

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_AGE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_AGE_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


@dataclass(frozen=True)
class TraceFilter:
    """Which traces to list; every field set must match. Results come newest first.

    Attributes:
        since: earliest root start (inclusive); a datetime (naive = local time) or epoch ns.
        until: latest root start (exclusive).
        mode: search mode (fast or graph).
        band: traces with at least one result in this band (high, medium or low).
        best_band: traces whose best result is in this band (no result in a higher one).
        no_confident: the search's ``noConfidentResults`` flag.
        degraded: True for any degraded stage, False for none, or a stage name.
        min_latency_ms: only traces at least this slow.
        run_id: eval run id.
        query_text: case-insensitive substring of the query text (no wildcards).
        sources: searches that came through one of these surfaces (``searchtrace.source``); empty: any.
        dataset: searches of this dataset (its folder name, ``searchtrace.dataset``).
        kind: traces of this kind only (None: every kind).
        errors: True for traces whose root span ended in error, False for the others.
        doc_id: traces one of whose spans names this document in a document id list (candidates, results,
            fetches: ``span_match.DOC_ID_KEYS``).
        attribute: (key, text): traces one of whose spans has attribute ``key`` with ``text`` in its value
            (case-insensitive; an array's items joined by ", ").
        limit: most traces returned (None: all).
        offset: traces skipped first.
    """

    since: datetime | int | None = None
    until: datetime | int | None = None
    mode: str | None = None
    band: str | None = None
    best_band: str | None = None
    no_confident: bool | None = None
    degraded: bool | str | None = None
    min_latency_ms: float | None = None
    run_id: str | None = None
    query_text: str | None = None
    sources: tuple[str, ...] = ()
    dataset: str | None = None
    kind: TraceKind | None = None
    errors: bool | None = None
    doc_id: str | None = None
    attribute: tuple[str, str] | None = None
    limit: int | None = 50
    offset: int = 0

    def __post_init__(self) -> None:
        for name, band in (("band", self.band), ("best_band", self.best_band)):
            if band is not None and band not in {b.value for b in Band}:
                raise ValueError(f"{name} must be one of {', '.join(b.value for b in Band)}, got {band!r}")
        unknown = [s for s in self.sources if s not in {x.value for x in Source}]
        if unknown:
            raise ValueError(f"sources must be among {', '.join(x.value for x in Source)}, got {unknown[0]!r}")
        if self.kind is not None and not isinstance(self.kind, TraceKind):
            raise ValueError(f"kind must be one of {', '.join(k.value for k in TraceKind)}, got {self.kind!r}")
        if self.attribute is not None and (len(self.attribute) != 2 or not self.attribute[0]):
            raise ValueError(f"attribute must be (key, text) with a key, got {self.attribute!r}")
        if (self.limit is not None and self.limit < 0) or self.offset < 0:
            raise ValueError(f"limit and offset must be >= 0, got limit={self.limit} offset={self.offset}")


@dataclass(frozen=True)
class TraceSummary:
    """One trace: timing from its root span, search fields from its ``search`` span.

    ``complete`` is False while the root span has not been stored yet (its
    children arrived in an earlier export batch); timing then spans the
    children seen so far and the search fields are None. ``root_name`` is the
    root span's name; ``source`` who called (the search or server span's);
    ``kind`` a :class:`TraceKind` value; ``cold`` the search span's cold flag
    (None when not recorded); ``status_code`` the HTTP status a served request
    answered; ``error_code`` the search's error code, else the server span's.
    """

    trace_id: str
    start_ns: int
    duration_ms: float
    complete: bool
    status: str | None
    mode: str | None
    query: str | None
    run_id: str | None
    query_id: str | None
    top_k: int | None
    best_score: float | None
    no_confident: bool | None
    degraded: tuple[str, ...]
    bands: tuple[str, ...]
    n_results: int | None
    error_code: str | None
    n_spans: int
    root_name: str | None = None
    source: str | None = None
    kind: TraceKind | None = None
    cold: bool | None = None
    status_code: int | None = None

    @property
    def start(self) -> datetime:
        return EPOCH + timedelta(microseconds=self.start_ns // 1000)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``traces list --json``, the dashboard)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out.update(start=self.start.isoformat(), degraded=list(self.degraded), bands=list(self.bands),
                   kind=None if self.kind is None else self.kind.value)
        return out


@dataclass(frozen=True)
class InteractionFilter:
    """Which stored searches and fetches of one dataset :meth:`TraceStore.interactions` reads.

    Attributes:
        dataset: the dataset's name (``searchtrace.dataset``).
        since, until: the trace's start, from (inclusive) and to (exclusive); a datetime or epoch ns.
        sources: the surfaces whose searches count as impressions (fetches are served, so always HTTP or MCP).
    """

    dataset: str
    since: datetime | int | None = None
    until: datetime | int | None = None
    sources: tuple[str, ...] = (Source.HTTP.value, Source.MCP.value)


class Impression(NamedTuple):
    """A stored search that answered: the results it showed, in their order.

    ``query`` is None when the query text was not captured; ``query_id`` is an eval run's query id (None
    for traffic); ``session_id`` the MCP session it was made in, if any.
    """

    trace_id: str
    start_ns: int
    session_id: str | None
    query: str | None
    query_id: str | None
    shown: tuple[str, ...]


class Fetch(NamedTuple):
    """A stored fetch that answered (``get_docs``, ``/v1/docs``, ...): the ids it fetched, in order.

    ``follows`` is the trace id of the search the caller named (``traceId``), if any.
    """

    trace_id: str
    start_ns: int
    session_id: str | None
    follows: str | None
    ids: tuple[str, ...]


@dataclass(frozen=True)
class EventRecord:
    name: str
    time_ns: int
    attributes: Mapping[str, Any]


@dataclass(frozen=True)
class SpanRecord:
    """A stored span. Ids are lowercase hex; array attributes come back as tuples, as the SDK holds them."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    status: str
    status_message: str | None
    scope: str | None
    attributes: Mapping[str, Any]
    events: tuple[EventRecord, ...] = ()

    @property
    def duration_ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6


@dataclass(frozen=True)
class TraceDetail:
    """A trace's summary, its spans in start order, and the resource that produced them."""

    summary: TraceSummary
    spans: tuple[SpanRecord, ...]
    resource: Mapping[str, Any] = field(default_factory=dict)


def to_ns(value: datetime | int) -> int:
    """Epoch nanoseconds of a datetime (naive = local time), or of an int already in ns."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.astimezone()
        return (aware - EPOCH) // timedelta(microseconds=1) * 1000
    return int(value)


def parse_when(text: str) -> datetime:
    """A time a filter takes: an ISO date/time (local unless it has an offset) or an age before now
    (``30m``, ``2h``, ``7d``). Raises ValueError saying what it expects."""
    age = _AGE.match(text.strip())
    if age:
        return datetime.now().astimezone() - timedelta(**{_AGE_UNITS[age[2]]: float(age[1])})
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"expected an ISO date/time or an age like 30m, 2h, 7d; got {text!r}") from None
