"""The trace store's schema, SQL and row conversions (private to traces.store).

Schema: ``traces`` holds one row per trace, denormalized from its root and
``search`` spans for filtering; ``spans`` holds every span, keyed by
(trace_id, span_id). Attribute and event JSON above 1 KiB is stored
zlib-compressed.

``source`` and ``dataset`` (schema version 2) say where a search came from and
which dataset it searched; a store made before them gains the two columns (empty
for its older traces) when a writer first opens it, and a read that filters on
them finds nothing in a store no writer has brought up to date yet. Version 3
adds, the same way, what implicit judgments read without unpacking a span:
``session_id`` (the root span's ``mcp.session.id``), ``result_ids`` (the
search span's shown ids, a JSON list), and for a served fetch ``fetched_ids``
(a JSON list) and ``fetch_of`` (the search trace it names), its ``dataset``
coming from its server span.

``kind``, ``cold`` and ``status_code`` (schema version 4) say what a trace is
(a search, a model load, another served request: ``vocabulary.TraceKind``), whether
the search was its process's first after the model loaded, and the HTTP status
a served request answered; the root span also fills ``source`` and ``error_code``
when the search span did not (a request refused before any search ran). The
writer that adds ``kind`` to an older store classifies its traces once by their
other columns (:data:`LEGACY_KIND`), and a read of a store no writer has brought
up to date classifies them the same way as it reads.

Listing is newest first, so ``traces_recent`` orders by (start_ns, trace_id)
and carries every filter column: a filter that matches few traces (a rare
query text, one degraded stage) is checked along that small index without
reading the wide table rows, which lie scattered among span pages (about
30 ms instead of 200 ms at 100,000 traces). Equality filters have their own
(column, start_ns) indexes.

Schema 6 adds ``trace_docs``: one row per (document id, trace) for every id any span of the trace names in an
id list (``span_match.DOC_ID_KEYS``), so the document filter reads an index rather than every span of the
store; the source filter and a partial index of the traces that failed in any way
(``filter_sql.FAILED``), so the dashboard's "errors of any kind" and "live traffic" need no scan either. The
writer that brings a store to schema 6 fills ``trace_docs`` from the spans already stored, once.

Schema 6 also indexes the attribute filter (a span attribute's value, shown as text, holds a text, any case:
``span_match.has_attribute``): ``trace_attrs`` holds one row per (key, value shown and casefolded, trace) for
every span attribute whose shown value is at most :data:`ATTR_VALUE_MAX` characters, ``trace_attrs_long`` one
row per (key, trace) for the longer ones (a list of 100 candidate ids). A key no trace holds a long value of is
answered from ``trace_attrs`` alone, exactly; a key with long values narrows the traces to those with a
matching short value or a long one, whose spans are then checked as before. Both are filled with
``trace_docs``, in the same transaction, and for a store without them, once.

The rows' encoding and the records read back are ``traces.store.rows``'s (the shared store's too); the
filter's WHERE clause is ``traces.store.filter_sql``'s.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Collection, Iterable, Iterator, Mapping, Sequence

import orjson
from opentelemetry.sdk.trace import ReadableSpan

from searchtrace.traces.spans import vocabulary as v
from searchtrace.traces.spans.foreign import source_of
from searchtrace.traces.spans.vocabulary import TraceKind
from searchtrace.traces.store.filter_sql import FAILED
from searchtrace.traces.store.records import Fetch, Impression, TraceFilter
from searchtrace.traces.store.rows import (
    NEWER_SUMMARY_COLUMNS,
    SUMMARY_COLUMNS,
    dump,
    pack,
    packed_json,
    root_columns,
    search_columns,
)
from searchtrace.traces.store.searches import Pending, pending
from searchtrace.traces.store.span_match import DOC_ID_KEYS

SCHEMA_VERSION = 6
"""1: the first schema. 2: ``traces.source`` and ``traces.dataset``, from the search span. 3:
``session_id``, ``result_ids``, ``fetched_ids`` and ``fetch_of`` (impressions and fetches). 4:
``traces.kind``, ``traces.cold`` and ``traces.status_code``. 5: ``traces.service`` and ``traces.project`` (from
the resource), the ``searches`` table (another retriever's searches) and the ``settings`` table. 6: the
``trace_docs`` table (each trace's document ids), the ``trace_attrs`` and ``trace_attrs_long`` tables (each trace's
span attributes), the source index and the failed traces' partial index."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    trace_id TEXT PRIMARY KEY, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
    duration_ms REAL NOT NULL, has_root INTEGER NOT NULL DEFAULT 0, root_name TEXT,
    status TEXT, mode TEXT, query TEXT, query_fold TEXT, run_id TEXT, query_id TEXT,
    top_k INTEGER, best_score REAL, no_confident INTEGER, degraded TEXT NOT NULL DEFAULT '',
    bands INTEGER NOT NULL DEFAULT 0, n_results INTEGER, error_code TEXT,
    n_spans INTEGER NOT NULL DEFAULT 0, resource TEXT, source TEXT, dataset TEXT, session_id TEXT,
    result_ids TEXT, fetched_ids TEXT, fetch_of TEXT);
