"""What the trace store returns, and the filter it takes: frozen records, no I/O."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Callable, Mapping, NamedTuple

from searchtrace.names import Band, Mode, Stage
from searchtrace.traces.spans.foreign import Document
from searchtrace.traces.spans.vocabulary import Source, TraceKind

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_AGE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_AGE_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


FLAG = "flag"
"""The key of a :class:`TraceFilter` field's ``metadata`` that holds its :class:`Flag`, or None (no flag)."""


@dataclass(frozen=True)
class Flag:
    """A :class:`TraceFilter` field's command-line flag on ``traces list`` and ``traces export``: what argparse
    needs, as data (``traces.cli`` builds the flags and the filter from these, for every field that has one).

    Attributes:
        name: the flag (``--doc``); the argparse destination is its name without dashes, ``-`` as ``_``.
        help: the help line; ``{default}`` stands for the default (``all`` when None).
        metavar: the value's name in the help (None: argparse's, the destination upper-cased).
        parse: text to value, raising ValueError saying what it expects (None: the text itself).
        choices: the values taken (None: any).
        nargs: argparse's ``nargs`` (``"?"``: the value may be left out, the flag alone giving ``const``).
        const: the value of the flag alone (``nargs="?"`` or ``switch``).
        switch: the flag takes no value: it sets ``const``.
        opposite: (flag, help): a switch setting the field to ``not const``; the two exclude each other.
        convert: the parsed value to the field's (None: as parsed); never given None.
        search: one of the flags ``queries from-traces`` takes too (``traces.cli.add_search_flags``).
        example: a value the flag takes (the tests parse it), for a flag that takes one.
    """

    name: str
    help: str
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None
    choices: tuple[str, ...] | None = None
    nargs: str | None = None
    const: Any = None
    switch: bool = False
    opposite: tuple[str, str] | None = None
    convert: Callable[[Any], Any] | None = None
    search: bool = False
    example: str | None = None

    @property
    def dest(self) -> str:
        return self.name.lstrip("-").replace("-", "_")


def _flag(flag: Flag | None) -> Mapping[str, Flag | None]:
    return {FLAG: flag}


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


