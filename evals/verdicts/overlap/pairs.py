"""Two runs' rankings of the queries they share, as rows over one document vocabulary, and what both rank.

Each run interned its own ids; the candidate's documents are coded in the
base's vocabulary (those it lacks after it; looked up by hashing, as the
metric kernels join a run to its qrels), each run's rows are given the index
of their query among the shared ones, and a document both rank for the same
query is found by sorting the (query, document) keys of both sides together:
within a side a key is unique, so equal neighbours are one document on both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from searchtrace.evals.scoring.interning import index_in
from searchtrace.evals.scoring.overlap.prefixes import Prefixes, counted, tie_ranks
from searchtrace.evals.scoring.overlap.topk import top_k_arrays
from searchtrace.evals.scoring.rankings import Run

__all__ = ["Paired", "Rows", "pair_runs"]


@dataclass(frozen=True, eq=False)
class Rows:
    """One run's rankings of the shared queries, a row per ranked document, in ranking order.

    Attributes:
        pair: the row's query, as its index among the shared queries.
        doc: its document, in the common vocabulary.
        position: its 0-based place in the ranking; rank: its 1-based rank, ties sharing the first one's.
    """

    pair: np.ndarray
    doc: np.ndarray
    position: np.ndarray
    rank: np.ndarray


@dataclass(frozen=True, eq=False)
class Paired:
    """Both runs' rows over ``n`` shared queries, and the rows of the documents both rank (``shared``)."""

    n: int
    base: Rows
    candidate: Rows
    shared: tuple[np.ndarray, np.ndarray]

    def lengths(self) -> tuple[np.ndarray, np.ndarray]:
        """(n,) each query's ranking length, base and candidate."""
        return np.bincount(self.base.pair, minlength=self.n), np.bincount(self.candidate.pair, minlength=self.n)

    def depth(self) -> int:
        """The longest ranking's length."""
        return int(max(lengths.max(initial=0) for lengths in self.lengths()))

    def prefixes(self, first: int = 0, last: int | None = None) -> Prefixes:
        """The per-depth counts rank-biased overlap is computed from, of the pairs ``first`` to ``last - 1``
        (all by default; a block keeps the (pairs x depth) arrays small)."""
        last = self.n if last is None else last
        b, c = self.shared
        rows = [(side.pair >= first) & (side.pair < last) for side in (self.base, self.candidate)]
        kept = (self.base.pair[b] >= first) & (self.base.pair[b] < last)
        return counted(last - first, (self.base.pair[rows[0]] - first, self.base.rank[rows[0]]),
                       (self.candidate.pair[rows[1]] - first, self.candidate.rank[rows[1]]),
                       (self.base.pair[b][kept] - first, self.base.rank[b][kept], self.candidate.rank[c][kept]))

    def top_k(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(n,) Jaccard@k and the documents new in the candidate's top ``k``."""
        b, c = self.shared
        return top_k_arrays(self.lengths(), (self.base.pair[b], self.base.position[b], self.candidate.position[c]), k)


def _vocabulary(base: np.ndarray, candidate: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes of both runs' documents in one vocabulary: the base's, then the candidate's others."""
    found = index_in(candidate, base) if len(base) and len(candidate) else None
    if found is None:  # an empty side, or the hashed lookup could not vouch for its answer
        where = {doc: i for i, doc in enumerate(base.tolist())}
        found = np.fromiter((where.get(doc, -1) for doc in candidate.tolist()), np.int64, len(candidate))
    new = found < 0
    found[new] = len(base) + np.arange(int(new.sum()))
    return np.arange(len(base), dtype=np.int64), found, len(base) + int(new.sum())


def _rows(run: Run, where: dict[str, int], docs: np.ndarray) -> Rows:
    pair_of_query = np.fromiter((where.get(q, -1) for q in run.queries.tolist()), np.int64, len(run.queries))
    starts = np.ones(len(run), dtype=bool)
    starts[1:] = run.query_index[1:] != run.query_index[:-1]
    position, rank = tie_ranks(starts, run.scores)
    pair = pair_of_query[run.query_index]
    keep = pair >= 0
    return Rows(pair[keep], docs[run.doc_index][keep], position[keep], rank[keep])


def _shared(base: Rows, candidate: Rows, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """(row in base, row in candidate) of each (query, document) both rank."""
    keys = np.concatenate([base.pair * n_docs + base.doc, candidate.pair * n_docs + candidate.doc]).astype(np.uint64)
    bits = max(len(keys).bit_length(), 1)
    if int(keys.max(initial=0)).bit_length() + bits <= 64:  # one sort of plain integers: key, then row
        packed = (keys << np.uint64(bits)) | np.arange(len(keys), dtype=np.uint64)
        packed.sort()
        key, row = packed >> np.uint64(bits), (packed & np.uint64((1 << bits) - 1)).astype(np.int64)
    else:
        row = np.argsort(keys, kind="stable")
        key = keys[row]
    same = np.flatnonzero(key[1:] == key[:-1])  # the base's row sorts first: its row number is lower
    return row[same], row[same + 1] - len(base.pair)


def pair_runs(base: Run, candidate: Run, query_ids: Sequence[str]) -> Paired:
    """Both runs' rankings of ``query_ids`` (the queries both searched), paired."""
    where = {q: i for i, q in enumerate(query_ids)}
    base_docs, candidate_docs, n_docs = _vocabulary(base.docs, candidate.docs)
    rows = _rows(base, where, base_docs), _rows(candidate, where, candidate_docs)
    return Paired(len(where), *rows, _shared(*rows, max(n_docs, 1)))
