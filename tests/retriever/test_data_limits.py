"""The limits of :mod:`searchtrace.limits` on a dataset's files: a line or an id past its limit is
refused naming the file and the line, without the line read whole, by the loaders and by
``datasets check`` and ``index`` (``eval``'s is in ``tests/evals/test_eval_limits.py``)."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.errors import DataError, ExitCode
from searchtrace.limits import MAX_CORPUS_LINE_BYTES, MAX_ID_BYTES, MAX_QUERY_LINE_BYTES, MAX_TREC_LINE_BYTES
from searchtrace.retriever.data.beir import load_corpus, load_qrels, load_queries, load_triples

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def _jsonl(path: Path, records: list[dict], at: int | None = None, giant: bytes = b"") -> Path:
    """``records`` as JSON lines, with ``giant`` as line ``at`` (1-based) when given."""
    lines = [json.dumps(r).encode() + b"\n" for r in records]
    if at is not None:
        lines.insert(at - 1, giant + b"\n")
    path.write_bytes(b"".join(lines))
    return path


def _giant_record(size: int, key: str = "text") -> bytes:
    return b'{"_id": "giant", "' + key.encode() + b'": "' + b"x" * size + b'"}'


def _refused(call, path: Path, line: int, fragment: str) -> None:
    with pytest.raises(DataError) as info:
        call(path)
    assert (info.value.path, info.value.line) == (str(path), line), str(info.value)
    assert fragment in str(info.value), str(info.value)


def test_a_giant_corpus_line_is_refused_without_being_read_whole(tmp_path):
    """A 50 MB line cost 7.2 GB to index; now reading stops at the limit, and says where."""
    docs = [{"_id": f"d{i}", "text": "a short document"} for i in range(5)]
    path = _jsonl(tmp_path / "corpus.jsonl", docs, at=3, giant=_giant_record(3 * MAX_CORPUS_LINE_BYTES))
    tracemalloc.start()
    try:
        _refused(load_corpus, path, 3, f"line longer than {MAX_CORPUS_LINE_BYTES:,} bytes")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * MAX_CORPUS_LINE_BYTES + (1 << 20), peak  # one limit's worth of the line, not its 24 MB


def test_a_corpus_line_at_the_limit_is_read(tmp_path):
    head = b'{"_id": "big", "text": "'
    body = head + b"y" * (MAX_CORPUS_LINE_BYTES - len(head) - 2) + b'"}'
    assert len(body) == MAX_CORPUS_LINE_BYTES
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(body + b"\n" + b'{"_id": "after", "text": "z"}')  # the last line without its newline
    assert [d.id for d in load_corpus(path)] == ["big", "after"]
    path.write_bytes(body[:-2] + b' "}' + b"\n")  # one byte more
    _refused(load_corpus, path, 1, "line longer than")


def test_a_giant_query_line_is_refused(tmp_path):
    queries = [{"_id": f"q{i}", "text": "a question"} for i in range(3)]
    path = _jsonl(tmp_path / "queries.jsonl", queries, at=2, giant=_giant_record(MAX_QUERY_LINE_BYTES))
    _refused(load_queries, path, 2, f"line longer than {MAX_QUERY_LINE_BYTES:,} bytes")


def test_ids_past_the_limit_are_refused_in_every_file(tmp_path):
    long_id = "é" * (MAX_ID_BYTES // 2) + "x"  # 513 bytes
    at_limit = "é" * (MAX_ID_BYTES // 2)  # 512 bytes: allowed
    corpus = _jsonl(tmp_path / "corpus.jsonl", [{"_id": at_limit, "text": "t"}, {"_id": long_id, "text": "t"}])
    _refused(load_corpus, corpus, 2, f"'_id' of {MAX_ID_BYTES + 1} bytes, longer than the {MAX_ID_BYTES} bytes")
    queries = _jsonl(tmp_path / "queries.jsonl", [{"_id": long_id, "text": "t"}])
    _refused(load_queries, queries, 1, "'_id' of 513 bytes")
    triples = _jsonl(tmp_path / "triples.jsonl", [{"_id": long_id, "triples": []}])
    _refused(load_triples, triples, 1, "'_id' of 513 bytes")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(f"query-id\tcorpus-id\tscore\nq1\t{at_limit}\t1\nq1\t{long_id}\t1\n", encoding="utf-8")
    _refused(load_qrels, qrels, 3, "corpus-id of 513 bytes")
    qrels.write_text("q1\td1\t1\n" + "q2\t" + "d" * (2 * MAX_TREC_LINE_BYTES) + "\t1\n", encoding="utf-8")
    _refused(load_qrels, qrels, 2, f"line longer than {MAX_TREC_LINE_BYTES:,} bytes")


@pytest.fixture
def giant_corpus(tmp_path) -> Path:
    """The sample dataset with a line past the corpus limit as line 3 of ``corpus.jsonl``."""
    root = tmp_path / "giant"
    shutil.copytree(SAMPLE, root)
    corpus = root / "corpus.jsonl"
    lines = corpus.read_bytes().splitlines(keepends=True)
    corpus.write_bytes(b"".join([*lines[:2], _giant_record(MAX_CORPUS_LINE_BYTES) + b"\n", *lines[2:]]))
    return root


@pytest.mark.parametrize("command", [["datasets", "check"], ["index"]])
def test_datasets_check_and_index_refuse_a_giant_line_naming_file_and_line(giant_corpus, tmp_path, capsys, command):
    home = ["--home", str(tmp_path / "home")] if command == ["index"] else []
    assert main([*command, str(giant_corpus), *home]) == ExitCode.INVALID
    err = capsys.readouterr().err
    assert f"{giant_corpus / 'corpus.jsonl'}:3: line longer than {MAX_CORPUS_LINE_BYTES:,} bytes" in err, err
