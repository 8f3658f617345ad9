"""A closed pipe (``searchtrace gate ... | head -1``) ends quietly, exit 141 (128 + SIGPIPE), as any tool does.

Each test runs the real command line in a subprocess whose standard output is a pipe
whose reader, ``head -n 0``, has already read nothing and exited before the writer
starts: the writer's first write meets a closed pipe every time, whatever the timing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.home import Home
from searchtrace.traces.store.sqlite import TraceStore

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / ".ci" / "baseline"
PIPE_CLOSED = 141


def _into_closed_pipe(*argv: str) -> subprocess.CompletedProcess[str]:
    """``searchtrace ARGV | head -n 0``, the reader gone before the writer's first line."""
    read, write = os.pipe()
    reader = subprocess.Popen(["head", "-n", "0"], stdin=read)
    os.close(read)
    assert reader.wait(timeout=30) == 0  # the pipe's only reader has closed it
    try:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        env.pop("COLUMNS", None)
        return subprocess.run([sys.executable, "-m", "searchtrace", *argv], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120, env=env)
    finally:
        os.close(write)


def test_gate_into_a_closed_pipe_is_quiet_and_exit_141():
    done = _into_closed_pipe("gate", "--baseline", str(BASELINE), "--candidate", str(BASELINE),
                             "--config", str(REPO / ".ci" / "gate.toml"))
    assert done.stderr == ""  # it said "error: [Errno 32] Broken pipe"
    assert done.returncode == PIPE_CLOSED  # it was 2


def test_traces_list_into_a_closed_pipe_is_quiet_and_exit_141(tmp_path):
    spans, _ = record(*(FakeSearch(start_ns=T0 + i * 1000 * MS, query=f"query {i}") for i in range(5)))
    store = TraceStore(Home(tmp_path).traces)
    store.write(spans)
    store.close()
    done = _into_closed_pipe("traces", "list", "--home", str(tmp_path))
    assert done.stderr == ""
    assert done.returncode == PIPE_CLOSED


def test_a_pipe_read_to_the_end_is_exit_0():
    done = subprocess.run(f"{sys.executable} -m searchtrace gate --baseline {BASELINE} --candidate {BASELINE} "
                          f"--config {REPO / '.ci' / 'gate.toml'} | cat", shell=True, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0 and done.stdout.startswith("quality gate passed"), done.stderr
