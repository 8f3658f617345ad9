"""``serve --dialect``: each dialect translates the seed's request into ours and our response into the seed's answer.

A Service whose search answers one known response (a passage-rich graph search with a relation hit on top)
stands in for the datasets; its server spans are real, so the traces' source is checked too. The example
answers are read from the seed texts in ``../shared/seeds/`` (their JSON where they give it).
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from searchtrace.errors import ConfigError, ValidationError
from searchtrace.names import Band, Mode
from searchtrace.retriever.config.resolve import resolve_config
from searchtrace.retriever.response import Metadata, RelationHit, Result, RetryHints, SearchResponse, Triple
from searchtrace.retriever.serve.config import ServeConfig
from searchtrace.retriever.serve.dialects import DIALECTS, STDIO, check_dialects, mount_dialects, stdio_speakers
from searchtrace.retriever.serve.http import traced
from searchtrace.retriever.serve.service import Service, Variant
from searchtrace.traces import vocabulary as v

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
TOKEN = "proxysql-unit-token"

MD = Metadata("Hallowmere", "https://x.invalid/doc/hall", "en", "2019-05-22", ("island", "geography"), "gazetteer")
FACT = RelationHit("rel-1", "Port Vell", "capital of", "Hallowmere", 0.9, Band.HIGH, MD, ("hall",))
PASSAGES = tuple(Result(f"d{i}", f"Title {i}\ntext {i}", round(0.9 - i / 10, 3), Band.MEDIUM, MD) for i in range(6))
KG = (Triple("Port Vell", "capital of", "Hallowmere", "hall"), Triple("Greywick", "on", "Hallowmere", "d0"))
RESPONSE = SearchResponse(results=(FACT, *PASSAGES), kg=KG, rewrite_terms=("hallowmere",), best_score=0.9,
                          no_confident_results=False, retry_hints=RetryHints(("Hallowmere",), ("Port Vell",), "", ""),
                          trace_id="ab" * 16, mode=Mode.GRAPH, degraded=())


def seed(prefix: str) -> str:
    found = sorted(SEEDS.glob(f"{prefix}_*.txt"))
    if not found:
        pytest.skip(f"the seed texts are not at {SEEDS}")
    return found[0].read_text(encoding="utf-8")


def json_blocks(text: str) -> list[Any]:
    """Every top-level JSON object in ``text`` (``{...}`` placeholders read as empty objects)."""
    text = text.replace("{...}", "{}")
    out, decoder, i = [], json.JSONDecoder(), 0
    while (i := text.find("{", i)) >= 0:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i += 1
            continue
        out.append(value)
        i = end
    return out


def same_shape(example: Any, ours: Any, where: str = "") -> None:
    """Every key of ``example`` is in ``ours`` with a value of the same JSON type (lists: their first items)."""
    kinds = {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}
    if example is None:
        return
    assert kinds[type(ours)] == kinds[type(example)], f"{where}: {type(ours).__name__} where the seed has " \
                                                      f"{type(example).__name__}"
    if isinstance(example, dict):
        for key, value in example.items():
            assert key in ours, f"{where}.{key}: missing"
            same_shape(value, ours[key], f"{where}.{key}")
    elif isinstance(example, list) and example and ours:
        same_shape(example[0], ours[0], f"{where}[0]")


class CannedService(Service):
    """The real server spans and refusals; ``search`` answers :data:`RESPONSE`, recording what it was asked."""

    def __init__(self, tmp: Path, response: SearchResponse = RESPONSE, **serve: Any) -> None:
        self.memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.memory))
        super().__init__([tmp / "sample"], resolve_config(home=tmp / "home", environ={}), ServeConfig(**serve),
                         lambda path, cfg: None,  # type: ignore[arg-type, return-value]
                         tracer=provider.get_tracer("test.dialects"))
        self.response = response
        self.asked: list[tuple[dict[str, Any], Variant | None, v.Source]] = []
        self.facts: list[bool] = []

    async def search(self, body: Any, variant: Variant | None, source: v.Source, *,
                     facts: bool = True) -> SearchResponse:
        self.asked.append((dict(body), variant, source))
        self.facts.append(facts)
        return self.response

    async def documents(self, ids: Any, dataset: Any, chunks: bool, follows: object = None) -> list[dict]:
        return [{"id": i, "title": f"T {i}", "text": f"text {i}", "metadata": MD.to_json()} for i in ids]

    def stats(self) -> dict[str, Any]:
        return {"datasets": {"sample": {"documents": 216, "triples": 400, "model": "m"}}, "searchesServed": 3,
                "latencyMs": None}

    def sources(self) -> list[str]:
        found = [dict(s.attributes or {}) for s in self.memory.get_finished_spans()]
        return [str(a[v.SOURCE]) for a in found if v.SOURCE in a]


def mounted(tmp_path: Path, name: str, **serve: Any) -> tuple[CannedService, Any, FastAPI]:
    service = CannedService(tmp_path, **serve)
    app = FastAPI()
    speaker, = mount_dialects(app, service, [name], traced)
    return service, speaker, app


def call(speaker: Any, path: str, tool: str, args: dict[str, Any]) -> Any:
    return asyncio.run(speaker.call(speaker.endpoints[path], tool, args, None))


def test_the_registry_names_each_dialect_once_and_refuses_an_unknown_one():
    assert set(DIALECTS) == {"hawki", "huginn", "proxysql", "singlestore-kag", "concept-rag"}
    assert all(v.Source(name).value == name for name in DIALECTS)  # each is a trace source
    assert check_dialects(["hawki", "huginn", "hawki"]) == ["hawki", "huginn"]
    with pytest.raises(ValidationError, match="unknown dialect 'nope'; known: hawki"):
        check_dialects(["nope"])


def test_over_stdio_only_a_dialect_whose_seed_speaks_stdio_is_served(tmp_path):
    service = CannedService(tmp_path)
    with pytest.raises(ValidationError, match="--dialect huginn: served over HTTP only"):
        stdio_speakers(service, ["concept-rag", "huginn"])
    speaker, = stdio_speakers(service, ["concept-rag"])
    assert STDIO == {"concept-rag"} and list(speaker.endpoints) == ["/mcp/concept-rag"]
    assert speaker.managers == [] and speaker.source is v.Source.CONCEPT_RAG  # recorded, nothing mounted


# -- HAWKI ------------------------------------------------------------------------------------------------


def test_hawki_answers_the_seeds_reference_example_shape_with_tags_as_one_string(tmp_path):
    service, speaker, _ = mounted(tmp_path, "hawki")
    answer = call(speaker, "/mcp/hawki", "query-search", {"query": "capital of Hallowmere", "top_k": 7})
    assert not answer.is_error, answer.content[0].text
    ours = answer.structured_content
    example = next(b for b in json_blocks(seed("000")) if "rewrite_terms" in b and b["results"])
    assert set(ours) == set(example) == {"results", "kg", "rewrite_terms"}
    chunk_example, relation_example = example["results"]
    relation, chunk = ours["results"][0], ours["results"][1]
    same_shape(relation_example, relation, "results[relation]")
    same_shape(chunk_example, chunk, "results[chunk]")
    same_shape(example["kg"][0], ours["kg"][0], "kg")
    assert chunk["metadata"]["tags"] == "island,geography"  # a comma-separated string, as HAWKI's
    assert [set(t) for t in ours["kg"]] == [{"subject", "relation", "object"}] * 2
    assert len(ours["results"]) == 7 and ours["rewrite_terms"] == ["hallowmere"]
    assert json.loads(answer.content[0].text) == ours
    assert service.asked == [({"query": "capital of Hallowmere", "top_k": 7}, None, v.Source.HAWKI)]
    assert service.facts == [True]  # HAWKI shows relation hits: they take top_k places
    assert service.sources() == ["hawki"]


@pytest.mark.parametrize("top_k", [0, 51, "5", True, 2.5])
def test_hawki_refuses_a_top_k_outside_1_to_50_as_its_validator_does(tmp_path, top_k):
    service, speaker, _ = mounted(tmp_path, "hawki")
    answer = call(speaker, "/mcp/hawki", "query-search", {"query": "q", "top_k": top_k})
    assert answer.is_error and answer.structured_content["error"]["field"] == "top_k"
    assert "[1, 50]" in answer.content[0].text and service.asked == []


def test_hawki_top_k_defaults_to_5(tmp_path):
    service, speaker, _ = mounted(tmp_path, "hawki")
    call(speaker, "/mcp/hawki", "query-search", {"query": "q"})
    assert service.asked[0][0]["top_k"] == 5


# -- Huginn -----------------------------------------------------------------------------------------------


def test_huginn_answers_the_seeds_example_keys_with_documents_only(tmp_path):
    service, _, app = mounted(tmp_path, "huginn")
    with TestClient(app) as client:
        r = client.get("/api/search", params={"q": "knowledge graph rag", "limit": 4, "min_relevance": 0.2})
    assert r.status_code == 200, r.text
    body = r.json()
    example = next(b for b in json_blocks(seed("001")) if "bestScore" in b)
    assert set(example) == {"results", "bestScore", "noConfidentResults", "retryHints"}
    same_shape({k: x for k, x in example.items() if k != "noConfidentResults"}, body)  # said only when true
    assert "noConfidentResults" not in body and set(body["retryHints"]) == {"detectedEntities", "relatedTerms",
                                                                             "narrowerQuery", "broaderQuery"}
    assert [x["id"] for x in body["results"]] == ["d0", "d1", "d2", "d3"]  # the fact is not a document
    first = body["results"][0]
    assert {"id", "title", "relevance", "confidenceBand", "snippet", "metadata", "graph_context"} <= set(first)
    assert first["graph_context"] == [{"subject": "Greywick", "relation": "on", "object": "Hallowmere"}]
    assert body["traceId"] == "ab" * 16  # the search's (the canned one here)
    asked, variant, source = service.asked[0]
    # a search showing passages only: limit is top_k, the facts stay in kg (the graph_context)
    assert asked == {"query": "knowledge graph rag", "min_relevance": 0.2, "top_k": 4} and service.facts == [False]
    assert (variant, source) == (None, v.Source.HUGINN) and service.sources() == ["huginn"]


def test_huginn_full_mode_has_matched_chunks_and_no_snippet_and_a_bad_limit_is_refused(tmp_path):
    service, _, app = mounted(tmp_path, "huginn")
    with TestClient(app) as client:
        full = client.get("/api/search", params={"q": "x", "mode": "full"}).json()
        bad = client.get("/api/search", params={"q": "x", "limit": "ten"})
        unknown = client.get("/api/search", params={"q": "x", "top_k": 3})
    assert "snippet" not in full["results"][0] and full["results"][0]["matchedChunks"][0]["relevance"] == 0.9
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "limit"
    assert unknown.status_code == 400 and "q, limit, min_relevance, collection, mode" in unknown.json()["error"]["message"]


def test_huginn_empty_answer_says_no_confident_results_and_keeps_best_score(tmp_path):
    empty = SearchResponse((), (), (), 0.75, True, RetryHints(("RAG",), ("Pinecone",), "", "rag"), "cd" * 16,
                           Mode.FAST, ())
    service = CannedService(tmp_path, response=empty)
    app = FastAPI()
    mount_dialects(app, service, ["huginn"], traced)
    with TestClient(app) as client:
        body = client.get("/api/search", params={"q": "knowledge graph rag", "min_relevance": 0.95}).json()
    assert body["results"] == [] and body["bestScore"] == 0.75 and body["noConfidentResults"] is True
    assert body["retryHints"]["detectedEntities"] == ["RAG"]


def test_huginn_mcp_text_has_relevance_lines_and_the_trace(tmp_path):
    service, speaker, _ = mounted(tmp_path, "huginn")
    answer = call(speaker, "/mcp/huginn", "search_knowledge", {"query": "q", "limit": 2})
    text = answer.content[0].text
    assert answer.structured_content is None and not answer.is_error
    assert text.splitlines()[0] == "1. Hallowmere [d0] — 90% relevant · medium — Title 0 text 0"
    assert "2. Hallowmere [d1] — 80% relevant · medium" in text and "3." not in text
    assert "   Port Vell —capital of→ Hallowmere" in text  # the graph context, not a result
    assert text.endswith(f"trace {'ab' * 16}")


# -- SingleStore KAG --------------------------------------------------------------------------------------


def _kag_relationship_example() -> dict[str, Any]:
    text = seed("003")
    block = re.search(r"'relationships': \[\s*(\{.*?\})", text, re.S)
    assert block, "the seed's final_results example"
    return ast.literal_eval(block.group(1))


def test_singlestore_answers_results_entities_and_relationships_with_no_generated_response(tmp_path):
    service, _, app = mounted(tmp_path, "singlestore-kag")
    with TestClient(app) as client:
        r = client.post("/kag-search", json={"query": "hello world", "top_k": 3, "debug": False})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["generated_response"] is None and isinstance(body["execution_time"], float)
    assert [x["doc_id"] for x in body["results"]] == ["d0", "d1", "d2"]
    first = body["results"][0]
    assert {"doc_id", "content", "vector_score", "text_score", "combined_score", "entities",
            "relationships"} <= set(first)
    assert first["combined_score"] == 0.9 and first["entities"] == [{"name": "Greywick"}, {"name": "Hallowmere"}]
    example = _kag_relationship_example()
    same_shape(example, first["relationships"][0], "results[0].relationships[0]")
    same_shape(example, body["relationships"][0], "relationships[0]")
    assert body["relationships"][0]["confidence"] == 0.9  # the fact's own relevance
    assert body["entities"] == {"primary": ["hallowmere"], "related": ["Port Vell", "Hallowmere", "Greywick"]}
    assert service.asked == [({"query": "hello world", "debug": True, "top_k": 3}, None, v.Source.SINGLESTORE_KAG)]


def test_singlestore_checks_its_body_as_its_model_does(tmp_path):
    _, _, app = mounted(tmp_path, "singlestore-kag")
    with TestClient(app) as client:
        assert client.post("/kag-search", json={"top_k": 3}).json()["error"]["field"] == "query"
        assert client.post("/kag-search", json={"query": "q", "debug": "yes"}).json()["error"]["field"] == "debug"
        assert client.post("/kag-search", json={"query": "q", "top_k": 0}).json()["error"]["field"] == "top_k"
        assert client.post("/kag-search", content=b"{").status_code == 400


# -- ProxySQL ---------------------------------------------------------------------------------------------


def _proxysql_parameters() -> dict[str, set[str]]:
    """Each tool's parameter names, from the seed's "Tool Specifications"."""
    text = seed("002")
    out = {}
    for match in re.finditer(r"### (rag\.[a-z_.]+)\n(.*?)(?=\n### |\n## )", text, re.S):
        params = re.search(r"#### Parameters\n(.*?)(?=\n#### |\Z)", match.group(2), re.S)
        out[match.group(1)] = set(re.findall(r"^- `([a-z_]+)`", params.group(1), re.M)) if params else set()
    return out


def test_proxysql_tools_take_the_seeds_parameters(tmp_path):
    _, speaker, _ = mounted(tmp_path, "proxysql", dialects=("proxysql",), proxysql_token=TOKEN)
    tools = speaker.endpoints["/mcp/rag"]
    wanted = _proxysql_parameters()
    assert set(wanted) == set(tools) and len(tools) == 7
    for name, params in wanted.items():
        assert set(tools[name].input_schema["properties"]) == params, name


def test_proxysql_fts_pages_by_offset_and_clamps_k_as_validate_k_does(tmp_path):
    service, speaker, _ = mounted(tmp_path, "proxysql", dialects=("proxysql",), proxysql_token=TOKEN)
    page = call(speaker, "/mcp/rag", "rag.search_fts", {"query": "q", "k": 2, "offset": 2})
    assert not page.is_error, page.content[0].text
    body = page.structured_content
    assert [r["doc_id"] for r in body["results"]] == ["d2", "d3"]
    assert set(body["results"][0]) == {"chunk_id", "doc_id", "source_name", "score", "title", "metadata"}
    assert service.asked[-1] == ({"query": "q", "top_k": 4}, Variant.KEYWORD, v.Source.PROXYSQL)
    clamped = call(speaker, "/mcp/rag", "rag.search_fts", {"query": "q", "k": 60}).structured_content
    assert clamped["stats"]["k"] == 10 and clamped["stats"]["k_requested"] == 60
    assert clamped["stats"]["notes"] == ["k 60 is outside 1..50: 10 used"]
    assert service.asked[-1][0]["top_k"] == 10
    deep = call(speaker, "/mcp/rag", "rag.search_fts", {"query": "q", "k": 50, "offset": 460})
    assert deep.is_error and deep.structured_content["error"]["field"] == "offset"
    assert "offset + k must be at most 500" in deep.content[0].text


def test_proxysql_filters_and_hybrid_modes_map_onto_our_request(tmp_path):
    service, speaker, _ = mounted(tmp_path, "proxysql", dialects=("proxysql",), proxysql_token=TOKEN)
    filters = {"tags_any": ["island"], "min_score": 0.3, "source_names": ["gazetteer"], "post_type_ids": [1]}
    answer = call(speaker, "/mcp/rag", "rag.search_hybrid",
                  {"query": "q", "k": 3, "mode": "fuse", "filters": filters, "fuse": {"fts_k": 80, "rrf_k0": 10},
                   "return": {"include_metadata": False, "include_snippets": True}}).structured_content
    asked = service.asked[-1][0]
    assert asked == {"query": "q", "tags_any": ["island"], "min_relevance": 0.3, "collection": "gazetteer",
                     "fusion": "rrf", "candidates": 80, "top_k": 3}
    assert set(answer["results"][0]) == {"chunk_id", "doc_id", "source_name", "score", "title", "snippet"}
    assert answer["stats"]["notes"] == ["filters.post_type_ids: no counterpart in this index; ignored",
                                        "fuse.rrf_k0: the server's fusion settings apply; ignored"]
    call(speaker, "/mcp/rag", "rag.search_hybrid", {"query": "q", "mode": "fts_then_vec"})
    assert service.asked[-1][0]["fusion"] == "keyword_then_dense"
    bad = call(speaker, "/mcp/rag", "rag.search_hybrid", {"query": "q", "mode": "fast"})
    assert bad.is_error and bad.structured_content["error"]["field"] == "mode"
    call(speaker, "/mcp/rag", "rag.search_vector", {"query_text": "q", "query_embedding": {}})
    assert service.asked[-1][1] is Variant.VECTOR


def test_proxysql_fetches_stats_and_says_fetch_from_source_is_not_supported(tmp_path):
    _, speaker, _ = mounted(tmp_path, "proxysql", dialects=("proxysql",), proxysql_token=TOKEN)
    docs = call(speaker, "/mcp/rag", "rag.get_docs", {"doc_ids": ["a", "b"]}).structured_content
    assert [d["doc_id"] for d in docs["docs"]] == ["a", "b"] and docs["docs"][0]["body"] == "text a"
    chunks = call(speaker, "/mcp/rag", "rag.get_chunks", {"chunk_ids": ["a"]}).structured_content
    assert chunks["chunks"][0]["chunk_id"] == "a"
    stats = call(speaker, "/mcp/rag", "rag.admin.stats", {}).structured_content
    assert stats["sources"][0]["source_name"] == "sample" and stats["config"]["k_max"] == 50
    refetch = call(speaker, "/mcp/rag", "rag.fetch_from_source", {"doc_ids": ["a"]})
    assert refetch.is_error and "rag.fetch_from_source is not supported" in refetch.content[0].text


def test_proxysql_needs_its_token_and_its_endpoint_is_not_behind_the_api_key(tmp_path):
    with pytest.raises(ConfigError, match="SEARCHTRACE_PROXYSQL_TOKEN"):
        ServeConfig(dialects=("proxysql",))
    service = CannedService(tmp_path, dialects=("proxysql",), proxysql_token=TOKEN)
    from searchtrace.retriever.serve.http import create_app

    app = create_app(service, mcp=False, dialects=["proxysql"])
    init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with TestClient(app, base_url="http://127.0.0.1") as client:
        refused = client.post("/mcp/rag", json=init, headers=headers)
        listed = client.post("/mcp/rag", json=init, headers={**headers, "authorization": f"Bearer {TOKEN}"})
    assert refused.status_code == 401 and "proxysql" in refused.json()["error"]["message"]
    assert listed.status_code == 200, listed.text
    assert "rag.search_fts" in listed.text


@pytest.mark.parametrize(("flags", "said"), [
    (["--dialect", "nope"], "--dialect: unknown dialect 'nope'; known: hawki, huginn, proxysql, singlestore-kag"),
    (["--dialect", "proxysql"], "--dialect proxysql: its tools need a Bearer token; set SEARCHTRACE_PROXYSQL_TOKEN"),
    (["--mcp", "stdio", "--dialect", "hawki"], "--dialect hawki: served over HTTP only (its routes and MCP "
                                               "endpoints); leave out --mcp stdio (over stdio: concept-rag)"),
])
def test_serve_refuses_a_dialect_it_cannot_mount_before_opening_anything(flags, said, capsys, monkeypatch, tmp_path):
    from searchtrace.cli import main

    monkeypatch.delenv("SEARCHTRACE_PROXYSQL_TOKEN", raising=False)
    assert main(["serve", str(tmp_path), "--home", str(tmp_path / "home"), *flags]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "home").exists()  # refused before any index or trace store


def test_passages_only_changes_nothing_but_the_relation_hits_shown(tmp_path):
    from dataclasses import replace

    from searchtrace.retriever.serve.service import passages_only

    config = resolve_config(home=tmp_path, environ={})
    assert config.graph.max_relation_hits == 3
    changed = passages_only(config)
    assert changed.graph.max_relation_hits == 0
    assert replace(changed, graph=config.graph) == config
