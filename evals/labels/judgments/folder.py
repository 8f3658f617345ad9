"""The judging files of a dataset folder, beside its corpus and queries.

``judgments.jsonl`` (the store, kept and diffed with the dataset),
``judging.toml`` (the scale, optional), ``judge_queue.sqlite`` (the judge queue:
who is judging which pair right now, disposable), ``pool.jsonl`` (the pairs ``judge pool``
chose, in the order shown) and ``qrels/<split>.tsv`` (what ``judge export``
writes). With a store URL, the judgments and the judge queue are kept instead in the
store a team shares, under the folder's name (``dataset_name``: what its runs
and traces record); the scale, the pool and the qrels stay in the folder.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.errors import NotFoundError, ValidationError
from searchtrace.evals.labels.judgments.queue.opening import open_judge_queue
from searchtrace.evals.labels.judgments.queue.protocol import JudgeQueue
from searchtrace.evals.labels.judgments.scale import SCALE_FILE, Scale
from searchtrace.evals.labels.judgments.store.opening import open_judgment_store
from searchtrace.evals.labels.judgments.store.protocol import JudgmentStore
from searchtrace.retriever import SPLIT_NAME, dataset_name, load_corpus, load_queries
from searchtrace.safepaths import checked_part

if TYPE_CHECKING:
    from searchtrace.database import StoreUrl

__all__ = ["JUDGMENTS_FILE", "POOL_FILE", "QUEUE_FILE", "JudgingFolder", "top_grade"]

JUDGMENTS_FILE = "judgments.jsonl"
QUEUE_FILE = "judge_queue.sqlite"
POOL_FILE = "pool.jsonl"


@dataclass(frozen=True)
class JudgingFolder:
    """A dataset folder, as judging sees it; ``shared``: the store its judgments and judge queue are kept in, if any."""

    root: Path
    shared: StoreUrl | None = None

    @classmethod
    def at(cls, root: str | Path, store: StoreUrl | str | None = None) -> JudgingFolder:
        """The dataset folder ``root``, its judgments in ``store`` (a ``postgresql://`` URL) or beside it (None).

        Raises:
            NotFoundError: ``root`` is not a folder. ConfigError: a store that is no ``postgresql://`` URL.
        """
        path = Path(root)
        if not path.is_dir():
            raise NotFoundError(f"no dataset folder {root}", field="dataset")
        if isinstance(store, str):
            from searchtrace.database import StoreUrl

            store = StoreUrl(store)
        return cls(path, store)

    @property
    def judgments(self) -> Path:
        return self.root / JUDGMENTS_FILE

    @property
    def queue_file(self) -> Path:
        return self.root / QUEUE_FILE

    @property
    def pool(self) -> Path:
        return self.root / POOL_FILE

    @property
    def scale_file(self) -> Path:
        return self.root / SCALE_FILE

    def qrels(self, split: str) -> Path:
        """``qrels/<split>.tsv``.

        Raises:
            ValidationError: a split name that is no file name (``../x``, ``a b``).
        """
        if not SPLIT_NAME.fullmatch(split):
            raise ValidationError(f"split {split!r} must be letters, digits, '_', '.' or '-', starting with a letter "
                                  "or digit", field="split")
        return self.root / "qrels" / checked_part(f"{split}.tsv", "split")  # a dataset may link its qrels in

    @property
    def location(self) -> str:
        """Where the judgments are, for messages (the store's URL shown masked)."""
        return self.store().location if self.shared else str(self.judgments)

    def store(self) -> JudgmentStore:
        """The judgments store (the shared one's schema is checked first).

        Raises:
            StoreVersionError, BackendUnavailable: a shared store this client cannot use.
        """
        return open_judgment_store(self.judgments, self.shared, dataset_name(self.root))

    def queue(self, clock: Callable[[], float] = time.time) -> JudgeQueue:
        """The judge queue, over the judgments store (``clock``: the file's clock; the shared store keeps the
        server's).

        Raises:
            StoreVersionError, BackendUnavailable: a shared store this client cannot use.
        """
        return open_judge_queue(self.queue_file, self.judgments, self.shared, dataset_name(self.root), clock)

    def scale(self) -> Scale:
        return Scale.load(self.root)

    def doc_ids(self) -> frozenset[str]:
        """The dataset's document ids (``corpus.jsonl``)."""
        return frozenset(d.id for d in load_corpus(self.root / "corpus.jsonl"))

    def ids(self) -> tuple[frozenset[str], frozenset[str]]:
        """The dataset's query ids and doc ids (``queries.jsonl``, ``corpus.jsonl``)."""
        queries = load_queries(self.root / "queries.jsonl")
        docs = load_corpus(self.root / "corpus.jsonl")
        return frozenset(q.id for q in queries), frozenset(d.id for d in docs)


def top_grade(root: Path) -> int | None:
    """The top grade of the scale labels judged in the dataset folder ``root`` are given on (``judging.toml``, else
    the default scale), or None for a folder with neither a scale nor ``judgments.jsonl``: a benchmark's qrels are
    their own scale.

    Raises:
        DataError: a ``judging.toml`` that cannot be read as a scale.
    """
    if not (root / SCALE_FILE).is_file() and not (root / JUDGMENTS_FILE).is_file():
        return None
    return max(value for value, _ in Scale.load(root).grades)
