"""The embedding model (slow: loads all-MiniLM-L6-v2) and the embedding cache (fast, fake encoder)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from searchtrace.errors import ValidationError
from searchtrace.retriever.embedding.cache import DIM, MODEL_ID, EmbeddingCache, embed_with_cache, text_hash


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


@pytest.mark.slow
def test_shapes_dtype_unit_norm(model):
    docs = model.encode_documents(["a short one", "a much longer document " * 20, "mid length text here"])
    queries = model.encode_queries(["first query", "second"])
    one = model.encode_query("first query")
    assert docs.shape == (3, DIM) and queries.shape == (2, DIM) and one.shape == (DIM,)
    for arr in (docs, queries, one):
        assert arr.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(np.atleast_2d(arr), axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(one, queries[0], atol=1e-5)


@pytest.mark.slow
def test_document_order_survives_length_sorting(model):
    texts = ["tiny", "a somewhat longer sentence about boats", "mid size text"]
    batch = model.encode_documents(texts, batch_size=2)
    singles = np.stack([model.encode_query(t) for t in texts])
    np.testing.assert_allclose(batch, singles, atol=1e-5)


@pytest.mark.slow
def test_paraphrase_closer_than_unrelated(model):
    a, b, c = model.encode_documents([
        "The cat sat on the mat.",
        "A cat was sitting on the rug.",
        "Quarterly revenue grew by eight percent.",
    ])
    assert _cos(a, b) > _cos(a, c) + 0.3


@pytest.mark.slow
def test_empty_inputs(model):
    assert model.encode_documents([]).shape == (0, DIM)
    assert model.encode_queries([]).shape == (0, DIM)
    with pytest.raises(ValidationError):
        model.encode_documents("not a list")


class FakeEncoder:
    """Deterministic vectors from the text's hash; records what it was asked to embed."""

    model_id = "fake-model"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode_documents(self, texts, batch_size=64, progress=False):
        self.calls.append(list(texts))
        rows = [np.random.default_rng(int.from_bytes(hashlib.sha256(t.encode()).digest()[:8])).normal(size=DIM)
                for t in texts]
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), DIM)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_cache_second_call_embeds_nothing(tmp_path):
    enc, cache = FakeEncoder(), EmbeddingCache(tmp_path / "c.sqlite")
    texts = ["alpha", "beta", "gamma", "beta"]
    first, embedded = embed_with_cache(enc, cache, texts)
    assert enc.calls == [["alpha", "beta", "gamma"]] and embedded == 3  # the repeat is embedded once
    np.testing.assert_array_equal(first, enc.encode_documents(texts))
    enc.calls.clear()
    again = embed_with_cache(enc, cache, texts)
    np.testing.assert_array_equal(again.vectors, first)
    assert enc.calls == [] and again.embedded == 0


def test_changed_corpus_embeds_only_new_texts(tmp_path):
    enc, cache = FakeEncoder(), EmbeddingCache(tmp_path / "c.sqlite")
    embed_with_cache(enc, cache, ["alpha", "beta"])
    enc.calls.clear()
    out, embedded = embed_with_cache(enc, cache, ["beta", "delta", "alpha", "epsilon"])
    assert enc.calls == [["delta", "epsilon"]] and embedded == 2
    np.testing.assert_array_equal(out, enc.encode_documents(["beta", "delta", "alpha", "epsilon"]))


def test_cache_survives_reopen(tmp_path):
    path = tmp_path / "c.sqlite"
    enc = FakeEncoder()
    with EmbeddingCache(path) as cache:
        stored = embed_with_cache(enc, cache, ["one", "two"]).vectors
    with EmbeddingCache(path) as cache:
        assert len(cache) == 2
        found, matrix = cache.get_many([text_hash("two", enc.model_id), text_hash("nine", enc.model_id)])
    assert found.tolist() == [True, False]
    np.testing.assert_array_equal(matrix[0], stored[1])
    assert not matrix[1].any()


@pytest.mark.slow
def test_cache_with_real_model(model, tmp_path):
    texts = ["A cat sat on the mat.", "Revenue grew."]
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        vectors, embedded = embed_with_cache(model, cache, texts)
        assert embedded == 2
        np.testing.assert_allclose(vectors, model.encode_documents(texts), atol=1e-6)
        assert embed_with_cache(model, cache, texts).embedded == 0


def test_key_depends_on_model():
    assert text_hash("x", MODEL_ID) != text_hash("x", "other-model")
    assert text_hash("x") == hashlib.sha256(f"{MODEL_ID}\x00x".encode()).digest()


