"""No traceback in the CLI: unusable homes and outputs are one line and exit 2; a read-only home still searches."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest

from searchtrace.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def _one_line_error(err: str, *needles: str) -> str:
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.startswith("error: ")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("argv", [["search", "tides", "--dataset", str(SAMPLE)], ["index", str(SAMPLE)],
                                  ["eval", str(SAMPLE)]])
def test_home_that_is_a_file_is_exit_2_before_any_work(argv, tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    home.write_text("not a folder")
    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    assert main(argv) == 2
    _one_line_error(capsys.readouterr().err, str(home), "$SEARCHTRACE_HOME", "is a file")
    assert main([*argv, "--home", str(home)]) == 2
    _one_line_error(capsys.readouterr().err, "--home")


def test_eval_out_naming_a_file_is_exit_2(tmp_path, capsys):
    out = tmp_path / "run.txt"
    out.write_text("x")
    assert main(["eval", str(SAMPLE), "--out", str(out), "--home", str(tmp_path / "home")]) == 2
    _one_line_error(capsys.readouterr().err, f"--out {out} is a file")
    assert out.read_text() == "x"


def test_an_unexpected_error_is_one_line_and_the_traceback_needs_debug(monkeypatch, capsys):
    import searchtrace.retriever.cli as retriever_cli

    def broken(args: object) -> int:
        raise RuntimeError("the check went wrong\nsecond line")

    monkeypatch.setattr(retriever_cli, "cmd_check", broken)
    assert main(["datasets", "check", str(SAMPLE)]) == 1
    line = _one_line_error(capsys.readouterr().err, "searchtrace datasets failed", "RuntimeError",
                           "the check went wrong", "--debug")
    assert "second line" not in line
    assert main(["--debug", "datasets", "check", str(SAMPLE)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and 'raise RuntimeError("the check went wrong' in err


def test_a_path_error_is_exit_2_and_a_full_disk_exit_1(monkeypatch, capsys):
    import errno

    import searchtrace.retriever.cli as retriever_cli

    for number, code in ((errno.EROFS, 2), (errno.ENOTDIR, 2), (errno.ENOSPC, 1)):
        def fail(args: object, number: int = number) -> int:
            raise OSError(number, os.strerror(number), "/some/where")

        monkeypatch.setattr(retriever_cli, "cmd_check", fail)
        assert main(["datasets", "check", str(SAMPLE)]) == code
        _one_line_error(capsys.readouterr().err, "/some/where")


def test_embedding_cache_on_a_read_only_file_reads_and_keeps_nothing_new(tmp_path, monkeypatch):
    from searchtrace.retriever.embedding.cache import EmbeddingCache

    path = tmp_path / "cache.sqlite"
    with EmbeddingCache(path, dim=4) as cache:
        cache.put_many([b"a"], np.ones((1, 4), dtype=np.float32))

    def read_only(self: EmbeddingCache) -> sqlite3.Connection:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(EmbeddingCache, "_open_writable", read_only)
    with EmbeddingCache(path, dim=4) as cache:
        found, rows = cache.get_many([b"a", b"b"])
        cache.put_many([b"b"], np.zeros((1, 4), dtype=np.float32))  # not kept, never an error
        assert cache.read_only and found.tolist() == [True, False] and rows[0].tolist() == [1, 1, 1, 1]
    monkeypatch.undo()
    with EmbeddingCache(path, dim=4) as cache:
        assert len(cache) == 1
    # no file and no writable folder: a cache in memory
    with EmbeddingCache(tmp_path / "absent.sqlite", dim=4) as cache:
        monkeypatch.setattr(EmbeddingCache, "_open_writable", read_only)
        cache.put_many([b"c"], np.ones((1, 4), dtype=np.float32))
        assert cache.get_many([b"c"])[0].tolist() == [True]


# --- a genuinely read-only home -------------------------------------------------------------


def _make_read_only(src: Path, dst: Path) -> str | None:
    """``dst``: ``src`` read-only, by a read-only bind mount (root, who ignores file modes) or by
    file modes (anyone else). Returns how, or None when neither works here."""
    if os.geteuid() == 0:
        dst.mkdir()
        done = subprocess.run(["mount", "--bind", str(src), str(dst)], capture_output=True)
        if done.returncode == 0:
            done = subprocess.run(["mount", "-o", "remount,ro,bind", str(dst)], capture_output=True)
            if done.returncode == 0:
                return "mount"
            subprocess.run(["umount", str(dst)], capture_output=True)
        return None
    shutil.copytree(src, dst)
    for root, _dirs, files in os.walk(dst):
        for name in files:
            os.chmod(Path(root) / name, 0o444)
        os.chmod(root, 0o555)
    return "chmod"


@pytest.fixture(scope="module")
def read_only_home(tmp_path_factory, sample_index_path, sample_config):
    """A home holding the sample's pre-built index and embedding cache, that cannot be written."""
    root = tmp_path_factory.mktemp("ro")
    src = root / "src"
    home = sample_config.home
    shutil.copytree(home.indexes, src / "indexes", ignore=shutil.ignore_patterns("*.lock", ".building"))
    shutil.copytree(home.cache, src / "cache")
    how = _make_read_only(src, root / "home")
    if how is None:
        pytest.skip("no way to make a read-only folder here (root without mount)")
    yield root / "home"
    if how == "mount":
        subprocess.run(["umount", str(root / "home")], capture_output=True)
    else:
        for r, _dirs, _files in os.walk(root / "home"):
            os.chmod(r, 0o755)


