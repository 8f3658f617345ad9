"""Run folders written with ``eval --out`` outside the home: listed in ``<home>/runs.outside`` when written, found
by the run index and ``runs list`` like the home's own, and a folder that is gone is a note, never an error."""

from __future__ import annotations

import multiprocessing
import shutil
from pathlib import Path

import pytest
from run_folders import QRELS, trec_text

from searchtrace.cli import main
from searchtrace.errors import NotFoundError
from searchtrace.evals import RunFolder
from searchtrace.evals.runs.store import HomeRunIndex, RunSelector
from searchtrace.home import Home


def write_run(tmp_path: Path, home: Path, out: Path, seed: int = 0) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / f"in{seed}.trec").write_text(trec_text(seed))
    assert main(["eval", "--run", str(tmp_path / f"in{seed}.trec"), "--qrels", str(tmp_path / "qrels.txt"),
                 "--out", str(out), "--home", str(home)]) == 0


def test_a_run_written_with_out_elsewhere_is_in_the_home_run_index(tmp_path, capsys):
    home, out = tmp_path / "home", tmp_path / "elsewhere" / "b1"
    write_run(tmp_path, home, out)
    assert (home / "runs.outside").read_text() == f"{out.resolve()}\n"
    index = HomeRunIndex(Home(home))
    assert [e.run_id for e in index.entries()] == ["b1"]
    assert index.find(RunSelector(key="b1")).run_id == "b1"
    assert index.local_folder("b1") == RunFolder(out)
    assert RunFolder.in_home(Home(home), "b1").path == out.resolve()
    capsys.readouterr()
    assert main(["runs", "list", "--home", str(home)]) == 0
    listed = capsys.readouterr()
    assert " b1 " in listed.out and listed.err == f"1 runs in home {home}\n"


def test_the_home_own_runs_are_not_listed_again_and_a_path_once(tmp_path):
    from searchtrace.evals.runs.runfolder.outside import record_outside

    home = Home(tmp_path / "home")
    assert not record_outside(home, home.run("r1"))
    assert not home.runs_outside.exists()
    assert record_outside(home, tmp_path / "x" / ".." / "a")
    assert not record_outside(home, tmp_path / "a")
    assert home.runs_outside.read_text() == f"{(tmp_path / 'a').resolve()}\n"


def test_a_removed_outside_folder_is_a_note_not_an_error(tmp_path, capsys):
    from searchtrace.evals import outside_runs

    home, kept, removed = tmp_path / "home", tmp_path / "a" / "kept", tmp_path / "b" / "removed"
    write_run(tmp_path, home, kept, seed=0)
    write_run(tmp_path, home, removed, seed=1)
    shutil.rmtree(removed)
    (home / "runs.outside").write_text((home / "runs.outside").read_text() + "relative/path\n\n")
    found = outside_runs(Home(home))
    assert found.present == (kept.resolve(),) and found.gone == (removed.resolve(),)
    assert [e.run_id for e in HomeRunIndex(Home(home)).entries()] == ["kept"]
    capsys.readouterr()
    assert main(["runs", "list", "--home", str(home)]) == 0
    listed = capsys.readouterr()
    assert " kept " in listed.out and "removed" not in listed.out
    assert listed.err.splitlines()[1:] == ["note: gone, though runs.outside lists them (written with --out):",
                                           f"  {removed.resolve()}"]


def test_a_folder_being_written_is_neither_listed_nor_gone(tmp_path):
    from searchtrace.evals import outside_runs
    from searchtrace.evals.runs.runfolder.outside import record_outside

    home = Home(tmp_path / "home")
    (tmp_path / "half").mkdir()
    record_outside(home, tmp_path / "half")
    assert outside_runs(home).present == ((tmp_path / "half").resolve(),) and outside_runs(home).gone == ()
    assert RunFolder.all_in_home(home) == []
    with pytest.raises(NotFoundError, match="no completed run 'half'"):
        RunFolder.in_home(home, "half")


def _record_many(root: str, worker: int) -> None:
    from searchtrace.evals.runs.runfolder.outside import record_outside

    for i in range(25):
        record_outside(Home(Path(root) / "home"), Path(root) / f"w{worker}-{i}")


def test_recorders_at_once_lose_no_line(tmp_path):
    """Four processes each add 25 paths: every one is in the file once, whatever the interleaving."""
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_record_many, args=(str(tmp_path), w)) for w in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join()
        assert p.exitcode == 0
    lines = (tmp_path / "home" / "runs.outside").read_text().splitlines()
    assert sorted(lines) == sorted(str((tmp_path / f"w{w}-{i}").resolve()) for w in range(4) for i in range(25))
