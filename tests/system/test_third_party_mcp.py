"""A real third-party MCP server from PyPI evaluated with a target file: whoosh-rag-mcp 0.1.2 (Whoosh full-text
search over a folder of Markdown files, no model), in a venv of its own (``.ci/install-mcp-server.sh``, named by
``$SEARCHTRACE_MCP_SERVER``). A small corpus is written as Markdown, indexed by the server's own tool, and asked
the queries of qrels made for it, through the README's target file for it; its answer is text for a person
(``File: PATH`` per hit, a hit per section), read with ``source = "lines"``. Skips when the server is not
installed."""

from __future__ import annotations

import asyncio
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from run_folders import run_trec

from searchtrace.cli import main

SERVER = os.environ.get("SEARCHTRACE_MCP_SERVER", "")
pytestmark = pytest.mark.skipif(not (SERVER and os.access(SERVER, os.X_OK)),
                                reason="no third-party MCP server: run .ci/install-mcp-server.sh and set "
                                       "SEARCHTRACE_MCP_SERVER to the command it prints")

#: The corpus: each document becomes ``DOCS_ROOT/<id>.md``; the Lampwrights' has three sections (## headings),
#: each a hit of its own in the server's index.
CORPUS = {
    "heron": ("The Grey Heron", "The grey heron stands on the sigil of the Lampwrights."),
    "lamps": ("Lampwrights Guild", "The guild trims wicks and sells oil.\n\n## Charter\n\nThe charter was sealed in "
                                   "winter.\n\n## Hall\n\nThe members meet in a hall by the harbour."),
    "harbour": ("Port Vell", "The harbour of Port Vell shelters fishing boats."),
    "ferry": ("The Gullet Ferry", "A ferry crosses the Gullet strait twice a day."),
    "salt": ("Saltworks", "Salt pans line the southern shore of Saffra Key."),
    "bell": ("The Drowned Bell", "Fishermen say a bell rings under the water before storms."),
}
#: Query id: (text, {document: grade}). Whoosh ANDs the terms: "salt harbour" finds nothing (an empty ranking,
#: not a failure), "lampwrights" finds the Lampwrights' three sections and the heron's page.
QUERIES = {
    "q1": ("heron sigil", {"heron": 2}),
    "q2": ("lampwrights charter", {"lamps": 2}),
    "q3": ("lampwrights", {"lamps": 1, "heron": 1}),
    "q4": ("ferry strait", {"ferry": 2}),
    "q5": ("storm bell", {"bell": 1}),
    "q6": ("salt harbour", {"salt": 1}),
}
#: What the server ranks for each query (Whoosh 2.7.4's BM25F), each document once, at its best section.
EXPECTED = {"q1": ["heron"], "q2": ["lamps"], "q3": ["lamps", "heron"], "q4": ["ferry"], "q5": ["bell"]}


def target_file() -> str:
    """The README's target file for this server (run as written, its command pointed at the installed one)."""
    from readme_blocks import read_blocks

    (block,) = [b for b in read_blocks() if b.text.startswith("# whoosh.toml")]
    text = block.text.replace('command = ["whoosh-rag-server"]', f"command = [{json.dumps(SERVER)}]")
    assert text != block.text, f"README.md:{block.line}: the target file names no whoosh-rag-server command"
    return text


def write_dataset(root: Path) -> Path:
    """The corpus as Markdown for the server, and as a BEIR folder with the qrels for the eval."""
    docs, data = root / "docs", root / "whoosh-set"
    (data / "qrels").mkdir(parents=True)
    docs.mkdir()
    for doc, (title, text) in CORPUS.items():
        (docs / f"{doc}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n"
                                               for d, (t, x) in CORPUS.items()))
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t, "metadata": {"split": "test"}})
                                                + "\n" for q, (t, _) in QUERIES.items()))
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, (_, grades) in QUERIES.items() for d, g in grades.items()))
    return docs


def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    """One call of the server's tool, through the ``mcp`` SDK's client (a child of its own)."""
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    async def call() -> Any:
        async with Client(StdioServerParameters(command=SERVER, args=[], env=dict(os.environ)), mode="legacy") as c:
            return await c.call_tool(name, arguments)

    return asyncio.run(call())



def ndcg10(ranking: list[str], grades: dict[str, int]) -> float:
    """nDCG@10 with trec_eval's gains (the grade) and log2 discounts."""
    dcg = sum(grades.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranking[:10]))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(grades.values(), reverse=True)[:10]))
    return dcg / ideal


@pytest.fixture
def indexed(tmp_path, monkeypatch):
    docs = write_dataset(tmp_path)
    monkeypatch.setenv("DOCS_ROOT", str(docs))
    monkeypatch.setenv("INDEX_DIR", str(tmp_path / "whoosh-index"))
    built = call_tool("build_documentation_index", {"force": True})
    assert "Indexed 6 files with 8 sections" in built.content[0].text, built.content[0].text
    return tmp_path


def test_whoosh_rag_mcp_is_evaluated_against_qrels_for_the_corpus_indexed_into_it(indexed):
    target = indexed / "whoosh.toml"
    target.write_text(target_file())
    out = indexed / "run"
    code = main(["eval", str(indexed / "whoosh-set"), "--target-file", str(target), "--out", str(out),
                 "--home", str(indexed / "home"), "--no-progress"])
    assert code in (0, 1), code
    run = json.loads((out / "run.json").read_text())
    assert run["errors"] == 0
    assert run_trec(out) == EXPECTED  # q6: nothing found, so no rows
    metrics = run["metrics"]
    expected = sum(ndcg10(EXPECTED.get(q, []), grades) for q, (_, grades) in QUERIES.items()) / len(QUERIES)
    assert metrics["ndcg@10"] == pytest.approx(expected, abs=1e-4)


def test_its_error_in_text_is_each_query_s_failure_never_an_empty_ranking(tmp_path, monkeypatch, capfd):
    write_dataset(tmp_path)
    monkeypatch.setenv("INDEX_DIR", str(tmp_path / "never-built"))
    target = tmp_path / "whoosh.toml"
    target.write_text(target_file())
    out = tmp_path / "run"
    main(["eval", str(tmp_path / "whoosh-set"), "--target-file", str(target), "--out", str(out),
          "--home", str(tmp_path / "home"), "--no-progress"])
    run = json.loads((out / "run.json").read_text())
    assert run["errors"] == len(QUERIES)
    assert {f["query_id"] for f in run["failed"]} == set(QUERIES)
    for failed in run["failed"]:
        assert failed["code"] == "SEARCH_ERROR"
        assert failed["message"].endswith("content[0].text line 1 is an error: Error: Documentation index not "
                                          "found. Please run 'build_documentation_index' tool first to create the "
                                          "index.")
    assert "6 failed queries of 6 (after retries)" in capfd.readouterr().err
