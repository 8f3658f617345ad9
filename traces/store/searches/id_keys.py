"""The per-service document-id key, kept in the store's settings: set, read, and the re-reading it sets off.

An instrumentation that sends no ``document.id`` (LangChain's) puts the id in a document's metadata; the user
names the key per service (``traces id-key``, ``collect --doc-id-key``), or for every service without its own
(service ``*``). Setting it re-derives that service's
stored searches from their spans, in one transaction, so no search is left read with the old key.
"""

from __future__ import annotations

from typing import Any, Protocol

import orjson

from searchtrace.traces.store.rows import packed_json
from searchtrace.traces.store.searches.reading import Read
from searchtrace.traces.store.searches.search_rows import ANY_SERVICE, ID_KEY, Tables, key_of, rederived

__all__ = ["Connection", "id_keys", "set_id_key"]


class Connection(Protocol):
    """What :func:`set_id_key` needs of a connection in a transaction (sqlite3's and psycopg's both do)."""

    def execute(self, query: Any, params: Any = ...) -> Any: ...


def id_keys(read: Read, t: Tables) -> dict[str, str]:
    """Each service's document-id metadata key (services without one are absent)."""
    return {service: key for service, key in read(f"SELECT service, value FROM {t.settings} WHERE name = "
                                                  f"{t.mark} ORDER BY service", [ID_KEY])}


def set_id_key(conn: Connection, t: Tables, service: str, key: str | None) -> int:
    """Set (``key`` None: forget) ``service``'s document-id key and re-derive its stored searches' ids from their
    spans, in the caller's transaction; returns how many searches were read again. ``service`` ``*``
    (:data:`ANY_SERVICE`): the key of every service without one of its own, whose searches are read again."""
    m = t.mark
    if key is None:
        conn.execute(f"DELETE FROM {t.settings} WHERE service = {m} AND name = {m}", [service, ID_KEY])
    else:
        conn.execute(f"INSERT INTO {t.settings} (service, name, value) VALUES ({m}, {m}, {m}) ON CONFLICT "
                     "(service, name) DO UPDATE SET value = excluded.value", [service, ID_KEY, key])
    keys = dict(conn.execute(f"SELECT service, value FROM {t.settings} WHERE name = {m}", [ID_KEY]).fetchall())
    joined = (f"SELECT s.trace_id, s.span_id, s.service, p.attributes FROM {t.searches} AS s JOIN {t.spans} AS p "
              "ON p.trace_id = s.trace_id AND p.span_id = s.span_id")
    if service == ANY_SERVICE:
        rows = [r for r in conn.execute(joined).fetchall() if (r[2] or "") not in keys]
    else:
        rows = conn.execute(f"{joined} WHERE s.service = {m}", [service]).fetchall()
    for trace_id, span_id, of, packed in rows:
        doc_ids, unidentified = rederived(orjson.loads(packed_json(packed)), key_of(of, keys))
        conn.execute(f"UPDATE {t.searches} SET doc_ids = {m}, unidentified = {m} WHERE trace_id = {m} AND "
                     f"span_id = {m}", [doc_ids, unidentified, trace_id, span_id])
    return len(rows)
