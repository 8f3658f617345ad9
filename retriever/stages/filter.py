"""Filter stage: drop fused candidates by relevance, payload and a score gap.

Payload constraints are also pushed down into the dense and keyword searches;
here they are applied to every fused candidate (graph candidates were never
filtered by the engine), so the stage is the single place where a candidate
is dropped, and tracing can say which one dropped what. The same document
constraints decide which relation hits (facts of a document) may be shown:
:func:`passing_documents`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from searchtrace.retriever.request import SearchRequest
from searchtrace.retriever.types import ShownOrder
from searchtrace.retriever.vectorstore.base import PayloadFilter


@dataclass(frozen=True)
class FilterOutcome:
    keep: np.ndarray  # indices into the fused list, in the order shown
    shown: np.ndarray  # the relevance each of ``keep`` shows: non-increasing (see ShownOrder)
    dropped: tuple[str, ...]
    applied: tuple[str, ...]
    best: float = 0.0  # the first shown relevance within scope, before min_relevance and gap_cutoff (bestScore)


def payload_filter(req: SearchRequest) -> PayloadFilter:
    """The request's payload constraints, in the store's terms."""
    return PayloadFilter(
        collection=req.collection,
        tags_any=tuple(req.tags_any) if req.tags_any else None,
        tags_all=tuple(req.tags_all) if req.tags_all else None,
        doc_ids=tuple(req.doc_ids) if req.doc_ids else None,
        created_after=req.created_after.isoformat() if req.created_after else None,
        created_before=req.created_before.isoformat() if req.created_before else None,
    )


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return _utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return None


def payload_matches(payload: Mapping[str, Any], req: SearchRequest) -> bool:
    """Whether a document's payload meets every payload constraint of the request."""
    if req.collection is not None and payload.get("collection") != req.collection:
        return False
    tags = set(payload.get("tags") or ())
    if req.tags_any and not tags.intersection(req.tags_any):
        return False
    if req.tags_all and not tags.issuperset(req.tags_all):
        return False
    if req.created_after or req.created_before:
        ts = _parse_time(payload.get("timestamp"))
        if ts is None:
            return False
        if req.created_after and ts < _utc(req.created_after):
            return False
        if req.created_before and ts >= _utc(req.created_before):  # [after, before), as the engines filter
            return False
    return True


def gap_cut(relevance: np.ndarray, gap: float) -> int:
    """Length of the prefix before the first drop in relevance larger than ``gap``."""
    if len(relevance) < 2:
        return len(relevance)
    drops = relevance[:-1] - relevance[1:]
    big = np.flatnonzero(drops > gap)
    return int(big[0]) + 1 if len(big) else len(relevance)


PAYLOAD_FIELDS = ("collection", "tags_any", "tags_all", "created_after", "created_before")


def _document_mask(ids: np.ndarray, keep: np.ndarray, req: SearchRequest,
                   payloads: Callable[[list[str]], Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """Clear ``keep`` where a document fails the request's document constraints; the constraints applied."""
    applied: list[str] = []
    if req.doc_ids:
        keep &= np.isin(ids, np.array(req.doc_ids, dtype=object))
        applied.append("doc_ids")
    fields = [n for n in PAYLOAD_FIELDS if getattr(req, n)]
    if fields:
        applied.extend(fields)
        idx = np.flatnonzero(keep)
        found = payloads([str(ids[i]) for i in idx])
        for i in idx:
            p = found.get(str(ids[i]))
            keep[i] = p is not None and payload_matches(p, req)
    return applied


def shown_order(relevance: np.ndarray, order: ShownOrder) -> tuple[np.ndarray, np.ndarray]:
    """Positions into ``relevance`` (given in fused order) in the order shown, and the relevance each shows:
    non-increasing down the list (:class:`ShownOrder` says how)."""
    if order is ShownOrder.RELEVANCE:
        at = np.argsort(-relevance, kind="stable")
        return at, relevance[at]
    return np.arange(len(relevance)), np.minimum.accumulate(relevance) if len(relevance) else relevance


def apply_filters(
    ids: np.ndarray,
    relevance: np.ndarray,
    req: SearchRequest,
    payloads: Callable[[list[str]], Mapping[str, Mapping[str, Any]]],
    order: ShownOrder = ShownOrder.FUSED,
) -> FilterOutcome:
    """The candidates that pass, in the order shown with the relevance each shows; ``payloads`` is called
    only if needed. The document constraints (the request's scope) go first, then the order; ``min_relevance``
    and ``gap_cutoff`` apply to the shown relevance (so each cuts the list where it first applies). ``best``
    is taken between the two, so a response tells "found, below your bar" from "nothing in scope"."""
    keep = np.ones(len(ids), dtype=bool)
    applied = _document_mask(ids, keep, req, payloads)
    index = np.flatnonzero(keep)
    at, shown = shown_order(relevance[index], order)
    index = index[at]
    best = float(shown[0]) if len(shown) else 0.0  # the most any result in scope could show
    if req.min_relevance is not None:
        cut = int(np.count_nonzero(shown >= req.min_relevance))  # shown is non-increasing: a prefix passes
        index, shown = index[:cut], shown[:cut]
        applied.insert(0, "min_relevance")
    if req.gap_cutoff is not None and len(index):
        cut = gap_cut(shown, float(req.gap_cutoff))
        index, shown = index[:cut], shown[:cut]
        applied.append("gap_cutoff")
    kept = set(index.tolist())
    dropped = tuple(str(ids[i]) for i in range(len(ids)) if i not in kept)
    return FilterOutcome(index, shown, dropped, tuple(applied), best)


def passing_documents(doc_ids: Sequence[str], req: SearchRequest,
                      payloads: Callable[[list[str]], Mapping[str, Mapping[str, Any]]]) -> set[str]:
    """Those of ``doc_ids`` that the request's document constraints (ids, collection, tags, dates) let through.

    Scores play no part: this decides which documents' facts (relation hits) a response may show.
    """
    ids = np.array(list(dict.fromkeys(doc_ids)), dtype=object)
    keep = np.ones(len(ids), dtype=bool)
    _document_mask(ids, keep, req, payloads)
    return {str(i) for i in ids[keep]}
