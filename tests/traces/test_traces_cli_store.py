"""``searchtrace traces`` on the shared store: list, show, export and prune read and write PostgreSQL with
``--store`` (or the variable), name the store masked, and never print its password."""

from __future__ import annotations

import json

from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.cli import main

S = 1000 * MS
DAY = 86_400 * S


def test_list_show_export_and_prune_on_the_shared_store(pg_db, tmp_path, capsys, monkeypatch):
    from searchtrace.traces import PostgresTraceStore

    url = pg_db.url.conninfo
    password = url.split(":")[2].split("@")[0]
    spans, ids = record(*(FakeSearch(start_ns=T0 + i * DAY, query=f"harbour {i}") for i in range(3)))
    PostgresTraceStore(pg_db).write(spans)
    empty_home = str(tmp_path / "home")

    assert main(["traces", "list", "--home", empty_home, "--store", url, "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [t["trace_id"] for t in listed] == ids[::-1]

    assert main(["traces", "show", ids[0][:12], "--home", empty_home, "--store", url]) == 0
    assert "harbour 0" in capsys.readouterr().out

    assert main(["traces", "show", "0" * 12, "--home", empty_home, "--store", url]) == 2
    err = capsys.readouterr().err
    assert "names no trace in postgresql://" in err and password not in err

    monkeypatch.setenv("SEARCHTRACE_STORE", url)
    out = tmp_path / "export.jsonl"
    assert main(["traces", "export", "--out", str(out), "--home", empty_home]) == 0
    assert len(out.read_text().splitlines()) == 3

    now_ns = T0 + 2 * DAY + S  # prune by age against the traces' own clock: the two older than a day go
    import time

    monkeypatch.setattr(time, "time_ns", lambda: now_ns)
    assert main(["traces", "prune", "--older-than-days", "1", "--home", empty_home]) == 0
    said = capsys.readouterr().out
    assert said.startswith("pruned 2 traces; 1 left in postgresql://") and password not in said
    assert PostgresTraceStore(pg_db).stored(ids) == {ids[2]: 11}