CREATE INDEX IF NOT EXISTS traces_recent ON traces (start_ns, trace_id, mode, bands, no_confident, degraded,
    duration_ms, run_id, query_fold);
CREATE INDEX IF NOT EXISTS traces_mode ON traces (mode, start_ns);
CREATE INDEX IF NOT EXISTS traces_run ON traces (run_id, start_ns);
CREATE INDEX IF NOT EXISTS traces_no_confident ON traces (no_confident, start_ns);
CREATE INDEX IF NOT EXISTS traces_duration ON traces (duration_ms);
CREATE TABLE IF NOT EXISTS spans (
    trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_id TEXT, name TEXT NOT NULL,
    kind TEXT NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, status TEXT NOT NULL,
    status_message TEXT, scope TEXT, attributes NOT NULL, events NOT NULL,
    PRIMARY KEY (trace_id, span_id))
"""
ADDED_COLUMNS = {"source": "TEXT", "dataset": "TEXT", "session_id": "TEXT", "result_ids": "TEXT",
                 "fetched_ids": "TEXT", "fetch_of": "TEXT", "kind": "TEXT", "cold": "INTEGER", "status_code": "INTEGER",
                 "service": "TEXT", "project": "TEXT"}
"""Columns of ``traces`` newer than the first schema: added to an older store by its first writer."""
ADDED_INDEXES = "CREATE INDEX IF NOT EXISTS traces_dataset ON traces (dataset, start_ns)"
FOREIGN_SCHEMA = (
    "CREATE INDEX IF NOT EXISTS traces_service ON traces (service, start_ns)",
    "CREATE INDEX IF NOT EXISTS traces_project ON traces (project, start_ns)",
    """CREATE TABLE IF NOT EXISTS searches (
    trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_id TEXT, start_ns INTEGER NOT NULL,
    duration_ms REAL NOT NULL, service TEXT, project TEXT, query TEXT, query_fold TEXT, doc_ids TEXT NOT NULL,
    scores TEXT NOT NULL, unidentified INTEGER NOT NULL, top_k INTEGER, data_source TEXT, convention TEXT NOT NULL,
    PRIMARY KEY (trace_id, span_id))""",
    "CREATE INDEX IF NOT EXISTS searches_service ON searches (service, start_ns)",
    "CREATE INDEX IF NOT EXISTS searches_start ON searches (start_ns)",
    "CREATE TABLE IF NOT EXISTS settings (service TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, "
    "PRIMARY KEY (service, name))")
"""Schema 5: the resource's service and project filters, another retriever's searches (one row per search span,
``traces.store.searches``) and the per-service settings (the document-id key)."""
DOCS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS trace_docs (doc_id TEXT NOT NULL, trace_id TEXT NOT NULL, "
    "PRIMARY KEY (doc_id, trace_id)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS trace_docs_trace ON trace_docs (trace_id)",
    "CREATE INDEX IF NOT EXISTS traces_source ON traces (source, start_ns, trace_id)",
    f"CREATE INDEX IF NOT EXISTS traces_failed ON traces (start_ns, trace_id) WHERE {FAILED}")
"""Schema 6: the document filter, the source filter and the failed filter, each along an index."""
INSERT_DOC = "INSERT OR IGNORE INTO trace_docs VALUES (?, ?)"
DOC_TRACES = "trace_id IN (SELECT trace_id FROM trace_docs WHERE doc_id = ?)"
"""The document filter's condition on ``traces``: one parameter, the document id."""
ATTR_VALUE_MAX = 200
"""The longest value shown (casefolded, in characters) ``trace_attrs`` holds; a longer one is in
``trace_attrs_long``, its key only."""
ATTRS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS trace_attrs (key TEXT NOT NULL, value TEXT NOT NULL, trace_id TEXT NOT NULL, "
    "PRIMARY KEY (key, value, trace_id)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS trace_attrs_trace ON trace_attrs (trace_id)",
    "CREATE TABLE IF NOT EXISTS trace_attrs_long (key TEXT NOT NULL, trace_id TEXT NOT NULL, "
    "PRIMARY KEY (key, trace_id)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS trace_attrs_long_trace ON trace_attrs_long (trace_id)")
