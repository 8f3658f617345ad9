"""The dashboard reads run folders through their checks: a damaged file is listed with its error (issue 35)."""

from __future__ import annotations

import random

from run_folders import make_run

from searchtrace.dashboard.data import damaged_runs, list_runs


def test_a_run_whose_rankings_were_damaged_is_listed_as_damaged_naming_the_file(tmp_path):
    good, bad = make_run(tmp_path / "runs", "good"), make_run(tmp_path / "runs", "bad")
    path = bad.path / "rankings.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 2 - 32:len(data) // 2 + 32] = random.Random(0).randbytes(64)
    path.write_bytes(bytes(data))
    assert list_runs(tmp_path)["run_id"].tolist() == [good.run_id]
    damaged = damaged_runs(tmp_path)
    assert damaged["run_id"].tolist() == [bad.run_id] and "rankings.parquet" in damaged["error"][0]
