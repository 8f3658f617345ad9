"""A damaged trace store salvaged into a new one (``traces.damage`` sets it aside).

SQLite cannot always read a damaged file whole, but it can often read most of
its rows: :func:`salvage` copies every row it can reach into a healthy store, a
range of rowids at a time; a range that fails is halved until each row that can
be read is (a damaged page loses its own rows, not its neighbours'). A trace
whose row counts more spans than were recovered is partial: the report says how
many, and ``traces show`` says so of each.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from searchtrace.traces.store.damage import ASIDE, SIDECARS, damaged_copies, is_damaged, set_aside
from searchtrace.traces.store.sqlite import TraceStore

__all__ = ["Salvage", "repair", "salvage"]

_STEP = 1_000  # rowids read at a time


@dataclass(frozen=True)
class Salvage:
    """What a salvage copied: traces and spans, the rows it could not read, the traces it got only in part."""

    source: Path
    traces: int
    spans: int
    unreadable_rows: int
    partial_traces: int = 0
    lost_spans: int = 0


def _range(conn: sqlite3.Connection, table: str, start: int, end: int) -> tuple[list[tuple], int]:
    """The readable rows of rowids ``start``..``end``, halving a range that fails; and the rowids that fail alone."""
    try:
        return conn.execute(f"SELECT * FROM {table} WHERE rowid BETWEEN ? AND ?", (start, end)).fetchall(), 0
    except sqlite3.DatabaseError:
        if start == end:
            return [], 1
        middle = (start + end) // 2
        low, low_failed = _range(conn, table, start, middle)
        high, high_failed = _range(conn, table, middle + 1, end)
        return low + high, low_failed + high_failed


def _rows(conn: sqlite3.Connection, table: str) -> tuple[list[tuple], int]:
    """Every row of ``table`` SQLite can read, a range of rowids at a time; and the rowids it could not."""
    try:
        top = conn.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.DatabaseError:
        top = None  # the table's index is damaged: walk rowids until ranges stop yielding
    rows: list[tuple] = []
    failed = misses = 0
    start = 1
    while (start <= top) if top is not None else misses < 100:
        chunk, unread = _range(conn, table, start, start + _STEP - 1)
        failed += unread
        rows += chunk
        misses = 0 if chunk else misses + 1
        start += _STEP
    return rows, failed


def salvage(source: Path, store: TraceStore) -> Salvage:
    """Copy every readable trace and span of ``source`` into ``store`` (existing rows kept)."""
    try:
        conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        return Salvage(source, 0, 0, 1)
    try:
        traces, bad_traces = _rows(conn, "traces")
        spans, bad_spans = _rows(conn, "spans")
        present = _tables(conn)  # schema 5's: another retriever's searches, the services' settings
        (searches, bad_searches), (settings, bad_settings) = (
            _rows(conn, table) if table in present else ([], 0) for table in ("searches", "settings"))
    except sqlite3.DatabaseError:
        return Salvage(source, 0, 0, 1)
    finally:
        conn.close()
    store.insert_rows(traces, spans, searches, settings)
    partial, lost = _partial(store.path, [str(row[0]) for row in traces])
    return Salvage(source, len(traces), len(spans), bad_traces + bad_spans + bad_searches + bad_settings, partial,
                   lost)


def _tables(conn: sqlite3.Connection) -> set[str]:
    """The tables the damaged file names (none when even its schema cannot be read)."""
    try:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError:
        return set()


def _partial(path: Path, trace_ids: list[str]) -> tuple[int, int]:
    """Of ``trace_ids`` in the store at ``path``: how many hold fewer spans than their row counts, and how many
    spans they lack in all."""
    partial = lost = 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for start in range(0, len(trace_ids), 500):
            chunk = trace_ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for recorded, stored in conn.execute(
                    f"SELECT n_spans, (SELECT count(*) FROM spans s WHERE s.trace_id = t.trace_id) FROM traces t "
                    f"WHERE trace_id IN ({marks})", chunk):
                if stored < recorded:
                    partial, lost = partial + 1, lost + recorded - stored
    finally:
        conn.close()
    return partial, lost


def repair(path: Path) -> list[Salvage]:
    """Set a damaged store aside, then salvage every set-aside store into the (new) one.

    A salvaged copy is renamed ``<name>.salvaged``; returns what each salvage copied.
    """
    if path.exists() and is_damaged(path):
        set_aside(path)
    store = TraceStore(path)
    out = []
    try:
        for copy in damaged_copies(path):
            out.append(salvage(copy, store))
            for suffix in SIDECARS:
                part = copy.with_name(copy.name + suffix)
                if part.exists():
                    part.rename(part.with_name(part.name.replace(ASIDE, ".salvaged-")))
    finally:
        store.close()
    return out