def test_cache_rejects_wrong_shapes(tmp_path):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    with pytest.raises(ValidationError):
        cache.put_many([b"a" * 32], np.zeros((1, DIM + 1), dtype=np.float32))
    with pytest.raises(ValidationError):
        cache.put_many([b"a" * 32, b"b" * 32], np.zeros((1, DIM), dtype=np.float32))
    cache.put_many([b"a" * 32], np.zeros((1, DIM), dtype=np.float32))
    cache.close()
    with pytest.raises(ValidationError):
        EmbeddingCache(tmp_path / "c.sqlite", dim=8).get_many([b"a"])


def test_cache_constructor_does_no_io(tmp_path):
    EmbeddingCache(tmp_path / "sub" / "c.sqlite")
    assert not (tmp_path / "sub").exists()


def test_crash_mid_write_keeps_earlier_entries(tmp_path):
    path = tmp_path / "c.sqlite"
    script = textwrap.dedent(f"""
        import os, numpy as np
        from searchtrace.retriever.embedding.cache import EmbeddingCache
        cache = EmbeddingCache({str(path)!r})
        cache.put_many([bytes([i]) * 32 for i in range(10)], np.ones((10, {DIM}), np.float32))
        db = cache._db()
        db.execute("BEGIN")
        db.executemany("INSERT INTO vec VALUES (?, ?)",
                       [(bytes([100 + i]) * 32, np.zeros({DIM}, np.float32).tobytes()) for i in range(10)])
        os._exit(1)  # die with the second batch uncommitted
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    with EmbeddingCache(path) as cache:
        found, matrix = cache.get_many([bytes([i]) * 32 for i in (0, 9, 100, 109)])
        assert found.tolist() == [True, True, False, False]
        assert (matrix[:2] == 1).all()
        assert len(cache) == 10
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_vector_overwritten_in_place_is_embedded_again(tmp_path, caplog):
    """A row whose bytes changed behind the cache's back (same length) fails its checksum: it is missing,
    not wrong, and deleted."""
    path = tmp_path / "c.sqlite"
    hashes = [text_hash("a"), text_hash("b")]
    vectors = np.eye(2, DIM, dtype=np.float32)
    with EmbeddingCache(path) as cache:
        cache.put_many(hashes, vectors)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE vec SET v = ? WHERE hash = ?", (vectors[1].tobytes(), hashes[0]))  # b's vector under a
    conn.close()
    with EmbeddingCache(path) as cache:
        found, matrix = cache.get_many(hashes)
        assert found.tolist() == [False, True]
        assert np.array_equal(matrix[1], vectors[1]) and not matrix[0].any()
        assert len(cache) == 1
    assert "1 vector(s) failed their checksum or length" in caplog.text


def test_a_vector_of_the_wrong_length_is_embedded_again(tmp_path):
    path = tmp_path / "c.sqlite"
    with EmbeddingCache(path) as cache:
        cache.put_many([text_hash("a")], np.ones((1, DIM), dtype=np.float32))
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE vec SET v = ?, sum = NULL", (b"\0" * 12,))
    conn.close()
    with EmbeddingCache(path) as cache:
        found, _ = cache.get_many([text_hash("a")])
    assert not found.any()


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_a_damaged_cache_file_is_set_aside_and_replaced(tmp_path, caplog, damage):
    path = tmp_path / "c.sqlite"
    with EmbeddingCache(path) as cache:
        cache.put_many([text_hash(str(i)) for i in range(300)], np.ones((300, DIM), dtype=np.float32))
    size = path.stat().st_size
    path.write_bytes(path.read_bytes()[: size // 3] if damage == "truncate" else os.urandom(size))
    with EmbeddingCache(path) as cache:
        found, _ = cache.get_many([text_hash("1"), text_hash("299")])
        assert not found.any()  # nothing trusted from a damaged file
        cache.put_many([text_hash("x")], np.ones((1, DIM), dtype=np.float32))
        assert cache.get_many([text_hash("x")])[0].all()
    assert "is damaged" in caplog.text and str(path) in caplog.text
    assert list(tmp_path.glob("c.sqlite.damaged-*"))


def test_a_cache_from_before_checksums_is_read(tmp_path):
    path = tmp_path / "c.sqlite"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("CREATE TABLE vec (hash BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
        conn.execute("INSERT INTO meta VALUES ('dim', ?)", (str(DIM),))
        conn.execute("INSERT INTO vec VALUES (?, ?)", (text_hash("a"), np.ones(DIM, dtype=np.float32).tobytes()))
    conn.close()
    with EmbeddingCache(path) as cache:
        found, matrix = cache.get_many([text_hash("a")])
    assert found.all() and matrix[0, 0] == 1.0
