"""``searchtrace traces`` subcommands, run through a parser built here."""

from __future__ import annotations

import argparse
import json
import re

import pytest
from opentelemetry.sdk.resources import Resource
from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.home import Home
from searchtrace.traces import cli
from searchtrace.traces.store.sqlite import TraceStore

SDK_SERVICE = Resource.create().attributes["service.name"]  # unknown_service:<executable>

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
        "n_results": 1, "error_code": None, "n_spans": 11, "root_name": "search", "source": None, "kind": "search",
        "cold": None, "status_code": None, "service": SDK_SERVICE, "project": None}


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
    (["--errors"], [2]),
    (["--kind", "search"], [2, 1, 0]),
    (["--kind", "load"], []),
])
def test_list_filters(home, capsys, flags, expected):
    path, ids = home
    assert run("list", "--home", path, "--json", *flags) == 0
    assert [r["trace_id"] for r in json.loads(capsys.readouterr().out)] == [ids[i] for i in expected]


def test_list_wide_table_shows_every_column_whole(home, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    path, ids = home
    assert run("list", "--home", path, "--wide") == 0
    out = capsys.readouterr().out
    for trace_id in ids:
        assert trace_id in out
    assert "Lantern Guild founder" in out and "no-confident degraded:graph" in out
    assert "[bold]not markup" in out  # user text is not rich markup
    assert "Which river runs past the harbour town?" in out and "high,medium,low" in out and "…" not in out
    assert re.split(r"\s{2,}", out.splitlines()[0].strip()) == [
        "start", "trace id", "ms", "mode", "best", "bands", "flags", "query", "root"]


def _lines_at(columns: int, monkeypatch, capsys, *argv: str) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert run(*argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and max(len(line) for line in lines) <= columns, "\n".join(lines)
    return lines


def test_list_at_80_columns_shows_the_query_and_results_not_only_time_and_id(home, capsys, monkeypatch):
    path, ids = home
    lines = _lines_at(80, monkeypatch, capsys, "list", "--home", path)
    header = re.split(r"\s{2,}", lines[0].strip())
    assert header[:2] == ["start", "trace id"] and {"ms", "best", "query"} <= set(header)
    rows = dict(zip(ids[::-1], lines[1:]))
    assert len(lines) == 4
    for trace_id, row in rows.items():
        assert trace_id[:12] in row  # traces show takes the prefix
    assert "Lantern Guild founder" in rows[ids[1]] and "0.100" in rows[ids[1]]
    assert "0.810" in rows[ids[0]] and "Which river runs past" in rows[ids[0]]
    assert "error:VALI" in rows[ids[2]]


def test_list_keeps_the_most_useful_columns_as_the_width_shrinks(home, capsys, monkeypatch):
    path, ids = home
    narrow = _lines_at(40, monkeypatch, capsys, "list", "--home", path)
    assert re.split(r"\s{2,}", narrow[0].strip()) == ["trace id", "ms", "query"]  # no room for the start's 14
    assert narrow[2] == f"{ids[1][:12]}  20.0  Lantern Guild found…"  # the query cut to its least, 20
    wider = _lines_at(120, monkeypatch, capsys, "list", "--home", path)
    assert "mode" in wider[0] and "bands" in wider[0] and "Which river runs past the harbour town?" in wider[3]


def test_list_tsv_has_every_column_whole_under_a_header(tmp_path, capsys, monkeypatch):
    spans, ids = record(FakeSearch(start_ns=T0, query="tab\there and a newline\n" + "long " * 40))
    store = TraceStore(Home(tmp_path).traces)
    store.write(spans)
    store.close()
    monkeypatch.setenv("COLUMNS", "40")
    assert run("list", "--home", str(tmp_path), "--format", "tsv") == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split("\t") == ["start", "trace id", "ms", "mode", "best", "bands", "flags", "query", "root"]
    cells = row.split("\t")
    assert len(cells) == 9 and cells[8] == "search" and cells[1] == ids[0] and cells[0] == "2023-11-14 22:13:20+0000".replace(
        "+0000", cells[0][-5:])  # local time, with its offset
    assert cells[2:6] == ["20.0", "graph", "0.810", "high,medium,low"] and cells[6] == ""
    assert cells[7] == "tab here and a newline " + "long " * 40 and "…" not in row


@pytest.mark.parametrize("argv", [["--json", "--wide"], ["--format", "tsv", "--wide"]])
def test_list_wide_goes_with_the_table_only(home, capsys, argv):
    path, _ = home
    assert run("list", "--home", path, *argv) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("error: --wide goes with the table")


def test_list_json_and_format_json_agree(home, capsys):
    path, _ = home
    assert run("list", "--home", path, "--json") == 0
    first = capsys.readouterr().out
    assert run("list", "--home", path, "--format", "json") == 0
    assert capsys.readouterr().out == first and json.loads(first)


def test_show_tree(home, capsys):
    path, ids = home
    assert run("show", ids[1], "--home", path, "--wide") == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"trace {ids[1]}")
    assert re.search(r"search  20\.0 ms  query='Lantern Guild founder'  mode=fast  top_k=3  results=\[d9\]  "
                     r"bands=\[low\]  bestScore=0\.100  noConfidentResults  degraded=\[graph\]", out)
    assert "retry.narrower='river harbour town'" in out
    for stage in ("validate", "rewrite", "embed", "dense", "keyword", "fuse", "rerank", "filter", "shape"):
        assert re.search(rf"[├└]── {stage}  2\.0 ms", out), stage
    assert "dense  2.0 ms  candidates=5  top=[d9, dense-0, dense-1, … (+2)]" in out
    assert "graph  2.0 ms  candidates=5  top=[d9, graph-0, graph-1, … (+2)]  TimeoutError: too slow" in out


@pytest.mark.parametrize("columns", [80, 50])
def test_show_fits_the_width_wrapping_attributes_and_cutting_long_values(tmp_path, capsys, monkeypatch, columns):
    spans, [trace_id] = record(FakeSearch(start_ns=T0, query="Which river " * 30, degraded=("graph",)))
    store = TraceStore(Home(tmp_path).traces)
    store.write(spans)
    store.close()
    lines = _lines_at(columns, monkeypatch, capsys, "show", trace_id, "--home", str(tmp_path))
    out = "\n".join(lines)
    assert lines[0].startswith(f"trace {trace_id}")
    query = next(line for line in lines if "query='" in line)
    assert query.endswith("…") and query.startswith("    │   query='Which river Which river")  # cut, indented
    assert any(line.startswith("└── search  20.0 ms") for line in lines[1:3])  # the header may wrap too
    for attribute in ("mode=graph", "top_k=3", "results=[d1, d2, d3]", "bands=[high, medium, low]",
                      "bestScore=0.810", "degraded=[graph]", "TimeoutError: too slow", "fusion=rrf",
                      "reranker=identity"):
        assert attribute in out  # wrapped, never cut: each fits a line
    for stage in ("validate", "rewrite", "embed", "dense", "keyword", "graph", "fuse", "rerank", "filter", "shape"):
        assert re.search(rf"^    [├└]── {stage}  2\.0 ms", out, re.M), stage
    wrapped = [line for line in lines if line.startswith("    │       ")]  # a stage's attributes below it
    assert wrapped or columns == 80


def test_show_takes_a_unique_prefix_and_refuses_an_ambiguous_or_bad_one(tmp_path, capsys):
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    class Twins(RandomIdGenerator):
        def __init__(self) -> None:
            self.next = 0

        def generate_trace_id(self) -> int:
            self.next += 1
            return 0xABCDEF01_00000000_00000000_00000000 + self.next

    spans, ids = record(FakeSearch(start_ns=T0), FakeSearch(start_ns=T0 + S), id_generator=Twins())
    store = TraceStore(Home(tmp_path).traces)
    store.write(spans)
    store.close()
    assert ids == ["abcdef01" + "0" * 23 + "1", "abcdef01" + "0" * 23 + "2"]
    assert run("show", ids[1][:31].upper() + "2", "--home", str(tmp_path)) == 0
    assert capsys.readouterr().out.startswith(f"trace {ids[1]}")
    assert run("show", "abcdef01", "--home", str(tmp_path)) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("error: 'abcdef01' begins several trace ids: give more digits")
    for bad in ("abcdef0", "not-hex-at-all", "a" * 33):
        assert run("show", bad, "--home", str(tmp_path)) == 2
        [line] = capsys.readouterr().err.splitlines()
        assert line == f"error: a trace id is 32 hex digits, or a prefix of at least 8; got {bad!r}"


def test_show_unknown_id(home, capsys):
    path, _ = home
    assert run("show", "f" * 32, "--home", path) == 2
    assert f"error: '{'f' * 32}' names no trace in" in capsys.readouterr().err


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


def test_list_flags_a_cold_search_and_lists_model_loads_by_kind(tmp_path, capsys, monkeypatch):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from searchtrace.traces import vocabulary as v

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    tracer.start_span(v.EMBEDDER_LOAD_SPAN, start_time=T0).end(end_time=T0 + 900 * MS)
    tracer.start_span(v.SEARCH_SPAN, start_time=T0 + S, attributes={v.SEARCH_COLD: True, v.INPUT_VALUE: "q",
                                                                    v.MODE: "fast"}).end(end_time=T0 + S + 5 * MS)
    store = TraceStore(Home(tmp_path).traces)
    store.write(exporter.get_finished_spans())
    store.close()
    lines = _lines_at(80, monkeypatch, capsys, "list", "--home", str(tmp_path), "--kind", "search")
    assert len(lines) == 2 and "cold" in lines[1]
    assert run("list", "--home", str(tmp_path), "--kind", "load", "--json") == 0
    [load] = json.loads(capsys.readouterr().out)
    assert (load["kind"], load["root_name"], load["query"]) == ("load", v.EMBEDDER_LOAD_SPAN, None)
