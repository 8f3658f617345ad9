"""Retry hints: how a caller could re-query when results are empty or weak.

* ``detectedEntities``: graph entities found in the query.
* ``relatedTerms``: graph neighbours of those entities (names not in the query).
* ``narrowerQuery``: the query plus the most related term, or without one, plus
  the top result's title words the query lacks when that result is related to
  it at all (relevance at the low threshold or above); never a term unrelated
  to the query.
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


def related_terms(query: str, hits: Iterable[GraphHit], limit: int = 5, entities: Sequence[str] = ()) -> list[str]:
    """Names one hop from the query's own entities (detected in it, or written in it), most often reached first.

    The graph walk also starts from the entities of the best passage, which need not be the query's: a fact
    counts only when its other end is the query's, so an off-topic question gets no unrelated name.
    """
    lowered = query.lower()
    anchors = {e.lower() for e in entities}
    counts: Counter[str] = Counter()
    for hit in hits:
        if hit.hops != 1:
            continue
        ends = (hit.triple.subject, hit.triple.object)
        for name, other in (ends, ends[::-1]):
            if name.lower() not in lowered and (other.lower() in anchors or other.lower() in lowered):
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
    """The query plus its most related term; else plus the title words of the top result (when it is related
    to the query at all: see :func:`retry_hints`) that it lacks; else the query as it is."""
    if related:
        return f"{query} {related[0]}"
    present = {w.lower() for w in content_words(query)}
    extra = [w for w in content_words(top_title or "") if w.lower() not in present][:3]
    return f"{query} {' '.join(extra)}" if extra else query


def retry_hints(query: str, entities: Sequence[str], hits: Iterable[GraphHit], top_title: str | None,
                top_related: bool = True) -> RetryHints:
    """The hints; ``top_related``: the top result is related to the query at all (its relevance reaches the
    low band's threshold), so its title may narrow the query (an off-topic question's is not)."""
    related = related_terms(query, hits, entities=entities)
    narrower = narrower_query(query, related, top_title if top_related else None)
    return RetryHints(tuple(entities), tuple(related), narrower, broader_query(query))
