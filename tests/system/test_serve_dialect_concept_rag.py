"""``searchtrace serve --mcp stdio datasets/sample --dialect concept-rag`` driven by the official ``mcp`` client:
the seed's ten tools listed beside ours, each answering as the seed text shows; then the round trip:
``eval --target-profile concept-rag`` against that server ranks as the in-process eval, up to the dialect's own
cap (30 results cut at the gap, relation hits left out: each served list is the head of the local one)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import anyio
import pytest
from concept_rag_seed import TOOLS, same_shape, tools
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from run_folders import run_trec

from searchtrace.cli import main

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
OURS = {"search", "search_keyword", "search_vector", "get_chunks", "get_docs", "stats"}


def child_env() -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
            "HF_HUB_OFFLINE": "1", "SEARCHTRACE_OTLP": "0", "PATH": os.environ.get("PATH", "")}


def serve_args(home: Path) -> list[str]:
    return ["-m", "searchtrace", "serve", "--mcp", "stdio", str(SAMPLE), "--dialect", "concept-rag",
            "--home", str(home), "--no-progress"]


def test_the_dialect_over_stdio_answers_the_seeds_requests(sample_index_path, sample_config):
    params = StdioServerParameters(command=sys.executable, args=serve_args(sample_config.home.root),
                                   cwd=str(REPO), env=child_env())
    requests = {"broad_chunks_search": {"text": "who governs the islands"},
                "catalog_search": {"text": "the largest island"},
                "chunks_search": {"text": "towns", "source": "gaz-hallowmere"},
                "concept_search": {"concept": "Hallowmere"}, "extract_concepts": {"document_query": "Hallowmere"},
                "source_concepts": {"concept": "Port Vell"}, "concept_sources": {"concept": ["Port Vell"]},
                "category_search": {"category": "gazetteer"}, "list_categories": {},
                "list_concepts_in_category": {"category": "gazetteer"}}

    async def drive() -> tuple[set[str], dict, object]:
        async with Client(params, read_timeout_seconds=120) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            answers = {name: await client.call_tool(name, args) for name, args in requests.items()}
            refused = await client.call_tool("concept_search", {"concept": "no such concept at all"})
            return listed, answers, refused

    listed, answers, refused = anyio.run(drive)
    assert listed == OURS | set(TOOLS)
    seed = tools()
    for name, result in answers.items():
        assert not result.is_error, (name, result.content)
        answer = json.loads(result.content[0].text)
        assert answer and same_shape(seed[name].answer, answer) == [], name
    assert refused.is_error and json.loads(refused.content[0].text)["error"]["code"] == "CONCEPT_NOT_FOUND"



def test_eval_against_the_dialect_ranks_as_the_in_process_eval_up_to_its_cap(sample_index_path, sample_config,
                                                                             tmp_path, monkeypatch):
    home = sample_config.home.root
    for name, value in child_env().items():
        monkeypatch.setenv(name, value)
    local, served = tmp_path / "local", tmp_path / "served"
    common = ["--home", str(home), "--no-progress"]
    assert main(["eval", str(SAMPLE), "--out", str(local), *common]) in (0, 1)
    command = shlex.join([sys.executable, *serve_args(home)])
    assert main(["eval", str(SAMPLE), "--target-profile", "concept-rag", command, "--out", str(served),
                 *common]) in (0, 1)
    assert json.loads((served / "run.json").read_text())["errors"] == 0
    want, got = run_trec(local), run_trec(served)
    assert set(got) <= set(want) and len(got) >= 0.9 * len(want)  # a query whose list is cut to nothing: absent
    heads = {q: want[q][:len(docs)] for q, docs in got.items()}
    assert got == heads
    assert all(len(docs) <= 30 for docs in got.values())
    from searchtrace.evals import RunFolder

    ndcg = {name: RunFolder(folder).summary().metrics["ndcg@10"] for name, folder in (("local", local),
                                                                                   ("served", served))}
    print(f"served depth: mean {sum(map(len, got.values())) / len(got):.1f} of "
          f"{sum(map(len, want.values())) / len(want):.1f}; nDCG@10 {ndcg}")


def test_the_dialect_over_streamable_http_at_mcp_concept_rag(sample_index_path, sample_config, model):
    """Over HTTP the tools are at /mcp/concept-rag (its own endpoint, as every dialect's), answering there as
    over stdio; /mcp lists ours only."""
    from opentelemetry.sdk.trace import TracerProvider
    from serve_helpers import make_service, running

    from searchtrace.retriever.serve.http import create_app

    service = make_service([SAMPLE], sample_config, sample_index_path, model, TracerProvider().get_tracer("t"),
                           timeout_s=30.0)
    service.open()

    async def drive(url: str) -> tuple[set[str], set[str], object]:
        async with Client(f"{url}/mcp", read_timeout_seconds=60) as client:
            ours = {t.name for t in (await client.list_tools()).tools}
        async with Client(f"{url}/mcp/concept-rag", read_timeout_seconds=60) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            return ours, listed, await client.call_tool("broad_chunks_search", {"text": "who governs the islands"})

    try:
        with running(create_app(service, dialects=["concept-rag"])) as url:
            ours, listed, result = anyio.run(drive, url)
    finally:
        service.close()
    assert ours == OURS and listed == set(TOOLS)
    answer = json.loads(result.content[0].text)
    assert not result.is_error and answer and same_shape(tools()["broad_chunks_search"].answer, answer) == []