"""Schema 6: the attribute filter along an index (the table's key, then the value)."""
INSERT_ATTR = "INSERT OR IGNORE INTO trace_attrs VALUES (?, ?, ?)"
INSERT_LONG_ATTR = "INSERT OR IGNORE INTO trace_attrs_long VALUES (?, ?)"
ATTR_TRACES = "trace_id IN (SELECT trace_id FROM trace_attrs WHERE key = ? AND instr(value, ?) > 0)"
"""The attribute filter's condition on ``traces`` for a key without long values: the key, the text casefolded."""
ATTR_CANDIDATES = f"({ATTR_TRACES} OR trace_id IN (SELECT trace_id FROM trace_attrs_long WHERE key = ?))"
"""The traces that may match an attribute filter (the key, the text casefolded, the key again): a matching short
value's, and every long value's of the key (their spans are checked)."""
HAS_LONG_ATTR = "SELECT 1 FROM trace_attrs_long WHERE key = ? LIMIT 1"
INSERT_SEARCH = f"INSERT OR REPLACE INTO searches VALUES ({','.join('?' * 15)})"
MARK_FOREIGN = """UPDATE traces SET kind = 'search', source = coalesce(source, ?2),
    query = (SELECT query FROM searches WHERE trace_id = ?1 ORDER BY start_ns, duration_ms DESC, span_id LIMIT 1),
    query_fold = (SELECT query_fold FROM searches WHERE trace_id = ?1 ORDER BY start_ns, duration_ms DESC, span_id
        LIMIT 1)
WHERE trace_id = ?1"""
"""A trace with another retriever's search is a search: its query the first search's, its source ``otlp``."""
ID_KEYS = "SELECT service, value FROM settings WHERE name = ?"

