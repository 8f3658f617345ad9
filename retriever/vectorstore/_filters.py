"""PayloadFilter -> a client library's filter, written once for both stores.

Each store supplies :class:`Builders` (how its library spells a match, a range
and a filter); the translation, the date parsing and the cache are shared.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Callable

from searchtrace.errors import ValidationError
from searchtrace.retriever.vectorstore.base import PayloadFilter


def utc_iso(field: str, value: object) -> str:
    """ISO 8601 in UTC; naive values are UTC, as Qdrant reads them.

    One parser for both backends (pydantic alone would read "2024" as a unix time).
    """
    try:
        dt = datetime.fromisoformat(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{field} must be an ISO 8601 date-time string, got {value!r}", field=field) from exc
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).isoformat()


@dataclass(frozen=True)
class Builders:
    """How one client library builds filter parts."""

    match_value: Callable[[str, Any], Any]  # (key, value) -> condition
    match_any: Callable[[str, list], Any]  # (key, values) -> condition
    datetime_range: Callable[[str, str | None, str | None], Any]  # (key, gte, lt) -> condition
    all_of: Callable[[list], Any]  # conditions -> filter


def translate(flt: PayloadFilter, b: Builders) -> Any | None:
    """The filter, or ``None`` when ``flt`` constrains nothing. Time windows are half-open:
    ``[created_after, created_before)``, so consecutive windows tile."""
    if flt.is_empty():
        return None
    must: list[Any] = []
    if flt.collection is not None:
        must.append(b.match_value("collection", flt.collection))
    if flt.tags_any is not None:
        must.append(b.match_any("tags", list(flt.tags_any)))
    for tag in flt.tags_all or ():
        must.append(b.match_value("tags", tag))
    if flt.doc_ids is not None:
        must.append(b.match_any("id", list(flt.doc_ids)))
    if flt.created_after is not None or flt.created_before is not None:
        after = utc_iso("created_after", flt.created_after) if flt.created_after is not None else None
        before = utc_iso("created_before", flt.created_before) if flt.created_before is not None else None
        must.append(b.datetime_range("timestamp", after, before))
    return b.all_of(must)


def translator(b: Builders) -> Callable[[PayloadFilter], Any | None]:
    """:func:`translate` with ``b``, cached: queries repeat the same few filters."""
    cached = lru_cache(maxsize=256)(lambda flt: translate(flt, b))

    def run(flt: PayloadFilter) -> Any | None:
        try:
            return cached(flt)
        except TypeError:  # lists where tuples belong: unhashable, still translatable
            return translate(flt, b)

    return run
