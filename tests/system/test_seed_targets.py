"""The five seed systems' contracts, each served by a small server written from its seed text
(``tests/seed_servers.py``, ``tests/concept_rag_server.py``) and evaluated with its built-in profile: the run's
``run.trec`` is the ranking the server was told to give, ProxySQL's paged past its cap of 50, every request
carries the eval's ``traceparent``, and the Bearer token reaches neither the run folder nor the traces.
Then the stdio child killed mid-run, and a tool error: each the query's error, and the next query answered."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest
from run_folders import run_trec
from seed_servers import (
    PROXYSQL_TOKEN,
    SAMPLE,
    hawki_app,
    huginn_app,
    kag_app,
    proxysql_app,
    ranking,
)
from serve_helpers import running

from searchtrace.cli import main
from searchtrace.errors import BackendUnavailable, Overloaded, SearchFailed

TESTS = Path(__file__).resolve().parents[1]
CONCEPT_RAG = f"{sys.executable} {TESTS / 'concept_rag_server.py'}"


def split_queries() -> dict[str, str]:
    """The test split's queries: id to text (what each server ranks by)."""
    rows = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text().splitlines() if line.strip()]
    return {r["_id"]: r["text"] for r in rows if r["metadata"].get("split") == "test"}



def evaluate(tmp_path: Path, profile: str, endpoint: str, depth: int, concurrency: int = 1) -> Path:
    out, home = tmp_path / f"run-{profile}-{concurrency}", tmp_path / "home"
    code = main(["eval", str(SAMPLE), "--target-profile", profile, endpoint, "--depth", str(depth), "--out", str(out),
                 "--home", str(home), "--no-progress", "--concurrency", str(concurrency)])
    assert code in (0, 1), code  # 1: the run's verdict on the made-up ranking is not the point here
    assert json.loads((out / "run.json").read_text())["errors"] == 0
    return out


def check_ranking(out: Path, shown: int) -> None:
    got = run_trec(out)
    queries = split_queries()
    assert set(got) == set(queries)
    for qid, text in queries.items():
        assert got[qid] == ranking(text)[:shown], qid


def check_traceparents(seen: list[dict], home: Path) -> None:
    """Every request carried a W3C traceparent of a trace the eval stored (one trace per query)."""
    from searchtrace.traces import TraceStore

    parents = [s["traceparent"] for s in seen]
    assert all(p and len(p.split("-")) == 4 for p in parents)
    trace_ids = {p.split("-")[1] for p in parents}
    assert len(trace_ids) == len(split_queries())
    store = TraceStore(home / "traces.sqlite")
    try:
        for trace_id in list(trace_ids)[:5]:
            trace = store.load_trace(trace_id)
            assert trace is not None and any(s.name == "search" for s in trace.spans)
    finally:
        store.close()


def test_huginn_over_http_get(tmp_path):
    seen: list[dict] = []
    with running(huginn_app(seen)) as url:
        out = evaluate(tmp_path, "huginn", url, depth=20)
    check_ranking(out, 20)
    assert {s["limit"] for s in seen} == {20}
    check_traceparents(seen, tmp_path / "home")


def test_singlestore_kag_over_http_post(tmp_path):
    seen: list[dict] = []
    with running(kag_app(seen)) as url:
        out = evaluate(tmp_path, "singlestore-kag", url, depth=20)
    check_ranking(out, 20)
    assert all(s["top_k"] == 20 and s["debug"] is False for s in seen)
    check_traceparents(seen, tmp_path / "home")


def test_hawki_over_mcp_http_is_asked_at_most_its_cap_and_its_relation_hits_left_out(tmp_path):
    seen: list[dict] = []
    with running(hawki_app(seen)) as url:
        out = evaluate(tmp_path, "hawki", f"{url}/mcp/hawki", depth=100)
    check_ranking(out, 50)  # top_k 1-50, no offset: asked once for 50, the short answer recorded
    assert {s["top_k"] for s in seen} == {50}
    check_traceparents(seen, tmp_path / "home")
    assert json.loads((out / "run.json").read_text())["scored_depth"] == 50


