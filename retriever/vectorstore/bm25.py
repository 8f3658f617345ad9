"""BM25 sparse vectors from Qdrant's own embedder (``qdrant_edge.Bm25``).

A document term gets the BM25 term-frequency weight (Robertson & Zaragoza 2009,
"The Probabilistic Relevance Framework: BM25 and Beyond", eq. 3.15)::

    w(t, d) = tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avg_len))

and the store's IDF modifier multiplies each query term (weight 1.0) by
``ln(1 + (N - n_t + 0.5) / (n_t + 0.5))`` at search time.

Qdrant's English analyser (checked by experiment on qdrant-edge 0.9): split on
every non-alphanumeric character (``e-mail``, ``foo_bar`` and ``3.14`` give two
tokens each), lowercase, drop the NLTK English stopwords (``the``, ``a``, ``y``,
``don``, ``t``, ...), Snowball-stem (``cats`` -> ``cat``). ``|d|`` is the number
of tokens left, repeats included.
"""

from __future__ import annotations

from functools import cache
from typing import Iterable, Sequence

from qdrant_edge import Bm25, Bm25Config, SparseVector

from searchtrace.errors import ValidationError
from searchtrace.retriever.vectorstore.base import Sparse

LANGUAGE = "english"
K1 = 1.2  # Qdrant's defaults, stated so the tests can write the formula
B = 0.75

# With b = 0 the weight is tf * (k + 1) / (tf + k): invertible, and with a large
# k it stays well conditioned in float32 up to tf ~ 10^5.
_COUNT_K = 1e6


@cache
def _length_model() -> Bm25:
    return Bm25(Bm25Config(k=_COUNT_K, b=0.0, language=LANGUAGE))


def _to_sparse(vector: SparseVector) -> Sparse:
    return Sparse(tuple(vector.indices), tuple(vector.values))


def document_length(text: str) -> int:
    """Number of tokens BM25 counts in ``text`` (after stopwords, repeats included).

    Read back from Qdrant's embedder itself rather than re-implemented, so it
    can never drift from the analyser: embedding with ``b = 0`` makes each
    weight a function of ``tf`` alone, which is inverted and summed.
    """
    values = _length_model().embed_document(text).values
    return sum(round(w * _COUNT_K / (_COUNT_K + 1.0 - w)) for w in values)


def mean_token_length(texts: Iterable[str]) -> float:
    """Corpus mean of :func:`document_length`, the ``avg_len`` BM25 needs.

    A corpus with no tokens at all gets 1.0: BM25 requires ``avg_len > 0`` and,
    with every length 0, no value changes any score.
    """
    total = n = 0
    for text in texts:
        total += document_length(text)
        n += 1
    return total / n if total else 1.0


class Bm25Encoder:
    """Qdrant's English BM25 with a corpus-specific ``avg_len``.

    Args:
        avg_len: Mean document length in tokens (see :func:`mean_token_length`).
    """

    def __init__(self, avg_len: float) -> None:
        if not avg_len > 0:  # also rejects NaN
            raise ValidationError(f"avg_len must be > 0, got {avg_len!r}", field="avg_len")
        self.avg_len = float(avg_len)
        self._model = Bm25(Bm25Config(k=K1, b=B, avg_len=self.avg_len, language=LANGUAGE))

    def encode_documents(self, texts: Sequence[str]) -> list[Sparse]:
        """BM25 term weights of each document."""
        embed = self._model.embed_document
        return [_to_sparse(embed(t)) for t in texts]

    def encode_query(self, text: str) -> Sparse:
        """The query's unique terms, each with weight 1.0."""
        return _to_sparse(self._model.embed_query(text))

    def encode_queries(self, texts: Sequence[str]) -> list[Sparse]:
        """:meth:`encode_query` for a batch."""
        embed = self._model.embed_query
        return [_to_sparse(embed(t)) for t in texts]
