"""A team on one shared store: two ``searchtrace serve`` processes with homes of their own, an eval from a third
home publishing its run, the dashboard from a fourth home showing every trace and the run, and ``gate`` on a
fifth home passing against ``latest:tag=``. Real processes, a real PostgreSQL; loopback only, bounded."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from test_serve_workers import SAMPLE, _wait_ready
from test_store_faults import serving_shared

from searchtrace.cli import main

pytestmark = pytest.mark.slow

REQUESTS = 25  # to each server
APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"


def _home_like(source: Path, to: Path) -> Path:
    """A home of its own, with the sample's index and the built model copied (not the traces or runs)."""
    shutil.copytree(source, to, ignore=shutil.ignore_patterns("traces.sqlite*", "runs", "*.lock", "writers"))
    return to


def test_servers_an_eval_the_dashboard_and_the_gate_share_one_store(pg_url, sample_index_path, sample_config,
                                                                     tmp_path, monkeypatch, capsys):
    from searchtrace.database import Database, StoreUrl
    from searchtrace.evals import RunFolder
    from searchtrace.traces import PostgresTraceStore, TraceFilter

    assert main(["store", "migrate", "--store", pg_url]) == 0
    source = sample_config.home.root
    homes = {name: _home_like(source, tmp_path / name) for name in ("server-a", "server-b", "eval")}

    answered: dict[str, list[str]] = {}
    with serving_shared(homes["server-a"], pg_url) as a, serving_shared(homes["server-b"], pg_url) as b:
        urls = {"a": _wait_ready(a, workers=None), "b": _wait_ready(b, workers=None)}
        for name, url in urls.items():
            def one(i: int, url: str = url, name: str = name) -> httpx.Response:
                return httpx.post(f"{url}/v1/search", json={"query": f"harbour {name} {i}", "top_k": 3}, timeout=30)

            with ThreadPoolExecutor(4) as pool:
                answers = list(pool.map(one, range(REQUESTS)))
            assert [r.status_code for r in answers] == [200] * REQUESTS
            answered[name] = [r.headers["x-trace-id"] for r in answers]
    assert a.code == 0 and b.code == 0, a.stderr + b.stderr

    out = homes["eval"] / "runs" / "team-baseline"
    assert main(["eval", str(SAMPLE), "--home", str(homes["eval"]), "--out", str(out), "--mode", "fast",
                 "--tag", "team", "--no-progress", "--store", pg_url]) == 0
    assert "published to store" in capsys.readouterr().err
    queries = len(RunFolder(out).outcomes())

    db = Database(StoreUrl(pg_url))
    traces = PostgresTraceStore(db)
    served = answered["a"] + answered["b"]
    assert len(set(served)) == 2 * REQUESTS and set(traces.stored(served)) == set(served)
    assert traces.count(TraceFilter(sources=("http",))) == 2 * REQUESTS
    assert traces.count(TraceFilter(run_id="team-baseline")) == queries
    db.close()

    # the dashboard, from a home that holds nothing of its own
    from streamlit.testing.v1 import AppTest

    dashboard_home = tmp_path / "dashboard"
    dashboard_home.mkdir()
    monkeypatch.setenv("SEARCHTRACE_HOME", str(dashboard_home))
    monkeypatch.setenv("SEARCHTRACE_STORE", pg_url)
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    assert not at.exception, [e.message for e in at.exception]
    runs = at.dataframe[0].value
    assert runs["run_id"].tolist() == ["team-baseline"] and "team" in runs["tags"].iloc[0]
    shown = [c.value for c in at.sidebar.caption if c.value.startswith("store:")]
    assert len(shown) == 1 and "postgresql" in shown[0] and "\\*\\*\\*\\*" in shown[0], shown  # masked, escaped
    at.switch_page("views/traces.py").run()
    assert not at.exception, [e.message for e in at.exception]
    total = 2 * REQUESTS + queries
    assert any(c.value.startswith(f"{total:,} matching traces") for c in at.caption), [c.value for c in at.caption]
    assert not any(pg_url.split(":")[2].split("@")[0] in c.value for c in at.sidebar.caption)

    # the gate on a fifth home, against the newest run another home published with the tag
    monkeypatch.delenv("SEARCHTRACE_STORE")
    gate_home = tmp_path / "ci-runner"
    assert main(["gate", "--baseline", "latest:tag=team", "--candidate", str(out), "--store", pg_url,
                 "--home", str(gate_home)]) == 0
