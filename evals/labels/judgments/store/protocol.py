"""Where judgments are kept: the protocol every store implements.

A store only appends: a judgment is never changed or removed once written.
A later judgment by the same judge of the same pair supersedes the earlier one
(:mod:`~searchtrace.evals.labels.judgments.labels`), and a judgment without a grade
retracts it. :class:`~searchtrace.evals.labels.judgments.store.jsonl.JsonlStore` keeps them
in ``judgments.jsonl``; ``tests/test_judgments_store.py`` runs one contract
suite on every implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from searchtrace.evals.labels.judgments.records import Judgment

__all__ = ["Appended", "JudgmentStore"]


@dataclass(frozen=True)
class Appended:
    """What a store holds past a reader's cursor.

    Attributes:
        judgments: the judgments after the cursor, in store order (all of them when ``restarted``).
        cursor: where this read stopped, for the next (opaque: only the store that gave it reads it).
        restarted: the read began at the start: there was no cursor, or the store was replaced or cut
            short since it was taken, so what was read before must be dropped.
    """

    judgments: tuple[Judgment, ...]
    cursor: object
    restarted: bool


class JudgmentStore(Protocol):
    """An append-only store of judgments, safe for several processes at once."""

    @property
    def location(self) -> str:
        """Where the store is, for messages (a file's path)."""
        ...

    def append(self, judgments: Sequence[Judgment]) -> None:
        """Add ``judgments`` after every judgment already stored, durably, all or (when killed) a prefix."""
        ...

    def read(self) -> tuple[Judgment, ...]:
        """Every judgment stored, in the order they were appended.

        Raises:
            DataError: a damaged record, naming where it is.
        """
        ...

    def read_after(self, cursor: object | None) -> Appended:
        """The judgments appended since ``cursor`` (None: all), and the cursor to pass next time.

        A cursor the store no longer matches (its file replaced or truncated) reads everything again,
        with ``restarted`` set: a reader never keeps a state the store has dropped.

        Raises:
            DataError: a damaged record, naming where it is.
        """
        ...
