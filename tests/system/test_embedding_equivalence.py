"""The ONNX Runtime embedder against sentence-transformers (torch), the independent implementation.

Every vector must be within cosine 0.99999 of the reference's: on every text the
sample dataset embeds (passages, their titles and sentences, queries), on texts
long enough to be truncated, and on a few hundred SciFact and MuSiQue texts
when ``../shared/datasets`` is there. Needs the ``dev`` extra (torch).
"""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from searchtrace.retriever.config.model import DenseConfig
from searchtrace.retriever.index.parts import passage_parts

pytestmark = pytest.mark.slow

SHARED_DATASETS = Path(__file__).resolve().parents[3] / "shared" / "datasets"

TOLERANCE = 0.99999
"""The least cosine between the two runtimes' vectors of one text (the issue's bar)."""


@pytest.fixture(scope="module")
def reference():
    pytest.importorskip("sentence_transformers")
    from searchtrace.retriever.embedding.torch_reference import TorchEmbedder

    embedder = TorchEmbedder()
    embedder.load()
    return embedder


def _texts(root: Path, docs: int, queries: int) -> list[str]:
    """The first ``docs`` passages with their titles and sentences, and the first ``queries`` queries."""
    out: list[str] = []
    with (root / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in islice(f, docs):
            doc = json.loads(line)
            title, text = doc.get("title", ""), doc.get("text", "")
            out += [f"{title}\n{text}" if title else text, *passage_parts(title, text, DenseConfig().max_parts)]
    with (root / "queries.jsonl").open(encoding="utf-8") as f:
        out += [json.loads(line)["text"] for line in islice(f, queries)]
    return out


def _long(texts: list[str], n: int) -> list[str]:
    """``n`` texts made of many passages: past the model's 256 word pieces, so truncation decides them."""
    joined = " ".join(texts)
    words = joined.split()
    return [" ".join(words[i * 97:i * 97 + 400 + 50 * i]) for i in range(n)]


def _assert_equivalent(model, reference, texts: list[str]) -> np.ndarray:
    ours, theirs = model.encode_documents(texts, batch_size=32), reference.encode_documents(texts, batch_size=32)
    cos = (ours * theirs).sum(axis=1)
    worst = int(np.argmin(cos))
    assert cos[worst] >= TOLERANCE, f"cosine {cos[worst]:.8f} on text {worst}: {texts[worst][:80]!r}"
    return cos


def test_sample_texts_match_sentence_transformers(model, reference, sample_dataset):
    docs = sample_dataset.docs
    texts = [d.content for d in docs] + [q.text for q in sample_dataset.queries]
    parts = [p for d in docs for p in passage_parts(d.title, d.text, DenseConfig().max_parts)]
    texts += parts[::4]  # every passage and query; a quarter of the 900 titles and sentences (CI time)
    cos = _assert_equivalent(model, reference, texts)
    assert len(cos) > 500


def test_truncated_texts_match_sentence_transformers(model, reference, sample_dataset):
    texts = _long([d.content for d in sample_dataset.docs], 8)
    assert model.encode_documents(texts[:1]).shape == (1, 384)
    assert reference.load().tokenize(texts[:1])["input_ids"].shape[1] == 256  # truncated, as it should be
    _assert_equivalent(model, reference, texts)


def test_single_queries_match_sentence_transformers(model, reference, sample_dataset):
    for q in sample_dataset.queries[:10]:
        assert float(model.encode_query(q.text) @ reference.encode_query(q.text)) >= TOLERANCE


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["scifact", "musique"])
def test_shared_dataset_texts_match_sentence_transformers(model, reference, name):
    root = SHARED_DATASETS / name
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    texts = _texts(root, docs=20 if name == "scifact" else 25, queries=50)
    texts += _long(texts, 10)
    cos = _assert_equivalent(model, reference, texts)
    assert len(cos) >= 180
