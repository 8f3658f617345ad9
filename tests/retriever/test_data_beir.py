"""Tests for the BEIR-layout loaders in ``retriever.data.beir``."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from searchtrace.errors import DataError
from searchtrace.retriever.data.beir import (
    IssueKind,
    Query,
    dataset_fingerprint,
    load_corpus,
    load_dataset,
    load_qrels,
    load_queries,
    load_triples,
)
from searchtrace.retriever.types import Document, Triple

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def jsonl(*records: object) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


@contextmanager
def raises_at(path: Path, line: int | None, fragment: str) -> Iterator[None]:
    """Assert the block raises a DataError at ``path:line`` mentioning ``fragment``."""
    with pytest.raises(DataError) as info:
        yield
    error = info.value
    assert (error.path, error.line) == (str(path), line), str(error)
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(error).startswith(where), str(error)
    assert fragment in str(error), str(error)


# --- corpus ------------------------------------------------------------------


def test_corpus_reads_fields_from_metadata_or_top_level(tmp_path: Path) -> None:
    path = write(
        tmp_path / "corpus.jsonl",
        jsonl(
            {
                "_id": "a",
                "title": "Alpha",
                "text": "first",
                "metadata": {"collection": "c", "tags": ["x", "y"], "url": "u", "timestamp": "2020-01-02"},
            },
            {"_id": "b", "text": "second", "language": "fr", "timestamp": "2021-03-04T05:06:07Z"},
        )
        + "\n",
    )
    assert load_corpus(path) == [
        Document("a", "Alpha", "first", "c", ("x", "y"), "en", "u", "2020-01-02"),
        Document("b", "", "second", language="fr", timestamp="2021-03-04T05:06:07Z"),
    ]


BAD_CORPUS = [
    ('{"_id": "a", "text": "x"}\n{"_id": "b", "text": \n', 2, "invalid JSON"),
    ('["a", "x"]\n', 1, "expected a JSON object"),
    ('{"_id": "a", "text": "x"}\n\n{"text": "y"}\n', 3, "missing '_id'"),
    ('{"_id": 7, "text": "x"}\n', 1, "'_id' must be a non-empty string"),
    ('{"_id": "a", "text": 5}\n', 1, "'text' must be a string"),
    ('{"_id": "a", "title": null, "text": "x"}\n', 1, "'title' must be a string"),
    ('{"_id": "a"}\n', 1, "missing 'text'"),
    ('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n', 2, "duplicate _id 'a' (first on line 1)"),
    ('{"_id": "a", "text": "x", "metadata": ["c"]}\n', 1, "'metadata' must be an object"),
    ('{"_id": "a", "text": "x", "metadata": {"tags": "t"}}\n', 1, "'tags' must be a list of strings"),
    ('{"_id": "a", "text": "x", "timestamp": "last week"}\n', 1, "not ISO 8601"),
    ('{"_id": "a", "text": "x", "url": "u", "metadata": {"url": "v"}}\n', 1, "'url' differs"),
    ('{"_id": "a", "text": "x", "language": 3}\n', 1, "'language' must be a string"),
    ("", 1, "empty file"),
    ("\n  \n", 1, "empty file"),
]


@pytest.mark.parametrize(("content", "line", "fragment"), BAD_CORPUS)
def test_corpus_errors_name_file_and_line(tmp_path: Path, content: str, line: int, fragment: str) -> None:
    path = write(tmp_path / "corpus.jsonl", content)
    with raises_at(path, line, fragment):
        load_corpus(path)


def test_corpus_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "corpus.jsonl", b'{"_id": "a", "text": "x"}\n{"_id": "b", "text": "\xff"}\n')
    with raises_at(path, 2, "invalid JSON"):
        load_corpus(path)


def test_missing_file_is_a_data_error(tmp_path: Path) -> None:
    with raises_at(tmp_path / "nope.jsonl", None, "cannot read file"):
        load_corpus(tmp_path / "nope.jsonl")


# --- queries -----------------------------------------------------------------


def test_queries_metadata_is_read_only_and_category_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path / "queries.jsonl",
        jsonl({"_id": "q1", "text": "where", "metadata": {"category": "paraphrase"}}, {"_id": "q2", "text": "why"}),
    )
    q1, q2 = load_queries(path)
    assert (q1.id, q1.text, q1.category, q2.category) == ("q1", "where", "paraphrase", "")
    with pytest.raises(TypeError):
        q1.metadata["category"] = "x"  # type: ignore[index]
    assert hash(q1) == hash(Query("q1", "where", {"category": "other"}))
    assert q1 == Query("q1", "where", {"category": "paraphrase"})


def test_query_copies_its_metadata() -> None:
    meta = {"category": "a"}
    query = Query("q", "t", meta)
    meta["category"] = "b"
    assert query.category == "a"


BAD_QUERIES = [
    ('{"_id": "q", "text": "  "}\n', 1, "empty query 'text'"),
    ('{"_id": "q"}\n', 1, "missing 'text'"),
    ('{"_id": "q", "text": "t"}\n{"_id": "r", "text": "t", "metadata": []}\n', 2, "'metadata' must be an object"),
    ('{"_id": "q", "text": "t", "metadata": {"category": 1}}\n', 1, "'metadata.category' must be a string"),
    ('{"_id": "q", "text": "t"}\n{"_id": "q", "text": "u"}\n', 2, "duplicate _id 'q'"),
    ('{"text": "t"}\n', 1, "missing '_id'"),
    ("", 1, "empty file"),
]


@pytest.mark.parametrize(("content", "line", "fragment"), BAD_QUERIES)
def test_query_errors_name_file_and_line(tmp_path: Path, content: str, line: int, fragment: str) -> None:
    path = write(tmp_path / "queries.jsonl", content)
    with raises_at(path, line, fragment):
        load_queries(path)


# --- qrels -------------------------------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("header", [True, False])
def test_qrels_with_or_without_header(tmp_path: Path, newline: str, header: bool) -> None:
    rows = ["q1\td1\t2", "q1\td2\t0", "q2\td1\t1"]
    lines = (["query-id\tcorpus-id\tscore"] if header else []) + rows
    path = write(tmp_path / "test.tsv", newline.join(lines) + newline)
    assert load_qrels(path) == {"q1": {"d1": 2, "d2": 0}, "q2": {"d1": 1}}


BAD_QRELS = [
    ("query-id\tcorpus-id\tscore\nq1\td1\n", 2, "expected 3 tab-separated fields"),
    ("q1\td1\t1\nq1 d2 1\n", 2, "got 1"),
    ("q1\td1\t1.5\n", 1, "score must be an integer, got '1.5'"),
    ("q1\td1\t1\n\nq2\t\t1\n", 3, "empty query-id or corpus-id"),
    ("q1\td1\t1\nq1\td1\t2\n", 2, "duplicate pair ('q1', 'd1') (first on line 1)"),
    ("q1\td1\t1\nquery-id\tcorpus-id\tscore\n", 2, "score must be an integer"),
    ("query-id\tcorpus-id\tscore\n", 1, "empty file"),
    ("", 1, "empty file"),
]


@pytest.mark.parametrize(("content", "line", "fragment"), BAD_QRELS)
def test_qrels_errors_name_file_and_line(tmp_path: Path, content: str, line: int, fragment: str) -> None:
    path = write(tmp_path / "test.tsv", content)
    with raises_at(path, line, fragment):
        load_qrels(path)


# --- triples -----------------------------------------------------------------


def test_triples_and_merged_aliases(tmp_path: Path) -> None:
    path = write(
        tmp_path / "triples.jsonl",
        jsonl(
            {"_id": "a", "entities": ["X", "Y"], "triples": [["X", "near", "Y"]], "aliases": {"X": ["ex", "x1"]}},
            {"_id": "b", "triples": [], "aliases": {"X": ["x1", "x2"], "Y": ["why"]}},
        ),
    )
    triples, aliases = load_triples(path)
    assert triples == [Triple("X", "near", "Y", "a")]
    assert aliases == {"X": ("ex", "x1", "x2"), "Y": ("why",)}


BAD_TRIPLES = [
    ('{"_id": "a", "triples": [["s", "r", "o"], ["s", "r"]]}\n', 1, "triples[1] must be 3 non-empty strings"),
    ('{"_id": "a", "triples": []}\n{"_id": "b", "triples": [["s", " ", "o"]]}\n', 2, "triples[0]"),
    ('{"_id": "a", "triples": [["s", "r", 3]]}\n', 1, "triples[0]"),
    ('{"_id": "a", "triples": "s r o"}\n', 1, "'triples' must be a list"),
    ('{"_id": "a"}\n', 1, "'triples' must be a list"),
    ('{"_id": "a", "triples": [], "aliases": {"X": "ex"}}\n', 1, "aliases['X']"),
    ('{"_id": "a", "triples": []}\n{"_id": "a", "triples": []}\n', 2, "duplicate _id"),
]


@pytest.mark.parametrize(("content", "line", "fragment"), BAD_TRIPLES)
def test_triple_errors_name_file_line_and_index(tmp_path: Path, content: str, line: int, fragment: str) -> None:
    path = write(tmp_path / "triples.jsonl", content)
    with raises_at(path, line, fragment):
        load_triples(path)


def test_triples_for_unknown_documents_are_rejected(tmp_path: Path) -> None:
    path = write(tmp_path / "triples.jsonl", jsonl({"_id": "a", "triples": []}, {"_id": "zz", "triples": []}))
    with raises_at(path, 2, "'zz' is not in the corpus"):
        load_triples(path, known_ids={"a"})


# --- dataset -----------------------------------------------------------------


def make_dataset(root: Path, *, splits: dict[str, str] | None = None, triples: bool = True) -> Path:
    write(
        root / "corpus.jsonl",
        jsonl({"_id": "d1", "title": "One", "text": "alpha"}, {"_id": "d2", "title": "Two", "text": "beta"}),
    )
    write(
        root / "queries.jsonl",
        jsonl(
            {"_id": "q1", "text": "alpha?"},
            {"_id": "q2", "text": "beta?"},
            {"_id": "q3", "text": "gamma?", "metadata": {"category": "unanswerable"}},
            {"_id": "q4", "text": "delta?", "metadata": {"category": "unanswerable", "split": "dev"}},
        ),
    )
    for name, text in (splits if splits is not None else {"test": "q1\td1\t2\n"}).items():
        write(root / "qrels" / f"{name}.tsv", text)
    if triples:
        write(root / "triples.jsonl", jsonl({"_id": "d1", "triples": [["One", "is", "alpha"]], "aliases": {"One": ["1"]}}))
    return root


def test_load_dataset_prefers_the_test_split(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "tiny", splits={"a": "q2\td2\t1\n", "test": "q1\td1\t2\n"})
    data = load_dataset(root)
    assert (data.name, data.split, data.qrels) == ("tiny", "test", {"q1": {"d1": 2}})
    assert [d.id for d in data.docs] == ["d1", "d2"]
    assert data.has_triples and data.triples == (Triple("One", "is", "alpha", "d1"),)
    assert data.aliases == {"One": ("1",)}
    assert data.report.ok and data.report.messages() == []
    assert [q.id for q in data.queries_for_split()] == ["q1", "q3"]


def test_load_dataset_split_fallback_and_choice(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "x", splits={"train": "q2\td2\t1\n", "dev": "q1\td1\t1\n"})
    assert load_dataset(root).split == "dev"
    train = load_dataset(root, "train")
    assert (train.split, train.qrels) == ("train", {"q2": {"d2": 1}})
    assert [q.id for q in load_dataset(root).queries_for_split()] == ["q1", "q3", "q4"]
    for bad in ("test", "../x", ""):
        with raises_at(root / "qrels", None, "available: dev, train"):
            load_dataset(root, bad)


def test_load_dataset_without_qrels_or_triples(tmp_path: Path) -> None:
    data = load_dataset(make_dataset(tmp_path / "bare", splits={}, triples=False))
    assert (data.split, data.qrels, data.has_triples, data.aliases) == (None, {}, False, {})
    with raises_at(tmp_path / "bare" / "qrels", None, "available: none"):
        load_dataset(tmp_path / "bare", "test")


def test_qrels_rows_with_unknown_ids_are_reported_and_dropped(tmp_path: Path) -> None:
    qrels = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq9\td1\t1\nq2\tdx\t1\n\nq8\tdy\t0\n"
    root = make_dataset(tmp_path / "r", splits={"test": qrels})
    data = load_dataset(root)
    path = str(root / "qrels" / "test.tsv")
    assert data.qrels == {"q1": {"d1": 2}}
    assert [(i.line, i.kind) for i in data.report.issues] == [
        (3, IssueKind.UNKNOWN_QUERY),
        (4, IssueKind.UNKNOWN_DOC),
        (6, IssueKind.UNKNOWN_QUERY),
        (6, IssueKind.UNKNOWN_DOC),
    ]
    assert data.report.messages()[:2] == [
        f"{path}:3: unknown query id 'q9'",
        f"{path}:4: unknown corpus id 'dx' (query 'q2')",
    ]
    assert not data.report.ok


def test_load_dataset_rejects_triples_of_unknown_docs(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "t")
    write(root / "triples.jsonl", jsonl({"_id": "d3", "triples": []}))
    with raises_at(root / "triples.jsonl", 1, "'d3' is not in the corpus"):
        load_dataset(root)


# --- fingerprint -------------------------------------------------------------


def test_fingerprint_is_content_addressed(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "one")
    first = dataset_fingerprint(root)
    assert len(first) == 64 and first == dataset_fingerprint(root)
    moved = root.rename(tmp_path / "renamed")
    assert dataset_fingerprint(moved) == first
    write(moved / "queries.jsonl", jsonl({"_id": "q", "text": "other"}))
    assert dataset_fingerprint(moved) == first  # queries are not index inputs
    copy = Path(shutil.copytree(moved, tmp_path / "copy"))
    write(copy / "triples.jsonl", jsonl({"_id": "d2", "triples": []}))
    assert dataset_fingerprint(copy) != first
    (copy / "triples.jsonl").unlink()
    assert dataset_fingerprint(copy) == hashlib.sha256((copy / "corpus.jsonl").read_bytes()).hexdigest()


def test_fingerprint_streams_large_files(tmp_path: Path) -> None:
    body = b'{"_id": "d", "text": "' + b"x" * (3 << 20) + b'"}\n'
    write(tmp_path / "big" / "corpus.jsonl", body)
    assert dataset_fingerprint(tmp_path / "big") == hashlib.sha256(body).hexdigest()


# --- shared benchmark data ---------------------------------------------------


def shared(name: str) -> Path:
    root = SHARED / name
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    return root


@pytest.mark.shared_data
def test_scifact_loads_and_matches_its_readme() -> None:
    data = load_dataset(shared("scifact"))
    assert (len(data.docs), len(data.queries), data.split) == (5183, 300, "test")
    assert sum(len(v) for v in data.qrels.values()) == 339
    assert len(data.queries_for_split()) == 300
    assert data.report.ok and not data.has_triples
    assert dataset_fingerprint(data.root) == "dec31c8182f3d744c7d2c09423756fd1d17cbef75808db13ba01cc0aab4d1ac6"


@pytest.mark.shared_data
def test_musique_loads_with_every_triple() -> None:
    data = load_dataset(shared("musique"))
    assert (len(data.docs), len(data.queries), data.split) == (1890, 50, "dev")
    assert len(data.queries_for_split()) == 50
    assert data.report.ok and data.has_triples
    assert len(data.triples) == 17234  # the README's count: nothing is irregular
    assert all(q.metadata["answer"] for q in data.queries)
