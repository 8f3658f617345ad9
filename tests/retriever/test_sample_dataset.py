"""Checks every stated property of ``datasets/sample`` on the files themselves."""

from __future__ import annotations

import collections
import importlib.util
import re
import sys
from datetime import date
from pathlib import Path

import pytest

from searchtrace.retriever.data.beir import Dataset, load_dataset, load_qrels

ROOT = Path(__file__).resolve().parents[2] / "datasets" / "sample"
CATEGORIES = {"keyword-exact", "paraphrase", "multi-hop", "unanswerable"}
COLLECTIONS = {"gazetteer", "biographies", "chronicles", "guild-records", "ship-registry", "almanac"}
BASE_URL = "https://sample.searchtrace.invalid/doc/"

STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does for from had has have he her his
    how i in into is it its may might must not of on or she should so such than that the their them then
    there these they this those to was were what when where which who whom whose why will with would each
    every any all some one two many much more most other own same very just only also about after before
    over under between through during until upon yet ever both few our your us we you me my up out off
    once first no never across down""".split()
)
SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "ied", "ed", "es", "s", "ly")


def stem(word: str) -> str:
    """Strip one common suffix, then a final ``e`` (deliberately aggressive)."""
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def salient(text: str) -> set[str]:
    return {stem(t) for t in tokens(text) if len(t) > 1 and t not in STOPWORDS}


@pytest.fixture(scope="module")
def test_split() -> Dataset:
    return load_dataset(ROOT, "test")


@pytest.fixture(scope="module")
def dev_split() -> Dataset:
    return load_dataset(ROOT, "dev")


@pytest.fixture(scope="module")
def text_of(test_split: Dataset) -> dict[str, str]:
    return {d.id: d.content for d in test_split.docs}


@pytest.fixture(scope="module")
def all_qrels() -> dict[str, dict[str, int]]:
    test, dev = load_qrels(ROOT / "qrels" / "test.tsv"), load_qrels(ROOT / "qrels" / "dev.tsv")
    assert not set(test) & set(dev), "a query is judged in both splits"
    return {**test, **dev}


def test_files_and_readme_exist() -> None:
    for name in ("corpus.jsonl", "queries.jsonl", "triples.jsonl", "qrels/test.tsv", "qrels/dev.tsv", "README.md"):
        assert (ROOT / name).is_file(), name


def test_build_script_reproduces_the_committed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("build_sample", ROOT / "build_sample.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "build_sample", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    module.build(tmp_path)
    for name in ("corpus.jsonl", "queries.jsonl", "triples.jsonl", "qrels/test.tsv", "qrels/dev.tsv"):
        assert (tmp_path / name).read_bytes() == (ROOT / name).read_bytes(), f"{name} is stale: rerun the script"


def test_passages(test_split: Dataset) -> None:
    docs = test_split.docs
    assert len(docs) >= 200 and test_split.report.ok and test_split.name == "sample"
    years = set()
    for doc in docs:
        assert doc.title and 40 <= len(doc.text.split()) <= 120, doc.id
        assert doc.collection in COLLECTIONS and 2 <= len(doc.tags) <= 4, doc.id
        assert doc.language == "en" and doc.url == BASE_URL + doc.id, doc.id
        years.add(date.fromisoformat(doc.timestamp).year)
    assert len(years) >= 4
    assert {d.collection for d in docs} == COLLECTIONS
    assert len({d.text for d in docs}) == len(docs)


def test_query_counts_and_categories(test_split: Dataset, dev_split: Dataset) -> None:
    queries = test_split.queries
    for q in queries:
        assert q.category in CATEGORIES and q.metadata["split"] in ("test", "dev"), q.id
        assert q.metadata["answerable"] is (q.category != "unanswerable"), q.id
    test_queries = test_split.queries_for_split()
    dev_queries = dev_split.queries_for_split()
    assert {q.metadata["split"] for q in test_queries} == {"test"}
    assert {q.metadata["split"] for q in dev_queries} == {"dev"}
    assert len(test_queries) + len(dev_queries) == len(queries)
    assert not {q.text for q in test_queries} & {q.text for q in dev_queries}
    counts = collections.Counter(q.category for q in test_queries)
    assert len(test_queries) >= 80
    assert counts["multi-hop"] >= 20 and counts["unanswerable"] >= 10
    assert counts["keyword-exact"] >= 10 and counts["paraphrase"] >= 10
    assert len(dev_queries) >= 30 and set(collections.Counter(q.category for q in dev_queries)) == CATEGORIES


def test_labels(test_split: Dataset, all_qrels: dict[str, dict[str, int]], text_of: dict[str, str]) -> None:
    grades = [g for judged in all_qrels.values() for g in judged.values()]
    assert set(grades) == {0, 1, 2}
    for query in test_split.queries:
        judged = all_qrels.get(query.id, {})
        assert set(judged) <= set(text_of), query.id
        if query.category == "unanswerable":
            assert not judged, f"{query.id} is unanswerable but has qrels rows"
        else:
            assert 2 in judged.values(), f"{query.id} has no grade-2 passage"


def test_keyword_exact_queries_hold_a_rare_token(test_split, all_qrels, text_of) -> None:
    frequency = collections.Counter(t for text in text_of.values() for t in set(tokens(text)))
    for query in (q for q in test_split.queries if q.category == "keyword-exact"):
        gold = [d for d, g in all_qrels[query.id].items() if g == 2]
        rare = [t for t in tokens(query.text) if 1 <= frequency[t] <= 2 and any(t in tokens(text_of[d]) for d in gold)]
        assert rare, f"{query.id} has no token found in only one or two passages"


def test_paraphrase_queries_barely_overlap_their_gold(test_split, all_qrels, text_of) -> None:
    for query in (q for q in test_split.queries if q.category == "paraphrase"):
        gold = [d for d, g in all_qrels[query.id].items() if g == 2]
        shared = min(len(salient(query.text) & salient(text_of[d])) for d in gold)
        assert shared <= 2, f"{query.id} shares {shared} salient words with its closest gold"


def canonical(dataset: Dataset) -> dict[str, str]:
    """Every lowercased name or alias -> lowercased canonical name."""
    names = {n.lower(): n.lower() for t in dataset.triples for n in (t.subject, t.object)}
    for name, aliases in dataset.aliases.items():
        for alias in aliases:
            names[alias.lower()] = name.lower()
        names.setdefault(name.lower(), name.lower())
    return names


def named_in(question: str, names: dict[str, str]) -> set[str]:
    lowered = question.lower()
    return {canon for name, canon in names.items() if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", lowered)}


def test_multi_hop_second_hop_is_lexically_hidden_but_linked(test_split, all_qrels, text_of) -> None:
    names = canonical(test_split)
    by_doc = collections.defaultdict(list)
    for triple in test_split.triples:
        by_doc[triple.doc_id].append((names[triple.subject.lower()], names[triple.object.lower()]))
    for query in (q for q in test_split.queries if q.category == "multi-hop"):
        first, second = query.metadata["hops"]
        judged = all_qrels[query.id]
        assert judged[second] == 2 and judged[first] >= 1, query.id
        asked = salient(query.text)
        assert not asked & salient(text_of[second]), f"{query.id}: second hop shares {asked & salient(text_of[second])}"
        assert asked & salient(text_of[first]), f"{query.id}: first hop shares no word with the question"
        seeds = named_in(query.text, names)
        subjects = {s for s, _ in by_doc[second]}
        bridges = {o for s, o in by_doc[first] if s in seeds} | {s for s, o in by_doc[first] if o in seeds}
        assert bridges & subjects, f"{query.id}: no triple of {first} links {seeds} to a subject of {second}"


def test_triples_name_entities_as_written(test_split: Dataset, text_of: dict[str, str]) -> None:
    spelled: collections.defaultdict[str, set[str]] = collections.defaultdict(set)
    for name, aliases in test_split.aliases.items():
        spelled[name] |= {name, *aliases}
        for alias in aliases:
            spelled[alias] |= {name, alias}
    assert {d.id for d in test_split.docs} == {t.doc_id for t in test_split.triples}
    for triple in test_split.triples:
        text = text_of[triple.doc_id].lower()
        for entity in (triple.subject, triple.object):
            forms = spelled[entity] | {entity}
            assert any(form.lower() in text for form in forms), f"{triple.doc_id}: {entity!r} not in its passage"
    assert len(test_split.aliases) >= 3
