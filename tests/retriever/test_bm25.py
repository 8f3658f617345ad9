"""Qdrant's BM25 embedder and IDF modifier against the BM25 formula."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchtrace.errors import ValidationError
from searchtrace.retriever.vectorstore.base import PointRow
from searchtrace.retriever.vectorstore.bm25 import K1, B, Bm25Encoder, document_length, mean_token_length
from searchtrace.retriever.vectorstore.edge import EdgeStore

VOCAB = ["zebra", "quantum", "violin", "harbor", "glacier", "pepper", "comet", "lantern"]  # no stopwords, distinct stems


def bm25_weight(tf: int, dl: int, avg_len: float) -> float:
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avg_len))


def weight(enc: Bm25Encoder, doc: str, term: str) -> float:
    [index] = enc.encode_query(term).indices
    sparse = enc.encode_documents([doc])[0]
    return dict(zip(sparse.indices, sparse.values)).get(index, 0.0)


def test_query_weights_are_all_one_and_unique():
    enc = Bm25Encoder(avg_len=10)
    q = enc.encode_query("Cats cat dog the DOG")
    assert q.values == (1.0, 1.0)
    assert set(q.indices) == set(enc.encode_query("cat dog").indices)


@pytest.mark.parametrize(("text", "expected"), [
    ("The quick brown fox jumps over the lazy dog", 6),  # the, over, the are stopwords
    ("e-mail foo_bar 3.14", 6),  # split on every non-alphanumeric
    ("cat cat cat", 3),
    ("cats running runs", 3),
    ("the a an of", 0),
    ("", 0),
])
def test_document_length(text, expected):
    assert document_length(text) == expected


def test_mean_token_length():
    assert mean_token_length(["cat dog", "fish", "the"]) == (2 + 1 + 0) / 3
    assert mean_token_length(iter(["cat dog", "fish"])) == 1.5
    assert mean_token_length([]) == 1.0
    assert mean_token_length(["the", "of a"]) == 1.0


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_avg_len_must_be_positive(bad):
    with pytest.raises(ValidationError):
        Bm25Encoder(bad)


def test_weights_follow_formula():
    enc = Bm25Encoder(avg_len=5)
    assert weight(enc, "cats running runs", "run") == pytest.approx(bm25_weight(2, 3, 5), rel=1e-6)
    assert weight(enc, "cats running runs", "cat") == pytest.approx(bm25_weight(1, 3, 5), rel=1e-6)
    assert weight(enc, "cats running runs", "zebra") == 0.0


def test_tf_saturates():
    enc = Bm25Encoder(avg_len=5)
    docs = [" ".join(["zebra"] * tf + ["comet"] * (5 - tf)) for tf in range(1, 6)]
    ws = [weight(enc, d, "zebra") for d in docs]
    steps = np.diff(ws)
    assert np.all(steps > 0) and np.all(np.diff(steps) < 0)
    assert weight(Bm25Encoder(avg_len=1000), "zebra " * 1000, "zebra") < K1 + 1


def test_shorter_doc_scores_higher_at_equal_tf():
    enc = Bm25Encoder(avg_len=4)
    assert weight(enc, "zebra comet", "zebra") > weight(enc, "zebra comet violin harbor glacier", "zebra")


def test_avg_len_effect():
    doc = "zebra comet violin harbor"
    short_avg, long_avg = weight(Bm25Encoder(2), doc, "zebra"), weight(Bm25Encoder(20), doc, "zebra")
    assert short_avg < long_avg  # longer than average is penalised more
    assert weight(Bm25Encoder(4), doc, "zebra") == pytest.approx(1.0)  # dl == avg_len: tf (k+1) / (tf + k)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=30), st.floats(1.0, 50.0))
def test_every_weight_is_the_formula(words, avg_len):
    enc = Bm25Encoder(avg_len)
    doc = " ".join(words)
    assert document_length(doc) == len(words)
    for term, tf in Counter(words).items():
        w = weight(enc, doc, term)
        assert 0 < w < K1 + 1
        assert w == pytest.approx(bm25_weight(tf, len(words), avg_len), rel=1e-5)


def test_store_score_is_idf_times_weight(tmp_path):
    docs = ["zebra comet", "comet violin", "violin harbor glacier"]
    avg = mean_token_length(docs)
    enc = Bm25Encoder(avg)
    store = EdgeStore(tmp_path / "s")
    store.create(2)
    dense = np.array([1.0, 0.0], dtype=np.float32)
    store.upsert([PointRow(i, dense, s, {"id": str(i)}) for i, s in enumerate(enc.encode_documents(docs))])
    store.flush()

    def idf(n: int, big_n: int = 3) -> float:
        return math.log(1 + (big_n - n + 0.5) / (n + 0.5))

    [[hit]] = store.search_sparse([enc.encode_query("zebra")], limit=5)
    assert (hit.id, hit.score) == (0, pytest.approx(idf(1) * bm25_weight(1, 2, avg), rel=1e-5))
    [hits] = store.search_sparse([enc.encode_query("comet glacier")], limit=5)
    expected = {0: idf(2) * bm25_weight(1, 2, avg),
                1: idf(2) * bm25_weight(1, 2, avg),
                2: idf(1) * bm25_weight(1, 3, avg)}
    assert {h.id: h.score for h in hits} == pytest.approx(expected, rel=1e-5)
    store.close()


def test_term_stats_idf_max_score_and_unknown_share(tmp_path):
    import math

    from searchtrace.retriever.vectorstore.base import Sparse
    from searchtrace.retriever.vectorstore.bm25 import K1
    from searchtrace.retriever.vectorstore.term_stats import TermStats

    stats = TermStats(10, {1: 5, 2: 1})
    assert stats.idf(1) == pytest.approx(math.log(1 + (10 - 5 + 0.5) / (5 + 0.5)))
    assert stats.idf(3) == pytest.approx(math.log(1 + 10.5 / 0.5))  # unseen: the largest IDF
    q = Sparse((1, 2, 3), (1.0, 1.0, 1.0))
    assert stats.max_score(q) == pytest.approx((K1 + 1) * (stats.idf(1) + stats.idf(2) + stats.idf(3)))
    assert stats.unknown_share(q) == pytest.approx(stats.idf(3) / (stats.idf(1) + stats.idf(2) + stats.idf(3)))
    stats.save(tmp_path / "s.npz")
    again = TermStats.load(tmp_path / "s.npz")
    assert again.n_docs == 10 and again.df == {1: 5, 2: 1}
