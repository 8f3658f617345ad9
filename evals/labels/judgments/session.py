"""Judging a dataset: pairs handed out to judges, and their judgments recorded.

```python
session = JudgingSession.open("datasets/mine")
while (pair := session.next_pair("ana", pool, ttl=600)) is not None:
    session.record(*pair, grade=ask(pair), judge="ana")
```

Several processes may do this at once on one dataset, on one machine (the
files beside the dataset) or on many (the store a team shares, ``store=URL``):
:meth:`next_pair` never gives two judges the same pair while one holds it, and
every :meth:`record` is appended whole. A session keeps a :class:`~searchtrace.evals.labels.judgments.tally.Tally`
of the store and brings it up to date inside each take's transaction,
reading only what was appended since its last look: the next pair costs the
same with 100 judgments stored or 100,000.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.errors import ValidationError
from searchtrace.evals.labels.judgments.folder import JudgingFolder
from searchtrace.evals.labels.judgments.queue.protocol import JudgeQueue
from searchtrace.evals.labels.judgments.records import Judgment, Kind, Pair, now
from searchtrace.evals.labels.judgments.scale import Scale
from searchtrace.evals.labels.judgments.store.protocol import JudgmentStore
from searchtrace.evals.labels.judgments.tally import Tally

if TYPE_CHECKING:
    from searchtrace.database import StoreUrl

__all__ = ["DEFAULT_TTL_S", "JudgingSession"]

DEFAULT_TTL_S = 600.0
"""How long a judge holds a pair they were handed, in seconds."""


class JudgingSession:
    """One dataset's judging: its scale, its judge queue and the store the queue records into."""

    def __init__(self, queue: JudgeQueue, scale: Scale, documents: Callable[[], frozenset[str]] | None = None) -> None:
        self.queue, self.scale = queue, scale
        self.store: JudgmentStore = queue.store
        self.tally = Tally(self.store)
        self._documents = documents
        self._known: frozenset[str] | None = None

    @classmethod
    def open(cls, dataset: str | Path, clock: Callable[[], float] = time.time,
             store: StoreUrl | str | None = None) -> JudgingSession:
        """The session of the dataset folder ``dataset`` (its ``judging.toml``, its corpus).

        Its judgments and judge queue are kept in ``judgments.jsonl`` and ``judge_queue.sqlite`` beside it, or with
        ``store`` (a ``postgresql://`` URL) in the store a team shares, under the folder's name (``clock`` is then
        the server's).

        Raises:
            NotFoundError: no such folder. StoreVersionError, BackendUnavailable: a store this client cannot use.
        """
        folder = JudgingFolder.at(dataset, store)
        return cls(folder.queue(clock), folder.scale(), folder.doc_ids)

    def record(self, query_id: str, doc_id: str, grade: int | None, judge: str, *, kind: Kind = Kind.HUMAN,
               note: str | None = None, trace_id: str | None = None) -> Judgment:
        """Append one judgment (``grade`` None retracts the judge's earlier one) and free the pair.

        The document must be one of the dataset's (its corpus is read once, at the first judgment); the query id
        may be one the dataset's ``queries.jsonl`` lacks: live traffic judged on the Traces page is labelled under
        the id a query set made later gives it.

        Raises:
            ValidationError: a grade off the scale, an empty id or judge, or a document the dataset lacks.
        """
        if self._documents is not None:
            if self._known is None:
                self._known = self._documents()
            if doc_id not in self._known:
                raise ValidationError(f"unknown document {doc_id!r}: not in the dataset's corpus.jsonl",
                                      field="doc_id")
        judgment = Judgment(query_id, doc_id, self.scale.check(grade), judge, kind, now(), note, trace_id)
        self.queue.record(judgment)
        return judgment

    def next_pair(self, judge: str, candidates: Sequence[Pair], ttl: float = DEFAULT_TTL_S,
                  judges_per_pair: int = 1) -> Pair | None:
        """The pair ``judge`` should judge next, held for them for ``ttl`` seconds; None when none is left.

        A pair is open to a judge when they have not judged it, fewer than
        ``judges_per_pair`` judges have (human judgments), and no other judge
        holds it. The judge keeps the pair they hold while it is open (asking
        again after a crash gives it back), else gets the first open one of
        ``candidates``, in their order.
        """
        if not judge.strip():
            raise ValidationError("judge must be a non-empty name", field="judge")
        if not ttl > 0 or judges_per_pair < 1:
            raise ValidationError(f"ttl must be > 0 and judges_per_pair >= 1, got {ttl!r} and {judges_per_pair!r}",
                                  field="ttl" if not ttl > 0 else "judges_per_pair")
        pairs = [(query_id, doc_id) for query_id, doc_id in candidates]
        return self.queue.take(judge, pairs, lambda: self._open_to(judge, judges_per_pair), ttl)

    def _open_to(self, judge: str, per_pair: int) -> Callable[[Pair], bool]:
        """Whether a pair is open to ``judge``, as of the judgments stored now."""
        tally = self.tally.refresh()
        return lambda pair: not tally.settled([pair], judge, per_pair)[0]
