"""The trace filter compiled to SQL: one builder, given the dialect of the store that runs it.

SQLite and PostgreSQL differ here only in a few spellings, which :class:`Dialect` holds: the parameter mark
(``?``, ``%s``), a list of values (``IN (?,?)``, one array for ``= ANY(%s)``), the NULL-safe inequality
(``IS NOT``, ``IS DISTINCT FROM``), a substring (``instr``; ``LIKE``, which the shared store's trigram
index serves), booleans (0/1, ``boolean``) and SQLite's ``+kind``, which keeps the search kind (nearly every
trace) off the kind index. The span-level filters (a document, an attribute) are not columns: each store
applies them itself (``traces.store.span_match``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from searchtrace.names import Band
from searchtrace.traces.spans.vocabulary import TraceKind
from searchtrace.traces.store.records import InteractionFilter, TraceFilter, TraceOrder, to_ns
from searchtrace.traces.store.rows import BAND_FLAG

__all__ = ["FAILED", "POSTGRES", "SQLITE", "Dialect", "interactions_where", "kind_column", "older_than", "order_by",
           "where"]

FAILED = "(status = 'ERROR' OR error_code IS NOT NULL OR status_code >= 400)"
"""A trace that failed in any way: its root span in error, an error code recorded (a refused request's, a
failed search's), or a served request answered with a client or server error. Spelled once: SQLite's partial
index (``sqlite_sql.FAILED_INDEX``) serves a query whose WHERE holds this very text."""


@dataclass(frozen=True)
class Dialect:
    """How one SQL dialect spells what the filter needs.

    Attributes:
        mark: the parameter placeholder.
        arrays: a list of values is one array parameter (``= ANY(%s)``), else one placeholder each (``IN``).
        distinct: the NULL-safe "differs from".
        like: substrings by ``LIKE`` (escaped), else by ``instr``.
        booleans: flags are passed as booleans, else as 0 and 1.
        search_kind_off_index: the search kind is compared as ``+kind`` (SQLite: no index for it).
    """

    mark: str
    arrays: bool
    distinct: str
    like: bool
    booleans: bool
    search_kind_off_index: bool

    def member(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` is one of ``values`` (none: false)."""
        if self.arrays:
            return f"{column} = ANY({self.mark})", [list(values)]
        return f"{column} IN ({','.join(self.mark * len(values)) or 'NULL'})", list(values)

    def contains(self, column: str, text: str) -> tuple[str, list[Any]]:
        """``text`` is a substring of ``column`` (exactly: no wildcards)."""
        if self.like:
            escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            return f"{column} LIKE {self.mark}", [f"%{escaped}%"]
        return f"instr({column}, {self.mark}) > 0", [text]

    def flag(self, value: bool) -> bool | int:
        return bool(value) if self.booleans else int(value)


SQLITE = Dialect(mark="?", arrays=False, distinct="IS NOT", like=False, booleans=False, search_kind_off_index=True)
POSTGRES = Dialect(mark="%s", arrays=True, distinct="IS DISTINCT FROM", like=True, booleans=True,
                   search_kind_off_index=False)


class _Clause:
    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.conds: list[str] = []
        self.params: list[Any] = []

    def add(self, cond: str, *values: Any) -> None:
        """A condition with ``{}`` for each parameter mark."""
        self.conds.append(cond.format(*[self.dialect.mark] * len(values)))
        self.params.extend(values)

    def spelled(self, cond_params: tuple[str, list[Any]]) -> None:
        self.conds.append(cond_params[0])
        self.params.extend(cond_params[1])

    def clause(self) -> tuple[str, list[Any]]:
        return (" WHERE " + " AND ".join(self.conds) if self.conds else ""), self.params


def where(flt: TraceFilter, dialect: Dialect, *, kind_column: str = "kind") -> tuple[str, list[Any]]:
    """The WHERE clause and its parameters for the filter's columns (its document and attribute aside).

    ``kind_column``: what a trace's kind is read from (a SQLite store of an older schema computes it).
    """
    c = _Clause(dialect)
    if flt.since is not None:
        c.add("start_ns >= {}", to_ns(flt.since))
    if flt.until is not None:
        c.add("start_ns < {}", to_ns(flt.until))
    if flt.mode is not None:
        c.add("mode = {}", flt.mode)
    if flt.band is not None:
        c.add("bands & {} != 0", BAND_FLAG[flt.band])
    if flt.best_band is not None:  # bands are listed best first: none of the ones before it
        higher = sum(BAND_FLAG[b.value] for b in list(Band)[:list(Band).index(Band(flt.best_band))])
        c.add("bands & {} != 0 AND bands & {} = 0", BAND_FLAG[flt.best_band], higher)
    if flt.no_confident is not None:
        c.add("no_confident = {}", dialect.flag(flt.no_confident))
    if isinstance(flt.degraded, bool):
        c.add("degraded != ''" if flt.degraded else "degraded = ''")
    elif flt.degraded is not None:
        c.spelled(dialect.contains("degraded", f",{flt.degraded},"))
    if flt.min_latency_ms is not None:
        c.add("duration_ms >= {}", float(flt.min_latency_ms))
    if flt.run_id is not None:
        c.add("run_id = {}", flt.run_id)
    if flt.query_text:
        c.spelled(dialect.contains("query_fold", flt.query_text.casefold()))
    if flt.sources:
        c.spelled(dialect.member("source", flt.sources))
    if flt.dataset is not None:
        c.add("dataset = {}", flt.dataset)
    if flt.service is not None:
        c.add("service = {}", flt.service)
    if flt.project is not None:
        c.add("project = {}", flt.project)
    if flt.kind is not None:
        off_index = "+" if dialect.search_kind_off_index and flt.kind is TraceKind.SEARCH else ""
        c.add(f"{off_index}{kind_column} = {{}}", flt.kind.value)
    if flt.errors is not None:
        c.add("status = 'ERROR'" if flt.errors else f"status {dialect.distinct} 'ERROR'")
    if flt.failed is not None:
        c.add(FAILED if flt.failed else f"{FAILED} IS NOT TRUE")  # NOT (...) would drop a NULL row
    return c.clause()


def interactions_where(flt: InteractionFilter, dialect: Dialect) -> tuple[str, list[Any]]:
    """The WHERE clause (and parameters) of a dataset's impressions and fetches: along the (dataset, start_ns)
    index, searches that answered through ``flt.sources`` and fetches that answered."""
    c = _Clause(dialect)
    c.add("dataset = {}", flt.dataset)
    c.add(f"status {dialect.distinct} 'ERROR'")
    sources, values = dialect.member("source", flt.sources)
    c.spelled((f"(fetched_ids IS NOT NULL OR (result_ids IS NOT NULL AND {sources}))", values))
    if flt.since is not None:
        c.add("start_ns >= {}", to_ns(flt.since))
    if flt.until is not None:
        c.add("start_ns < {}", to_ns(flt.until))
    return c.clause()


def kind_column(columns: Collection[str] | None, legacy: str) -> str:
    """``kind``, or ``legacy`` (an expression of older columns) for a store whose table lacks it."""
    return "kind" if columns is None or "kind" in columns else legacy


def older_than(clause: str, dialect: Dialect, order: TraceOrder = TraceOrder.NEWEST) -> str:
    """``clause`` (a WHERE clause, or "") narrowed to traces listed after a given (value, trace_id) in ``order``
    (``TraceOrder.key``): two more parameters, for reading a list a page at a time."""
    cond = f"({order.column}, trace_id) {'<' if order.descending else '>'} ({dialect.mark}, {dialect.mark})"
    return f"{clause} AND {cond}" if clause else f" WHERE {cond}"


def order_by(order: TraceOrder) -> str:
    """The ORDER BY clause of a list in ``order``, ties broken by trace id the same way."""
    way = " DESC" if order.descending else ""
    return f" ORDER BY {order.column}{way}, trace_id{way}"
