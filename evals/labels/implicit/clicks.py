"""Clicks from traces: each served fetch linked to the search (the impression) it follows.

An agent that fetches a document (``get_docs``, ``get_chunks``, ``/v1/docs``,
``/v1/chunks``) after a search clicks that result at the position the search
showed it (1-based, in the response's order: relation rows count as shown).
A fetch that names its search (``traceId``) follows that search; one that
names none follows the latest search of its MCP session that started before
it and showed the document. Several fetches of one document after one
impression are one click. What cannot be linked is counted, never a click: a
fetch naming a trace the store does not hold, or one that is no search of the
dataset; a document the named search did not show; a document no search of
the session showed (or a fetch with neither a ``traceId`` nor a session).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from searchtrace.traces import Fetch, Impression

__all__ = ["ClickLog", "LinkCounts", "link"]

EXAMPLES = 3
"""How many of the named trace ids a count that refuses fetches keeps, to show."""


@dataclass(frozen=True)
class LinkCounts:
    """What linking found.

    Attributes:
        impressions: searches read (that answered, of the dataset, through a served surface).
        fetches: fetches read; ``fetched``: the document ids they fetched.
        clicks: distinct (impression, position) clicks; ``by_trace_id`` of them named their search,
            the rest were found through their session.
        repeats: fetched ids that clicked a result already clicked after the same impression.
        unknown_traces: fetches naming a trace id the store does not hold; ``unknown_ids`` how many distinct
            ids they name, ``unknown_examples`` the first.
        not_searches: fetches naming a trace that is no search of the dataset read (another dataset's, a
            fetch's, one outside the window); ``not_search_ids``, ``not_search_examples`` as above.
        not_shown: fetched ids their named search did not show.
        unattributed: fetched ids no search followed: no ``traceId``, and no earlier search of their
            session showed them (or they have no session).
    """

    impressions: int = 0
    fetches: int = 0
    fetched: int = 0
    clicks: int = 0
    by_trace_id: int = 0
    repeats: int = 0
    unknown_traces: int = 0
    unknown_ids: int = 0
    unknown_examples: tuple[str, ...] = ()
    not_searches: int = 0
    not_search_ids: int = 0
    not_search_examples: tuple[str, ...] = ()
    not_shown: int = 0
    unattributed: int = 0

    def to_json(self) -> dict[str, object]:
        return {k: list(x) if isinstance(x, tuple) else x for k, x in self.__dict__.items()}


@dataclass(frozen=True)
class ClickLog:
    """Impressions and the clicks on them.

    Attributes:
        impressions: every impression, oldest first.
        click_impression, click_position: parallel arrays, one entry per click: the impression's index and
            the 1-based position clicked.
        counts: what linking found.
    """

    impressions: tuple[Impression, ...]
    click_impression: np.ndarray
    click_position: np.ndarray
    counts: LinkCounts


class _Linker:
    """The state of one pass over interactions in start order."""

    def __init__(self) -> None:
        self.impressions: list[Impression] = []
        self.by_trace: dict[str, int] = {}
        self.last_shown: dict[str, dict[str, int]] = {}  # session -> doc -> its latest impression showing it
        self.clicked: dict[tuple[int, int], None] = {}  # (impression, position), in the order first clicked
        self.named: list[str] = []  # trace ids named by fetches that no impression read holds
        self.fetches = self.fetched = self.repeats = self.not_shown = self.unattributed = self.by_trace_id = 0

    def impression(self, imp: Impression) -> None:
        index = len(self.impressions)
        self.impressions.append(imp)
        self.by_trace.setdefault(imp.trace_id, index)
        if imp.session_id is not None:
            seen = self.last_shown.setdefault(imp.session_id, {})
            for doc in imp.shown:
                seen[doc] = index

    def fetch(self, fetch: Fetch) -> None:
        self.fetches += 1
        self.fetched += len(fetch.ids)
        if fetch.follows is not None:
            index = self.by_trace.get(fetch.follows)
            if index is None:
                self.named.append(fetch.follows)
                return
            for doc in fetch.ids:
                self._click(index, doc, named=True)
            return
        session = self.last_shown.get(fetch.session_id) if fetch.session_id is not None else None
        for doc in fetch.ids:
            found = session.get(doc) if session is not None else None
            if found is None:
                self.unattributed += 1
            else:
                self._click(found, doc, named=False)

    def _click(self, index: int, doc: str, named: bool) -> None:
        shown = self.impressions[index].shown
        if doc not in shown:
            self.not_shown += 1
            return
        key = (index, shown.index(doc) + 1)
        if key in self.clicked:
            self.repeats += 1
            return
        self.clicked[key] = None
        self.by_trace_id += int(named)


def link(batches: Iterable[Sequence[Impression | Fetch]], stored: Callable[[Collection[str]], Collection[str]],
         done: Callable[[int], object] = lambda n: None) -> ClickLog:
    """Link the fetches of ``batches`` (a dataset's interactions, oldest first) to their impressions.

    Args:
        batches: what :meth:`searchtrace.traces.TraceStore.interactions` yields.
        stored: which of some trace ids the store holds (to tell an unknown trace from one that is no search).
        done: told how many interactions each batch held (progress).
    """
    linker = _Linker()
    for batch in batches:
        for item in batch:
            if isinstance(item, Impression):
                linker.impression(item)
            else:
                linker.fetch(item)
        done(len(batch))
    held = stored(sorted(set(linker.named))) if linker.named else ()
    unknown = [t for t in linker.named if t not in held]
    other = [t for t in linker.named if t in held]
    first_unknown, first_other = tuple(dict.fromkeys(unknown)), tuple(dict.fromkeys(other))
    keys = np.array(list(linker.clicked), dtype=np.int64).reshape(-1, 2)
    counts = LinkCounts(len(linker.impressions), linker.fetches, linker.fetched, len(keys), linker.by_trace_id,
                        linker.repeats, len(unknown), len(first_unknown), first_unknown[:EXAMPLES], len(other),
                        len(first_other), first_other[:EXAMPLES], linker.not_shown, linker.unattributed)
    return ClickLog(tuple(linker.impressions), keys[:, 0], keys[:, 1], counts)
