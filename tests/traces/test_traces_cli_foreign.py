"""``searchtrace traces`` on another retriever's traces: each search listed under its trace with its query and
document ids, the waterfall with span kinds and each search's documents, ``--service``/``--project``, and
``traces id-key``; every line within 80 columns."""

from __future__ import annotations

import argparse
import json

import pytest
from foreign_fixtures import record_foreign, reranker, retriever, trace_id
from opentelemetry.sdk.resources import Resource
from trace_fixtures import FakeSearch, record

from searchtrace.home import Home
from searchtrace.traces import cli
from searchtrace.traces.store.sqlite import TraceStore

LONG = "The harbour town lies where the river meets the sea, " * 4
DOCS = [{"id": "kb-1", "score": 0.8125, "content": LONG},
        {"metadata": json.dumps({"source": "kb-2.md"}), "content": "Tide\ntables."},
        {"id": "kb-3"}]


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="searchtrace")
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["traces", *argv])
    return args.func(args)


def agent(tracer):
    """Two sibling retriever searches, then a reranker, under one CHAIN."""
    with tracer.start_as_current_span("agent", attributes={"openinference.span.kind": "CHAIN"}):
        with tracer.start_as_current_span("retrieve tides", attributes=retriever("tide tables", DOCS)):
            pass
        with tracer.start_as_current_span("retrieve ferries", attributes=retriever("ferry times", DOCS[2:])):
            pass
        with tracer.start_as_current_span("rerank", attributes=reranker("tide tables", DOCS, DOCS[:1], 1)):
            pass


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    foreign = record_foreign(agent, service="rag-app", project="support")
    ours, _ = record(FakeSearch())
    store = TraceStore(Home(tmp_path).traces)
    store.write(foreign + ours + record_foreign(agent, service="other-app", project="ops"))
    store.close()
    return str(tmp_path), trace_id(foreign[0])


def _lines(capsys) -> list[str]:
    out = capsys.readouterr().out.splitlines()
    assert out and all(len(line) <= 80 for line in out), [line for line in out if len(line) > 80]
    return out


def test_list_shows_each_search_of_a_foreign_trace_under_it(home, capsys):
    path, _ = home
    assert run("list", "--home", path, "--service", "rag-app") == 0
    header, trace_line, first, second = _lines(capsys)
    assert "tide tables" in trace_line
    assert first == "  search 'tide tables'  [kb-1, (no id), kb-3]  1 of 3 without an id"
    assert second == "  search 'ferry times'  [kb-3]"


def test_list_filters_by_service_and_project_and_lists_ours_alone(home, capsys):
    path, _ = home
    assert run("list", "--home", path, "--project", "ops", "--format", "json") == 0
    (trace,) = json.loads(capsys.readouterr().out)
    assert (trace["service"], trace["project"], trace["source"]) == ("other-app", "ops", "otlp")
    assert [(s["query"], s["doc_ids"], s["scores"]) for s in trace["searches"]] == [
        ("tide tables", ["kb-1", None, "kb-3"], [0.8125, None, None]), ("ferry times", ["kb-3"], [None])]
    default = str(Resource.create().attributes["service.name"])  # the SDK's: unknown_service:<executable>
    assert run("list", "--home", path, "--service", default) == 0
    header, ours = _lines(capsys)
    assert "search '" not in ours


def test_show_gives_the_span_kinds_and_each_searchs_documents(home, capsys):
    path, tid = home
    assert run("show", tid[:12], "--home", path) == 0
    out = _lines(capsys)
    text = "\n".join(out)
    assert "RETRIEVER" in text and "RERANKER" in text and "CHAIN" in text
    start = out.index(next(line for line in out if line.startswith("search ") and "'tide tables'" in line))
    assert "(openinference, rag-app/support)" in out[start]
    first, second, third = out[start + 1:start + 4]
    assert first.startswith("    1. kb-1       0.8125  The harbour town") and first.endswith("…")
    assert len(first) >= 79  # the text cut to the line (a space before the ellipsis dropped)
    assert second == "    2. (no id)         -  Tide tables."  # a missing score is not 0, its text one line
    assert third == "    3. kb-3            -"


def test_id_key_sets_lists_and_forgets_a_services_key(home, capsys):
    path, tid = home
    assert run("id-key", "rag-app", "source", "--home", path) == 0
    assert _lines(capsys) == ["rag-app: document-id key set to 'source'; 2 stored searches read again"]
    assert run("id-key", "--home", path) == 0
    assert _lines(capsys) == ["rag-app  source"]
    assert run("list", "--home", path, "--service", "rag-app") == 0
    assert _lines(capsys)[2] == "  search 'tide tables'  [kb-1, kb-2.md, kb-3]"
    assert run("id-key", "rag-app", "--forget", "--home", path) == 0
    capsys.readouterr()
    assert run("id-key", "--home", path) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "no document-id key set" in captured.err


@pytest.mark.parametrize("argv, message", [
    (("id-key", "--forget"), "give the SERVICE whose key to set or forget"),
    (("id-key", "rag-app", "source", "--forget"), "give a KEY (not empty) or --forget, not both"),
    (("id-key", "rag-app", " "), "give a KEY (not empty) or --forget, not both"),
])
def test_id_key_refuses_what_it_cannot_do_in_one_line(home, capsys, argv, message):
    path, _ = home
    assert run(*argv, "--home", path) == 2
    err = capsys.readouterr().err
    assert err == f"error: traces id-key: {message}\n"
