"""The corpus' BM25 statistics: document frequencies and every document's term weights.

Qdrant's sparse search sums a document's term contributions in float32, in an
order that depends on how its optimizer laid the points out in segments: two
builds of the same data gave scores differing by up to 4e-6 and tied documents
in a different order, so rankings (and map@100) changed from build to build.
The keyword stage therefore takes Qdrant's candidates with a margin and scores
them again here, in float64 and a fixed order, ties broken by point id: the same
data and settings give the same scores and the same ranking every time.

The file (``term_stats.npz``) is written byte for byte the same by every build
of the same data: arrays sorted, zip entries with a fixed time stamp.
"""

from __future__ import annotations

import math
import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np

from searchtrace.retriever.vectorstore.base import Sparse
from searchtrace.retriever.vectorstore.bm25 import K1

__all__ = ["TermStats", "rescore_limit"]

_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest a zip entry can carry: no build time in the file


def rescore_limit(limit: int) -> int:
    """How many candidates to take from the engine to keep ``limit`` after rescoring.

    The engine's scores differ from exact ones by float32 rounding only, so a
    document in the exact top ``limit`` is within the engine's top ``limit``
    plus a few; twice as many leaves room for large groups of tied scores.
    """
    return 2 * limit + 10


class TermStats:
    """Document frequencies, for score normalization, and each point's BM25 term weights, for scoring.

    With the frequencies a BM25 score can be put on an absolute 0-1 scale: no
    document can score more than ``(k1 + 1) * sum(idf(t))`` over the query's
    terms, and a term the corpus never saw has the largest IDF, so a query about
    something the corpus does not contain cannot reach a high normalized score.

    Args:
        n_docs: corpus size.
        df: term id -> number of documents containing it.
        indptr, terms, weights: the points' term weights in compressed rows
            (point ``p``'s terms are ``terms[indptr[p]:indptr[p + 1]]``), or None
            when only the frequencies are known.
    """

    def __init__(self, n_docs: int, df: dict[int, int], indptr: np.ndarray | None = None,
                 terms: np.ndarray | None = None, weights: np.ndarray | None = None) -> None:
        self.n_docs = int(n_docs)
        self.df = df
        self.indptr = indptr
        self.terms = terms
        self.weights = weights

    @classmethod
    def of_documents(cls, rows: Sequence[Sparse]) -> TermStats:
        """The statistics of a corpus whose point ``p`` has the BM25 vector ``rows[p]``."""
        lengths = np.fromiter((len(r.indices) for r in rows), dtype=np.int64, count=len(rows))
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        terms = np.fromiter((t for r in rows for t in r.indices), dtype=np.int64, count=int(indptr[-1]))
        weights = np.fromiter((w for r in rows for w in r.values), dtype=np.float32, count=int(indptr[-1]))
        ids, counts = np.unique(terms, return_counts=True)  # a document lists a term once
        return cls(len(rows), dict(zip(ids.tolist(), counts.tolist())), indptr, terms, weights)

    def idf(self, term: int) -> float:
        """Qdrant's IDF: ``ln(1 + (N - n + 0.5) / (n + 0.5))``."""
        n = self.df.get(term, 0)
        return math.log(1.0 + (self.n_docs - n + 0.5) / (n + 0.5))

    def max_score(self, query: Sparse) -> float:
        """The largest BM25 score any document could get for ``query``."""
        return (K1 + 1.0) * sum(self.idf(t) for t in query.indices)

    def unknown_share(self, query: Sparse) -> float:
        """IDF-weighted share of the query's terms that no document contains."""
        idf = [self.idf(t) for t in query.indices]
        total = sum(idf)
        unseen = sum(w for t, w in zip(query.indices, idf) if self.df.get(t, 0) == 0)
        return unseen / total if total > 0 else 0.0

    def score(self, query: Sparse, points: np.ndarray) -> np.ndarray:
        """The exact BM25 score of each point for ``query``: ``sum(q_w * idf(t) * w(t, p))``, in float64,
        summed in the point's own term order."""
        if self.indptr is None or self.terms is None or self.weights is None:
            raise ValueError("these statistics hold no document term weights")
        points = np.asarray(points, dtype=np.int64)
        order = np.argsort(np.asarray(query.indices, dtype=np.int64), kind="stable")
        q_terms = np.asarray(query.indices, dtype=np.int64)[order]
        q_weights = np.array([query.values[i] * self.idf(query.indices[i]) for i in order], dtype=np.float64)
        starts, ends = self.indptr[points], self.indptr[points + 1]
        lengths = ends - starts
        row = np.repeat(np.arange(len(points)), lengths)  # each entry's candidate, and its place in the arrays:
        flat = np.arange(int(lengths.sum())) + np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
        terms = self.terms[flat]
        at = np.minimum(np.searchsorted(q_terms, terms), max(len(q_terms) - 1, 0))
        hit = q_terms[at] == terms if len(q_terms) else np.zeros(len(terms), dtype=bool)
        contrib = self.weights[flat][hit].astype(np.float64) * q_weights[at[hit]]
        return np.bincount(row[hit], weights=contrib, minlength=len(points)).astype(np.float64)

    def rank(self, query: Sparse, points: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """``points`` rescored (:meth:`score`), best first, ties by point id, at most ``limit``: the points
        and their scores."""
        points = np.asarray(points, dtype=np.int64)
        scores = self.score(query, points)
        order = np.lexsort((points, -scores))[:limit]
        return points[order], scores[order]

    def save(self, path: Path) -> None:
        """Write the statistics; the same statistics give the same bytes."""
        ids = np.array(sorted(self.df), dtype=np.int64)
        arrays = {"n_docs": np.int64(self.n_docs), "ids": ids,
                  "counts": np.array([self.df[i] for i in ids.tolist()], dtype=np.int64)}
        if self.indptr is not None and self.terms is not None and self.weights is not None:
            arrays |= {"indptr": self.indptr.astype(np.int64), "terms": self.terms.astype(np.int64),
                       "weights": self.weights.astype(np.float32)}
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
            for name, value in arrays.items():
                with archive.open(zipfile.ZipInfo(f"{name}.npy", _ZIP_TIME), "w", force_zip64=True) as fh:
                    np.lib.format.write_array(fh, np.asanyarray(value), allow_pickle=False)

    @classmethod
    def load(cls, path: Path) -> TermStats:
        """Read what :meth:`save` wrote.

        Raises:
            ValueError: the arrays do not fit together (or any error ``numpy.load`` raises).
        """
        with np.load(path, allow_pickle=False) as data:
            n_docs = int(data["n_docs"])
            df = dict(zip(data["ids"].tolist(), data["counts"].tolist()))
            if "indptr" not in data:
                return cls(n_docs, df)
            indptr, terms, weights = data["indptr"], data["terms"], data["weights"]
        if (len(indptr) != n_docs + 1 or indptr[0] != 0 or np.any(np.diff(indptr) < 0)
                or len(terms) != indptr[-1] or len(weights) != indptr[-1]):
            raise ValueError(f"term weights of {len(indptr) - 1} points, {len(terms)} terms and {len(weights)} "
                             f"weights do not fit {n_docs} documents")
        return cls(n_docs, df, indptr, terms, weights)
