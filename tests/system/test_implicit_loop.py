"""Implicit judgments end to end (issue 26, part 2's done-when): agents search a served copy of the sample and
fetch the result they want, ``judge implicit`` turns the fetches into graded judgments, and their agreement
with the sample's hidden qrels is printed and above chance.

The copy is served without its qrels. Queries of every category are each asked five times, by three kinds
of agent: twice over MCP with the SDK's client in the handshake era (``mode="legacy"``: a fetch names
nothing, its session links it), once over MCP in protocol 2026-07-28 (no session: the fetch passes the
search's ``traceId``), twice over HTTP (``/v1/docs`` with ``traceId``). The simulated agent reads the
results and fetches the documents the hidden qrels call relevant, the best first, at most two (none when
none is shown). One more HTTP fetch names a trace the store never held.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import anyio
import httpx
import pytest
from mcp.client.client import Client
from sample_labels import hidden_qrels
from serve_helpers import make_service, running

from searchtrace.cli import main

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
QUERIES = 20
ASKED = {"legacy": 2, "auto": 1, "http": 2}  # how many times each kind of agent asks each query
FETCHED = 2  # the most documents an agent fetches after one search
UNKNOWN = "0123456789abcdef0123456789abcdef"


def _mixed(queries: list, oracle: dict[str, dict[str, int]]) -> list:
    """``QUERIES`` labelled queries, the categories taken in turn."""
    by_category: dict[str, list] = {}
    for q in queries:
        if any(oracle.get(q.id, {}).values()):
            by_category.setdefault(q.category, []).append(q)
    turns = [q for group in zip(*by_category.values()) for q in group]
    return turns[:QUERIES]


def _choice(results: list[dict], gold: dict[str, int]) -> list[tuple[str, int]]:
    """The shown documents the hidden qrels call relevant, the best first (the higher of equals), at most
    ``FETCHED``, each with its 1-based shown position."""
    shown = [(r["id"], position) for position, r in enumerate(results, 1) if gold.get(r["id"], 0) > 0]
    return sorted(shown, key=lambda s: (-gold[s[0]], s[1]))[:FETCHED]


def _traffic(url: str, queries: list, oracle: dict[str, dict[str, int]]) -> dict[tuple[str, str], int]:
    """Every agent's searches and fetches; returns each fetched (query id, doc id) and its shown position."""
    fetched: dict[tuple[str, str], int] = {}

    async def mcp(mode: str) -> None:
        async with Client(f"{url}/mcp", mode=mode) as client:  # type: ignore[arg-type]
            for q in queries * ASKED[mode]:
                found = await client.call_tool("search", {"query": q.text, "top_k": 10})
                assert not found.is_error, found.content
                for doc, position in _choice(found.structured_content["results"], oracle[q.id]):
                    named = {"traceId": found.structured_content["traceId"]} if mode == "auto" else {}
                    assert not (await client.call_tool("get_docs", {"ids": [doc], **named})).is_error
                    fetched[(q.id, doc)] = position

    anyio.run(mcp, "legacy")
    anyio.run(mcp, "auto")
    with httpx.Client(base_url=url, timeout=60) as client:
        for q in queries * ASKED["http"]:
            body = client.post("/v1/search", json={"query": q.text, "top_k": 10}).json()
            for doc, position in _choice(body["results"], oracle[q.id]):
                r = client.get("/v1/docs", params={"ids": doc, "traceId": body["traceId"]})
                assert r.status_code == 200, r.text
                fetched[(q.id, doc)] = position
        some_doc = body["results"][0]["id"]
        assert client.get("/v1/docs", params={"ids": some_doc, "traceId": UNKNOWN}).status_code == 200
    return fetched


