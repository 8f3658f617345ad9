"""A disk too full to open an index is one line and exit 1, never a process killed by SIGBUS.

An index built with room (the session's, on the test machine's disk) is copied
with its holes, as a restored backup or a moved home is, onto a tmpfs mounted
in a mount namespace of its own (``unshare -m``, which needs root or user
namespaces: skipped, with the reason, where neither is allowed), and the tmpfs
is then filled until 20 MB are free. Loading the shard makes its vector chunks
and payload index pages whole (108 MB for the sample on tmpfs), so before the
open check ``search`` died of SIGBUS (exit 135) with nothing on stderr.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from mounts import SERVE_UNTIL_READY, run_driver_in_namespace

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
FREE_MB = 20

DRIVER = SERVE_UNTIL_READY + textwrap.dedent("""
    import json, os, re, shutil, subprocess, sys, time, urllib.request
    mount, index, cache, sample, free_mb = sys.argv[1:6]
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400m", "tmpfs", mount], check=True)
    home = os.path.join(mount, "home")
    os.makedirs(os.path.join(home, "indexes"))
    subprocess.run(["cp", "-a", "--sparse=always", index, os.path.join(home, "indexes")], check=True)
    subprocess.run(["cp", "-a", cache, home], check=True)
    with open(os.path.join(mount, "filler"), "wb") as filler:  # the disk fills after the index was made
        os.posix_fallocate(filler.fileno(), 0, shutil.disk_usage(mount).free - int(free_mb) * 2**20)
    out = {"free": shutil.disk_usage(mount).free}
    cli = [sys.executable, "-m", "searchtrace"]
    for name, args in (("search", ["search", sample, "tides"]), ("eval", ["eval", sample, "--no-progress"])):
        done = subprocess.run([*cli, *args, "--home", home], capture_output=True, text=True, timeout=300)
        out[name] = {"code": done.returncode, "stderr": done.stderr}
    serve_until_ready(cli, sample, home, out, 120)
    print(json.dumps(out))
""")


def _the_error_line(stderr: str, index: Path) -> str:
    """The one error line, naming the index folder, the space needed and free; any other line is progress."""
    assert "Traceback" not in stderr and "Fatal Python error" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1, stderr
    assert "No space left to open the index: it needs about" in errors[0], errors
    assert f"MB, {FREE_MB} MB free" in errors[0] and str(index) in errors[0], errors
    return errors[0]


@pytest.mark.skipif(sys.platform != "linux", reason="tmpfs and mount namespaces are Linux's")
def test_a_disk_too_full_to_open_an_index_is_one_line_and_exit_1(tmp_path, sample_index_path, sample_config):
    mount = tmp_path / "small"
    mount.mkdir()
    out = run_driver_in_namespace(DRIVER, str(mount), str(sample_index_path), str(sample_config.home.cache),
                                 str(SAMPLE), str(FREE_MB), timeout=600)
    assert out["free"] == FREE_MB << 20
    index = mount / "home" / "indexes" / sample_index_path.name
    for name in ("search", "eval"):
        assert out[name]["code"] == 1, (name, out[name])  # not 135 (SIGBUS) nor any other signal
        _the_error_line(out[name]["stderr"], index)
    serve = out["serve"]
    assert serve["alive"], serve  # the server stays up and says why it is not ready
    assert "No space left to open the index" in serve["readyz"]["error"], serve
    assert str(index) in serve["readyz"]["error"]
    _the_error_line(serve["stderr"], index)