def parse_attribute(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` as (key, value), the key stripped. Raises ValueError saying what it expects."""
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise ValueError(f"expected KEY=VALUE (an attribute key, then the text its value holds); got {text!r}")
    return key.strip(), value


def non_negative(kind: type) -> Callable[[str], Any]:
    """A parser of ``kind`` (int, float) refusing what is below 0 (ValueError saying what it expects)."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = -1
        if value < 0:
            raise ValueError(f"expected a {kind.__name__} >= 0; got {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


class TraceOrder(StrEnum):
    """The order a trace list comes in, sorted by the store over every trace the filter matches."""

    NEWEST = "newest"
    OLDEST = "oldest"
    SLOWEST = "slowest"
    FASTEST = "fastest"

    @property
    def column(self) -> str:
        """The column sorted on (ties broken by trace id, the same way)."""
        return "duration_ms" if self in (TraceOrder.SLOWEST, TraceOrder.FASTEST) else "start_ns"

    @property
    def descending(self) -> bool:
        return self in (TraceOrder.NEWEST, TraceOrder.SLOWEST)

    def key(self, summary: TraceSummary) -> tuple[int | float, str]:
        """Where ``summary`` sits in this order: (the sorted column's value, its trace id)."""
        value = summary.duration_ms if self.column == "duration_ms" else summary.start_ns
        return value, summary.trace_id


@dataclass(frozen=True)
class TraceFilter:
    """Which traces to list; every field set must match. Results come newest first.

    Each field declares its command-line flag (``metadata[FLAG]``: a :class:`Flag`, or None for no flag), so a
    new filter is its field here and its test in ``filter_sql`` (a column) or ``span_match`` (a span's
    attributes): ``traces list`` and ``traces export`` take it from the declaration. The flags come in the
    fields' order.

    Attributes:
        since: earliest root start (inclusive); a datetime (naive = local time) or epoch ns.
        until: latest root start (exclusive).
        mode: search mode (fast or graph).
        no_confident: the search's ``noConfidentResults`` flag.
        band: traces with at least one result in this band (high, medium or low).
        best_band: traces whose best result is in this band (no result in a higher one).
        degraded: True for any degraded stage, False for none, or a stage name.
        min_latency_ms: only traces at least this slow.
        kind: traces of this kind only (None: every kind).
        errors: True for traces whose root span ended in error, False for the others.
        failed: True for traces that failed in any way (a root span in error, an error code recorded, or a
            served request answered with an HTTP status of 400 or more), False for the others.
        run_id: eval run id.
        query_text: case-insensitive substring of the query text (no wildcards).
        sources: searches that came through one of these surfaces (``searchtrace.source``); empty: any.
        dataset: searches of this dataset (its folder name, ``searchtrace.dataset``).
        service: traces whose resource's ``service.name`` is this (ours, and another retriever's).
        project: traces whose resource's ``openinference.project.name`` is this.
        doc_id: traces one of whose spans names this document in a document id list (candidates, results,
            fetches: ``span_match.DOC_ID_KEYS``).
        attribute: (key, text): traces one of whose spans has attribute ``key`` with ``text`` in its value
            (case-insensitive; an array's items joined by ", ").
        order: the list's order (:class:`TraceOrder`), sorted by the store over every match.
        limit: most traces returned (None: all).
        offset: traces skipped first.
    """

    since: datetime | int | None = field(default=None, metadata=_flag(Flag(
        "--since", "ISO date/time (local unless it has an offset) or an age: 30m, 2h, 7d", parse=parse_when,
        search=True, example="2026-01-02T03:04:05+00:00")))
    until: datetime | int | None = field(default=None, metadata=_flag(Flag(
        "--until", "as --since; exclusive", parse=parse_when, search=True, example="2026-01-03")))
    mode: str | None = field(default=None, metadata=_flag(Flag(
        "--mode", "only searches in this mode (default: any)", choices=tuple(m.value for m in Mode), search=True)))
    no_confident: bool | None = field(default=None, metadata=_flag(Flag(
        "--no-confident", "only searches that found no confident result", switch=True, const=True,
        opposite=("--confident", "only searches that found a confident result"), search=True)))
    band: str | None = field(default=None, metadata=_flag(Flag(
        "--band", "traces with a result in this confidence band", choices=tuple(b.value for b in Band))))
    best_band: str | None = field(default=None, metadata=_flag(None))
    degraded: bool | str | None = field(default=None, metadata=_flag(Flag(
        "--degraded", "only degraded searches (any stage, or the one named)", metavar="STAGE", nargs="?",
        const=True, example=Stage.RERANK.value)))
    min_latency_ms: float | None = field(default=None, metadata=_flag(Flag(
        "--min-latency-ms", "only searches that took at least MS milliseconds", metavar="MS",
        parse=non_negative(float), example="12.5")))
    kind: TraceKind | None = field(default=None, metadata=_flag(Flag(
        "--kind", "only traces of this kind: search, load (the embedding model's) or other (a served request "
                  "that ran no search); default: all", choices=tuple(k.value for k in TraceKind), convert=TraceKind)))
    errors: bool | None = field(default=None, metadata=_flag(Flag(
        "--errors", "only traces whose root span ended in error", switch=True, const=True)))
    run_id: str | None = field(default=None, metadata=_flag(Flag(
        "--run-id", "only the searches of this eval run", example="run-1")))
    query_text: str | None = field(default=None, metadata=_flag(Flag(
        "--query", "case-insensitive text in the query", example="harbour")))
    sources: tuple[str, ...] = field(default=(), metadata=_flag(None))
    dataset: str | None = field(default=None, metadata=_flag(None))
    service: str | None = field(default=None, metadata=_flag(Flag(
        "--service", "only traces of this service (the resource's service.name)", example="rag-app")))
    project: str | None = field(default=None, metadata=_flag(Flag(
        "--project", "only traces of this project (openinference.project.name)", example="support")))
    doc_id: str | None = field(default=None, metadata=_flag(Flag(
        "--doc", "only traces in which any stage had this document (its id)", metavar="ID", example="d1")))
    attribute: tuple[str, str] | None = field(default=None, metadata=_flag(Flag(
        "--attribute", "only traces with a span whose attribute KEY holds VALUE (case-insensitive text; an "
                       "array's items joined by ', ')", metavar="KEY=VALUE", parse=parse_attribute,
        example="searchtrace.dataset=scifact")))
    failed: bool | None = field(default=None, metadata=_flag(Flag(
        "--failed", "only traces that failed in any way: a root span in error, an error code, an HTTP status "
                    ">= 400", switch=True, const=True,
        opposite=("--not-failed", "only traces that did not fail in any way"))))
    order: TraceOrder = field(default=TraceOrder.NEWEST, metadata=_flag(Flag(
        "--order", "the list's order, sorted over every match (default: {default}); export is always oldest first",
        choices=tuple(o.value for o in TraceOrder), convert=TraceOrder, example="slowest")))
    limit: int | None = field(default=50, metadata=_flag(Flag(
        "--limit", "at most this many traces (default: {default})", parse=non_negative(int), example="7")))
    offset: int = field(default=0, metadata=_flag(Flag(
        "--offset", "skip this many, newest first (default: {default})", parse=non_negative(int), example="3")))

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
        if not isinstance(self.order, TraceOrder):
            raise ValueError(f"order must be one of {', '.join(o.value for o in TraceOrder)}, got {self.order!r}")
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
    answered; ``error_code`` the search's error code, else the server span's;
    ``service`` and ``project`` the resource's ``service.name`` and ``openinference.project.name``.
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
    service: str | None = None
    project: str | None = None

    @property
    def foreign(self) -> bool:
        """True for a trace another program sent (its searches are in :meth:`TraceStoreProtocol.searches`)."""
        return self.source == Source.OTLP.value

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



@dataclass(frozen=True)
class SearchFilter:
    """Which foreign searches :meth:`TraceStoreProtocol.searches` reads; every field set must match.

    Attributes:
        service, project: the search's resource's ``service.name`` and ``openinference.project.name``.
        since, until: the search span's start, from (inclusive) and to (exclusive); a datetime or epoch ns.
        trace_ids: only these traces' searches (None: any).
        contents: read each document's text from the stored span (else ``documents`` holds ids and scores).
    """

    service: str | None = None
    project: str | None = None
    since: datetime | int | None = None
    until: datetime | int | None = None
    trace_ids: tuple[str, ...] | None = None
    contents: bool = True


@dataclass(frozen=True)
class SearchRecord:
    """One search another retriever ran (an OpenInference RETRIEVER or GenAI retrieval span, not a stage of
    another): who ran it, its query, and the documents it returned in order.

    ``documents[i].id`` is None for an unidentified document (``unidentified`` counts them); a score is None
    when the span sent none. ``convention``: a ``vocabulary.Convention`` value.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    start_ns: int
    duration_ms: float
    service: str | None
    project: str | None
    query: str | None
    documents: tuple[Document, ...]
    unidentified: int
    top_k: int | None
    data_source: str | None
    convention: str

    @property
    def doc_ids(self) -> tuple[str | None, ...]:
        return tuple(d.id for d in self.documents)

    @property
    def scores(self) -> tuple[float | None, ...]:
        return tuple(d.score for d in self.documents)
