"""An eval stopped by Ctrl-C says where it stopped and how to resume; a refused --out says what differs."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.evals import EvalSettings

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"


def test_an_out_with_other_settings_names_each_difference_and_what_to_do(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    stored = EvalSettings(dataset=str(SAMPLE), split="dev", depth=50, retriever="0123456789ab")
    (out / "settings.json").write_text(json.dumps(stored.to_json()))
    assert main(["eval", str(SAMPLE), "--out", str(out), "--home", str(tmp_path / "home"), "--split", "test",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "EvalSettings(" not in err and "Traceback" not in err  # it printed the stored settings' repr
    assert 'split: "dev" there vs "test" now' in err
    assert "top_k: 50 there vs 100 now" in err
    assert re.search(r'retriever \(search settings\' fingerprint\): "0123456789ab" there vs "[0-9a-f]{12}" now', err)
    assert "dataset:" not in err and "metrics:" not in err  # only what differs
    assert f"give a new --out, or remove {out} to start over" in err
    assert len(err.splitlines()) == 1


def test_the_resume_command_wraps_to_the_width_and_is_one_shell_command():
    from searchtrace.terminal import command_lines

    words = ["searchtrace", "eval", "/a/long/path/" + "x" * 90, "--out", "a folder", "--mode", "fast"]
    lines = command_lines(words, 40)
    assert all(line.endswith(" \\") for line in lines[:-1])
    assert all(len(line) <= 40 for line in lines if "x" * 90 not in line)
    done = subprocess.run(["bash", "-c", 'printf "%s\\n" ' + "\n".join(lines).removeprefix("  searchtrace")],
                          capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == words[1:]  # quoted, continued: the same words back


@pytest.mark.slow
def test_ctrl_c_says_where_the_eval_stopped_and_the_printed_command_resumes_it(tmp_path, sample_config,
                                                                                sample_index_path):
    home = sample_config.home.root
    out_dir = tmp_path / "runs"
    out_dir.mkdir()
    bin_dir = str(Path(sys.executable).parent)  # where the searchtrace script is installed
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO), "COLUMNS": "80",
           "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}", "SEARCHTRACE_HOME": str(home)}
    cmd = [sys.executable, "-m", "searchtrace", "eval", str(SAMPLE), "--mode", "fast", "--no-progress",
           "--batch-size", "4", "--name", f"interrupted-{tmp_path.name}"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    runs = Path(home) / "runs"
    deadline = time.monotonic() + 300
    journal = None
    while time.monotonic() < deadline and proc.poll() is None and journal is None:
        journal = next((j for j in runs.glob(f"interrupted-{tmp_path.name}*/journal.jsonl")
                        if j.read_text().count("\n") >= 1), None)
        time.sleep(0.02)
    assert journal is not None and proc.poll() is None, "the eval finished before its first batch was journaled"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = err.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("interrupted: "))
    stopped = re.fullmatch(r"interrupted: (\d+) of (\d+) queries done; they are kept in the run folder:",
                           lines[start])
    assert stopped, lines[start]
    done, total = int(stopped[1]), int(stopped[2])
    assert 1 <= done < total
    assert lines[start + 1] == f"  {journal.parent}"
    assert lines[start + 2] == "resume it with:"
    command = "\n".join(lines[start + 3:])
    assert command.startswith("  searchtrace eval ")
    assert all(len(line) <= 80 for line in lines[start:] if str(journal.parent) not in line)
    resumed = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads((journal.parent / "run.json").read_text())
    assert summary["timings"]["resumed"] is True
    assert summary["dataset"]["queries"] == total


class _CtrlC:
    """An embedder the person stops with Ctrl-C while the eval builds its index."""

    model_id, dim = "test/ctrl-c", 384

    def encode_documents(self, texts, batch_size=64, progress=False):
        raise KeyboardInterrupt

    def encode_query(self, text):
        raise KeyboardInterrupt


def test_ctrl_c_while_the_index_is_built_says_none_is_done_and_keeps_the_folder(tmp_path):
    from searchtrace.evals import EvalInterrupted, run_eval
    from searchtrace.evals.runs.execution.loop import load_for_run
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.traces import TraceSettings

    config = resolve_config(home=tmp_path / "home", environ={})
    out = tmp_path / "run"
    with pytest.raises(EvalInterrupted) as stopped:
        run_eval(EvalSettings(dataset=str(SAMPLE), mode="fast"), config, out=out, embedder=_CtrlC(), progress=False,
                 trace_settings=TraceSettings.resolve(environ={}))
    assert (stopped.value.folder, stopped.value.done) == (out, 0)
    assert stopped.value.total == len(load_for_run(EvalSettings(dataset=str(SAMPLE)))[1])  # unanswerable too
    assert (out / "settings.json").is_file()  # the same command resumes it


def test_a_run_whose_retriever_cannot_open_leaves_nothing_that_refuses_the_next(tmp_path, warm_cache, capsys):
    """Issue 36: a settings file naming a calibration file that is missing failed the start but left
    settings.json, and the same --out with the setting fixed was refused as another run's."""
    home = warm_cache(tmp_path / "home")
    out = tmp_path / "run"
    (tmp_path / "bad.toml").write_text('[confidence]\ncalibration = "calibration.json"\n', encoding="utf-8")
    (tmp_path / "good.toml").write_text("[confidence]\nhigh = 0.65\n", encoding="utf-8")
    args = ["eval", str(SAMPLE), "--out", str(out), "--home", str(home), "--no-progress"]
    assert main([*args, "--retriever-config", str(tmp_path / "bad.toml")]) == 2
    assert "calibration" in capsys.readouterr().err
    assert not out.exists()
    assert main([*args, "--retriever-config", str(tmp_path / "good.toml")]) == 0
    assert (out / "run.json").is_file()