def test_proxysql_over_mcp_http_pages_past_50_with_its_bearer_token_kept_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("PROXYSQL_MCP_TOKEN", PROXYSQL_TOKEN)
    seen: list[dict] = []
    with running(proxysql_app(seen)) as url:
        out = evaluate(tmp_path, "proxysql", url, depth=100)
    check_ranking(out, 100)
    assert sorted({(s["offset"], s["k"]) for s in seen}) == [(0, 50), (50, 50)]
    assert all(s["tool"] == "rag.search_fts" for s in seen)
    check_traceparents([s for s in seen if s["offset"] == 0], tmp_path / "home")
    for folder in (out, tmp_path / "home"):
        for path in folder.rglob("*"):
            if path.is_file():
                assert PROXYSQL_TOKEN.encode() not in path.read_bytes(), path


def test_proxysql_without_its_token_is_refused_naming_the_variable(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("PROXYSQL_MCP_TOKEN", raising=False)
    code = main(["eval", str(SAMPLE), "--target-profile", "proxysql", "http://127.0.0.1:9", "--out",
                 str(tmp_path / "r"), "--home", str(tmp_path / "home"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "[headers] Authorization reads $PROXYSQL_MCP_TOKEN, which is not set" in err
    assert "Traceback" not in err and not (tmp_path / "r").exists()


def test_concept_rag_over_stdio_ranks_each_source_once(tmp_path, monkeypatch):
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("CONCEPT_RAG_LOG", str(log))
    out = evaluate(tmp_path, "concept-rag", CONCEPT_RAG, depth=100)
    check_ranking(out, 12)  # two chunks per source answered; a source ranked once, at its best chunk
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert all(set(c["args"]) == {"text"} for c in calls)
    check_traceparents([{"traceparent": c["meta"].get("traceparent")} for c in calls], tmp_path / "home")


@pytest.mark.parametrize("transport", ["mcp-http", "stdio"])
def test_an_mcp_session_asked_from_four_threads_at_once_answers_each_query_its_own(tmp_path, monkeypatch,
                                                                                  transport):
    """``--concurrency 4``: one MCP session (one stdio child) serves the eval's four threads, each query gets its
    own ranking and carries its own trace's traceparent."""
    if transport == "stdio":
        log = tmp_path / "calls.jsonl"
        monkeypatch.setenv("CONCEPT_RAG_LOG", str(log))
        out = evaluate(tmp_path, "concept-rag", CONCEPT_RAG, depth=100, concurrency=4)
        check_ranking(out, 12)
        seen = [{"traceparent": c["meta"].get("traceparent")} for c in map(json.loads, log.read_text().splitlines())]
    else:
        seen = []
        with running(hawki_app(seen)) as url:
            out = evaluate(tmp_path, "hawki", f"{url}/mcp/hawki", depth=50, concurrency=4)
        check_ranking(out, 50)
    check_traceparents(seen, tmp_path / "home")


def test_a_child_dying_mid_run_is_that_querys_error_and_the_eval_finishes(tmp_path, monkeypatch):
    """The stdio child exits while answering one query: that query is recorded as failed with its error (never
    an empty ranking), a new child answers every later query, and the run says how many failed."""
    from searchtrace.evals import RunFolder

    queries = split_queries()
    doomed = sorted(queries)[len(queries) // 2]
    monkeypatch.setenv("CONCEPT_RAG_DIE_ON", queries[doomed])
    out = tmp_path / "run"
    code = main(["eval", str(SAMPLE), "--target-profile", "concept-rag", CONCEPT_RAG, "--out", str(out),
                 "--home", str(tmp_path / "home"), "--no-progress"])
    assert code == 1
    outcomes = {o.query_id: o for o in RunFolder(out).outcomes()}
    assert set(outcomes) == set(queries)
    assert outcomes[doomed].error == "BACKEND_UNAVAILABLE" and not outcomes[doomed].ranking
    assert all(not o.error and [d for d, _ in o.ranking] == ranking(queries[q])[:12]
               for q, o in outcomes.items() if q != doomed)
    assert json.loads((out / "run.json").read_text())["errors"] == 1


def test_a_killed_stdio_child_is_the_querys_error_and_the_next_query_starts_a_new_one(tmp_path, monkeypatch):
    from searchtrace.evals.runs.targets import open_shaped

    pidfile = tmp_path / "pid"
    monkeypatch.setenv("CONCEPT_RAG_PIDFILE", str(pidfile))
    search = open_shaped(f"target-profile:concept-rag {CONCEPT_RAG}")
    try:
        assert [r["id"] for r in search({"query": "harbour", "top_k": 5})["results"]] == ranking("harbour")[:5]
        first = int(pidfile.read_text())
        os.kill(first, signal.SIGKILL)
        with pytest.raises(BackendUnavailable, match="the session is reopened on the next query"):
            search({"query": "harbour", "top_k": 5})
        assert [r["id"] for r in search({"query": "ferry", "top_k": 5})["results"]] == ranking("ferry")[:5]
        assert int(pidfile.read_text()) != first
        with pytest.raises(SearchFailed, match="tool broad_chunks_search answered an error: .*SEARCH_FAILED"):
            search({"query": "fail please", "top_k": 5})
        assert search({"query": "ferry", "top_k": 5})["results"]  # a tool error leaves the session working
    finally:
        search.close()


@pytest.mark.parametrize(("status", "error", "words"), [(429, Overloaded, "HTTP 429 (overloaded, Retry-After 4 s)"),
                                                        (500, SearchFailed, "HTTP 500")])
def test_an_mcp_service_answering_an_http_error_is_the_error_it_stands_for(status, error, words):
    """The SDK reports every status but 404 as one "error response": the status and its Retry-After are still
    read, so a 429 over MCP is retried after the wait the service asked for."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from searchtrace.evals.runs.targets import open_shaped

    async def refuse(request):
        return JSONResponse({"error": "no"}, status_code=status, headers={"Retry-After": "4"})

    with running(Starlette(routes=[Route("/mcp/hawki", refuse, methods=["GET", "POST", "DELETE"])])) as url:
        search = open_shaped(f"target-profile:hawki {url}/mcp/hawki")
        try:
            with pytest.raises(error) as caught:
                search({"query": "x", "top_k": 3})
        finally:
            search.close()
    assert words in caught.value.message
    if status == 429:
        assert caught.value.retry_after_s == 4.0


def test_a_stdio_tool_that_does_not_answer_in_time_is_a_timeout_and_the_session_goes_on(tmp_path):
    """A target file naming its own command (``[target] command``) and a short ``timeout_s``."""
    from searchtrace.errors import SearchTimeout
    from searchtrace.evals.runs.targets import open_shaped, profile_text

    text = profile_text("concept-rag").replace("timeout_s = 60", "timeout_s = 1.5").replace(
        'tool = "broad_chunks_search"', f'tool = "broad_chunks_search"\ncommand = {json.dumps(CONCEPT_RAG.split())}')
    path = tmp_path / "concept.toml"
    path.write_text(text, encoding="utf-8")
    search = open_shaped(f"target-file:{path}")
    try:
        with pytest.raises(SearchTimeout, match="no answer within 1.5 s"):
            search({"query": "slow please", "top_k": 5})
        assert [r["id"] for r in search({"query": "ferry", "top_k": 5})["results"]] == ranking("ferry")[:5]
    finally:
        search.close()


def test_an_mcp_server_refusing_a_call_is_that_querys_failure_and_the_session_goes_on():
    """The server's handler raised (a JSON-RPC error in place of a result): SearchFailed naming the tool and the
    message, not a lost connection; the next query is answered on the same session."""
    from searchtrace.evals.runs.targets import open_shaped

    seen: list[dict] = []
    with running(hawki_app(seen)) as url:
        search = open_shaped(f"target-profile:hawki {url}/mcp/hawki")
        try:
            with pytest.raises(SearchFailed, match="tool query-search: index offline"):
                search({"query": "crash please", "top_k": 5})
            assert [r["id"] for r in search({"query": "ferry", "top_k": 5})["results"]] == ranking("ferry")[:5]
        finally:
            search.close()
