"""Another retriever's searches read back: which rows are searches and which stages, decided now.

A retriever span under another retriever span of its trace is a stage of the outer one. The spans of one trace
come in any order, over batches, so the store decides it when it reads, walking the trace's stored parent links
(every span's, so a CHAIN between the two does not hide it).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import orjson

from searchtrace.traces.spans import foreign
from searchtrace.traces.store.records import SearchFilter, SearchRecord
from searchtrace.traces.store.rows import packed_json
from searchtrace.traces.store.searches.search_rows import COLUMNS, ID_KEY, Tables, record, where

__all__ = ["Read", "read_searches", "searches_only"]

Read = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]
"""A store's read: rows of a query and its parameters (none where the store's schema lacks the table)."""


def read_searches(read: Read, flt: SearchFilter, t: Tables) -> list[SearchRecord]:
    """The searches ``flt`` asks for, oldest first, stages left out (decided now, from the stored parent links);
    with ``flt.contents`` their documents' text read from the stored spans. A store whose schema predates the
    search table reads none (``read`` answers no rows)."""
    clause, params = where(flt, t.mark, t.arrays)
    rows = read(f"SELECT {', '.join(COLUMNS)} FROM {t.searches}{clause} ORDER BY start_ns, trace_id, span_id",
                params)
    if not rows:
        return []
    records = [record(r) for r in rows]
    trace_ids = list(dict.fromkeys(r.trace_id for r in records))
    parents: dict[str, dict[str, str | None]] = {}
    for chunk in _chunks(trace_ids):
        cond, values = t.among("trace_id", chunk)
        for trace_id, span_id, parent_id in read(f"SELECT trace_id, span_id, parent_id FROM {t.spans} WHERE {cond}",
                                                 values):
            parents.setdefault(trace_id, {})[span_id] = parent_id
    kept = searches_only(records, parents)
    return _with_contents(read, kept, t) if flt.contents else kept


def _with_contents(read: Read, records: list[SearchRecord], t: Tables) -> list[SearchRecord]:
    """The records with their documents' text, read from their spans (with each service's id key)."""
    keys: dict[str, str] = dict(read(f"SELECT service, value FROM {t.settings} WHERE name = {t.mark}", [ID_KEY]))
    attributes: dict[tuple[str, str], Any] = {}
    for chunk in _chunks(records):
        tcond, tvalues = t.among("trace_id", [r.trace_id for r in chunk])
        scond, svalues = t.among("span_id", [r.span_id for r in chunk])
        for trace_id, span_id, packed in read(f"SELECT trace_id, span_id, attributes FROM {t.spans} WHERE {tcond} "
                                              f"AND {scond}", [*tvalues, *svalues]):
            attributes[(trace_id, span_id)] = orjson.loads(packed_json(packed))
    out = []
    for r in records:
        attrs = attributes.get((r.trace_id, r.span_id))
        texts = _texts(attrs, keys.get(r.service or "")) if attrs is not None else ()
        out.append(replace(r, documents=tuple(replace(d, content=texts[i] if i < len(texts) else None)
                                              for i, d in enumerate(r.documents))))
    return out


def _texts(attributes: Mapping[str, Any], key: str | None) -> tuple[str | None, ...]:
    search = foreign.read_search(attributes, key)
    return tuple(d.content for d in search.documents) if search else ()


def _chunks(items: Sequence[Any], size: int = 500) -> list[Sequence[Any]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def searches_only(records: Sequence[SearchRecord], parents: Mapping[str, Mapping[str, str | None]]) -> list[
        SearchRecord]:
    """The records that are searches: not under another search span of their trace (``parents``: each trace's
    span id to parent id, every stored span's). A retriever under a retriever is a stage of the outer one."""
    ids: dict[str, set[str]] = {}
    for r in records:
        ids.setdefault(r.trace_id, set()).add(r.span_id)
    return [r for r in records if not _under(r, ids[r.trace_id], parents.get(r.trace_id, {}))]


def _under(r: SearchRecord, searches: Collection[str], parents: Mapping[str, str | None]) -> bool:
    parent, seen = r.parent_id, 0
    while parent is not None and seen <= len(parents):
        if parent in searches:
            return True
        parent, seen = parents.get(parent), seen + 1
    return False

