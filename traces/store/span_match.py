"""The span-level filters (a document, an attribute's value), which no trace column holds: checked on the spans'
attributes, the same way for every store.

A store reads the traces its column filters match, newest first, a batch at a time, and the attributes of
their spans as JSON text; a span whose text holds neither the document id nor the attribute key cannot match
and is not parsed (parsing was most of the time), and :func:`newest_matching` keeps the traces whose spans match until the page is full, so the
filters cover the whole store, not only its newest traces. A store with an index for one of them (the
shared store's documents) may narrow the batches first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

import orjson

from searchtrace.traces.spans import vocabulary as v
from searchtrace.traces.store.records import TraceFilter, TraceSummary

__all__ = ["DOC_ID_KEYS", "columns_only", "filter_batches", "has_attribute", "has_document", "newest_matching",
           "span_level"]

DOC_ID_KEYS = frozenset({v.CANDIDATE_IDS, v.RERANK_INPUT_IDS, v.RERANK_OUTPUT_IDS, v.RESULT_IDS,
                         v.FILTER_DROPPED_IDS, v.FEEDBACK_IDS, v.FETCH_IDS})
"""The array attributes that name documents: what the document filter finds a trace by."""

Page = Callable[[TraceFilter, "tuple[int | float, str] | None", int], list[TraceSummary]]
"""Reads up to ``batch`` summaries the filter's columns match, in the filter's order, after the (value,
trace_id) given (``TraceOrder.key``; None: from the first)."""
SpanAttributes = Callable[[list[str]], Iterable[tuple[str, bytes]]]
"""Reads (trace id, attributes as JSON text) of every span of the traces given."""


def span_level(flt: TraceFilter) -> bool:
    """True when ``flt`` filters on what only the spans hold (a document, an attribute)."""
    return flt.doc_id is not None or flt.attribute is not None


def columns_only(flt: TraceFilter) -> TraceFilter:
    """``flt`` without its span-level filters, its limit and its offset: what a store's columns can check."""
    return replace(flt, doc_id=None, attribute=None, limit=None, offset=0)


def has_document(attributes: Mapping[str, Any], doc_id: str) -> bool:
    """True when one of the span's document id lists (:data:`DOC_ID_KEYS`) names ``doc_id``."""
    return any(isinstance(ids, (list, tuple)) and doc_id in map(str, ids)
               for key in DOC_ID_KEYS.intersection(attributes) for ids in (attributes[key],))


def has_attribute(attributes: Mapping[str, Any], key: str, text: str) -> bool:
    """True when ``attributes[key]`` shown as text (an array's items joined by ", ") holds ``text``, any case."""
    if key not in attributes:
        return False
    value = attributes[key]
    shown = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return text.casefold() in shown.casefold()


def _matches(spans: list[Mapping[str, Any]], flt: TraceFilter) -> bool:
    if flt.doc_id is not None and not any(has_document(a, flt.doc_id) for a in spans):
        return False
    if flt.attribute is not None and not any(has_attribute(a, *flt.attribute) for a in spans):
        return False
    return True


def _needles(flt: TraceFilter) -> tuple[bytes, ...]:
    """What a span's attributes' JSON text holds if it can match: the document id or the attribute key, as JSON
    writes them (quotes left off, so an id stored as a number is found too)."""
    texts = [t for t in (flt.doc_id, flt.attribute[0] if flt.attribute else None) if t is not None]
    return tuple(json.dumps(t, ensure_ascii=False)[1:-1].encode() for t in texts)


def _matching(summaries: list[TraceSummary], flt: TraceFilter, attributes_of: SpanAttributes) -> list[TraceSummary]:
    needles = _needles(flt)
    spans: dict[str, list[Mapping[str, Any]]] = {}
    for trace_id, text in attributes_of([s.trace_id for s in summaries]):
        if any(needle in text for needle in needles):
            spans.setdefault(trace_id, []).append(orjson.loads(text))
    return [s for s in summaries if _matches(spans.get(s.trace_id, []), flt)]


def newest_matching(flt: TraceFilter, page: Page, attributes_of: SpanAttributes,
                    batch: int = 500) -> list[TraceSummary]:
    """The traces ``flt`` matches, its span-level filters included, in its order, its offset skipped and at
    most its limit: read ``batch`` traces at a time until the page is full or the store ends."""
    columns, skip = columns_only(flt), flt.offset
    limit = flt.limit if flt.limit is not None else float("inf")
    out: list[TraceSummary] = []
    after: tuple[int | float, str] | None = None
    while len(out) < limit:
        summaries = page(columns, after, batch)
        if not summaries:
            break
        for summary in _matching(summaries, flt, attributes_of):
            if skip:
                skip -= 1
            elif len(out) < limit:
                out.append(summary)
        after = flt.order.key(summaries[-1])
    return out


def filter_batches(batches: Iterator[list[TraceSummary]], flt: TraceFilter,
                   attributes_of: SpanAttributes) -> Iterator[list[TraceSummary]]:
    """Batches of a scan (of ``columns_only(flt)``, oldest first) narrowed to the traces whose spans match, the
    filter's offset and limit applied after."""
    skip = flt.offset
    left = flt.limit if flt.limit is not None else float("inf")
    for summaries in batches:
        kept = _matching(summaries, flt, attributes_of)
        dropped, skip = min(skip, len(kept)), skip - min(skip, len(kept))
        kept = kept[dropped:]
        if len(kept) > left:
            kept = kept[:int(left)]
        left -= len(kept)
        if kept:
            yield kept
        if left <= 0:
            return
