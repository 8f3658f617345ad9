"""Tests for the scale benchmark's pieces: synthetic dense vectors and seeding the embedding cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from searchtrace.errors import ValidationError
from searchtrace.retriever.data.beir import load_dataset
from searchtrace.retriever.data.synth import pseudo_embeddings, synthesize
from searchtrace.retriever.embedding.cache import DIM, MODEL_ID, EmbeddingCache, embed_with_cache, seed_embedding_cache


class NoEncoder:
    """An embedder that must never be asked to embed."""

    model_id = MODEL_ID

    def encode_documents(self, texts, batch_size=64, progress=False):
        raise AssertionError(f"embedded {list(texts)!r}")


def test_pseudo_embeddings_are_deterministic_unit_float32() -> None:
    texts = ["the old mill", "", "Bapa Circle kokoko"]
    first = pseudo_embeddings(texts, seed=3)
    assert first.shape == (3, DIM) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first[[0, 2]], axis=1), 1.0, rtol=1e-5)
    assert not first[1].any()  # no words: zero vector
    np.testing.assert_array_equal(first, pseudo_embeddings(texts, seed=3))
    assert not np.array_equal(first, pseudo_embeddings(texts, seed=4))


def test_synthetic_query_is_nearest_its_target(tmp_path: Path) -> None:
    synthesize(tmp_path, 200, seed=5, n_queries=20, progress=False)
    data = load_dataset(tmp_path)
    docs = pseudo_embeddings([d.content for d in data.docs], seed=5)
    queries = list(data.queries_for_split())
    vecs = pseudo_embeddings([q.text for q in queries], seed=5)
    ids = [d.id for d in data.docs]
    for q, v in zip(queries, vecs):
        assert ids[int(np.argmax(docs @ v))] == q.metadata["target"]


def test_seeded_cache_serves_every_text(tmp_path: Path) -> None:
    texts = ["alpha beta", "gamma", "alpha beta"]
    vectors = pseudo_embeddings(texts)
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        assert seed_embedding_cache(cache, texts, vectors) == 3
        got = embed_with_cache(NoEncoder(), cache, ["gamma", "alpha beta"])
    assert got.embedded == 0
    np.testing.assert_array_equal(got.vectors, vectors[[1, 0]])


def test_seed_embedding_cache_rejects_mismatched_rows(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path / "c.sqlite") as cache, pytest.raises(ValidationError):
        seed_embedding_cache(cache, ["a", "b"], np.zeros((1, DIM), dtype=np.float32))