INSERT_SPAN = "INSERT OR REPLACE INTO spans VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
# A span that is not the root widens the trace's time window until the root arrives.
UPSERT_PARTIAL = """INSERT INTO traces (trace_id, start_ns, end_ns, duration_ms, resource, service, project)
VALUES (?,?,?,?,?,?,?)
ON CONFLICT (trace_id) DO UPDATE SET start_ns = min(start_ns, excluded.start_ns),
    end_ns = max(end_ns, excluded.end_ns),
    duration_ms = (max(end_ns, excluded.end_ns) - min(start_ns, excluded.start_ns)) / 1e6,
    resource = coalesce(resource, excluded.resource), service = coalesce(service, excluded.service),
    project = coalesce(project, excluded.project)
WHERE has_root = 0"""
# The root also says what the trace is (its kind), who called and what a served request answered, the MCP
# session and, for a served fetch, what it fetched and in which dataset (a search's dataset comes from its search
# span, which may be stored before or after its root).
UPSERT_ROOT = """INSERT INTO traces (trace_id, start_ns, end_ns, duration_ms, resource, has_root, root_name, status,
    session_id, fetched_ids, fetch_of, dataset, kind, source, error_code, status_code, service, project)
VALUES (?,?,?,?,?,1,?,?,?,?,?,?,?,?,?,?,?,?)
ON CONFLICT (trace_id) DO UPDATE SET start_ns = excluded.start_ns, end_ns = excluded.end_ns,
    duration_ms = excluded.duration_ms, resource = excluded.resource, has_root = 1,
    root_name = excluded.root_name, status = excluded.status, session_id = excluded.session_id,
    fetched_ids = excluded.fetched_ids, fetch_of = excluded.fetch_of, dataset = coalesce(dataset, excluded.dataset),
    kind = CASE WHEN kind = 'search' THEN kind ELSE excluded.kind END,
    source = coalesce(source, excluded.source), error_code = coalesce(error_code, excluded.error_code),
    status_code = excluded.status_code, service = coalesce(excluded.service, service),
    project = coalesce(excluded.project, project)"""
SEARCH_COLUMNS = ("mode", "query", "query_fold", "run_id", "query_id", "top_k", "best_score", "no_confident",
                  "degraded", "bands", "n_results", "error_code", "source", "dataset", "result_ids", "kind", "cold")
KEPT_FROM_ROOT = ("error_code", "source")
"""Search columns the root span may have filled already (a server span's), which a search without one keeps."""
_SET_SEARCH = ", ".join(f"{c} = coalesce(?, {c})" if c in KEPT_FROM_ROOT else f"{c} = ?" for c in SEARCH_COLUMNS)
UPDATE_SEARCH = f"UPDATE traces SET {_SET_SEARCH} WHERE trace_id = ?"
_ROOT_SEARCH_PARAMS = 17
""":data:`UPSERT_ROOT_SEARCH`'s parameters: :data:`UPSERT_ROOT`'s (17, ?1 to ?17), then :data:`UPDATE_SEARCH`'s
without its trace id (?18 to ?34, in :data:`SEARCH_COLUMNS` order)."""
_S = {c: f"?{_ROOT_SEARCH_PARAMS + 1 + i}" for i, c in enumerate(SEARCH_COLUMNS)}
_COUNT = "(SELECT count(*) FROM spans WHERE trace_id = ?1)"
UPSERT_ROOT_SEARCH = f"""INSERT INTO traces (trace_id, start_ns, end_ns, duration_ms, resource, has_root, root_name,
    status, session_id, fetched_ids, fetch_of, dataset, kind, source, error_code, status_code, service, project,
    {", ".join(c for c in SEARCH_COLUMNS if c not in ("error_code", "source", "dataset", "kind"))}, n_spans)
VALUES (?1,?2,?3,?4,?5,1,?6,?7,?8,?9,?10,{_S["dataset"]},{_S["kind"]},coalesce({_S["source"]},?13),
    coalesce({_S["error_code"]},?14),?15,?16,?17,
    {",".join(p for c, p in _S.items() if c not in ("error_code", "source", "dataset", "kind"))}, {_COUNT})
ON CONFLICT (trace_id) DO UPDATE SET start_ns = ?2, end_ns = ?3, duration_ms = ?4, resource = ?5, has_root = 1,
    root_name = ?6, status = ?7, session_id = ?8, fetched_ids = ?9, fetch_of = ?10, dataset = {_S["dataset"]},
    kind = {_S["kind"]}, source = coalesce({_S["source"]}, source, ?13),
    error_code = coalesce({_S["error_code"]}, error_code, ?14), status_code = ?15, service = coalesce(?16, service),
    project = coalesce(?17, project),
    {", ".join(f"{c} = {p}" for c, p in _S.items() if c not in ("error_code", "source", "dataset", "kind"))},
    n_spans = {_COUNT}"""
