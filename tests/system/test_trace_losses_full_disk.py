"""A real full disk (the home on a 1 MiB tmpfs, in a mount namespace of the test's own): the spans dropped
for it are counted in the home, on that same full disk, and ``traces status`` shows them (issue 35: 45,738
dropped spans showed in ``/v1/stats`` only)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mounts import namespaces_allowed

TESTS = Path(__file__).resolve().parents[1]

DRIVER = r"""
import os, subprocess, sys
mount, tests, repo = sys.argv[1:4]
sys.path[:0] = [tests, repo]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount], check=True)
from dataclasses import replace
from trace_fixtures import T0, FakeSearch, emulate_search
from searchtrace.cli import main
from searchtrace.home import Home
from searchtrace.traces.export.provider import TraceSettings, make_tracer_provider

home = os.path.join(mount, "home")
provider, handles = make_tracer_provider(Home(home), replace(TraceSettings.resolve(environ={}), store_retry_s=0))
tracer = provider.get_tracer("t")
emulate_search(tracer, FakeSearch())
assert handles.flush_store()
fd = os.open(os.path.join(mount, "filler"), os.O_CREAT | os.O_WRONLY)  # the rest of the disk
try:
    while True:
        os.write(fd, b"x" * 4096)
except OSError:
    os.close(fd)
failed = 0
for i in range(1, 41):  # enough searches to need pages the store does not have
    emulate_search(tracer, FakeSearch(start_ns=T0 + i * 10**9, candidates=100))
    failed += not handles.flush_store()
handles.shutdown()
print("failed", failed, handles.store_failure.value if handles.store_failure else None, flush=True)
sys.exit(main(["traces", "status", "--home", home]))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="tmpfs and mount namespaces are Linux's")
def test_spans_dropped_for_a_real_full_disk_are_counted_on_it_and_shown_by_traces_status(tmp_path):
    reason = namespaces_allowed()
    if reason:
        pytest.skip(reason)
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(["unshare", "-m", sys.executable, "-c", DRIVER, str(mount), str(TESTS),
                           str(TESTS.parent)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    failed, kind = lines[0].split()[1:]
    assert int(failed) > 0 and kind == "disk_full", done.stdout
    lost = [line for line in lines if line.startswith("lost ")]
    assert lost == [f"lost      {int(failed) * 11} spans: disk_full ({failed} times)"], done.stdout + done.stderr
