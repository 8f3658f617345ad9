"""Another retriever's searches in the store: the row both stores keep per search span, and its filter.

Each span ``traces.spans.foreign`` reads as a search gets one row at write time (its query, its documents'
ids and scores, how many are unidentified), with the document-id key its service has then (the store's
settings, ``id_keys``); setting a key re-derives the service's rows from the stored spans. Which rows are
searches and which stages is decided when they are read (``reading``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from opentelemetry.sdk.trace import ReadableSpan

from searchtrace.traces.spans import foreign
from searchtrace.traces.spans.foreign import Document
from searchtrace.traces.spans.vocabulary import Source
from searchtrace.traces.store.records import SearchFilter, SearchRecord, to_ns
from searchtrace.traces.store.rows import dump

__all__ = ["ANY_SERVICE", "COLUMNS", "ID_KEY", "OTLP", "Pending", "Tables", "key_of", "pending", "record", "rederived",
           "row", "where"]

COLUMNS = ("trace_id", "span_id", "parent_id", "start_ns", "duration_ms", "service", "project", "query",
           "query_fold", "doc_ids", "scores", "unidentified", "top_k", "data_source", "convention")
"""A search row's columns, in :func:`row`'s order (both stores' search tables)."""
ID_KEY = "doc_id_key"
"""The settings' name of a service's document-id metadata key."""
ANY_SERVICE = "*"
"""The settings' service whose document-id key every service without its own takes (``collect --doc-id-key
KEY``)."""
OTLP = Source.OTLP.value


@dataclass(frozen=True)
class Tables:
    """A store's table names and SQL spelling: its spans, searches and settings tables, its parameter mark,
    and whether a list of values is one array parameter (PostgreSQL's ``= ANY``)."""

    spans: str
    searches: str
    settings: str
    mark: str
    arrays: bool

    def among(self, column: str, values: Sequence[str]) -> tuple[str, list[Any]]:
        if self.arrays:
            return f"{column} = ANY({self.mark})", [list(values)]
        return f"{column} IN ({','.join(self.mark * len(values)) or 'NULL'})", list(values)


@dataclass(frozen=True)
class Pending:
    """A foreign search span of a batch, its row made once the store has read its service's id key."""

    trace_id: str
    span_id: str
    parent_id: str | None
    start_ns: int
    end_ns: int
    service: str | None
    project: str | None
    attributes: Mapping[str, Any]


def pending(span: ReadableSpan, trace_id: str, span_id: str, parent_id: str | None) -> Pending | None:
    """The span as a search to store, or None when it is not a foreign search (our own spans are told by their
    scope first, before their attributes are read: this runs for every span the store writes)."""
    scope = span.instrumentation_scope.name if span.instrumentation_scope else None
    if scope is not None and foreign.is_own({}, scope):
        return None
    attrs = span.attributes or {}
    if foreign.convention(attrs, scope) is None:
        return None
    service, project = foreign.source_of(span.resource.attributes if span.resource else {})
    return Pending(trace_id, span_id, parent_id, int(span.start_time or 0), int(span.end_time or 0), service,
                   project, attrs)


def key_of(service: str | None, id_keys: Mapping[str, str]) -> str | None:
    """The document-id key ``service`` reads with: its own in ``id_keys``, else :data:`ANY_SERVICE`'s."""
    return id_keys.get(service or "", id_keys.get(ANY_SERVICE))


def row(p: Pending, id_keys: Mapping[str, str]) -> tuple:
    """The search row of ``p`` (:data:`COLUMNS`), its ids read with its service's key (:func:`key_of`)."""
    search = foreign.read_search(p.attributes, key_of(p.service, id_keys))
    if search is None:  # pending() checked it is one
        raise ValueError(f"span {p.span_id} of trace {p.trace_id} is not a search")
    query = search.query
    return (p.trace_id, p.span_id, p.parent_id, p.start_ns, (p.end_ns - p.start_ns) / 1e6, p.service, p.project,
            query, None if query is None else query.casefold(), dump(list(search.ids)), dump(list(search.scores)),
            search.unidentified, search.top_k, search.data_source, search.convention.value)


def rederived(attributes: Mapping[str, Any], key: str | None) -> tuple[str, int]:
    """(doc_ids JSON, unidentified) of a stored search span read again with ``key``."""
    search = foreign.read_search(attributes, key)
    if search is None:
        return "[]", 0
    return dump(list(search.ids)), search.unidentified


def record(values: Sequence[Any]) -> SearchRecord:
    """A :class:`SearchRecord` of a row read by :data:`COLUMNS` (its documents' text not read)."""
    (trace_id, span_id, parent_id, start_ns, duration_ms, service, project, query, _, doc_ids, scores,
     unidentified, top_k, data_source, convention) = values
    ids, points = orjson.loads(doc_ids), orjson.loads(scores)
    documents = tuple(Document(d, points[i] if i < len(points) else None) for i, d in enumerate(ids))
    return SearchRecord(trace_id, span_id, parent_id, int(start_ns), float(duration_ms), service, project, query,
                        documents, int(unidentified), top_k, data_source, convention)


def where(flt: SearchFilter, mark: str, arrays: bool) -> tuple[str, list[Any]]:
    """The search table's WHERE clause for ``flt`` (``mark``: the parameter mark; ``arrays``: PostgreSQL's
    ``= ANY``), and its parameters."""
    conds: list[str] = []
    params: list[Any] = []
    for column, value in (("service", flt.service), ("project", flt.project)):
        if value is not None:
            conds.append(f"{column} = {mark}")
            params.append(value)
    if flt.since is not None:
        conds.append(f"start_ns >= {mark}")
        params.append(to_ns(flt.since))
    if flt.until is not None:
        conds.append(f"start_ns < {mark}")
        params.append(to_ns(flt.until))
    if flt.trace_ids is not None:
        ids = [t.lower() for t in flt.trace_ids]
        if arrays:
            conds.append(f"trace_id = ANY({mark})")
            params.append(ids)
        else:
            conds.append(f"trace_id IN ({','.join(mark * len(ids)) or 'NULL'})")
            params.extend(ids)
    return (" WHERE " + " AND ".join(conds) if conds else ""), params