""":data:`UPSERT_ROOT` then :data:`UPDATE_SEARCH` (a root span's, then a search span's of the same trace: an
eval's one span is both) in one statement, one write of the row and its indexes, not two: each column as the
two leave it, the search's over the root's (its source and error code first, then the row's, then the root's).
It counts the trace's spans too, as :data:`COUNT_SPANS` would after it: the batch's spans are stored before."""
COUNT_SPANS = "UPDATE traces SET n_spans = (SELECT count(*) FROM spans WHERE trace_id = ?1) WHERE trace_id = ?1"


@dataclass(frozen=True)
class WritePlan:
    """The statements' parameters for one batch of spans."""

    spans: list[tuple]
    partial: list[list]
    roots: list[tuple]
    searches: list[tuple]
    root_searches: list[tuple]
    trace_ids: list[tuple[str]]
    foreign: list[Pending]
    docs: list[tuple[str, str]]
    attrs: list[tuple[str, str, str]]
    long_attrs: list[tuple[str, str]]


def plan(spans: Sequence[ReadableSpan], merge: bool = True) -> WritePlan:
    """The statements' parameters for ``spans``. ``merge``: a trace with one root span and one search span in the
    batch (one span, as an eval's, or two) is written by :data:`UPSERT_ROOT_SEARCH`."""
    rows = []
    partial: dict[str, list] = {}
    roots, searches = [], []
    foreign: list[Pending] = []
    docs: dict[tuple[str, str], None] = {}
    shown: dict[tuple[str, str, str], None] = {}
    long_attrs: dict[tuple[str, str], None] = {}
    resources: dict[int, tuple[str | None, str | None, str | None]] = {}  # one process's spans share one Resource
    for span in spans:
        # the attributes read once, as a plain dict: each read of the SDK's read-only view is a Python call
        attributes = dict(span.attributes) if span.attributes else {}
        row = span_row(span, attributes)
        rows.append(row)
        trace_id, start, end = row[0], row[5], row[6]
        if id(span.resource) not in resources:
            attrs = dict(span.resource.attributes) if span.resource else {}
            resources[id(span.resource)] = (dump(attrs) if span.resource else None, *source_of(attrs))
        resource, service, project = resources[id(span.resource)]
        if span.parent is None or span.parent.is_remote:
            roots.append((trace_id, start, end, (end - start) / 1e6, resource, span.name, row[7],
                          *root_columns(span.name, attributes), service, project))
        else:
            seen = partial.setdefault(trace_id, [trace_id, start, end, 0.0, resource, service, project])
            seen[1], seen[2] = min(seen[1], start), max(seen[2], end)
            seen[3] = (seen[2] - seen[1]) / 1e6
        if span.name == v.SEARCH_SPAN:
            searches.append((*search_columns(attributes), trace_id))
        elif (found := pending(span, trace_id, row[1], row[2])) is not None:
            foreign.append(found)
        if not DOC_ID_KEYS.isdisjoint(attributes):
            docs.update(dict.fromkeys((d, trace_id) for d in named_documents(attributes)))
        _add_shown(attributes, trace_id, shown, long_attrs)
    roots, searches, root_searches = _merged(roots, searches) if merge else (roots, searches, [])
    counted = {r[0] for r in root_searches}  # by the merged statement
    return WritePlan(rows, list(partial.values()), roots, searches, root_searches,
                     [(t,) for t in dict.fromkeys(r[0] for r in rows) if t not in counted], foreign, list(docs),
                     list(shown), list(long_attrs))


