"""An eval that meets a full disk, a full or locked trace store, a damaged journal: it stops cleanly or carries on,
and started again it finishes with exactly the metrics of an uninterrupted run."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from mounts import namespaces_allowed

from searchtrace.evals import EvalSettings, RunFolder
from searchtrace.evals.runs.execution import run_eval
from searchtrace.evals.runs.runfolder.journal import Journal
from searchtrace.traces import TraceSettings, TraceStore

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
SETTINGS = EvalSettings(dataset=str(SAMPLE), mode="fast", batch_size=16)


def _trace_settings() -> TraceSettings:
    return replace(TraceSettings.resolve(environ={}), store_retry_s=0.1)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, sample_config, sample_index_path, model) -> RunFolder:
    out = tmp_path_factory.mktemp("clean") / "run"
    return run_eval(SETTINGS, sample_config, out=out, embedder=model, progress=False,
                    trace_settings=_trace_settings())


def _same_results(a: RunFolder, b: RunFolder) -> None:
    assert a.run_file.read_text().replace(a.run_id, "RUN") == b.run_file.read_text().replace(b.run_id, "RUN")
    assert a.summary().metrics == b.summary().metrics


def test_a_full_disk_stops_the_eval_and_the_same_command_resumes(tmp_path, monkeypatch, sample_config, model,
                                                                  uninterrupted):
    real = Journal.append
    calls = {"n": 0}

    def append(self, records):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path))
        return real(self, records)

    monkeypatch.setattr(Journal, "append", append)
    out = tmp_path / "run"
    with pytest.raises(OSError) as stopped:
        run_eval(SETTINGS, sample_config, out=out, embedder=model, progress=False, trace_settings=_trace_settings())
    assert stopped.value.errno == errno.ENOSPC
    folder = RunFolder(out)
    assert folder.is_interrupted and len(folder.outcomes()) == 32  # two batches journaled, the third lost
    monkeypatch.setattr(Journal, "append", real)  # space freed
    again = run_eval(SETTINGS, sample_config, out=out, embedder=model, progress=False,
                     trace_settings=_trace_settings())
    assert again.summary().timings.resumed and again.summary().untraced == 0
    _same_results(again, uninterrupted)


DRIVER = """
import subprocess, sys
mount, out, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mount], check=True)
done = subprocess.run([sys.executable, "-m", "searchtrace", *argv, "--out", out], capture_output=True, text=True,
                      timeout=300)
print(done.returncode)
sys.stdout.write(done.stderr)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="tmpfs and mount namespaces are Linux's")
def test_the_cli_names_the_file_a_full_disk_stopped_in_one_line(tmp_path, sample_config, sample_index_path):
    """A real ENOSPC (the run folder on a 64 KiB tmpfs): the journal's write raises it naming no file, and
    the line named none before the writers gave it theirs."""
    reason = namespaces_allowed()
    if reason:
        pytest.skip(reason)
    home = tmp_path / "home"
    shutil.copytree(sample_config.home.cache, home / "cache")  # the model and the vectors: nothing to embed
    env = {**os.environ, "SEARCHTRACE_OTLP": "0"}
    cli = [sys.executable, "-m", "searchtrace"]
    built = subprocess.run([*cli, "index", str(SAMPLE), "--home", str(home), "--no-progress"], capture_output=True,
                           text=True, timeout=300, env=env)
    assert built.returncode == 0, built.stderr
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["unshare", "-m", sys.executable, "-c", DRIVER, str(mount), str(mount / "run"), "eval",
                           str(SAMPLE), "--mode", "fast", "--home", str(home), "--no-progress"],
                          capture_output=True, text=True, timeout=360, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    code, *err = done.stdout.strip().splitlines()
    assert code == "1" and len(err) == 1, done.stdout
    assert err[0].startswith(f"error: No space left on device ({mount / 'run' / 'journal.jsonl'}): "), err
    assert err[0].endswith("run the same command again (an interrupted eval resumes where it stopped)")


def test_a_full_trace_store_stops_the_eval_and_it_resumes(tmp_path, monkeypatch, sample_config, model, uninterrupted):
    real = TraceStore.write
    calls = {"n": 0}

    def write(self, spans):
        calls["n"] += 1
        if calls["n"] > 3:
            raise sqlite3.OperationalError("database or disk is full")
        return real(self, spans)

    monkeypatch.setattr(TraceStore, "write", write)
    out = tmp_path / "run"
    with pytest.raises(OSError, match="no space left for the run's traces"):
        run_eval(SETTINGS, sample_config, out=out, embedder=model, progress=False, trace_settings=_trace_settings())
    journaled = RunFolder(out).outcomes()
    assert journaled and all(o.traced for o in journaled)  # nothing journaled whose trace is not stored
    monkeypatch.setattr(TraceStore, "write", real)
    again = run_eval(SETTINGS, sample_config, out=out, embedder=model, progress=False,
                     trace_settings=_trace_settings())
    _same_results(again, uninterrupted)
    store = TraceStore(sample_config.home.traces)
    try:
        stored = store.stored([o.trace_id for o in again.outcomes()])
    finally:
        store.close()
    assert set(stored) == {o.trace_id for o in again.outcomes()} and set(stored.values()) == {11}


def test_queries_whose_traces_could_not_be_stored_are_searched_again(tmp_path, monkeypatch, sample_config, model,
                                                                      uninterrupted):
    real = TraceStore.write
    calls = {"n": 0}

    def write(self, spans):
        calls["n"] += 1
        if 3 <= calls["n"] <= 6:  # another process holding the lock for longer than the exporter waits
            raise sqlite3.OperationalError("database is locked")
        return real(self, spans)

    monkeypatch.setattr(TraceStore, "write", write)
    folder = run_eval(SETTINGS, sample_config, out=tmp_path / "run", embedder=model, progress=False,
                      trace_settings=_trace_settings())
    lines = [json.loads(line) for line in folder.journal.path.read_text().splitlines()]
    assert any(not line["traced"] for line in lines)  # some were journaled untraced ...
    assert folder.summary().untraced == 0 and all(o.traced for o in folder.outcomes())  # ... and searched again
    _same_results(folder, uninterrupted)


def test_a_damaged_journal_line_is_searched_again(tmp_path, sample_config, model, uninterrupted, caplog):
    out = tmp_path / "run"
    folder = RunFolder(out)
    folder.create(replace(SETTINGS, retriever=uninterrupted.settings().retriever))
    lines = uninterrupted.journal.path.read_bytes().splitlines(keepends=True)
    lines[5] = b'{"format": 2, "kind": "qu\x00\x00garbage\n'  # a damaged block in the middle
    folder.journal.path.write_bytes(b"".join(lines[:40]))
    again = run_eval(SETTINGS, sample_config, out=out, embedder=model, progress=False,
                     trace_settings=_trace_settings())
    assert "journal.jsonl:6: not a JSON record" in caplog.text  # a warning the command line prints
    _same_results(again, uninterrupted)


def test_an_interrupted_run_with_a_damaged_settings_file_is_skipped(tmp_path, sample_config, model, caplog):
    from searchtrace.evals.runs.execution.loop import run_folder

    broken = RunFolder(sample_config.home.runs / "sample-fast-20250101T000000-broken")
    broken.create(SETTINGS)
    broken.settings_file.write_text("")  # a 0-byte settings.json left by a full disk
    folder, resuming = run_folder(SETTINGS, sample_config, None)
    assert not resuming and folder != broken
    assert "skipping the interrupted run" in caplog.text
