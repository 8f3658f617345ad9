"""Content-addressed indexing: reuse while unchanged, embed only new texts."""

import json
import shutil

import pytest

from searchtrace.retriever.config.resolve import resolve_config
from searchtrace.retriever.data.beir import load_dataset
from searchtrace.retriever.index import build_index, open_index

pytestmark = pytest.mark.slow

DOCS = [
    {"_id": "d1", "title": "Tide mills", "text": "A tide mill grinds grain with water held back at high tide.",
     "metadata": {"collection": "mills", "tags": ["water"], "timestamp": "2020-01-01T00:00:00"}},
    {"_id": "d2", "title": "Windmills", "text": "Windmills turn sails to grind grain when the wind blows."},
    {"_id": "d3", "title": "Salt pans", "text": "Sea water evaporates in shallow pans and leaves salt behind."},
]


class CountingEmbedder:
    """The real embedder, counting how many texts it was asked to embed."""

    def __init__(self, inner):
        self.inner, self.embedded = inner, 0
        self.model_id, self.dim = inner.model_id, inner.dim

    def encode_documents(self, texts, batch_size=64, progress=False):
        self.embedded += len(texts)
        return self.inner.encode_documents(texts, batch_size=batch_size, progress=progress)

    def encode_query(self, text):
        return self.inner.encode_query(text)


def write(root, docs, triples=None):
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "grain mills"}) + "\n")
    (root / "qrels").mkdir(exist_ok=True)
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\n")
    if triples:
        (root / "triples.jsonl").write_text("".join(json.dumps(t) + "\n" for t in triples))
    return root


def test_unchanged_dataset_reuses_index_and_changed_corpus_embeds_only_new_texts(tmp_path, model):
    config = resolve_config(home=tmp_path / "home", environ={})
    embedder = CountingEmbedder(model)
    data = write(tmp_path / "mills", DOCS)
    first = build_index(load_dataset(data), config, embedder, progress=False)
    assert embedder.embedded == 9  # 3 passages, then their parts: 3 titles and 3 one-sentence texts
    manifest = json.loads((first / "manifest.json").read_text())
    assert manifest["n_docs"] == 3 and manifest["embedded_texts"] == 9 and manifest["graph_backend"] == "none"
    assert manifest["parts"] == 6

    again = build_index(load_dataset(data), config, embedder, progress=False)
    assert again == first and embedder.embedded == 9

    moved = shutil.copytree(data, tmp_path / "elsewhere" / "mills")
    assert build_index(load_dataset(moved), config, embedder, progress=False) == first

    write(data, DOCS + [{"_id": "d4", "title": "Watermills", "text": "A wheel in a stream drives the stones."}])
    changed = build_index(load_dataset(data), config, embedder, progress=False)
    assert changed != first
    assert embedder.embedded == 12  # only the new passage, its title and its sentence
    assert json.loads((changed / "manifest.json").read_text())["embedded_texts"] == 3


def test_index_without_parts_embeds_passages_only(tmp_path, model):
    config = resolve_config(home=tmp_path / "home", environ={}, search={"dense": {"parts": False}})
    embedder = CountingEmbedder(model)
    data = write(tmp_path / "mills", DOCS)
    path = build_index(load_dataset(data), config, embedder, progress=False)
    assert embedder.embedded == 3 and json.loads((path / "manifest.json").read_text())["parts"] == 0
    with_parts = resolve_config(home=tmp_path / "home", environ={})
    assert build_index(load_dataset(data), with_parts, embedder, progress=False) != path  # another index key


def test_index_payload_and_graph(tmp_path, model):
    config = resolve_config(home=tmp_path / "home", environ={})
    data = write(tmp_path / "mills", DOCS, [{"_id": "d1", "triples": [["tide mill", "grinds", "grain"]]}])
    index = open_index(build_index(load_dataset(data), config, model, progress=False), config)
    try:
        assert index.manifest.graph_backend == "memory" and index.manifest.n_triples == 1
        assert index.store.count() == 3
        (_, payload, _), = index.store.retrieve([index.point_of["d1"]])
        assert payload == {"id": "d1", "title": "Tide mills", "text": DOCS[0]["text"], "collection": "mills",
                           "tags": ["water"], "language": "en", "url": "", "timestamp": "2020-01-01T00:00:00"}
        assert [e.name for e in index.graph.match_entities(["tide mill"])] == ["tide mill"]
    finally:
        index.close()
