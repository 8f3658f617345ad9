"""The local trace store: finished spans in SQLite (WAL), one summary row per trace.

Durability: the store runs in WAL mode with ``synchronous=NORMAL``. A commit
appends the transaction to the WAL with ``write()`` before returning, so it sits
in the OS page cache and survives a ``kill -9`` of the process; only an OS crash
or power loss can lose the last commits (never the database's consistency),
because fsync waits for the next checkpoint. ``synchronous="FULL"`` closes that
gap at the cost of one fsync per export batch.

Spans of one trace may arrive in different export batches (children usually
before their root). Every span upserts its trace's row; the root fills the
timing columns and the ``search`` span the search columns, whenever they come.

Several processes share one store. A write waits up to ``busy_timeout_ms`` for
another writer; reads never take the write lock (WAL readers see the last
commit), and only a writer creates the schema. ``prune`` deletes in bounded
batches, each its own short transaction, then gives the freed pages back to the
file system: by one VACUUM when little is left (its lock lasts as long as
copying the live pages), else the same bounded way, so searches writing their
traces meanwhile wait for one batch at most.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import weakref
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Sequence

from opentelemetry.sdk.trace import ReadableSpan

from searchtrace.traces.store import searches
from searchtrace.traces.store import sqlite_sql as sql
from searchtrace.traces.store.damage import Recheck, mark_whole, unchanged_since_whole
from searchtrace.traces.store.filter_sql import SQLITE, interactions_where, kind_column, older_than, order_by, where
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
    to_ns,
)
from searchtrace.traces.store.rows import first_messages, packed_json, span_record, summary, tuples, unpack
from searchtrace.traces.store.span_match import Page, columns_only, filter_batches, newest_matching, span_level
from searchtrace.traces.store.writers import WriterMark, register

__all__ = ["BUSY_TIMEOUT_MS", "EventRecord", "Fetch", "Impression", "InteractionFilter", "SpanRecord", "TraceDetail",
           "TraceFilter", "TraceStore", "TraceSummary", "to_ns"]

log = logging.getLogger(__name__)

_NS_PER_DAY = 86_400 * 10**9
BUSY_TIMEOUT_MS = 5_000
"""How long a write waits for another process's write (a prune batch, another search's export)."""
PRUNE_BATCH = 500  # traces deleted per transaction
VACUUM_PAGES = 2_000  # pages given back per step (8 MB with 4 KB pages)
_TABLES = searches.Tables("spans", "searches", "settings", "?", arrays=False)
VACUUM_LIVE_PAGES = 25_600  # at most this many pages in use (100 MiB): a whole VACUUM holds the lock briefly


class TraceStore:
    """Finished spans in one SQLite file; thread-safe, with one connection per thread.

    Args:
        path: the database file (created with its folder on first use, not here).
        busy_timeout_ms: how long a write waits for another writer before failing (the
            exporter retries a failed write, see ``traces.exporter``).
        synchronous: SQLite ``synchronous`` level, NORMAL or FULL (see the module docstring).
        recheck: when a writer checks the file again after its first write (``damage.Recheck``: every 10
            minutes), so a page damaged under a long-running writer is found and the file set aside.
    """

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
                 synchronous: str = "NORMAL", recheck: Recheck | None = None) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be NORMAL or FULL, got {synchronous!r}")
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self.synchronous = synchronous
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns: list[sqlite3.Connection] = []
        self._generation = 0
        self._ready = False
        self._setup = threading.Lock()
        self._mark: WriterMark | None = None
        self._recheck = recheck or Recheck()
        self._inherited: list[sqlite3.Connection] = []
        if hasattr(os, "register_at_fork"):
            ref = weakref.ref(self)
            os.register_at_fork(after_in_child=lambda: _after_fork(ref()))

    @property
    def location(self) -> str:
        """Where the traces are, as shown to people: the file's path."""
        return str(self.path)

    def open(self) -> TraceStore:
        """Create the folder and schema now rather than on first write."""
        self._writer()
        return self

    def reset(self) -> None:
        """Forget connections and schema: the next use opens (and a write sets up) the file afresh."""
        self.close()
        self._ready = False

    def close(self) -> None:
        """Close every thread's connection and say this process stopped writing cleanly; the store
        reconnects (and sets up again) if used again."""
        self._close_connections()
        with self._setup:
            if self._ready and self.path.exists():
                mark_whole(self.path)  # as this writer leaves it: the next one's first write need not check
            if self._mark is not None:
                self._mark.release()
                self._mark = None
            self._ready = False

    def _close_connections(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, []
            self._generation += 1
        for conn in conns:
            conn.close()

    def write(self, spans: Sequence[ReadableSpan]) -> int:
        """Store finished spans in one transaction; returns how many were written."""
        p = sql.plan(spans)
        if self._ready and self._recheck.due():
            with self._setup:
                self._check_before_writing(False, "found when a writer that had been writing checked it again")
        conn = self._writer()
        with sql.write_transaction(conn):
            conn.executemany(sql.INSERT_SPAN, p.spans)
            conn.executemany(sql.UPSERT_PARTIAL, p.partial)
            conn.executemany(sql.UPSERT_ROOT, p.roots)
            conn.executemany(sql.UPSERT_ROOT_SEARCH, p.root_searches)
            conn.executemany(sql.UPDATE_SEARCH, p.searches)
            conn.executemany(sql.COUNT_SPANS, p.trace_ids)
            conn.executemany(sql.INSERT_DOC, p.docs)
            sql.write_attrs(conn, p.attrs, p.long_attrs)
            if p.foreign:  # read in the write lock: a key being set re-derives before or after, never during
                keys = dict(conn.execute(sql.ID_KEYS, (searches.ID_KEY,)).fetchall())
                conn.executemany(sql.INSERT_SEARCH, [searches.row(f, keys) for f in p.foreign])
                conn.executemany(sql.MARK_FOREIGN, [(t, searches.OTLP) for t in dict.fromkeys(f.trace_id
                                                                                              for f in p.foreign)])
        return len(p.spans)

    def searches(self, flt: SearchFilter = SearchFilter()) -> list[SearchRecord]:
        """Another retriever's searches (``traces.store.searches.read_searches``), oldest first."""
        return searches.read_searches(self._read, flt, _TABLES)

    def set_doc_id_key(self, service: str, key: str | None) -> int:
        """Name (None: forget) the metadata key holding ``service``'s document ids, and re-derive the ids of its
        stored searches; returns how many were read again."""
        conn = self._writer()
        with sql.write_transaction(conn):
            return searches.set_id_key(conn, _TABLES, service, key)

    def doc_id_keys(self) -> dict[str, str]:
        """Each service's document-id key."""
        return searches.id_keys(self._read, _TABLES)

    @property
    def capabilities(self) -> Capabilities:
        """The home's file: local, shrunk by prune, the document filter on ``trace_docs``, the attribute filter
        on ``trace_attrs`` (the spans read for a key with long values)."""
        return Capabilities(shared=False, reclaims_space_on_prune=True, span_filters_fast=False,
                            documents_indexed=True, write_timeout_ms=self.busy_timeout_ms + 1000)

    def list_traces(self, flt: TraceFilter = TraceFilter()) -> list[TraceSummary]:
        """Trace summaries matching ``flt`` in its order (newest first by default), sorted over every match, its
        span-level filters over the whole store (the document filter along ``trace_docs``, the attribute filter
        along ``trace_attrs``)."""
        docs = flt.doc_id is not None and self._has_table("trace_docs")
        attrs = flt.attribute is not None and self._has_table("trace_attrs")
        if (flt.doc_id is not None and not docs) or (flt.attribute is not None and not self._attrs_exact(flt)):
            narrowed = replace(flt, doc_id=flt.doc_id if docs else None, attribute=flt.attribute if attrs else None)
            return newest_matching(flt, self._page(narrowed), self._span_attributes)
        columns = self._columns()
        where, params = self._where_indexed(flt, columns)
        query = f"SELECT {sql.summary_columns(columns)} FROM traces{where}{order_by(flt.order)} LIMIT ? OFFSET ?"
        rows = self._read(query, [*params, -1 if flt.limit is None else flt.limit, flt.offset])
        return [summary(r) for r in rows]

    def _has_table(self, name: str) -> bool:
        """True once the store has table ``name`` (``trace_docs``, ``trace_attrs``: schema 6, a writer brought
        it up to date)."""
        local, conn = self._local, self._conn()
        seen: tuple[sqlite3.Connection, set[str]] | None = getattr(local, "tables_of", None)
        if seen is None or seen[0] is not conn:
            seen = local.tables_of = (conn, set())
        if name not in seen[1] and self._read("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)):
            seen[1].add(name)
        return name in seen[1]

    def _attrs_exact(self, flt: TraceFilter) -> bool:
        """True when ``trace_attrs`` alone answers ``flt``'s attribute filter: no trace holds a long value of its
        key (else the candidates' spans are read)."""
        return (flt.attribute is not None and self._has_table("trace_attrs")
                and not self._read(sql.HAS_LONG_ATTR, (flt.attribute[0],)))

    def _where_indexed(self, flt: TraceFilter, columns: frozenset[str]) -> tuple[str, list]:
        """The filter's WHERE clause, its document filter along ``trace_docs`` and its attribute filter along
        ``trace_attrs`` (the caller checked they are there): the attribute's candidates (:data:`sql.ATTR_CANDIDATES`),
        exactly its matches for a key without long values."""
        where, params = _where(flt, columns)
        conds: list[str] = [where[len(" WHERE "):]] if where else []
        if flt.doc_id is not None:
            conds.append(sql.DOC_TRACES)
            params = [*params, flt.doc_id]
        if flt.attribute is not None:
            key, text = flt.attribute
            conds.append(sql.ATTR_CANDIDATES)
            params = [*params, key, text.casefold(), key]
        return (f" WHERE {' AND '.join(conds)}" if conds else ""), params

    def scan(self, flt: TraceFilter = TraceFilter(limit=None), batch: int = 10_000) -> Iterator[list[TraceSummary]]:
        """Trace summaries matching ``flt``, oldest first, ``batch`` at a time (for progress over many).

        One statement reads them all, so they come from one snapshot of the store
        whatever is written meanwhile; the filter's limit and offset apply.
        """
        if span_level(flt):
            yield from filter_batches(self.scan(columns_only(flt), batch), flt, self._span_attributes)
            return
        columns = self._columns()
        where, params = _where(flt, columns)
        query = f"SELECT {sql.summary_columns(columns)} FROM traces{where} ORDER BY start_ns, trace_id LIMIT ? OFFSET ?"
        cursor = self._execute(query, [*params, -1 if flt.limit is None else flt.limit, flt.offset])
        if cursor is None:
            return
        try:
            while rows := cursor.fetchmany(batch):
                yield [summary(r) for r in rows]
        finally:
            cursor.close()

    def count(self, flt: TraceFilter | None = None) -> int:
        """How many traces are stored (matching ``flt`` when given; its limit and offset are ignored)."""
        if flt is not None and ((flt.attribute is not None and not self._attrs_exact(flt))
                                or (flt.doc_id is not None and not self._has_table("trace_docs"))):
            return len(self.list_traces(replace(flt, limit=None, offset=0)))
        columns = self._columns()
        if flt is not None and sql.only_searches(flt) and "kind" in columns:
            # nearly every trace is a search: all of them less the few that are not, both counted on an index
            rows = self._read(f"SELECT ({sql.COUNT_ALL}) - ({sql.COUNT_NOT_SEARCH})", ())
        else:
            where, params = self._where_indexed(flt, columns) if flt else ("", [])
            rows = self._read(f"SELECT count(*) FROM traces{where}", params)
        return int(rows[0][0]) if rows else 0

    def _page(self, narrowed: TraceFilter) -> Page:
        """A page of the traces a filter's columns match (and, given in ``narrowed``, that name its document, along
        ``trace_docs``, or may match its attribute, along ``trace_attrs``), in its order, listed after ``after``:
        the span-level filters read the store this way when no index answers them alone."""

        def page(flt: TraceFilter, after: tuple[int | float, str] | None, batch: int) -> list[TraceSummary]:
            columns = self._columns()
            where, params = self._where_indexed(replace(flt, doc_id=narrowed.doc_id, attribute=narrowed.attribute),
                                                columns)
            if after is not None:
                where, params = older_than(where, SQLITE, flt.order), [*params, *after]
            rows = self._read(f"SELECT {sql.summary_columns(columns)} FROM traces{where}{order_by(flt.order)} "
                              "LIMIT ?", [*params, batch])
            return [summary(r) for r in rows]

        return page

    def _span_attributes(self, trace_ids: list[str]) -> list[tuple[str, bytes]]:
        """(trace id, attributes as JSON text) of every span of ``trace_ids``."""
        out: list[tuple[str, bytes]] = []
        for start in range(0, len(trace_ids), 500):
            chunk = trace_ids[start:start + 500]
            rows = self._read(f"SELECT trace_id, attributes FROM spans WHERE trace_id IN ({','.join('?' * len(chunk))})",
                              chunk)
            out.extend((trace_id, packed_json(packed)) for trace_id, packed in rows)
        return out

    def interactions(self, flt: InteractionFilter, batch: int = 10_000) -> Iterator[list[Impression | Fetch]]:
        """A dataset's impressions (searches that answered, with the ids they showed) and fetches (with the ids
        they fetched), oldest first, ``batch`` traces at a time, from one snapshot of the store.

        Read from the ``traces`` table's columns alone, along its (dataset, start_ns) index: no span is unpacked.
        A store no writer has brought to schema 3 yet holds none.
        """
        where, params = interactions_where(flt, SQLITE)
        cursor = self._execute(f"SELECT {sql.INTERACTION_COLUMNS} FROM traces{where} ORDER BY start_ns, trace_id",
                               params)
        if cursor is None:
            return
        sources = frozenset(flt.sources)
        try:
            while rows := cursor.fetchmany(batch):
                yield sql.interactions(rows, sources)
        finally:
            cursor.close()

    def count_interactions(self, flt: InteractionFilter) -> int:
        """How many traces :meth:`interactions` reads for ``flt`` (for progress)."""
        where, params = interactions_where(flt, SQLITE)
        rows = self._read(f"SELECT count(*) FROM traces{where}", params)
        return int(rows[0][0]) if rows else 0

    def stored(self, trace_ids: Sequence[str]) -> dict[str, int]:
        """How many spans each of ``trace_ids`` has stored, for those whose root span is stored."""
        out: dict[str, int] = {}
        ids = [t.lower() for t in trace_ids]
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            out.update(self._read(f"SELECT trace_id, n_spans FROM traces WHERE has_root = 1 AND trace_id IN ({marks})",
                                  chunk))
        return out

    def trace_ids_starting(self, prefix: str, limit: int = 2) -> list[str]:
        """At most ``limit`` stored trace ids that begin with ``prefix`` (hex digits, any case), in order."""
        prefix = prefix.lower()  # ids are stored in lower case: a range of the primary key, "g" after every digit
        rows = self._read("SELECT trace_id FROM traces WHERE trace_id >= ? AND trace_id < ? ORDER BY trace_id "
                          "LIMIT ?", (prefix, prefix + "g", limit))
        return [row[0] for row in rows]

    def load_trace(self, trace_id: str) -> TraceDetail | None:
        """One trace with all its spans in start order, or None for an unknown id."""
        trace_id = trace_id.lower()
        rows = self._read(f"SELECT {sql.summary_columns(self._columns())}, resource FROM traces WHERE trace_id = ?",
                          (trace_id,))
        if not rows:
            return None
        row = rows[0]
        spans = self._read("SELECT * FROM spans WHERE trace_id = ? ORDER BY start_ns, span_id", (trace_id,))
        return TraceDetail(summary(row[:-1]), tuple(span_record(s) for s in spans),
                           tuples(unpack(row[-1] or "{}")))

    def error_messages(self, trace_ids: Sequence[str]) -> dict[str, str]:
        """Each given trace's error message (``TraceStoreProtocol.error_messages``), along the spans' key."""
        rows: list[tuple] = []
        for start in range(0, len(trace_ids), 500):
            chunk = [t.lower() for t in trace_ids[start:start + 500]]
            rows.extend(self._read(f"SELECT trace_id, status_message FROM spans WHERE trace_id IN "
                                   f"({','.join('?' * len(chunk))}) AND status = 'ERROR' AND status_message != '' "
                                   "ORDER BY trace_id, parent_id IS NOT NULL, start_ns", chunk))
        return first_messages(rows)

    def span_durations(self, trace_ids: Sequence[str], names: Sequence[str]) -> list[tuple[str, str, float]]:
        """(trace id, span name, ms) of the spans named ``names`` in the given traces (no attributes read)."""
        out: list[tuple[str, str, float]] = []
        marks = ",".join("?" * len(names))
        for start in range(0, len(trace_ids), 500):
            chunk = [t.lower() for t in trace_ids[start:start + 500]]
            out.extend(self._read(f"SELECT trace_id, name, (end_ns - start_ns) / 1e6 FROM spans WHERE trace_id IN "
                                  f"({','.join('?' * len(chunk))}) AND name IN ({marks})", [*chunk, *names]))
        return out

    def prune(self, older_than_days: float | None = None, keep_last: int | None = None, *,
              now_ns: int | None = None, reclaim: bool = True) -> int:
        """Delete traces that started over N days ago and/or all but the newest N; returns how many.

        Deletes in batches of :data:`PRUNE_BATCH` traces, each its own transaction,
        then (with ``reclaim``) gives the freed space back to the file system.
        """
        if older_than_days is None and keep_last is None:
            raise ValueError("prune needs older_than_days and/or keep_last")
        if (older_than_days or 0) < 0 or (keep_last or 0) < 0:
            raise ValueError("older_than_days and keep_last must be >= 0")
        conn = self._writer()
        conds, params = [], []
        if older_than_days is not None:
            conds.append("start_ns < ?")
            params.append((now_ns if now_ns is not None else time.time_ns()) - int(older_than_days * _NS_PER_DAY))
        if keep_last is not None:
            boundary = conn.execute("SELECT start_ns, trace_id FROM traces ORDER BY start_ns DESC, trace_id DESC "
                                    "LIMIT 1 OFFSET ?", (max(keep_last - 1, 0),)).fetchone()
            if keep_last == 0:
                conds.append("1")
            elif boundary is not None:
                conds.append("(start_ns < ? OR (start_ns = ? AND trace_id < ?))")
                params += [boundary[0], boundary[0], boundary[1]]
        doomed = f"SELECT trace_id FROM traces WHERE {' OR '.join(conds)} LIMIT {PRUNE_BATCH}" if conds else ""
        deleted = 0
        while doomed:
            with sql.write_transaction(conn):
                ids = [r[0] for r in conn.execute(doomed, params)]
                marks = ",".join("?" * len(ids))
                if ids:
                    conn.execute(f"DELETE FROM spans WHERE trace_id IN ({marks})", ids)
                    conn.execute(f"DELETE FROM searches WHERE trace_id IN ({marks})", ids)
                    for table in ("trace_docs", "trace_attrs", "trace_attrs_long"):
                        conn.execute(f"DELETE FROM {table} WHERE trace_id IN ({marks})", ids)
                    conn.execute(f"DELETE FROM traces WHERE trace_id IN ({marks})", ids)
            deleted += len(ids)
            if len(ids) < PRUNE_BATCH:
                break
        if reclaim:
            self.reclaim()
        return deleted

    def insert_rows(self, traces: Sequence[tuple], spans: Sequence[tuple], searches: Sequence[tuple] = (),
                    settings: Sequence[tuple] = ()) -> None:
        """Insert rows read from another store of this schema (see ``traces.repair``); existing rows are kept."""
        conn = self._writer()
        with sql.write_transaction(conn):
            if traces:  # a store of an older schema has fewer columns: the first ones, in the same order
                names = ",".join(sql.traces_columns(conn)[:len(traces[0])])
                conn.executemany(f"INSERT OR IGNORE INTO traces ({names}) VALUES ({','.join('?' * len(traces[0]))})",
                                 traces)
            if spans:
                conn.executemany(f"INSERT OR IGNORE INTO spans VALUES ({','.join('?' * len(spans[0]))})", spans)
            for table, rows in (("searches", searches), ("settings", settings)):
                if rows:
                    conn.executemany(f"INSERT OR IGNORE INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows)
            conn.execute(sql.CLASSIFY_UNKNOWN)  # rows of a schema before ``kind``: classified as an upgrade does
            if spans:  # their documents and attributes, as an upgrade to schema 6 fills them
                copied = list(dict.fromkeys(row[0] for row in spans))
                sql.fill_trace_docs(conn, copied)
                sql.fill_trace_attrs(conn, copied)

    def reclaim(self) -> int:
        """Give free pages back to the file system, a bounded step at a time; returns the pages freed."""
        conn = self._writer()
        if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:  # a store made before incremental vacuum
            before = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            conn.execute("VACUUM")  # once: from now on the store vacuums incrementally
            return int(before - conn.execute("PRAGMA page_count").fetchone()[0])
        pages, free = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count"))
        if free and pages - free <= VACUUM_LIVE_PAGES and self._vacuum(conn):
            return int(pages - conn.execute("PRAGMA page_count").fetchone()[0])
        freed = 0
        while (free := conn.execute("PRAGMA freelist_count").fetchone()[0]) > 0:
            # Each step is its own short transaction, and must be stepped to the end to free
            # anything; a passive checkpoint after it moves the step's pages into the file
            # without waiting on (or blocking) other writers.
            conn.execute(f"PRAGMA incremental_vacuum({VACUUM_PAGES})").fetchall()
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            after = conn.execute("PRAGMA freelist_count").fetchone()[0]
            if after >= free:
                break
            freed += free - after
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()  # little left to copy: gives the WAL back
        return freed

    @staticmethod
    def _vacuum(conn: sqlite3.Connection) -> bool:
        """Rewrite the store whole: the lock it holds lasts as long as copying the live pages.

        Incremental vacuum moves one page at a time through a long freelist (about
        2,000 pages in 20 s on a 170,000-page freelist); VACUUM writes only what is
        left (8 MiB of a 686 MiB file in 0.2 s). False, having changed nothing, when
        another process holds the lock past the busy timeout or the disk has no room.
        """
        try:
            conn.execute("VACUUM")
        except sqlite3.OperationalError as exc:
            log.warning("trace store: VACUUM not possible now (%s); giving space back a step at a time", exc)
            return False
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return True

    def size_bytes(self) -> int | None:
        """The file's size (0 before a writer made it)."""
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def set_aside_damaged(self, why: object) -> bool:
        """Close, move the damaged file aside (``damage.set_aside_damaged``) and start afresh; False when it cannot
        be moved."""
        from searchtrace.traces.store.damage import set_aside_damaged

        self.close()
        if set_aside_damaged(self.path, why) is None:
            return False
        self.reset()
        return True

    def note_dropped(self, host: str, pid: int, started_ns: int, dropped: int, buffer_size: int) -> None:
        """Nothing to note: the local store is never out of reach, so no span waits for it in a buffer."""

    def dropped(self) -> int:
        """0: no process buffers spans for the local store (see :meth:`note_dropped`)."""
        return 0

    def integrity_check(self) -> bool:
        """True when SQLite's ``PRAGMA integrity_check`` finds nothing wrong."""
        try:
            return self._read("PRAGMA integrity_check", ()) == [("ok",)]
        except sqlite3.DatabaseError:  # too damaged to check ("file is not a database", "malformed")
            return False

    def _after_fork(self) -> None:
        # A SQLite connection must not cross fork(): the child reconnects, and keeps the
        # parent's connections referenced but unused so garbage collection never closes them.
        # The writer's marker is the parent's: the child makes its own when it first writes.
        self._lock = threading.Lock()
        self._setup = threading.Lock()
        self._inherited.extend(self._conns)
        self._conns = []
        self._generation += 1
        if self._mark is not None:
            self._mark.forget()
            self._mark = None
        self._ready = False

    def _conn(self) -> sqlite3.Connection:
        local = self._local
        if getattr(local, "generation", None) != self._generation:
            local.conn = self._connect()
            local.generation = self._generation
        return local.conn

    def _writer(self) -> sqlite3.Connection:
        """This thread's connection, set up first if this store has not yet done so: this process
        marked as a writer, the file checked (a damaged one set aside), the schema made."""
        if not self._ready:
            with self._setup:
                if not self._ready:
                    if self._mark is None:
                        self._mark = register(self.path)
                        unclean = self._mark is not None and self._mark.unclean > 0
                        self._check_before_writing(unclean, "found when this process opened it to write", opening=True)
                    sql.create_schema(self._conn())
                    self._ready = True
        return self._conn()

    def _check_before_writing(self, unclean: bool, when: str, opening: bool = False) -> None:
        """Quick-check the file, as readers do (about 40 ms for 10,000 traces); a damaged one is set aside (and
        said) and a new one started, never written into: readers would refuse it, and every trace with it.
        On ``opening``, a file unchanged since a writer left it known whole (``damage.unchanged_since_whole``)
        is not read again: a command's one search pays nothing for a large store."""
        from searchtrace.traces.store.damage import is_damaged, set_aside_damaged

        self._recheck.checked()
        if not self.path.exists() or (opening and not unclean and unchanged_since_whole(self.path)):
            return
        if not is_damaged(self.path):
            mark_whole(self.path)
            return
        self._close_connections()
        self._ready = False  # the next write makes the new file's schema
        set_aside_damaged(self.path, "found when a writer that had stopped without closing it was replaced"
                          if unclean else when)

    def _read(self, query: str, params: Sequence[object]) -> list[tuple]:
        """Rows of a read (see :meth:`_execute`)."""
        cursor = self._execute(query, params)
        return cursor.fetchall() if cursor is not None else []

    def _execute(self, query: str, params: Sequence[object]) -> sqlite3.Cursor | None:
        """The cursor of a read; None (no rows) in a store no writer has set up yet, and for a filter on a
        column a store of an older schema lacks (none of its traces recorded it)."""
        try:
            return self._conn().execute(query, params)
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc) or ("no such column" in str(exc) and self._older_schema()):
                return None
            raise

    def _columns(self) -> frozenset[str]:
        """The ``traces`` table's columns as this thread's connection sees them (a store of an older schema has
        fewer; none before a writer made the table). Kept once the table has every column of this schema;
        read again on each use until then, since a writer may bring the store up to date meanwhile."""
        local = self._local
        conn = self._conn()
        known = getattr(local, "columns", None)
        if known is not None and getattr(local, "columns_of", None) is conn:
            return known
        try:
            columns = frozenset(row[1] for row in conn.execute("PRAGMA table_info(traces)"))
        except sqlite3.OperationalError:
            return frozenset()
        if columns >= sql.ADDED_COLUMNS.keys():
            local.columns, local.columns_of = columns, conn
        return columns

    def _older_schema(self) -> bool:
        return int(self._conn().execute("PRAGMA user_version").fetchone()[0]) < sql.SCHEMA_VERSION

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            with self._lock:
                self._conns.append(conn)
        except BaseException:
            conn.close()
            raise
        return conn


def _where(flt: TraceFilter, columns: frozenset[str]) -> tuple[str, list]:
    """The filter's WHERE clause on a store with ``columns`` (an older schema's kind computed from the others)."""
    return where(flt, SQLITE, kind_column=kind_column(columns, sql.LEGACY_KIND))


def _after_fork(store: TraceStore | None) -> None:
    if store is not None:
        store._after_fork()
