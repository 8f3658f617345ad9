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
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Sequence

from opentelemetry.sdk.trace import ReadableSpan

from searchtrace.traces import _sqlite as sql
from searchtrace.traces.records import EventRecord, SpanRecord, TraceDetail, TraceFilter, TraceSummary, to_ns

__all__ = ["EventRecord", "SpanRecord", "TraceDetail", "TraceFilter", "TraceStore",
           "TraceSummary", "to_ns"]

_NS_PER_DAY = 86_400 * 10**9


class TraceStore:
    """Finished spans in one SQLite file; thread-safe, with one connection per thread.

    Args:
        path: the database file (created with its folder on first use, not here).
        busy_timeout_ms: how long a write waits for another writer before failing.
        synchronous: SQLite ``synchronous`` level, NORMAL or FULL (see the module docstring).
    """

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 200, synchronous: str = "NORMAL") -> None:
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
        self._inherited: list[sqlite3.Connection] = []
        if hasattr(os, "register_at_fork"):
            ref = weakref.ref(self)
            os.register_at_fork(after_in_child=lambda: _after_fork(ref()))

    def open(self) -> TraceStore:
        """Create the folder and schema now rather than on first use."""
        self._conn()
        return self

    def close(self) -> None:
        """Close every thread's connection; the store reconnects if used again."""
        with self._lock:
            conns, self._conns = self._conns, []
            self._generation += 1
        for conn in conns:
            conn.close()

    def write(self, spans: Sequence[ReadableSpan]) -> int:
        """Store finished spans in one transaction; returns how many were written."""
        p = sql.plan(spans)
        conn = self._conn()
        with sql.write_transaction(conn):
            conn.executemany(sql.INSERT_SPAN, p.spans)
            conn.executemany(sql.UPSERT_PARTIAL, p.partial)
            conn.executemany(sql.UPSERT_ROOT, p.roots)
            conn.executemany(sql.UPDATE_SEARCH, p.searches)
            conn.executemany(sql.COUNT_SPANS, p.trace_ids)
        return len(p.spans)

    def list_traces(self, flt: TraceFilter = TraceFilter()) -> list[TraceSummary]:
        """Trace summaries matching ``flt``, newest first."""
        where, params = sql.where(flt)
        query = (f"SELECT {sql.SUMMARY_COLUMNS} FROM traces{where} ORDER BY start_ns DESC, trace_id DESC "
                 "LIMIT ? OFFSET ?")
        rows = self._conn().execute(query, [*params, -1 if flt.limit is None else flt.limit, flt.offset])
        return [sql.summary(r) for r in rows]

    def count(self, flt: TraceFilter | None = None) -> int:
        """How many traces are stored (matching ``flt`` when given; its limit and offset are ignored)."""
        where, params = sql.where(flt) if flt else ("", [])
        return self._conn().execute(f"SELECT count(*) FROM traces{where}", params).fetchone()[0]

    def load_trace(self, trace_id: str) -> TraceDetail | None:
        """One trace with all its spans in start order, or None for an unknown id."""
        conn = self._conn()
        trace_id = trace_id.lower()
        row = conn.execute(f"SELECT {sql.SUMMARY_COLUMNS}, resource FROM traces WHERE trace_id = ?",
                           (trace_id,)).fetchone()
        if row is None:
            return None
        spans = conn.execute("SELECT * FROM spans WHERE trace_id = ? ORDER BY start_ns, span_id", (trace_id,))
        return TraceDetail(sql.summary(row[:-1]), tuple(sql.span_record(s) for s in spans),
                           sql.tuples(sql.unpack(row[-1] or "{}")))

    def prune(self, older_than_days: float | None = None, keep_last: int | None = None, *,
              now_ns: int | None = None) -> int:
        """Delete traces that started over N days ago and/or all but the newest N; returns how many."""
        if older_than_days is None and keep_last is None:
            raise ValueError("prune needs older_than_days and/or keep_last")
        if (older_than_days or 0) < 0 or (keep_last or 0) < 0:
            raise ValueError("older_than_days and keep_last must be >= 0")
        conds, params = [], []
        if older_than_days is not None:
            conds.append("start_ns < ?")
            params.append((now_ns if now_ns is not None else time.time_ns()) - int(older_than_days * _NS_PER_DAY))
        if keep_last is not None:
            conds.append("trace_id IN (SELECT trace_id FROM traces ORDER BY start_ns DESC, trace_id DESC "
                         "LIMIT -1 OFFSET ?)")
            params.append(keep_last)
        doomed = f"SELECT trace_id FROM traces WHERE {' OR '.join(conds)}"
        conn = self._conn()
        with sql.write_transaction(conn):
            conn.execute(f"DELETE FROM spans WHERE trace_id IN ({doomed})", params)
            deleted = conn.execute(f"DELETE FROM traces WHERE trace_id IN ({doomed})", params).rowcount
        conn.execute("PRAGMA incremental_vacuum")
        return deleted

    def integrity_check(self) -> bool:
        """True when SQLite's ``PRAGMA integrity_check`` finds nothing wrong."""
        try:
            return self._conn().execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        except sqlite3.DatabaseError:  # too damaged to check ("file is not a database", "malformed")
            return False

    def _after_fork(self) -> None:
        # A SQLite connection must not cross fork(): the child reconnects, and keeps the
        # parent's connections referenced but unused so garbage collection never closes them.
        self._lock = threading.Lock()
        self._inherited.extend(self._conns)
        self._conns = []
        self._generation += 1

    def _conn(self) -> sqlite3.Connection:
        local = self._local
        if getattr(local, "generation", None) != self._generation:
            local.conn = self._connect()
            local.generation = self._generation
        return local.conn

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            with self._lock:
                if not self._ready:
                    sql.create_schema(conn)
                    self._ready = True
                self._conns.append(conn)
        except BaseException:
            conn.close()
            raise
        return conn


def _after_fork(store: TraceStore | None) -> None:
    if store is not None:
        store._after_fork()
