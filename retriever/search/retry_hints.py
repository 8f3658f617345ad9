"""Retry hints: how a caller could re-query when results are empty or weak.

* ``detectedEntities``: graph entities found in the query.
* ``relatedTerms``: graph neighbours of those entities (names not in the query).
* ``narrowerQuery``: the query plus the most specific related term, or without a
  graph, plus the top result's title words the query lacks.
* ``broaderQuery``: the query's content words without its most specific one
  (codes, numbers, the longest word); needs no graph.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

from searchtrace.retriever.response import RetryHints
from searchtrace.retriever.types import GraphHit

_WORD = re.compile(r"[\w][\w'-]*", re.UNICODE)
STOPWORDS = frozenset(
    """a an and are as at be by can could did do does for from had has have how i in into is it its
    of on or that the their there these this to was were what when where which who whom whose why
    will with would about after before between during than then also any all some such""".split()
)


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w.lower() not in STOPWORDS]


def related_terms(query: str, hits: Iterable[GraphHit], limit: int = 5) -> list[str]:
    """Names one hop from the query's entities, most often reached first."""
    lowered = query.lower()
    counts: Counter[str] = Counter()
    for hit in hits:
        if hit.hops != 1:
            continue
        for name in (hit.triple.subject, hit.triple.object):
            if name.lower() not in lowered:
                counts[name] += 1
    return [name for name, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def _specificity(word: str) -> tuple[int, int]:
    return (int(any(ch.isdigit() for ch in word) or "-" in word), len(word))


def broader_query(query: str) -> str:
    words = content_words(query)
    if len(words) <= 1:
        return " ".join(words) or query
    drop = max(range(len(words)), key=lambda i: _specificity(words[i]))
    return " ".join(w for i, w in enumerate(words) if i != drop)


def narrower_query(query: str, related: Sequence[str], top_title: str | None) -> str:
    if related:
        return f"{query} {related[0]}"
    present = {w.lower() for w in content_words(query)}
    extra = [w for w in content_words(top_title or "") if w.lower() not in present][:3]
    return f"{query} {' '.join(extra)}" if extra else query


def retry_hints(query: str, entities: Sequence[str], hits: Iterable[GraphHit], top_title: str | None) -> RetryHints:
    related = related_terms(query, hits)
    return RetryHints(tuple(entities), tuple(related), narrower_query(query, related, top_title), broader_query(query))