def _merged(roots: list[tuple], searches: list[tuple]) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """The roots, the searches and, merged, the root and search of each trace with one of each in the batch (a
    search's trace id last). The trace's row is written by nothing else between its root's statement and its
    search's (the other roots and searches are other traces'), so the merged statement leaves it as they did."""
    once_root = Counter(r[0] for r in roots)
    once_search = Counter(s[-1] for s in searches)
    both = {t for t, n in once_root.items() if n == 1 and once_search.get(t) == 1}
    if not both:
        return roots, searches, []
    search_of = {s[-1]: s for s in searches if s[-1] in both}
    merged = [(*r, *search_of[r[0]][:-1]) for r in roots if r[0] in both]
    return ([r for r in roots if r[0] not in both], [s for s in searches if s[-1] not in both], merged)


def shown_value(value: Any) -> str | None:
    """A span attribute's value as the attribute filter reads it (``span_match.has_attribute``), casefolded; None
    when longer than :data:`ATTR_VALUE_MAX` or not surely read back the same from the stored JSON (a float that
    is not finite, an integer over 64 bits, a map, a nested array, text with a NUL)."""
    if type(value) is str:  # the common case, shown as :func:`_shown_any` shows it
        if len(value) > ATTR_VALUE_MAX:
            return None
        folded = value.casefold()
        return folded if len(folded) <= ATTR_VALUE_MAX and "\x00" not in folded else None
    return _shown_any(value)


def _shown_any(value: Any) -> str | None:
    """:func:`shown_value` of any value."""
    if isinstance(value, (list, tuple)):
        if 3 * len(value) - 2 > ATTR_VALUE_MAX:  # each item at least one character, ", " between them
            return None
        if not all(map(_read_back, value)):
            return None
        shown = ", ".join(map(str, value))
    elif _read_back(value):
        shown = str(value)
    else:
        return None
    if len(shown) > ATTR_VALUE_MAX:
        return None
    folded = shown.casefold()
    return folded if len(folded) <= ATTR_VALUE_MAX and "\x00" not in folded else None


def _read_back(value: Any) -> bool:
    """True when the stored JSON gives ``value`` back as it was, so shown the same (orjson reads an integer over
    64 bits as a float, stores a float that is not finite as null)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int):
        return -2**63 <= value < 2**64
    return isinstance(value, str)


def _add_shown(attributes: Mapping[str, Any], trace_id: str, attrs: dict[tuple[str, str, str], None],
               long_attrs: dict[tuple[str, str], None]) -> None:
    """Add a span's rows of ``trace_attrs`` (short values) and ``trace_attrs_long`` (the keys of long ones)."""
    for key, value in attributes.items():
        shown = shown_value(value)
        if shown is None:
            long_attrs[(str(key), trace_id)] = None
        else:
            attrs[(str(key), shown, trace_id)] = None


def named_documents(attributes: Any) -> set[str]:
    """Every document id a span's id lists (``span_match.DOC_ID_KEYS``) name, as text."""
    return {str(d) for key in DOC_ID_KEYS.intersection(attributes) if isinstance(attributes[key], (list, tuple))
            for d in attributes[key]}


def _stored_batches(conn: sqlite3.Connection, trace_ids: Sequence[str] | None,
                    batch: int) -> Iterator[list[tuple[str, bytes]]]:
    """(trace id, attributes' JSON text) of the stored spans of ``trace_ids`` (None: every trace), a batch at a
    time."""
    chunks = [None] if trace_ids is None else [list(trace_ids[i:i + 500]) for i in range(0, len(trace_ids), 500)]
    for chunk in chunks:
        where = "" if chunk is None else f" WHERE trace_id IN ({','.join('?' * len(chunk))})"
        cursor = conn.execute(f"SELECT trace_id, attributes FROM spans{where}", chunk or ())
        while rows := cursor.fetchmany(batch):
            yield [(trace_id, packed_json(packed)) for trace_id, packed in rows]


