"""Tests for the seeded synthetic dataset generator ``retriever.data.synth``."""

from __future__ import annotations

import re
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchtrace.retriever.data import synth
from searchtrace.retriever.data.beir import load_dataset
from searchtrace.retriever.data.synth import GROUP_SIZE, synthesize

FILES = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "triples.jsonl")
PSEUDO_WORD = re.compile(r"(?:[bdkmnprtz][aiou])+")


def tokens(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def check_labels_are_exact(root: Path) -> None:
    """Each query's 10-letter words occur only in its grade-2 doc, its 8-letter word only in its judged docs."""
    data = load_dataset(root)
    assert data.report.ok and data.split == "test" and data.has_triples
    where: dict[str, set[str]] = defaultdict(set)
    for doc in data.docs:
        for token in tokens(doc.content):
            where[token].add(doc.id)
    for query in data.queries:
        words = tokens(query.text)
        distinct = [w for w in words if len(w) == 10 and PSEUDO_WORD.fullmatch(w)]
        group = [w for w in words if len(w) == 8 and PSEUDO_WORD.fullmatch(w)]
        judged = data.qrels[query.id]
        assert len(distinct) == 2 and len(group) == 1
        assert {d for d, g in judged.items() if g == 2} == {query.metadata["target"]}
        for word in distinct:
            assert where[word] == {query.metadata["target"]}
        assert where[group[0]] == set(judged)
        assert set(judged.values()) <= {1, 2} and 1 <= len(judged) <= GROUP_SIZE


def test_same_seed_gives_byte_identical_output(tmp_path: Path) -> None:
    a = synthesize(tmp_path / "a", 50, seed=7, n_queries=12, progress=False)
    synthesize(tmp_path / "b", 50, seed=7, n_queries=12, progress=False)
    c = synthesize(tmp_path / "c", 50, seed=8, n_queries=12, progress=False)
    assert (a.n_docs, a.n_queries, a.n_triples, a.n_qrels) == (50, 12, 100, 12 * GROUP_SIZE)
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "corpus.jsonl").read_bytes() != (tmp_path / "c" / "corpus.jsonl").read_bytes()
    assert c.n_docs == 50


def test_labels_are_exact_and_dataset_loads(tmp_path: Path) -> None:
    summary = synthesize(tmp_path / "s", 203, seed=1, progress=False)
    assert summary.n_queries == 203  # default min(n_docs, 1000)
    check_labels_are_exact(tmp_path / "s")
    data = load_dataset(tmp_path / "s")
    assert len(data.docs) == 203 and len(data.queries_for_split()) == 203
    doc = data.docs[0]
    assert doc.language == "en" and len(doc.tags) == 2 and doc.url.endswith(doc.id) and doc.timestamp


def test_triples_link_people_across_documents(tmp_path: Path) -> None:
    synthesize(tmp_path / "s", 40, seed=3, progress=False)
    data = load_dataset(tmp_path / "s")
    text = {d.id: d.content for d in data.docs}
    subjects = defaultdict(set)
    for t in data.triples:
        subjects[t.subject].add(t.doc_id)
        assert t.subject in text[t.doc_id] and t.object in text[t.doc_id]
    links = [t for t in data.triples if t.relation != "member of"]
    assert len(links) == 40
    for t in links:
        (other,) = subjects[t.object]  # each person is the subject of exactly one document
        assert other != t.doc_id


def test_single_document(tmp_path: Path) -> None:
    summary = synthesize(tmp_path / "one", 1, seed=0, progress=False)
    assert (summary.n_docs, summary.n_queries, summary.n_triples, summary.n_qrels) == (1, 1, 1, 1)
    check_labels_are_exact(tmp_path / "one")


@pytest.mark.parametrize("n_docs", [0, -5, 1_000_001, 2.0, "10", True, None])
def test_n_docs_out_of_range(tmp_path: Path, n_docs: object) -> None:
    with pytest.raises(ValueError, match=r"n_docs must be an integer from 1 to 1,000,000"):
        synthesize(tmp_path, n_docs, seed=1)  # type: ignore[arg-type]
    assert not (tmp_path / "corpus.jsonl").exists()


@pytest.mark.parametrize("n_queries", [0, 11, 1.5])
def test_n_queries_out_of_range(tmp_path: Path, n_queries: object) -> None:
    with pytest.raises(ValueError, match=r"n_queries must be an integer from 1 to 10,"):
        synthesize(tmp_path, 10, seed=1, n_queries=n_queries)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", ["1", 1.0, False])
def test_seed_must_be_an_integer(tmp_path: Path, seed: object) -> None:
    with pytest.raises(ValueError, match="seed must be an integer"):
        synthesize(tmp_path, 10, seed=seed)  # type: ignore[arg-type]


def test_progress_bar_can_be_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    synthesize(tmp_path / "p", 20, seed=1, progress=True)
    assert "synth docs" in capsys.readouterr().err
    synthesize(tmp_path / "q", 20, seed=1)
    assert capsys.readouterr().err == ""


def test_filler_words_are_never_pseudo_words() -> None:
    for word in synth._NOUNS + synth._ADJECTIVES + synth._VERBS:
        assert not PSEUDO_WORD.fullmatch(word), word


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(-(2**63), 2**63), syllables=st.integers(1, 2))
def test_pseudo_words_are_a_bijection(seed: int, syllables: int) -> None:
    words = synth._Words(seed, syllables)
    produced = {words(i) for i in range(words.size)}
    assert len(produced) == words.size
    assert all(len(w) == 2 * syllables and PSEUDO_WORD.fullmatch(w) for w in produced)


@settings(max_examples=15, deadline=None)
@given(n_docs=st.integers(1, 60), seed=st.integers(0, 2**32), data=st.data())
def test_labels_are_exact_for_any_size_and_seed(n_docs: int, seed: int, data: st.DataObject) -> None:
    n_queries = data.draw(st.integers(1, n_docs))
    with tempfile.TemporaryDirectory() as folder:
        summary = synthesize(folder, n_docs, seed, n_queries, progress=False)
        assert summary.n_queries == n_queries
        check_labels_are_exact(Path(folder))
