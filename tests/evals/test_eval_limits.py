"""``eval`` refuses a dataset line past its limit (:mod:`searchtrace.limits`) naming the file and the
line, with the data error's exit code: a 50 MB query line used to cost gigabytes, then exit 1
naming no query."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.errors import ExitCode
from searchtrace.limits import MAX_CORPUS_LINE_BYTES, MAX_QUERY_LINE_BYTES

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


@pytest.mark.parametrize(("name", "limit"), [("queries.jsonl", MAX_QUERY_LINE_BYTES),
                                             ("corpus.jsonl", MAX_CORPUS_LINE_BYTES)])
def test_eval_refuses_a_giant_line_naming_file_and_line(tmp_path, capsys, name, limit):
    root = tmp_path / "giant"
    shutil.copytree(SAMPLE, root)
    path = root / name
    lines = path.read_bytes().splitlines(keepends=True)
    giant = b'{"_id": "giant", "text": "' + b"x" * limit + b'"}\n'
    path.write_bytes(b"".join([*lines[:1], giant, *lines[1:]]))
    assert main(["eval", str(root), "--home", str(tmp_path / "home")]) == ExitCode.INVALID
    err = capsys.readouterr().err
    assert f"{path}:2: line longer than {limit:,} bytes" in err, err