def test_agents_fetches_become_position_corrected_judgments_that_agree_with_the_hidden_qrels(
        tmp_path, sample_config, sample_index_path, model, sample_dataset, capsys, monkeypatch):
    from searchtrace.evals import Kind, implicit_judgments
    from searchtrace.evals.labels.judgments import JudgingSession
    from searchtrace.home import Home
    from searchtrace.retriever.serve.http import create_app
    from searchtrace.traces import TraceSettings, make_tracer_provider

    monkeypatch.setenv("COLUMNS", "80")
    home = Home(tmp_path / "home")
    shutil.copytree(sample_config.home.root / "cache", home.root / "cache")  # nothing is embedded again
    mine = tmp_path / "own" / "sample"  # the served index is the sample's: its traces name the folder "sample"
    shutil.copytree(SAMPLE, mine, ignore=shutil.ignore_patterns("qrels"))
    oracle = hidden_qrels()
    queries = _mixed(list(sample_dataset.queries), oracle)
    asked = sum(ASKED.values())

    provider, handles = make_tracer_provider(home, TraceSettings(store=True, schedule_delay_ms=50))
    service = make_service([mine], replace(sample_config, home=home), sample_index_path, model,
                           provider.get_tracer("test.implicit"), store=handles.store)
    service.open()
    try:
        with running(create_app(service)) as url:
            fetched = _traffic(url, queries, oracle)
    finally:
        service.close()
        handles.shutdown()  # every span in the store
    assert len({q for q, _ in fetched}) >= QUERIES * 2 // 3

    qrels = [SAMPLE / "qrels" / "test.tsv", SAMPLE / "qrels" / "dev.tsv"]
    argv = ["judge", "implicit", str(mine), "--home", str(home.root), "--no-progress"]
    assert main([*argv, *(a for path in qrels for a in ("--qrels", str(path)))]) == 0
    out = capsys.readouterr().out
    print(out)
    report = implicit_judgments(mine, home=home.root, qrels=qrels, dry_run=True)  # the same, as the API sees it

    # the clicks are exactly the fetches, each at its shown position, the legacy agent's through its session
    counts = report.counts
    assert counts.impressions == QUERIES * asked and counts.clicks == len(fetched) * asked
    assert counts.clicks - counts.by_trace_id == len(fetched) * ASKED["legacy"]
    assert (counts.unknown_traces, counts.unknown_examples, counts.unattributed) == (1, (UNKNOWN,), 0)
    assert "  unknown trace  1 fetch naming 1 trace not in the store: 0123456789ab" in out.splitlines()
    clicked = {p.pair: p for p in report.pairs if p.clicks}
    assert set(clicked) == set(fetched)
    assert report.ctr.clicks.sum() == counts.clicks
    assert sorted(report.ctr.clicks.nonzero()[0] + 1) == sorted(set(fetched.values()))

    # the position correction: equal clicks (one per impression) earn more where an average result draws fewer
    ctr = report.ctr.ctr
    for pair, p in clicked.items():
        assert (p.clicks, p.impressions) == (asked, asked) and p.grade >= 1
        assert p.coec == pytest.approx(1 / ctr[fetched[pair] - 1])
    first = [p for pair, p in clicked.items() if fetched[pair] == 1]
    deeper = [p for pair, p in clicked.items() if ctr[fetched[pair] - 1] < ctr[0]]
    assert first and deeper
    assert min(p.coec for p in deeper) > max(p.coec for p in first)
    assert {p.grade for p in first} == {1} and 2 in {p.grade for p in deeper}
    assert all(p.grade == 2 for p in deeper if p.coec >= report.thresholds.top)

    # written apart from human labels, and agreeing with the hidden qrels above chance
    stored = JudgingSession.open(mine).store.read()
    assert {j.kind for j in stored} == {Kind.IMPLICIT} and len(stored) == len(report.pairs)
    agreement = report.agreement
    assert agreement is not None and agreement.pairs >= len(fetched)
    assert agreement.binary is not None and agreement.binary > 0.3
    assert agreement.cohen is not None and agreement.cohen > 0.1
    assert f"agreement on {agreement.pairs} pairs with the qrels " in out
    assert f"  Cohen's kappa {agreement.cohen:.3f} (grades), {agreement.binary:.3f} (relevant or not)" in out
