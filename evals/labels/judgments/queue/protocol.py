"""The judge queue: who is judging which pair right now, the protocol a judging session hands pairs out with.

A judge holds at most one pair, until they judge it, ask for another, or its
time runs out. A queue is opened over the judgments store it records into, so
recording a judgment and freeing its pair is the queue's one call.
:class:`~searchtrace.evals.labels.judgments.queue.local.LocalJudgeQueue` keeps
the holds in ``judge_queue.sqlite`` beside the dataset;
:class:`~searchtrace.evals.labels.judgments.queue.postgres.PostgresJudgeQueue` in
the store a team shares, where judges on any number of machines take pairs at
once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from searchtrace.evals.labels.judgments.records import Judgment, Pair
from searchtrace.evals.labels.judgments.store.protocol import JudgmentStore

__all__ = ["JudgeQueue", "OpenPairs", "first_open"]

OpenPairs = Callable[[], Callable[[Pair], bool]]
"""Reads the judgments stored now and answers, for a pair, whether it is still open to the judge."""


class JudgeQueue(Protocol):
    """The judge queue of one dataset's pairs, safe for several processes at once."""

    @property
    def store(self) -> JudgmentStore:
        """The judgments store the queue's judgments are recorded in."""
        ...

    def take(self, judge: str, candidates: Sequence[Pair], is_open: OpenPairs, ttl: float) -> Pair | None:
        """Hold for ``judge``, ``ttl`` seconds from now, the first open candidate no other judge holds; drop their
        other hold. The pair they hold now comes first while it is open. None when no candidate is left.

        ``is_open`` is called once the candidates held by others are known: a judgment stored before then counts.
        """
        ...

    def release(self, judge: str, pair: Pair | None = None) -> None:
        """Drop ``judge``'s hold (only if it is on ``pair``, when given)."""
        ...

    def held(self) -> dict[Pair, str]:
        """Every pair held now, and by whom."""
        ...

    def record(self, judgment: Judgment) -> None:
        """Append ``judgment`` to :attr:`store` and drop its judge's hold on its pair (one transaction where both
        are in one database)."""
        ...


def first_open(judge: str, candidates: Sequence[Pair], held: Mapping[Pair, str],
               is_open: Callable[[Pair], bool]) -> Pair | None:
    """The pair ``judge`` holds if it is a candidate and open, else the first open candidate nobody else holds."""
    def free(pair: Pair) -> bool:
        return held.get(pair, judge) == judge and is_open(pair)

    own = next((p for p, who in held.items() if who == judge), None)
    if own is not None and own in set(candidates) and free(own):
        return own
    return next((p for p in candidates if free(p)), None)
