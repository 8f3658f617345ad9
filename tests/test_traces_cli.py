"""``searchtrace traces`` subcommands, run through a parser built here."""

from __future__ import annotations

import argparse
import json
import re

import pytest
from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.home import Home
from searchtrace.traces import cli
from searchtrace.traces.store import TraceStore

S = 1000 * MS


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="searchtrace")
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["traces", *argv])
    return args.func(args)


@pytest.fixture
def home(tmp_path):
    spans, ids = record(
        FakeSearch(start_ns=T0, run_id="run-1"),
        FakeSearch(start_ns=T0 + S, mode="fast", results=(("d9", "low", 0.1),), no_confident=True, degraded=("graph",),
                   query="Lantern Guild founder"),
        FakeSearch(start_ns=T0 + 2 * S, error_code="VALIDATION_ERROR", query="[bold]not markup"))
    store = TraceStore(Home(tmp_path).traces)
    store.write(spans)
    store.close()
    return str(tmp_path), ids


def test_list_json(home, capsys):
    path, ids = home
    assert run("list", "--home", path, "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["trace_id"] for r in rows] == ids[::-1]
    assert rows[1] == {
        "trace_id": ids[1], "start_ns": T0 + S, "start": "2023-11-14T22:13:21+00:00", "duration_ms": 20.002,
        "complete": True, "status": "UNSET", "mode": "fast", "query": "Lantern Guild founder", "run_id": None,
        "query_id": None, "top_k": 3, "best_score": 0.1, "no_confident": True, "degraded": ["graph"], "bands": ["low"],
        "n_results": 1, "error_code": None, "n_spans": 11}


@pytest.mark.parametrize("flags, expected", [
    (["--mode", "fast"], [1]),
    (["--no-confident"], [1]),
    (["--confident"], [0]),
    (["--degraded"], [1]),
    (["--degraded", "keyword"], []),
    (["--band", "high"], [0]),
    (["--run-id", "run-1"], [0]),
    (["--query", "LANTERN"], [1]),
    (["--min-latency-ms", "20.002"], [2, 1, 0]),
    (["--since", "2023-11-14T22:13:21+00:00"], [2, 1]),
    (["--until", "2023-11-14T22:13:21+00:00"], [0]),
    (["--since", "1d"], []),
    (["--limit", "1", "--offset", "1"], [1]),
])
def test_list_filters(home, capsys, flags, expected):
    path, ids = home
    assert run("list", "--home", path, "--json", *flags) == 0
    assert [r["trace_id"] for r in json.loads(capsys.readouterr().out)] == [ids[i] for i in expected]


def test_list_table(home, capsys):
    path, ids = home
    assert run("list", "--home", path) == 0
    out = capsys.readouterr().out
    for trace_id in ids:
        assert trace_id in out
    assert "Lantern Guild founder" in out and "no-confident degraded:graph" in out
    assert "[bold]not markup" in out  # user text is not rich markup


def test_show_tree(home, capsys):
    path, ids = home
    assert run("show", ids[1], "--home", path) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"trace {ids[1]}")
    assert re.search(r"search  20\.0 ms  query='Lantern Guild founder'  mode=fast  top_k=3  results=\[d9\]  "
                     r"bands=\[low\]  bestScore=0\.100  noConfidentResults  degraded=\[graph\]", out)
    assert "retry.narrower='river harbour town'" in out
    for stage in ("validate", "rewrite", "embed", "dense", "keyword", "fuse", "rerank", "filter", "shape"):
        assert re.search(rf"[├└]── {stage}  2\.0 ms", out), stage
    assert "dense  2.0 ms  candidates=5  top=[d9, dense-0, dense-1, … (+2)]" in out
    assert "graph  2.0 ms  candidates=5  top=[d9, graph-0, graph-1, … (+2)]  TimeoutError: too slow" in out


def test_show_unknown_id(home, capsys):
    path, _ = home
    assert run("show", "f" * 32, "--home", path) == 2
    assert f"error: no trace '{'f' * 32}' in" in capsys.readouterr().err


def test_show_without_a_store(tmp_path, capsys):
    assert run("show", "f" * 32, "--home", str(tmp_path / "nothing")) == 2
    assert not (tmp_path / "nothing").exists()  # reading never creates a store


def test_export_jsonl_to_stdout_and_file(home, capsys, tmp_path):
    path, ids = home
    assert run("export", "--format", "jsonl", "--home", path, "--mode", "graph") == 0
    lines = capsys.readouterr().out.splitlines()
    first_spans = [json.loads(x)["resourceSpans"][0]["scopeSpans"][0]["spans"][0] for x in lines]
    assert [s["traceId"] for s in first_spans] == [ids[2], ids[0]]
    out = tmp_path / "traces.jsonl"
    assert run("export", "--home", path, "--out", str(out)) == 0
    assert len(out.read_text().splitlines()) == 3
    assert f"exported 3 traces to {out}" in capsys.readouterr().err


def test_prune(home, capsys):
    path, ids = home
    assert run("prune", "--home", path) == 2
    assert "prune needs --older-than-days N and/or --keep-last N" in capsys.readouterr().err
    assert run("prune", "--home", path, "--keep-last", "1") == 0
    _assert_pruned(capsys.readouterr().out, "pruned 2 traces; 1 left")
    assert run("prune", "--home", path, "--older-than-days", "1") == 0  # the fixture's traces are from 2023
    _assert_pruned(capsys.readouterr().out, "pruned 1 traces; 0 left")


def _assert_pruned(out: str, counts: str) -> None:
    """The counts, then the store's size before and after: pruning never grows the file."""
    found = re.fullmatch(re.escape(counts) + r"; the store went from ([\d.]+) MiB to ([\d.]+) MiB", out.strip())
    assert found, out
    assert float(found[2]) <= float(found[1])


@pytest.mark.parametrize("argv", [["list", "--band", "top"], ["list", "--since", "yesterday"],
                                  ["list", "--limit", "-1"], ["prune", "--keep-last", "x"],
                                  ["list", "--confident", "--no-confident"], ["export", "--format", "csv"]])
def test_bad_arguments_exit_2(argv):
    with pytest.raises(SystemExit) as exc:
        run(*argv)
    assert exc.value.code == 2


def test_home_from_environment(home, capsys, monkeypatch):
    path, ids = home
    monkeypatch.setenv("SEARCHTRACE_HOME", path)
    assert run("list", "--json") == 0
    assert len(json.loads(capsys.readouterr().out)) == 3


def test_locked_or_broken_store_is_one_line(tmp_path, capsys):
    Home(tmp_path).traces.write_bytes(b"not a database" * 100)
    assert run("list", "--home", str(tmp_path)) == 1
    assert "error: trace store" in capsys.readouterr().err