@pytest.mark.slow
def test_read_only_home_searches_its_prebuilt_index_with_traces_off(read_only_home, capsys):
    assert main(["search", "Who founded the Lantern Guild?", "--dataset", str(SAMPLE), "--home",
                 str(read_only_home), "--json", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.out.lstrip().startswith("{") and '"results"' in captured.out
    assert "Traceback" not in captured.err
    warnings = [x for x in captured.err.splitlines() if "traces are off" in x]
    assert len(warnings) == 1 and str(read_only_home) in warnings[0]
    assert not (read_only_home / "traces.sqlite").exists()


@pytest.mark.slow
def test_read_only_home_index_reuses_and_refuses_a_new_dataset(read_only_home, tmp_path, capsys):
    assert main(["index", str(SAMPLE), "--home", str(read_only_home)]) == 0
    assert "up to date, reused" in capsys.readouterr().out
    other = tmp_path / "other"
    shutil.copytree(SAMPLE, other)
    with (other / "corpus.jsonl").open("a") as f:
        f.write('{"_id": "extra", "title": "Extra", "text": "A new document."}\n')
    assert main(["index", str(other), "--home", str(read_only_home)]) == 2
    _one_line_error(capsys.readouterr().err, str(read_only_home), "writable")


@pytest.mark.slow
def test_read_only_home_eval_needs_out_and_runs_with_it(read_only_home, tmp_path, capsys):
    assert main(["eval", str(SAMPLE), "--home", str(read_only_home), "--no-progress"]) == 2
    _one_line_error(capsys.readouterr().err, str(read_only_home / "runs"), "--out")
    out = tmp_path / "run"
    assert main(["eval", str(SAMPLE), "--home", str(read_only_home), "--out", str(out), "--no-progress",
                 "--metrics", "ndcg@10"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and (out / "run.json").is_file()


def test_eval_with_no_labelled_query_is_exit_2_before_any_work(tmp_path, capsys):
    """Qrels that label none of the queries: nothing to score. (A dataset without any qrels is ranked for
    pooling instead: tests/evals/test_querysets_search.py.)"""
    data = tmp_path / "unlabelled"
    data.mkdir()
    (data / "corpus.jsonl").write_text('{"_id": "d1", "text": "a harbour"}\n')
    (data / "queries.jsonl").write_text('{"_id": "q1", "text": "harbour"}\n{"_id": "q2", "text": "river"}\n')
    home = tmp_path / "home"
    (data / "qrels").mkdir()
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq9\td1\t1\n")
    assert main(["eval", str(data), "--home", str(home)]) == 2
    _one_line_error(capsys.readouterr().err, "qrels/test.tsv labels none of its 2 queries: nothing to score")
    assert not home.exists()  # no run folder, no index, no model


SIGBUS_IN_SEARCH = """
import mmap, sys, tempfile
import searchtrace.retriever.cli as commands
from searchtrace.cli import main

def bus_error(args):  # what a memory map meeting a full disk does: a page that cannot be had
    with tempfile.TemporaryFile() as f:
        f.truncate(mmap.PAGESIZE)
        mapped = mmap.mmap(f.fileno(), mmap.PAGESIZE)
        f.truncate(0)
        return mapped[0]

commands.cmd_search = bus_error
sys.exit(main(["search", "tides", "--dataset", sys.argv[1]]))
"""


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGBUS"), reason="no SIGBUS on this platform")
def test_a_bus_error_is_never_a_silent_exit(tmp_path):
    import signal
    import sys

    env = {**os.environ, "SEARCHTRACE_HOME": str(tmp_path / "home"), "PYTHONFAULTHANDLER": ""}
    done = subprocess.run([sys.executable, "-c", SIGBUS_IN_SEARCH, str(SAMPLE)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == -signal.SIGBUS  # the signal still ends it: the exit status stays the truth
    assert done.stderr.startswith("Fatal Python error: Bus error"), done.stderr
    assert "in bus_error" in done.stderr  # where it happened
