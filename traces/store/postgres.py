"""The trace store on PostgreSQL: the same reads and writes as :class:`~searchtrace.traces.store.sqlite.TraceStore`,
for every process of a team pointed at one server (``--store postgresql://...``).

A batch of spans is one transaction of array statements (see ``traces.store.postgres_sql``).
Reads are single statements on pooled connections; ``scan`` and ``interactions`` read
through a server-side cursor in one transaction, so they see one snapshot. Every
filter is served by an index, and the document filter covers the
whole store along ``st_traces.doc_ids``' index. ``prune`` deletes in bounded batches, each its own
transaction; PostgreSQL's autovacuum gives the space back to later writes.

The store checks the server's schema version before its first use and refuses one it
cannot use (``searchtrace store migrate`` brings an older one up to date).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from searchtrace.database import Database, check_version
from searchtrace.traces.store import postgres_sql as sql
from searchtrace.traces.store import searches
from searchtrace.traces.store.filter_sql import POSTGRES, interactions_where, older_than, order_by
from searchtrace.traces.store.filter_sql import where as filter_where
from searchtrace.traces.store.protocol import Capabilities
from searchtrace.traces.store.records import (
    EventRecord,
    Fetch,
    Impression,
    InteractionFilter,
    SearchFilter,
    SearchRecord,
    SpanRecord,
    TraceDetail,
    TraceFilter,
    TraceSummary,
)
from searchtrace.traces.store.rows import first_messages, packed_json, tuples, unpack
from searchtrace.traces.store.span_match import Page, columns_only, filter_batches, newest_matching, span_level

__all__ = ["PostgresTraceStore"]

_NS_PER_DAY = 86_400 * 10**9
PRUNE_BATCH = 500
_TABLES = searches.Tables("st_spans", "st_searches", "st_trace_settings", "%s", arrays=True)
DOC_SORTED = 20_000
"""Traces a document may be in for the document filter to read them by index and sort them."""
WRITE_TIMEOUT_MS = 30_000
"""How long the export processor lets one write of a batch take (the buffer holds what the store cannot take)."""


class PostgresTraceStore:
    """Finished spans in the shared store; thread-safe (connections come from the database's pool).

    Args:
        db: the shared store's connections.
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self._checked = False
        self._lock = threading.Lock()

    @property
    def location(self) -> str:
        """Where the traces are, as shown to people (the URL with its password masked)."""
        return self.db.url.masked()

    def __repr__(self) -> str:
        return f"PostgresTraceStore({self.location!r})"

    def open(self) -> PostgresTraceStore:
        """Connect and check the schema now rather than on first use."""
        self._ready()
        return self

    def reset(self) -> None:
        self._checked = False

    def close(self) -> None:
        """Nothing of the store's own to close: the pool is the process's (``Database.close``)."""

    def _ready(self) -> None:
        if not self._checked:
            with self._lock:
                if not self._checked:
                    check_version(self.db)
                    self._checked = True

    def write(self, spans: Sequence[ReadableSpan]) -> int:
        """Store finished spans in one transaction; returns how many were written."""
        self._ready()
        b = sql.plan(spans)
        if not b.spans:
            return 0
        with self.db.connection() as conn, conn.pipeline(), conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(sql.INSERT_SPAN, b.spans)
            cursor.execute(sql.UPSERT_TRACES, b.traces)
            if b.foreign:  # the key read under the lock a key being set holds while it re-derives
                cursor.execute(sql.SHARE_SETTINGS, (sql.SETTINGS_LOCK,))
                keys = dict(cursor.execute(sql.ID_KEYS, (searches.ID_KEY,)).fetchall())
                cursor.executemany(sql.INSERT_SEARCH, [sql.search_row(f, keys) for f in b.foreign])
                cursor.execute(sql.MARK_FOREIGN, (searches.OTLP, list(dict.fromkeys(f.trace_id for f in b.foreign))))
        return len(b.spans)

    def searches(self, flt: SearchFilter = SearchFilter()) -> list[SearchRecord]:
        """Another retriever's searches (``traces.store.searches.read_searches``), oldest first."""
        return searches.read_searches(self._read, flt, _TABLES)

    def set_doc_id_key(self, service: str, key: str | None) -> int:
        """Name (None: forget) the metadata key holding ``service``'s document ids, and re-derive the ids of its
        stored searches (no write of its searches runs meanwhile); returns how many were read again."""
        self._ready()
        with self.db.connection() as conn, conn.transaction():
            conn.execute(sql.LOCK_SETTINGS, (sql.SETTINGS_LOCK,))
            return searches.set_id_key(conn, _TABLES, service, key)

    def doc_id_keys(self) -> dict[str, str]:
        """Each service's document-id key."""
        return searches.id_keys(self._read, _TABLES)

    def _read(self, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        self._ready()
        with self.db.connection() as conn:
            return conn.execute(query, params).fetchall()

    @property
    def capabilities(self) -> Capabilities:
        """The shared store: buffered when out of reach, drops counted, space reused by autovacuum, the document
        filter on an index."""
        return Capabilities(shared=True, reclaims_space_on_prune=False, span_filters_fast=True,
                            documents_indexed=True, write_timeout_ms=WRITE_TIMEOUT_MS)

    def list_traces(self, flt: TraceFilter = TraceFilter()) -> list[TraceSummary]:
        """Trace summaries matching ``flt``, newest first, its span-level filters over the whole store."""
        if flt.attribute is not None:
            return newest_matching(flt, self._page(flt.doc_id), self._span_attributes)
        if flt.doc_id is not None:
            return self._doc_traces(flt.doc_id, flt)
        where, params = filter_where(flt, POSTGRES)
        rows = self._read(f"SELECT {sql.SUMMARY_COLUMNS} FROM st_traces{where}{order_by(flt.order)} "
                          "LIMIT %s OFFSET %s", [*params, flt.limit, flt.offset])
        return [sql.summary(r) for r in rows]

    def _doc_traces(self, doc_id: str, flt: TraceFilter) -> list[TraceSummary]:
        """Traces any of whose spans named document ``doc_id`` (in an id list), matching ``flt``, newest first,
        over the whole store.

        Two plans, chosen by counting (up to :data:`DOC_SORTED`) the traces ``doc_ids``' GIN index finds: a
        document in fewer traces is read by that index and its traces sorted; one in more is found by walking
        the newest traces, where it soon turns up. (Left to itself, the planner walked a million traces for a
        document in 200 of them: 318 ms instead of 1.)
        """
        self._ready()
        where, params = filter_where(flt, POSTGRES)
        columns = sql.SUMMARY_COLUMNS
        page = f"{order_by(flt.order)} LIMIT %s OFFSET %s"
        with self.db.connection() as conn, conn.transaction():
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_indexscan = off")
            found = conn.execute("SELECT count(*) FROM (SELECT 1 FROM st_traces WHERE doc_ids @> %s LIMIT %s) AS c",
                                 ([doc_id], DOC_SORTED)).fetchone()
            conn.execute("RESET enable_seqscan")
            conn.execute("RESET enable_indexscan")
            if found and found[0] < DOC_SORTED:
                rows = conn.execute(f"WITH hits AS MATERIALIZED (SELECT * FROM st_traces WHERE doc_ids @> %s) "
                                    f"SELECT {columns} FROM hits{where} {page}",
                                    [[doc_id], *params, flt.limit, flt.offset]).fetchall()
            else:
                conn.execute("SET LOCAL enable_bitmapscan = off")
                where = f"{where} AND doc_ids @> %s" if where else " WHERE doc_ids @> %s"
                rows = conn.execute(f"SELECT {columns} FROM st_traces{where} {page}",
                                    [*params, [doc_id], flt.limit, flt.offset]).fetchall()
        return [sql.summary(r) for r in rows]

    def _page(self, doc_id: str | None) -> Page:
        """A page of the traces a filter's columns match (and, given, that name ``doc_id``), newest first: the
        attribute filter reads the store this way, a batch at a time (``span_match.newest_matching``)."""

        def page(flt: TraceFilter, after: tuple[int | float, str] | None, batch: int) -> list[TraceSummary]:
            where, params = filter_where(flt, POSTGRES)
            if doc_id is not None:
                where, params = (f"{where} AND doc_ids @> %s" if where else " WHERE doc_ids @> %s"), [*params, [doc_id]]
            if after is not None:
                where, params = older_than(where, POSTGRES, flt.order), [*params, *after]
            rows = self._read(f"SELECT {sql.SUMMARY_COLUMNS} FROM st_traces{where}{order_by(flt.order)} LIMIT %s",
                              [*params, batch])
            return [sql.summary(r) for r in rows]

        return page

    def _span_attributes(self, trace_ids: list[str]) -> list[tuple[str, bytes]]:
        """(trace id, attributes as JSON text) of every span of ``trace_ids``, unpacked here (the server parses
        none of it)."""
        rows = self._read("SELECT trace_id, attributes FROM st_spans WHERE trace_id = ANY(%s)", (trace_ids,))
        return [(trace_id, packed_json(packed)) for trace_id, packed in rows]

    def scan(self, flt: TraceFilter = TraceFilter(limit=None), batch: int = 10_000) -> Iterator[list[TraceSummary]]:
        """Trace summaries matching ``flt``, oldest first, ``batch`` at a time, from one snapshot."""
        if span_level(flt):
            yield from filter_batches(self.scan(columns_only(flt), batch), flt, self._span_attributes)
            return
        where, params = filter_where(flt, POSTGRES)
        query = (f"SELECT {sql.SUMMARY_COLUMNS} FROM st_traces{where} ORDER BY start_ns, trace_id "
                 "LIMIT %s OFFSET %s")
        for rows in self._cursor(query, [*params, flt.limit, flt.offset], batch):
            yield [sql.summary(r) for r in rows]

    def _cursor(self, query: str, params: Sequence[Any], batch: int) -> Iterator[list[tuple[Any, ...]]]:
        self._ready()
        with self.db.connection() as conn, conn.transaction(), conn.cursor(name="searchtrace_scan") as cursor:
            cursor.execute(query, params)
            while rows := cursor.fetchmany(batch):
                yield rows

    def count(self, flt: TraceFilter | None = None) -> int:
        """How many traces are stored (matching ``flt`` when given; its limit and offset are ignored)."""
        if flt is not None and flt.attribute is not None:
            return len(self.list_traces(replace(flt, limit=None, offset=0)))
        if flt is not None and flt.doc_id is not None:
            where, params = filter_where(flt, POSTGRES)
            rows = self._read(f"SELECT count(*) FROM st_traces{where}{' AND' if where else ' WHERE'} doc_ids @> %s",
                              [*params, [flt.doc_id]])
            return int(rows[0][0]) if rows else 0
        where, params = filter_where(flt, POSTGRES) if flt else ("", [])
        rows = self._read(f"SELECT count(*) FROM st_traces{where}", params)
        return int(rows[0][0]) if rows else 0

    def interactions(self, flt: InteractionFilter, batch: int = 10_000) -> Iterator[list[Impression | Fetch]]:
        """A dataset's impressions and fetches, oldest first, ``batch`` traces at a time, from one snapshot."""
        where, params = interactions_where(flt, POSTGRES)
        sources = frozenset(flt.sources)
        query = (f"SELECT trace_id, start_ns, session_id, query, query_id, result_ids, fetched_ids, fetch_of, source "
                 f"FROM st_traces{where} ORDER BY start_ns, trace_id")
        for rows in self._cursor(query, params, batch):
            out: list[Impression | Fetch] = []
            for trace_id, start_ns, session_id, query_text, query_id, shown, fetched, fetch_of, source in rows:
                if shown is not None and source in sources:
                    out.append(Impression(trace_id, start_ns, session_id, query_text, query_id, tuple(shown)))
                if fetched is not None:
                    out.append(Fetch(trace_id, start_ns, session_id, fetch_of, tuple(fetched)))
            yield out

    def count_interactions(self, flt: InteractionFilter) -> int:
        where, params = interactions_where(flt, POSTGRES)
        rows = self._read(f"SELECT count(*) FROM st_traces{where}", params)
        return int(rows[0][0]) if rows else 0

    def stored(self, trace_ids: Sequence[str]) -> dict[str, int]:
        """How many spans each of ``trace_ids`` has stored, for those whose root span is stored."""
        rows = self._read("SELECT trace_id, n_spans FROM st_traces WHERE has_root AND trace_id = ANY(%s)",
                          ([t.lower() for t in trace_ids],))
        return {r[0]: int(r[1]) for r in rows}

    def trace_ids_starting(self, prefix: str, limit: int = 2) -> list[str]:
        prefix = prefix.lower()
        rows = self._read("SELECT trace_id FROM st_traces WHERE trace_id >= %s AND trace_id < %s "
                          "ORDER BY trace_id LIMIT %s", (prefix, prefix + "g", limit))
        return [r[0] for r in rows]

    def load_trace(self, trace_id: str) -> TraceDetail | None:
        """One trace with all its spans in start order, or None for an unknown id."""
        trace_id = trace_id.lower()
        rows = self._read(f"SELECT {sql.SUMMARY_COLUMNS}, resource FROM st_traces WHERE trace_id = %s", (trace_id,))
        if not rows:
            return None
        spans = self._read("SELECT trace_id, span_id, parent_id, name, kind, start_ns, end_ns, status, status_message, "
                           "scope, attributes, events FROM st_spans WHERE trace_id = %s ORDER BY start_ns, span_id",
                           (trace_id,))
        return TraceDetail(sql.summary(rows[0][:-1]), tuple(_span(s) for s in spans), tuples(rows[0][-1] or {}))

    def error_messages(self, trace_ids: Sequence[str]) -> dict[str, str]:
        """Each given trace's error message (``TraceStoreProtocol.error_messages``), along the spans' key."""
        rows = self._read("SELECT trace_id, status_message FROM st_spans WHERE trace_id = ANY(%s) AND status = 'ERROR' "
                          "AND status_message != '' ORDER BY trace_id, parent_id IS NOT NULL, start_ns",
                          ([t.lower() for t in trace_ids],))
        return first_messages(rows)

    def span_durations(self, trace_ids: Sequence[str], names: Sequence[str]) -> list[tuple[str, str, float]]:
        """(trace id, span name, ms) of the spans named ``names`` in the given traces."""
        rows = self._read("SELECT trace_id, name, (end_ns - start_ns) / 1e6 FROM st_spans "
                          "WHERE trace_id = ANY(%s) AND name = ANY(%s)",
                          ([t.lower() for t in trace_ids], list(names)))
        return [(r[0], r[1], float(r[2])) for r in rows]

    def prune(self, older_than_days: float | None = None, keep_last: int | None = None, *,
              now_ns: int | None = None, reclaim: bool = True) -> int:
        """Delete traces that started over N days ago and/or all but the newest N, :data:`PRUNE_BATCH`
        traces per transaction; returns how many (``reclaim`` is autovacuum's work here)."""
        if older_than_days is None and keep_last is None:
            raise ValueError("prune needs older_than_days and/or keep_last")
        if (older_than_days or 0) < 0 or (keep_last or 0) < 0:
            raise ValueError("older_than_days and keep_last must be >= 0")
        conds, params = [], []
        if older_than_days is not None:
            conds.append("start_ns < %s")
            params.append((now_ns if now_ns is not None else time.time_ns()) - int(older_than_days * _NS_PER_DAY))
        if keep_last is not None:
            boundary = self._read("SELECT start_ns, trace_id FROM st_traces ORDER BY start_ns DESC, trace_id DESC "
                                  "LIMIT 1 OFFSET %s", (max(keep_last - 1, 0),))
            if keep_last == 0:
                conds.append("true")
            elif boundary:
                conds.append("(start_ns, trace_id) < (%s, %s)")
                params += [boundary[0][0], boundary[0][1]]
        if not conds:
            return 0
        doomed = f"SELECT trace_id FROM st_traces WHERE {' OR '.join(conds)} LIMIT {PRUNE_BATCH} FOR UPDATE SKIP LOCKED"
        deleted = 0
        while True:
            with self.db.connection() as conn, conn.transaction():
                ids = [r[0] for r in conn.execute(doomed, params)]
                if ids:
                    for table in ("st_spans", "st_searches", "st_traces"):
                        conn.execute(f"DELETE FROM {table} WHERE trace_id = ANY(%s)", (ids,))
            deleted += len(ids)
            if len(ids) < PRUNE_BATCH:
                return deleted

    def note_dropped(self, host: str, pid: int, started_ns: int, dropped: int, buffer_size: int) -> None:
        """Record how many spans a process dropped while the store was out of reach (its running total)."""
        with self.db.connection() as conn:
            conn.execute("INSERT INTO st_export_drops (host, pid, started_ns, dropped, buffer_size) "
                         "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (host, pid, started_ns) DO UPDATE "
                         "SET dropped = excluded.dropped, noted_at = now()", (host, pid, started_ns, dropped,
                                                                              buffer_size))

    def set_aside_damaged(self, why: object) -> bool:
        """False: the server keeps its own files whole; there is nothing to set aside."""
        return False

    def size_bytes(self) -> int | None:
        """None: the server's disk is the server's to say."""
        return None

    def dropped(self) -> int:
        """Spans every process has said it dropped while the store was out of reach."""
        rows = self._read("SELECT coalesce(sum(dropped), 0) FROM st_export_drops", ())
        return int(rows[0][0])


def _span(row: Sequence[Any]) -> SpanRecord:
    (trace_id, span_id, parent_id, name, kind, start_ns, end_ns, status, message, scope, attributes, events) = row
    return SpanRecord(trace_id, span_id, parent_id, name, kind, start_ns, end_ns, status, message, scope,
                      tuples(_unpack(attributes)),
                      tuple(EventRecord(e["name"], e["time_ns"], tuples(e["attributes"])) for e in _unpack(events)))


def _unpack(raw: bytes) -> Any:
    """Packed JSON (``traces.store.rows.pack``) as the driver returns ``bytea``: zlib's header, else UTF-8 text."""
    return unpack(bytes(raw) if raw[:1] == b"\x78" else bytes(raw).decode())
