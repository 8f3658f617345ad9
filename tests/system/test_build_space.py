"""A full disk during an index build is one line and exit 1, never a process killed by SIGBUS.

Each command runs with its home on a 40 MiB tmpfs, mounted in a mount namespace
of its own (``unshare -m``, which needs root or user namespaces: skipped, with
the reason, where neither is allowed). The sample's index needs about 260 MB
there (Qdrant Edge's memory-mapped files), so every build finds the disk too
small: before the space check it died of SIGBUS (exit 135) in ``index``, ``eval``
and a server's first open.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from mounts import SERVE_UNTIL_READY, run_driver_in_namespace

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"

DRIVER = SERVE_UNTIL_READY + textwrap.dedent("""
    import json, os, re, subprocess, sys, time, urllib.request
    mount, home, sample = sys.argv[1], sys.argv[2], sys.argv[3]
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", mount], check=True)
    out = {}
    cli = [sys.executable, "-m", "searchtrace"]
    for name, args in (("index", ["index", sample]), ("eval", ["eval", sample])):
        done = subprocess.run([*cli, *args, "--home", home, "--no-progress"], capture_output=True, text=True,
                              timeout=300)
        out[name] = {"code": done.returncode, "stderr": done.stderr,
                     "building": os.listdir(os.path.join(home, "indexes", ".building"))}
    serve_until_ready(cli, sample, home, out, 60)
    print(json.dumps(out))
""")


@pytest.mark.skipif(sys.platform != "linux", reason="tmpfs and mount namespaces are Linux's")
def test_a_disk_too_small_for_the_index_is_one_line_and_exit_1(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    out = run_driver_in_namespace(DRIVER, str(mount), str(mount / "home"), str(SAMPLE), timeout=420)
    for name in ("index", "eval"):
        result = out[name]
        assert result["code"] == 1, (name, result)  # not 135 (SIGBUS) nor any other signal
        # one error line, whatever else a slow machine shows first (the build's progress lines, every 10 s)
        errors = [line for line in result["stderr"].splitlines() if line.startswith("error")]
        assert len(errors) == 1, (name, result["stderr"])
        assert "No space left for the index: it needs about" in errors[0] and "MB free" in errors[0], errors
        assert str(mount / "home" / "indexes") in errors[0]
        assert "Traceback" not in result["stderr"]
        assert result["building"] == []  # the partial build is removed
    serve = out["serve"]
    assert serve["alive"], serve  # the server stays up and says why it is not ready
    assert "No space left for the index" in serve["readyz"]["error"]
    assert "Traceback" not in serve["stderr"]
