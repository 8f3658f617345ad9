"""Filter stage: drop fused candidates by relevance, payload and a score gap.

Payload constraints are also pushed down into the dense and keyword searches;
here they are applied to every fused candidate (graph candidates were never
filtered by the engine), so the stage is the single place where a candidate
is dropped, and tracing can say which one dropped what.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Callable, Mapping

import numpy as np

from searchtrace.retriever.request import SearchRequest
from searchtrace.retriever.vectorstore.base import PayloadFilter


@dataclass(frozen=True)
class FilterOutcome:
    keep: np.ndarray  # indices into the fused list, in order
    dropped: tuple[str, ...]
    applied: tuple[str, ...]


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


def apply_filters(
    ids: np.ndarray,
    relevance: np.ndarray,
    req: SearchRequest,
    payloads: Callable[[list[str]], Mapping[str, Mapping[str, Any]]],
) -> FilterOutcome:
    """Indices of the candidates that pass, in order; ``payloads`` is called only if needed."""
    keep = np.ones(len(ids), dtype=bool)
    applied: list[str] = []
    if req.min_relevance is not None:
        keep &= relevance >= req.min_relevance
        applied.append("min_relevance")
    if req.doc_ids:
        keep &= np.isin(ids, np.array(req.doc_ids, dtype=object))
        applied.append("doc_ids")
    if not payload_filter(req).is_empty() and (req.collection or req.tags_any or req.tags_all
                                                or req.created_after or req.created_before):
        applied.extend(n for n in ("collection", "tags_any", "tags_all", "created_after", "created_before")
                       if getattr(req, n))
        idx = np.flatnonzero(keep)
        found = payloads([str(ids[i]) for i in idx])
        for i in idx:
            p = found.get(str(ids[i]))
            keep[i] = p is not None and payload_matches(p, req)
    index = np.flatnonzero(keep)
    if req.gap_cutoff is not None and len(index):
        index = index[: gap_cut(relevance[index], float(req.gap_cutoff))]
        applied.append("gap_cutoff")
    kept = set(index.tolist())
    dropped = tuple(str(ids[i]) for i in range(len(ids)) if i not in kept)
    return FilterOutcome(index, dropped, tuple(applied))
