"""A whole dataset folder: the :class:`Dataset` record and :func:`load_dataset`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from searchtrace.errors import DataError
from searchtrace.retriever.data.beir.corpus import load_corpus
from searchtrace.retriever.data.beir.qrels import filter_qrels
from searchtrace.retriever.data.beir.queries import Query, load_queries
from searchtrace.retriever.data.beir.report import QrelsReport
from searchtrace.retriever.data.beir.triples import load_triples
from searchtrace.retriever.types import Document, Triple
from searchtrace.safepaths import checked_part

__all__ = ["SPLIT_NAME", "Dataset", "dataset_name", "load_dataset"]

SPLIT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""What a qrels split may be called: its file is ``qrels/<split>.tsv``."""


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset folder; ``qrels`` holds only the chosen ``split``."""

    root: Path
    name: str
    docs: tuple[Document, ...]
    queries: tuple[Query, ...]
    qrels: dict[str, dict[str, int]]
    split: str | None
    triples: tuple[Triple, ...] = ()
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    report: QrelsReport = QrelsReport()

    @property
    def has_triples(self) -> bool:
        return bool(self.triples)

    def queries_for_split(self) -> tuple[Query, ...]:
        """Queries judged in ``qrels``, plus ``unanswerable`` ones meant for this split.

        An unanswerable query has no qrels rows; it belongs to every split
        unless its ``metadata["split"]`` names another one.
        """
        return tuple(
            q
            for q in self.queries
            if q.id in self.qrels
            or (q.category == "unanswerable" and q.metadata.get("split", self.split) == self.split)
        )


def dataset_name(root: str | Path) -> str:
    """What a dataset folder is called: its name, symlinks resolved (its index, runs and traces say it)."""
    return Path(root).resolve().name


def load_dataset(root: str | Path, split: str | None = None, *, need_queries: bool = True) -> Dataset:
    """Load a BEIR-layout folder (``triples.jsonl`` and ``qrels/`` optional).

    Args:
        root: folder with ``corpus.jsonl`` and ``queries.jsonl``.
        split: qrels split; default "test" if present, else the first
            ``qrels/*.tsv`` alphabetically, else none (empty qrels).
        need_queries: False when only the corpus matters (indexing, searching): a
            missing ``queries.jsonl`` then means no queries.

    Raises:
        DataError: any malformed file, or a ``split`` that does not exist.
    """
    root = Path(root)
    docs = load_corpus(root / "corpus.jsonl")
    has_queries = need_queries or (root / "queries.jsonl").exists()
    queries = load_queries(root / "queries.jsonl") if has_queries else []
    doc_ids = {d.id for d in docs}
    chosen = _choose_split(root, split)
    qrels: dict[str, dict[str, int]] = {}
    report = QrelsReport()
    if chosen is not None:
        qrels, report = filter_qrels(root / "qrels" / checked_part(f"{chosen}.tsv", "split"), {q.id for q in queries}, doc_ids)
    triples: list[Triple] = []
    aliases: dict[str, tuple[str, ...]] = {}
    if (root / "triples.jsonl").exists():
        triples, aliases = load_triples(root / "triples.jsonl", doc_ids)
    return Dataset(
        root, dataset_name(root), tuple(docs), tuple(queries), qrels, chosen, tuple(triples), aliases, report
    )


def _choose_split(root: Path, split: str | None) -> str | None:
    """The qrels split to load: ``split``, else "test", else the first alphabetically."""
    folder = root / "qrels"
    available = sorted(p.stem for p in folder.glob("*.tsv")) if folder.is_dir() else []
    if split is None:
        return "test" if "test" in available else (available[0] if available else None)
    if not SPLIT_NAME.fullmatch(split) or split not in available:
        raise DataError(str(folder), None, f"no qrels split {split!r}; available: {', '.join(available) or 'none'}")
    return split
