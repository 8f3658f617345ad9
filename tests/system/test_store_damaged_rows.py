"""Rows of a published run damaged in the shared store itself (with SQL, as anyone with write access could):
``runs list``, ``runs export`` and ``gate --baseline latest:tag=`` refuse them in one line naming the table, the
run and the field, exit 2, and write nothing; the fuzz of the same decoding without a server is
tests/evals/test_fuzz_store_rows.py (issue 35)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from run_folders import make_run

from searchtrace.cli import main

_FF = hashlib.sha256(b"\xff").hexdigest()
SQL = {
    "tags": ("UPDATE st_runs SET summary = jsonb_set(summary, '{tags}', '\"main\"') WHERE run_id = 'base'",
             "st_runs row of run 'base': summary.tags: expected a list of ids, got 'main'"),
    "doc": ("UPDATE st_run_rankings SET doc_ids[1] = 'planted-doc' WHERE run_id = 'base' AND position = 0",
            "st_run_rankings row 1 of run 'base': doc_ids: 'planted-doc' is not in st_runs.doc_ids"),
    "twice": ("UPDATE st_run_rankings SET query_id = 'q1' WHERE run_id = 'base' AND position = 0",
              "st_run_rankings row 2 of run 'base': query_id: 'q1' ranked twice"),
    "size": ("UPDATE st_run_files SET size = size + 1 WHERE run_id = 'base' AND name = 'settings.json'",
             "of run 'base': size: "),
    "summary gone": ("DELETE FROM st_run_files WHERE run_id = 'base' AND name = 'run.json'",
                     "st_run_files row of run 'base': name: no run.json"),
    "summary not json": ("UPDATE st_run_files SET content = '\\xff'::bytea, size = 1, sha256 = "
                         f"'{_FF}' WHERE run_id = 'base' AND name = 'run.json'",
                         "run 'base': run.json: not UTF-8"),
}


def _damage(store: str, sql: str) -> None:
    from searchtrace.database import Database, StoreUrl

    db = Database(StoreUrl(store))
    try:
        with db.connection() as conn:
            assert conn.execute(sql).rowcount >= 1
    finally:
        db.close()


@pytest.mark.parametrize("which", list(SQL))
def test_a_damaged_row_is_refused_by_list_export_and_gate_naming_it(pg_url, tmp_path, capsys, monkeypatch, which):
    monkeypatch.delenv("SEARCHTRACE_STORE", raising=False)
    monkeypatch.setenv("SEARCHTRACE_HOME", str(tmp_path / "home"))
    assert main(["store", "migrate", "--store", pg_url]) == 0
    base = make_run(tmp_path / "src", "base", tags=("main",), created=datetime(2026, 1, 1, tzinfo=UTC))
    candidate = make_run(tmp_path / "cand", "cand")
    assert main(["runs", "push", str(base.path), "--store", pg_url]) == 0
    sql, named = SQL[which]
    _damage(pg_url, sql)
    (tmp_path / "gate.toml").write_text('[metrics."ndcg@10"]\nmax_drop = 0.01\nrequire_significance = false\n')
    out = tmp_path / "exported"
    capsys.readouterr()
    commands = [["runs", "export", "base", "--out", str(out)],
                ["gate", "--baseline", "latest:tag=main", "--candidate", str(candidate.path), "--home",
                 str(tmp_path / "gating"), "--config", str(tmp_path / "gate.toml")]]
    if which == "tags":  # the listing reads st_runs only
        commands = [["runs", "list"], *commands]
    for command in commands:
        assert main([*command, "--store", pg_url]) == 2, command
        err = capsys.readouterr().err
        assert err.startswith("error: store postgresql://") and named in err and len(err.splitlines()) == 1, err
    assert not out.exists()
    assert not any(p.is_file() for p in Path(tmp_path / "gating").rglob("*") if "runs" in p.parts)
