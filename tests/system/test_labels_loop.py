"""The labels loop end to end (issue 25's done-when): traffic over HTTP and MCP to a corpus served without labels, a
query set from its traces, two configurations ranked and pooled, the pool judged (a few pairs with clicks on the
dashboard's Judge page in Chromium, the rest by the sample's hidden qrels as the judge), the labels exported and
scored with judged@10, and the gate refusing a candidate whose top 10 nobody judged until its pairs are pooled and
judged.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx
import pytest
from mcp.client.client import Client
from sample_labels import hidden_qrels
from serve_helpers import make_service, running

from searchtrace.cli import main

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("chromium") is None,
                       reason="no chromium on PATH: run .ci/install-browser.sh (Debian chromium, chromium-driver)"),
]

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
HTTP_QUERIES, MCP_QUERIES = 8, 4  # distinct query texts sent over each surface
CLICKS = (2, 0, 1)  # the grades a person clicks on the Judge page


def _queries(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]


def _metrics(run: Path) -> dict:
    return json.loads((run / "run.json").read_text(encoding="utf-8"))["metrics"]


def _serve_traffic(home, dataset: Path, texts_http: list[str], texts_mcp: list[str], config, index_path, model):
    """The hidden copy served in-process; queries sent over HTTP (some twice) and MCP; traces stored in ``home``."""
    from searchtrace.retriever.serve.http import create_app
    from searchtrace.traces import TraceSettings, make_tracer_provider

    provider, handles = make_tracer_provider(home, TraceSettings(store=True, schedule_delay_ms=50))
    service = make_service([dataset], config, index_path, model, provider.get_tracer("test.loop"), store=handles.store)
    service.open()
    trace_ids = []
    try:
        with running(create_app(service)) as url:
            with httpx.Client(base_url=url, timeout=60) as client:
                for text in texts_http + texts_http[:3]:  # three asked twice
                    r = client.post("/v1/search", json={"query": text, "top_k": 10})
                    assert r.status_code == 200, r.text
                    trace_ids.append(r.json()["traceId"])

            async def mcp() -> list[str]:
                async with Client(f"{url}/mcp") as client:
                    out = []
                    for text in texts_mcp + texts_http[:1]:  # one asked over both surfaces
                        result = await client.call_tool("search", {"query": text, "top_k": 10})
                        assert not result.is_error, result.content
                        out.append(result.structured_content["traceId"])
                    return out

            trace_ids += anyio.run(mcp)
    finally:
        service.close()
        handles.shutdown()  # every span flushed into the store
    return trace_ids


def _settle(browser, text: str) -> str:
    browser.wait_for(f"{IDLE} && document.body.innerText.includes({json.dumps(text)})")
    time.sleep(0.5)
    browser.wait_for(IDLE)
    return browser.evaluate("document.body.innerText")


def _judge_in_browser(home: Path, dataset: Path) -> None:
    """A person named ana grades the first pairs of the pool with mouse clicks on the Judge page."""
    from headless_chromium import Chromium
    from streamlit_server import serve

    from searchtrace.evals import JudgingSession

    with serve(home) as url, Chromium(timeout_s=60) as browser:
        browser.open(f"{url}/judge?dataset={quote(str(dataset))}")
        _settle(browser, "Start judging")
        browser.click(".st-key-judge-name-input input")
        browser.call("Input.insertText", text="ana")
        browser.call("Input.dispatchKeyEvent", type="keyDown", key="Enter", code="Enter", windowsVirtualKeyCode=13)
        browser.call("Input.dispatchKeyEvent", type="keyUp", key="Enter", code="Enter", windowsVirtualKeyCode=13)
        browser.click(".st-key-judge-name-start button")
        text = _settle(browser, "This query: 0 of ")
        assert "judging as ana" in text
        for done, grade in enumerate(CLICKS, 1):
            browser.click(f".st-key-judge-grade-{grade} button")
            deadline = time.monotonic() + 30
            while len(JudgingSession.open(dataset).store.read()) < done:
                assert time.monotonic() < deadline, "a click was not stored"
                time.sleep(0.1)
            _settle(browser, f"This query: {done} of ")


def _judge_the_rest(dataset: Path, oracle: dict[str, dict[str, int]]) -> int:
    """The simulated judge grades every pooled pair nobody has judged; returns how many it judged."""
    from searchtrace.evals import JudgingSession
    from searchtrace.evals.labels.judgments.folder import JudgingFolder
    from searchtrace.evals.labels.judgments.pool import pairs_of, read_pool

    session = JudgingSession.open(dataset)
    judged = {j.pair for j in session.store.read()}
    todo = [p for p in pairs_of(read_pool(JudgingFolder.at(dataset))) if p not in judged]
    for query_id, doc_id in todo:
        session.record(query_id, doc_id, oracle[query_id].get(doc_id, 0), "oracle")
    return len(todo)


def test_traffic_to_labels_to_a_gate_that_asks_for_judging(tmp_path, sample_config, sample_index_path, model,
                                                           sample_dataset, capsys):
    from searchtrace.evals import JudgingSession, RunFolder
    from searchtrace.evals.labels.judgments.folder import JudgingFolder
    from searchtrace.evals.labels.judgments.pool import pairs_of, read_pool
    from searchtrace.evals.runs.trec import read_run
    from searchtrace.home import Home

    started = time.monotonic()
    home = Home(tmp_path / "home")
    shutil.copytree(sample_config.home.root / "cache", home.root / "cache")  # nothing is embedded again
    config = replace(sample_config, home=home)
    mine = tmp_path / "own" / "sample"  # the served index is the sample's: its traces name the folder "sample"
    shutil.copytree(SAMPLE, mine, ignore=shutil.ignore_patterns("qrels"))
    hidden = hidden_qrels()
    labelled = [q for q in sample_dataset.queries if any(hidden.get(q.id, {}).values())]
    texts_http = [q.text for q in labelled[:HTTP_QUERIES]]
    texts_mcp = [q.text for q in labelled[HTTP_QUERIES:HTTP_QUERIES + MCP_QUERIES]]
    sample_id = {q.text: q.id for q in sample_dataset.queries}

    # 1. traffic over HTTP and MCP, traced into the home's store
    traces = _serve_traffic(home, mine, texts_http, texts_mcp, config, sample_index_path, model)
    assert len(traces) == len(set(traces)) == HTTP_QUERIES + 3 + MCP_QUERIES + 1

    # 2. a query set from the traces: each distinct text once, with how often it was asked
    qset = tmp_path / "mine-q"
    h = ["--home", str(home.root)]
    assert main(["queries", "from-traces", str(qset), "--dataset", str(mine), *h, "--no-progress"]) == 0
    queries = _queries(qset)
    assert sorted(q["text"] for q in queries) == sorted(texts_http + texts_mcp)
    counts = {q["text"]: q["metadata"]["count"] for q in queries}
    assert [counts[t] for t in texts_http] == [3, 2, 2] + [1] * (HTTP_QUERIES - 3)
    assert [counts[t] for t in texts_mcp] == [1] * MCP_QUERIES
    assert sorted(t for q in queries for t in q["metadata"]["trace_ids"]) == sorted(traces)  # HTTP and MCP alike
    assert not (qset / "qrels").exists()
    assert json.loads((qset / "queryset.json").read_text())  # what was filtered and sampled, kept beside it
    oracle = {q["_id"]: hidden.get(sample_id[q["text"]], {}) for q in queries}
    capsys.readouterr()

    # 3. two configurations rank it; without labels nothing is scored
    runs = tmp_path / "runs"
    configs = {"a": [], "b": ["--fusion", "rrf"], "c": ["--weights", "keyword=0"]}  # c: dense only

    def evaluate(name: str, out: str) -> Path:
        code = main(["eval", str(qset), "--mode", "fast", "--out", str(runs / out), *configs[name], *h,
                     "--no-progress"])
        assert code == 0, capsys.readouterr()
        return runs / out

    a1, b1 = evaluate("a", "a1"), evaluate("b", "b1")
    assert "no labels yet" in capsys.readouterr().out
    for run in (a1, b1):
        assert _metrics(run) and all(value is None for value in _metrics(run).values())  # scored nothing
        assert set(read_run(RunFolder(run).run_file).to_dict()) == {q["_id"] for q in queries}  # ranked every one

    # 4. pool their top 5
    assert main(["judge", "pool", str(qset), "--runs", str(a1), str(b1), "--depth", "5"]) == 0
    pool = pairs_of(read_pool(JudgingFolder.at(qset)))
    assert len(queries) * 5 <= len(pool) <= len(queries) * 10 and len(set(pool)) == len(pool)
    assert f"pooled {len(pool)} new pairs" in capsys.readouterr().out

    # 5. judge: a few pairs by clicks in Chromium, the rest by the hidden qrels
    _judge_in_browser(home.root, qset)
    clicked = list(JudgingSession.open(qset).store.read())
    assert [(j.grade, j.judge) for j in clicked] == [(g, "ana") for g in CLICKS]
    assert {j.pair for j in clicked} <= set(pool)
    assert _judge_the_rest(qset, oracle) == len(pool) - len(CLICKS)

    # 6. labels out, then both configurations scored on them, with judged@10
    assert main(["judge", "export", str(qset), "--split", "test"]) == 0
    exported = (qset / "qrels" / "test.tsv").read_text().splitlines()
    assert len(exported) == 1 + len(pool)
    a2, b2 = evaluate("a", "a2"), evaluate("b", "b2")
    for run in (a2, b2):
        metrics = _metrics(run)
        assert {"ndcg@10", "judged@10"} <= set(metrics) and 0 < metrics["judged@10"] <= 1
        assert metrics["ndcg@10"] > 0
    capsys.readouterr()

    # 7. the gate: a candidate whose top 10 nobody judged is refused, with the command that fixes it
    c1 = evaluate("c", "c1")
    assert _metrics(c1)["judged@10"] < 0.9
    capsys.readouterr()
    assert main(["gate", "--baseline", str(a2), "--candidate", str(c1)]) == 2
    err = capsys.readouterr().err
    assert "judged@10" in err and "below the gate's floor 0.90" in err
    command = f"searchtrace judge pool {qset} --runs {c1} --depth 10"
    assert command in " ".join(err.split())
    assert main(command.split()[1:]) == 0
    grown = pairs_of(read_pool(JudgingFolder.at(qset)))
    assert set(pool) <= set(grown)  # the advice adds: nothing pooled (or judged) before is lost
    assert f"the pool holds {len(grown)} pairs ({len(pool)} before)" in capsys.readouterr().out
    judged_c = _judge_the_rest(qset, oracle)
    assert judged_c > 0
    assert main(["judge", "export", str(qset), "--split", "test", "--force"]) == 0
    a3, c2 = evaluate("a", "a3"), evaluate("c", "c2")
    assert _metrics(c2)["judged@10"] >= 0.9
    capsys.readouterr()
    assert main(["gate", "--baseline", str(a3), "--candidate", str(c2)]) in (0, 1)
    assert "judged_floor" not in capsys.readouterr().err
    assert time.monotonic() - started < 600
