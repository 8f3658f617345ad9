"""The labels standing in a store, kept up to date by reading only what was appended since the last look.

A judging session asks "who has judged this pair?" on every pair it hands
out; reading and parsing the whole store each time costs a second at 100,000
judgments. A :class:`Tally` keeps each (pair, judge)'s latest judgment and, for
each pair, the judges whose human label stands, and :meth:`Tally.refresh`
reads the store past its cursor (:meth:`JudgmentStore.read_after`): a store
replaced or cut short is read again whole, so a tally is never staler than
its last refresh. One tally may serve several threads (a dashboard's
sessions): refreshes and reads take its lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from searchtrace.evals.labels.judgments.labels import PairLabels
from searchtrace.evals.labels.judgments.records import Judgment, Kind, Pair
from searchtrace.evals.labels.judgments.store.protocol import JudgmentStore

__all__ = ["Tally"]

_NONE: frozenset[str] = frozenset()


class Tally:
    """The standing judgments of ``store`` as of the last :meth:`refresh` (nothing is read before it)."""

    def __init__(self, store: JudgmentStore) -> None:
        self.store = store
        self._lock = threading.RLock()
        self._cursor: object | None = None
        self._latest: dict[tuple[Pair, str], Judgment] = {}
        self._human: dict[Pair, set[str]] = {}

    def refresh(self) -> Tally:
        """Read what was appended since the last refresh (everything, the first time or when the store was replaced).

        Raises:
            DataError: a damaged record (the tally keeps its state from before).
        """
        with self._lock:
            appended = self.store.read_after(self._cursor)
            if appended.restarted:
                self._latest, self._human = {}, {}
            self._add(appended.judgments)
            self._cursor = appended.cursor
        return self

    def _add(self, judgments: Iterable[Judgment]) -> None:
        for judgment in judgments:
            key = (judgment.pair, judgment.judge)
            before = self._latest.get(key)
            if before is not None and before.kind is Kind.HUMAN and not before.retracts:
                self._human[judgment.pair].discard(judgment.judge)
            self._latest[key] = judgment
            if judgment.kind is Kind.HUMAN and not judgment.retracts:
                self._human.setdefault(judgment.pair, set()).add(judgment.judge)

    def human_judges(self, pair: Pair) -> frozenset[str]:
        """The judges whose human label of ``pair`` stands."""
        with self._lock:
            return frozenset(self._human.get(pair, ()))

    def settled(self, pairs: Iterable[Pair], judge: str, per_pair: int = 1) -> list[bool]:
        """For each pair: ``judge`` has labelled it, or ``per_pair`` judges have (it is no longer ``judge``'s to judge)."""
        with self._lock:
            return [judge in (judges := self._human.get(pair, _NONE)) or len(judges) >= per_pair for pair in pairs]

    def labelled_by(self, pairs: Iterable[Pair], judge: str) -> list[bool]:
        """For each pair: ``judge``'s human label of it stands."""
        with self._lock:
            return [judge in self._human.get(pair, _NONE) for pair in pairs]

    def label(self, pair: Pair, judge: str) -> Judgment | None:
        """``judge``'s standing judgment of ``pair`` (any kind), or None."""
        with self._lock:
            judgment = self._latest.get((pair, judge))
        return None if judgment is None or judgment.retracts else judgment

    def standing(self) -> tuple[Judgment, ...]:
        """Every standing judgment (retractions removed), in the order of their keys' first judgment."""
        with self._lock:
            return tuple(j for j in self._latest.values() if not j.retracts)

    def shared(self) -> tuple[PairLabels, ...]:
        """The pairs two or more judges label (human labels), sorted, with each judge's grade."""
        with self._lock:
            rows = [(pair, sorted((judge, self._latest[(pair, judge)].grade) for judge in judges))
                    for pair, judges in self._human.items() if len(judges) >= 2]
        return tuple(PairLabels(pair, tuple((j, g) for j, g in grades if g is not None)) for pair, grades in sorted(rows))

    def __len__(self) -> int:
        """Standing (pair, judge) labels and retractions kept: the store's distinct keys."""
        with self._lock:
            return len(self._latest)