def fill_trace_docs(conn: sqlite3.Connection, trace_ids: Sequence[str] | None = None, batch: int = 2_000) -> None:
    """Fill ``trace_docs`` from the stored spans (of ``trace_ids``; None: every trace): once, when a writer
    brings a store to schema 6, and for rows a repair copied. Only spans whose JSON holds an id list's key are
    parsed."""
    needles = [k.encode() for k in DOC_ID_KEYS]
    for rows in _stored_batches(conn, trace_ids, batch):
        found: dict[tuple[str, str], None] = {}
        for trace_id, text in rows:
            if any(n in text for n in needles):
                found.update(dict.fromkeys((d, trace_id) for d in named_documents(orjson.loads(text))))
        conn.executemany(INSERT_DOC, list(found))


def fill_trace_attrs(conn: sqlite3.Connection, trace_ids: Sequence[str] | None = None, batch: int = 2_000) -> None:
    """Fill ``trace_attrs`` and ``trace_attrs_long`` from the stored spans (of ``trace_ids``; None: every
    trace), as :func:`fill_trace_docs` fills ``trace_docs``."""
    for rows in _stored_batches(conn, trace_ids, batch):
        attrs: dict[tuple[str, str, str], None] = {}
        long_attrs: dict[tuple[str, str], None] = {}
        for trace_id, text in rows:
            _add_shown(orjson.loads(text), trace_id, attrs, long_attrs)
        write_attrs(conn, attrs, long_attrs)


def write_attrs(conn: sqlite3.Connection, attrs: Iterable[tuple[str, str, str]],
                long_attrs: Iterable[tuple[str, str]]) -> None:
    conn.executemany(INSERT_ATTR, attrs)
    conn.executemany(INSERT_LONG_ATTR, long_attrs)


