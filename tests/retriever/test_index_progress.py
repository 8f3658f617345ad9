"""An index build shows one progress bar over every text it embeds, documents and part texts, with an estimate.

A cold SciFact eval showed four bars in turn (5,183 documents, then 19,490, 20,054 and 10,365 part texts,
one with a 52-minute estimate of a single chunk) and no overall estimate (issue 36).
"""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np

from searchtrace.retriever.config.resolve import resolve_config
from searchtrace.retriever.data.beir import load_dataset
from searchtrace.retriever.index import build_index
from searchtrace.retriever.index.build import WRITE_CHUNK
from searchtrace.retriever.index.parts import passage_parts


class HashEmbedder:
    """Vectors from the texts' hashes: no model, the build's every other step real."""

    model_id, dim = "test/hash-embedder", 384  # the embedding cache's width

    def encode_documents(self, texts, batch_size=64, progress=False):
        assert not progress  # the build's one bar counts; a call's own bar would be a second
        return np.stack([self._vector(t) for t in texts]) if texts else np.empty((0, self.dim), np.float32)

    def encode_query(self, text):
        return self._vector(text)

    def _vector(self, text):
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return vector / np.linalg.norm(vector)


def _dataset(root, n):
    root.mkdir()
    docs = [{"_id": f"d{i}", "title": f"Mill {i}",
             "text": f"Mill {i} grinds grain at high tide. Its wheel {i} turns twice an hour."} for i in range(n)]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    return root


def test_one_bar_over_documents_and_part_texts_with_the_time_left(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SEARCHTRACE_PROGRESS_SECONDS", "0")  # a line at every step
    n = WRITE_CHUNK + 300  # two chunks of part texts: two embedding calls that each had a bar of their own
    data = load_dataset(_dataset(tmp_path / "mills", n), need_queries=False)
    config = resolve_config(home=tmp_path / "home", environ={})
    total = n + sum(len(passage_parts(d.title, d.text, config.dense.max_parts)) for d in data.docs)
    build_index(data, config, HashEmbedder(), progress=False)  # not a terminal: plain lines
    lines = capsys.readouterr().err.splitlines()
    assert lines and not [line for line in lines if not line.startswith("embedding: ")], lines
    counts = [re.match(r"embedding: ([\d,]+)/([\d,]+) texts", line) for line in lines]
    assert all(c is not None for c in counts), lines
    assert {int(c[2].replace(",", "")) for c in counts if c} == {total}  # one total: documents and parts
    done = [int(c[1].replace(",", "")) for c in counts if c]
    assert done == sorted(done) and done[-1] == total and len(done) >= 4
    for line, count in zip(lines, done):  # an estimate on every line until all is done
        assert bool(re.search(r", about \d+ (s|min|h \d+ min) left$", line)) == (count < total), line
    assert lines[-1].endswith(", done")
