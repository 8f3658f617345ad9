"""``judge import`` on a real full disk (the dataset folder a 64 KiB tmpfs in a mount namespace of its own,
filled to 8 KiB free): it writes none of the judgments, leaves ``judgments.jsonl`` byte for byte as it was and
says so in one line naming itself and the file; the unit test with the writer patched is in
tests/evals/test_judgments.py (issue 35)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mounts import namespaces_allowed

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"

DRIVER = """
import hashlib, json, os, subprocess, sys
mount, sample, small, big = sys.argv[1:5]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mount], check=True)
for name in ("queries.jsonl", "corpus.jsonl"):
    os.symlink(os.path.join(sample, name), os.path.join(mount, name))
cli = [sys.executable, "-m", "searchtrace", "judge", "import", mount]
first = subprocess.run([*cli, small], capture_output=True, text=True, timeout=120)
assert first.returncode == 0, first.stderr
fd = os.open(os.path.join(mount, "filler"), os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, bytes(4096))
except OSError:
    pass
os.ftruncate(fd, max(os.fstat(fd).st_size - 8192, 0))
os.close(fd)
store = os.path.join(mount, "judgments.jsonl")
before = open(store, "rb").read()
done = subprocess.run([*cli, big], capture_output=True, text=True, timeout=120)
after = open(store, "rb").read()
print(json.dumps({"code": done.returncode, "err": done.stderr, "same": before == after, "store": store,
                  "lines": after.count(b"\\n")}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="tmpfs and mount namespaces are Linux's")
def test_judge_import_on_a_full_disk_writes_nothing_and_names_itself(tmp_path):
    reason = namespaces_allowed()
    if reason:
        pytest.skip(reason)
    queries = [json.loads(line)["_id"] for line in (SAMPLE / "queries.jsonl").read_text().splitlines()]
    docs = [json.loads(line)["_id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    small, big = tmp_path / "small.qrels", tmp_path / "big.qrels"
    small.write_text(f"{queries[0]} 0 {docs[0]} 2\n")
    big.write_text("".join(f"{q} 0 {d} 1\n" for q in queries[:70] for d in docs[:3]))  # 210: about 40 KB
    mount = tmp_path / "dataset"
    mount.mkdir()
    env = {**os.environ, "SEARCHTRACE_OTLP": "0"}
    done = subprocess.run(["unshare", "-m", sys.executable, "-c", DRIVER, str(mount), str(SAMPLE), str(small),
                           str(big)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 1 and report["same"] and report["lines"] == 1, report
    assert report["err"] == (f"error: No space left on device ({report['store']}), judge import wrote nothing: "
                             "free some space and run `searchtrace judge import` again\n"), report