def create_schema(conn: sqlite3.Connection) -> None:
    # auto_vacuum only takes effect before the first table exists; it lets prune give space back.
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA journal_size_limit = 67108864")
    with write_transaction(conn):
        for statement in SCHEMA.split(";"):
            conn.execute(statement)
        _add_columns(conn)
        conn.execute(ADDED_INDEXES)
        for statement in FOREIGN_SCHEMA:
            conn.execute(statement)
        for statement in KIND_INDEXES:
            conn.execute(statement)
        had_docs = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'trace_docs'").fetchone() is not None
        for statement in DOCS_SCHEMA:
            conn.execute(statement)
        if not had_docs:  # a store made before schema 6: its traces' documents, once
            fill_trace_docs(conn)
        had_attrs = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'trace_attrs'").fetchone() is not None
        for statement in ATTRS_SCHEMA:
            conn.execute(statement)
        if not had_attrs:  # a store made before them (schema 5, or 6 as first merged): its spans' attributes, once
            fill_trace_attrs(conn)
        if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _add_columns(conn: sqlite3.Connection) -> None:
    """Bring a store of an older schema up to date (ADD COLUMN rewrites no row: instant at any size)."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(traces)")}
    for name, kind in ADDED_COLUMNS.items():
        if name not in present:
            conn.execute(f"ALTER TABLE traces ADD COLUMN {name} {kind}")
    if "kind" not in present:  # once: the older traces' kinds, from their other columns
        conn.execute(CLASSIFY_UNKNOWN)


def traces_columns(conn: sqlite3.Connection) -> list[str]:
    """The ``traces`` table's columns, in their order (a store's older columns come first)."""
    return [row[1] for row in conn.execute("PRAGMA table_info(traces)")]


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite rolls back by itself on some errors (SQLITE_FULL)
            conn.execute("ROLLBACK")
        raise


INTERACTION_COLUMNS = "trace_id, start_ns, session_id, query, query_id, result_ids, fetched_ids, fetch_of, source"


def interactions(rows: Sequence[Sequence[Any]], sources: frozenset[str]) -> list[Impression | Fetch]:
    """The impressions and fetches of rows read by :data:`INTERACTION_COLUMNS` (a trace that is both, as a
    caller's one trace over a search and a fetch may be, gives both, the search first)."""
    out: list[Impression | Fetch] = []
    for trace_id, start_ns, session_id, query, query_id, shown, fetched, fetch_of, source in rows:
        if shown is not None and source in sources:
            out.append(Impression(trace_id, start_ns, session_id, query, query_id, tuple(orjson.loads(shown))))
        if fetched is not None:
            out.append(Fetch(trace_id, start_ns, session_id, fetch_of, tuple(orjson.loads(fetched))))
    return out


def span_row(span: ReadableSpan, attributes: Mapping[str, Any] | None = None) -> tuple:
    """The ``spans`` row of ``span`` (``attributes``: its attributes as a dict, when the caller read them)."""
    ctx = span.context
    events = span.events
    scope = span.instrumentation_scope.name if span.instrumentation_scope else None
    parent = format(span.parent.span_id, "016x") if span.parent else None
    return (format(ctx.trace_id, "032x"), format(ctx.span_id, "016x"), parent, span.name, span.kind.name,
            span.start_time, span.end_time, span.status.status_code.name, span.status.description, scope,
            pack(dict(span.attributes or {}) if attributes is None else attributes),
            pack([{"name": e.name, "time_ns": e.timestamp, "attributes": dict(e.attributes or {})} for e in events])
            if events else _NO_EVENTS)


_NO_EVENTS = pack([])


# --- schema 4: what a trace is, cold searches, what a served request answered ---------------

LEGACY_KIND = ("(CASE WHEN root_name = 'embedder.load' THEN 'load' WHEN root_name = 'search' OR mode IS NOT NULL "
               "OR query_fold IS NOT NULL OR run_id IS NOT NULL OR error_code IS NOT NULL THEN 'search' "
               "ELSE 'other' END)")
"""A trace's kind from the columns every schema has, for traces stored before ``kind`` was: the search
columns come only from a search span, and before schema 4 ``error_code`` did too."""
CLASSIFY_UNKNOWN = f"UPDATE traces SET kind = {LEGACY_KIND} WHERE kind IS NULL"
"""Classify the traces stored without a kind (an older store's, rows a repair copied from one); a trace whose
root or search span is still to come is classified again when it comes."""
KIND_INDEXES = ("CREATE INDEX IF NOT EXISTS traces_kind ON traces (kind, start_ns, trace_id)",
                "CREATE INDEX IF NOT EXISTS traces_status ON traces (status, start_ns, trace_id)")
"""The kind (searches by default in the dashboard) and error filters, each along its own index, in the
list's order: a count reads no table row, and a rare kind or errors only are found without a scan."""
COUNT_ALL = "SELECT count(*) FROM traces"
COUNT_NOT_SEARCH = "SELECT count(*) FROM traces WHERE kind IS NULL OR kind < 'search' OR kind > 'search'"
"""The traces that are not searches, along :data:`KIND_INDEXES`' kind index (three short ranges)."""
def summary_columns(columns: Collection[str] | None = None) -> str:
    """The SELECT list of a :class:`TraceSummary` from a store with ``columns`` (None: this schema's)."""
    newer = [c if columns is None or c in columns else f"NULL AS {c}" for c in NEWER_SUMMARY_COLUMNS]
    return f"{SUMMARY_COLUMNS}, {', '.join(newer)}"


def only_searches(flt: TraceFilter) -> bool:
    """True when ``flt`` asks for searches and nothing else (its limit and offset aside)."""
    return flt.kind is TraceKind.SEARCH and replace(flt, kind=None, limit=None, offset=0) == TraceFilter(limit=None)


