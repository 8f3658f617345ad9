"""The judging files of a dataset folder, beside its corpus and queries.

``judgments.jsonl`` (the store, kept and diffed with the dataset),
``judging.toml`` (the scale, optional), ``reservations.sqlite`` (who is judging
which pair right now: disposable), ``pool.jsonl`` (the pairs ``judge pool``
chose, in the order shown) and ``qrels/<split>.tsv`` (what ``judge export``
writes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from searchtrace.errors import NotFoundError, ValidationError
from searchtrace.evals.judgments.jsonl import JsonlStore
from searchtrace.evals.judgments.scale import SCALE_FILE, Scale
from searchtrace.retriever import SPLIT_NAME, load_corpus, load_queries

__all__ = ["JUDGMENTS_FILE", "POOL_FILE", "RESERVATIONS_FILE", "JudgingFolder"]

JUDGMENTS_FILE = "judgments.jsonl"
RESERVATIONS_FILE = "reservations.sqlite"
POOL_FILE = "pool.jsonl"


@dataclass(frozen=True)
class JudgingFolder:
    """A dataset folder, as judging sees it."""

    root: Path

    @classmethod
    def at(cls, root: str | Path) -> JudgingFolder:
        """The dataset folder ``root``.

        Raises:
            NotFoundError: ``root`` is not a folder.
        """
        path = Path(root)
        if not path.is_dir():
            raise NotFoundError(f"no dataset folder {root}", field="dataset")
        return cls(path)

    @property
    def judgments(self) -> Path:
        return self.root / JUDGMENTS_FILE

    @property
    def reservations(self) -> Path:
        return self.root / RESERVATIONS_FILE

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
        return self.root / "qrels" / f"{split}.tsv"

    def store(self) -> JsonlStore:
        return JsonlStore(self.judgments)

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
