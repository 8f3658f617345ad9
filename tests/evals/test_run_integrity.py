"""A run folder proves itself: run.json records each file's sha256 and size, every reader verifies them
and refuses a mismatch naming the file; folders written before read as before (issue 35)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from run_folders import make_run

from searchtrace.cli import main
from searchtrace.errors import DataError, ExitCode
from searchtrace.evals import RunFolder

BASELINE = Path(__file__).resolve().parents[2] / ".ci" / "baseline"  # a format-1 run folder, as written then


def damage_inside(path: Path, count: int = 64, seed: int = 0) -> None:
    """``count`` random bytes written over the middle of ``path``: its size unchanged."""
    data = bytearray(path.read_bytes())
    start = max(0, len(data) // 2 - count // 2)
    data[start:start + count] = random.Random(seed).randbytes(count)[:len(data) - start]
    path.write_bytes(bytes(data))


def test_run_json_records_every_other_file(tmp_path):
    folder = make_run(tmp_path, "r")
    data = json.loads(folder.summary_file.read_text())
    names = sorted(p.name for p in folder.path.iterdir() if p.name != "run.json")
    assert sorted(data["files"]) == names
    for name in names:
        assert data["files"][name]["size"] == (folder.path / name).stat().st_size
    assert len(data["summary_sha256"]) == 64
    assert folder.summary().files is not None


def test_compare_and_gate_refuse_a_damaged_rankings_table_naming_it(tmp_path, capsys):
    base = make_run(tmp_path, "base")
    copy = tmp_path / "damaged"
    shutil.copytree(base.path, copy)
    damage_inside(copy / "rankings.parquet")
    capsys.readouterr()
    assert main(["compare", str(base.path), str(copy)]) == ExitCode.INVALID
    err = capsys.readouterr().err.strip()
    assert "rankings.parquet" in err and "sha256" in err and "\n" not in err
    (tmp_path / "gate.toml").write_text('[metrics."ndcg@10"]\nmax_drop = 0.01\nrequire_significance = false\n')
    for baseline, candidate in ((base.path, copy), (copy, base.path)):
        assert main(["gate", "--baseline", str(baseline), "--candidate", str(candidate),
                     "--config", str(tmp_path / "gate.toml")]) == ExitCode.INVALID
        err = capsys.readouterr().err.strip()
        assert "rankings.parquet" in err and "\n" not in err
    assert main(["compare", str(base.path), str(base.path)]) == 0  # the undamaged run still compares


@pytest.mark.parametrize("damage, named", [
    (lambda p: damage_inside(p / "per_query.parquet"), "per_query.parquet"),
    (lambda p: (p / "results.parquet").write_bytes((p / "results.parquet").read_bytes() + b"x"), "results.parquet"),
    (lambda p: (p / "run.trec").unlink(), "run.trec: missing"),
    (lambda p: (p / "settings.json").write_text((p / "settings.json").read_text().replace("10", "11")),
     "settings.json"),
    (lambda p: (p / "journal.jsonl").write_text("{}\n"), "journal.jsonl: not recorded"),
])
def test_every_damaged_or_added_file_is_refused_by_the_folders_reader(tmp_path, damage, named):
    folder = make_run(tmp_path, "r")
    folder.summary()  # verified once, then remembered: a later change is still seen
    damage(folder.path)
    with pytest.raises(DataError, match=named.replace(".", r"\.")):
        RunFolder(folder.path).summary()


def test_an_edited_run_json_field_is_refused(tmp_path, capsys):
    folder = make_run(tmp_path, "r")
    data = json.loads(folder.summary_file.read_text())
    data["metrics"]["ndcg@10"] = 0.99
    folder.summary_file.write_text(json.dumps(data, indent=2))
    with pytest.raises(DataError, match="run.json: does not match its summary_sha256"):
        folder.summary()
    capsys.readouterr()
    assert main(["compare", str(folder.path), str(folder.path)]) == ExitCode.INVALID
    assert "run.json" in capsys.readouterr().err
    del data["summary_sha256"]  # the files kept without the hash of run.json itself: refused too
    folder.summary_file.write_text(json.dumps(data, indent=2))
    with pytest.raises(DataError, match="come together"):
        folder.summary()


def test_folders_written_before_checksums_read_as_before(tmp_path):
    folder = make_run(tmp_path, "r")
    data = json.loads(folder.summary_file.read_text())
    del data["files"], data["summary_sha256"]
    folder.summary_file.write_text(json.dumps(data, indent=2))
    (folder.path / "journal.jsonl").write_text("")  # nothing recorded: nothing to check
    assert folder.summary().files is None
    old = RunFolder(BASELINE)
    assert old.summary().files is None and old.summary().metrics


@pytest.mark.parametrize("recent", [False, True])
def test_a_same_size_rewrite_keeping_the_old_times_is_still_found(tmp_path, recent):
    """The check a reader skips for a file it verified before is keyed on its size, times and inode. A
    rewrite in place of the same size whose modification time comes out the same (a coarse clock tick, or
    set back) is still found: the change time moves with every write; and a file written within the last
    seconds is hashed at every read, never remembered (a tick can hide a change from both times)."""
    import os
    import time

    folder = make_run(tmp_path, "r")
    rankings = folder.path / "rankings.parquet"
    st = rankings.stat()
    when = st.st_mtime_ns if recent else time.time_ns() - 3600 * 10**9
    os.utime(rankings, ns=(when, when))
    assert folder.summary().files is not None  # verified (and, when old, remembered)
    damage_inside(rankings)
    os.utime(rankings, ns=(when, when))
    assert rankings.stat().st_size == st.st_size and rankings.stat().st_ino == st.st_ino
    with pytest.raises(DataError, match="rankings.parquet"):
        folder.summary()
