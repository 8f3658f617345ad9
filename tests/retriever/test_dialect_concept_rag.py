"""The Concept-RAG dialect's tools on the sample, called as the MCP server calls them: each answers the seed
text's requests with its keys and types (read from the seed's JSON, or its field table), errors come in its
error schema with its codes, the search tools are our search (cut at the gap, documents known by source, no
relation hits), and each call is traced with the dialect as its source. The speaker is the stdio server's
(``stdio_speakers``): the tools recorded, no route mounted; over HTTP the same tools are mounted at
``/mcp/concept-rag`` (tests/system/test_serve_dialect_concept_rag.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from concept_rag_seed import TOOLS, error_schema, same_shape, tools
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_types import TextContent
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from serve_helpers import make_service

from searchtrace.retriever.serve.dialects import DIALECTS, STDIO, stdio_speakers
from searchtrace.retriever.serve.dialects.concept_rag import GAP_CUTOFF, LIMITS, PATH
from searchtrace.retriever.serve.dialects.speaker import listing
from searchtrace.traces import vocabulary as v

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
SOURCE = "gaz-hallowmere"
REQUESTS = {  # each tool's parameters, the required ones and, for those with a choice, the seed's defaults
    "catalog_search": {"text": "the largest island of the Skerrows"},
    "broad_chunks_search": {"text": "who governs the islands"},
    "chunks_search": {"text": "towns of the island", "source": SOURCE},
    "concept_search": {"concept": "Hallowmere"},
    "extract_concepts": {"document_query": "Hallowmere", "format": "json", "include_summary": True},
    "source_concepts": {"concept": ["Hallowmere", "no such concept"], "include_metadata": True},
    "concept_sources": {"concept": ["Port Vell", "no such concept"], "include_metadata": True},
    "category_search": {"category": "gazetteer", "includeChildren": False},
    "list_categories": {"sortBy": "popularity", "limit": 50},
    "list_concepts_in_category": {"category": "gazetteer", "sortBy": "documentCount", "limit": 50},
}


@pytest.fixture(scope="module")
def served(sample_index_path, sample_config, model):
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    service = make_service([SAMPLE], sample_config, sample_index_path, model, provider.get_tracer("test.dialect"),
                           timeout_s=30.0)
    service.open()
    speaker, = stdio_speakers(service, ["concept-rag"])
    yield service, speaker, memory
    service.close()


def call(served, name: str, args: dict) -> tuple[bool, object]:
    speaker = served[1]
    result = asyncio.run(speaker.call(speaker.endpoints[PATH], name, args, None))
    assert len(result.content) == 1 and result.structured_content is None  # one text block, as the seed's
    block = result.content[0]
    assert isinstance(block, TextContent)
    text = block.text
    markdown = args.get("format") == "markdown" and not result.is_error
    return bool(result.is_error), (text if markdown else json.loads(text))


def test_the_registry_names_the_dialect_and_lists_the_seeds_ten_tools_with_its_parameters(served):
    assert "concept-rag" in DIALECTS and "concept-rag" in STDIO
    assert list(served[1].endpoints) == [PATH]
    listed = {t.name: t for t in listing(served[1].endpoints[PATH])}
    seed = tools()
    assert set(listed) == set(seed) == set(TOOLS) == set(REQUESTS)
    for name, tool in seed.items():
        schema = listed[name].input_schema
        assert set(schema["properties"]) == set(tool.parameters), name
        assert sorted(schema.get("required", [])) == sorted(p for p, required in tool.parameters.items() if required)
        assert set(REQUESTS[name]) <= set(tool.parameters)


@pytest.mark.parametrize("name", TOOLS)
def test_each_tool_answers_with_the_seed_texts_keys_and_types(served, name):
    error, answer = call(served, name, REQUESTS[name])
    assert not error, answer
    assert answer, name  # something to check: every request above finds something in the sample
    assert same_shape(tools()[name].answer, answer) == []


def test_broad_chunks_search_is_our_search_cut_at_the_gap_each_source_once(served):
    service = served[0]
    query = REQUESTS["broad_chunks_search"]["text"]
    _, answer = call(served, "broad_chunks_search", {"text": query})
    ours = asyncio.run(service.search({"query": query, "top_k": LIMITS["broad_chunks_search"],
                                       "gap_cutoff": GAP_CUTOFF}, None, v.Source.MCP, facts=False))
    assert not ours.relations and ours.chunks
    assert [a["source"] for a in answer] == [r.id for r in ours.chunks]
    assert [a["score"] for a in answer] == [f"{r.score:.3f}" for r in ours.chunks]
    assert [a["text"] for a in answer] == [r.content for r in ours.chunks]
    assert len({a["source"] for a in answer}) == len(answer) <= 30
    scores = [float(a["score"]) for a in answer]
    assert all(a - b <= GAP_CUTOFF for a, b in zip(scores, scores[1:]))  # no drop above the gap inside the list


def test_chunks_search_stays_in_its_source_and_names_its_concepts_as_the_catalogue_does(served):
    _, chunks = call(served, "chunks_search", REQUESTS["chunks_search"])
    assert [c["source"] for c in chunks] == [SOURCE]
    _, concepts = call(served, "list_concepts_in_category", {"category": "gazetteer", "limit": 1000})
    ids = {c["name"]: c["id"] for c in concepts["concepts"]}
    assert [ids[n] for n in chunks[0]["concepts"]] == chunks[0]["concept_ids"]
    assert {"Hallowmere", "Port Vell", "Greywick"} <= set(chunks[0]["concepts"])


def test_concept_search_finds_the_sources_naming_it_and_their_chunks(served):
    _, found = call(served, "concept_search", {"concept": "hallowmere"})  # names compared as the graph does
    _, sources = call(served, "concept_sources", {"concept": "Hallowmere"})
    primary = [s for s in found["sources"] if s["match_type"] == "primary"]
    assert [s["title"] for s in primary] == [s["title"] for s in sources["results"][0]]
    assert found["concept"] == "Hallowmere" and found["stats"]["chunks_returned"] == len(primary)
    assert all(s["via_concept"] in found["related_concepts"] for s in found["sources"] if s["match_type"] == "related")
    assert float(found["score"]) > 0
    _, narrowed = call(served, "concept_search", {"concept": "Hallowmere", "source_filter": SOURCE})
    assert [s["title"] for s in narrowed["sources"] if s["match_type"] == "primary"] == ["Hallowmere"]


def test_source_concepts_is_the_union_and_concept_sources_per_concept(served):
    _, union = call(served, "source_concepts", {"concept": ["Hallowmere", "Port Vell", "nowhere at all"]})
    _, each = call(served, "concept_sources", {"concept": ["Hallowmere", "Port Vell", "nowhere at all"]})
    assert union["concepts_found"] == ["Hallowmere", "Port Vell"] and union["concepts_not_found"] == ["nowhere at all"]
    per = [{s["source_path"] for s in rows} for rows in each["results"]]
    assert per[2] == set() and {s["source_path"] for s in union["sources"]} == per[0] | per[1]
    assert union["source_count"] == len(union["sources"])
    for s in union["sources"]:
        assert [i for i in (0, 1) if s["source_path"] in per[i]] == s["concept_indices"]
    _, bare = call(served, "concept_sources", {"concept": "Port Vell", "include_metadata": False})
    assert bare["results"][0] and all("summary" not in s for s in bare["results"][0])


def test_categories_are_the_collections(served):
    _, listed = call(served, "list_categories", {})
    names = [c["name"] for c in listed["categories"]]
    assert {"gazetteer", "biographies", "almanac", "chronicles"} <= set(names)
    counts = [c["statistics"]["documents"] for c in listed["categories"]]
    assert counts == sorted(counts, reverse=True) and sum(counts) == listed["summary"]["totalDocuments"] == 216
    _, by_name = call(served, "list_categories", {"sortBy": "name", "limit": 2, "search": "a"})
    assert [c["name"] for c in by_name["categories"]] == sorted(n for n in names if "a" in n)[:2]
    gazetteer = next(c for c in listed["categories"] if c["name"] == "gazetteer")
    _, docs = call(served, "category_search", {"category": str(gazetteer["id"])})  # by id too
    assert docs["statistics"]["documentsReturned"] == len(docs["documents"]) == gazetteer["statistics"]["documents"]


def test_extract_concepts_as_json_and_markdown(served):
    _, out = call(served, "extract_concepts", {"document_query": "Hallowmere"})
    assert out["document"] == SOURCE and out["categories"] == ["gazetteer"]
    assert out["total_concepts"] == len(out["primary_concepts"]) and not set(out["primary_concepts"]) & set(
        out["related_concepts"])
    _, by_words = call(served, "extract_concepts", {"document_query": "island of sheep and heather",
                                                     "include_summary": False})
    assert by_words["document"] and by_words["summary"] == ""
    error, text = call(served, "extract_concepts", {"document_query": "Hallowmere", "format": "markdown"})
    assert not error and isinstance(text, str) and text.startswith(f"# Concepts of {SOURCE}")


@pytest.mark.parametrize("name,args,code,field", [
    ("broad_chunks_search", {}, "VALIDATION_ERROR", "text"),
    ("catalog_search", {"text": 42}, "VALIDATION_ERROR", "text"),
    ("broad_chunks_search", {"text": "x" * 8193}, "VALIDATION_ERROR", "text"),
    ("extract_concepts", {"document_query": "x", "format": "yaml"}, "VALIDATION_ERROR", "format"),
    ("source_concepts", {"concept": []}, "VALIDATION_ERROR", "concept"),
    ("list_categories", {"limit": 0}, "VALIDATION_ERROR", "limit"),
    ("category_search", {"category": "gazetteer", "includeChildren": "yes"}, "VALIDATION_ERROR", "includeChildren"),
    ("concept_search", {"concept": "no such concept at all"}, "CONCEPT_NOT_FOUND", "concept"),
    ("chunks_search", {"text": "x", "source": "no-such-doc"}, "RECORD_NOT_FOUND", "source"),
    ("category_search", {"category": "no such category"}, "RECORD_NOT_FOUND", "category"),
    ("list_concepts_in_category", {"category": "99"}, "RECORD_NOT_FOUND", "category"),
])
def test_errors_follow_the_seeds_schema_and_codes(served, name, args, code, field):
    error, answer = call(served, name, args)
    example, codes = error_schema()
    assert error and same_shape(example, answer) == []
    assert answer["error"]["code"] == code and code in codes
    assert answer["error"]["field"] == field and field in answer["error"]["message"]
    assert answer["error"]["context"]["tool"] == name


def test_unknown_arguments_are_ignored_as_the_seed_server_does(served):
    error, answer = call(served, "list_categories", {"verbose": True})
    assert not error and answer["summary"]["categoriesReturned"] > 0


def test_each_call_is_traced_with_the_dialect_as_its_source(served):
    memory = served[2]
    memory.clear()
    call(served, "broad_chunks_search", {"text": "who governs the islands"})
    call(served, "concept_search", {"concept": "no such concept at all"})
    spans = memory.get_finished_spans()
    servers = [s for s in spans if s.name.startswith("tools/call ")]
    assert [s.name for s in servers] == ["tools/call broad_chunks_search", "tools/call concept_search"]
    assert all(s.attributes[v.SOURCE] == "concept-rag" for s in servers)
    search = next(s for s in spans if s.name == "search")
    assert search.attributes[v.SOURCE] == "concept-rag"  # the search itself, not only its server span
    assert search.parent is not None and search.parent.span_id == servers[0].context.span_id
    assert servers[1].attributes[v.ERROR_CODE] == "NOT_FOUND" and not servers[1].status.is_ok


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=True) | st.text(max_size=12),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=6)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(TOOLS), data=st.data())
def test_any_arguments_answer_in_the_seeds_shapes_never_a_crash(served, name, data):
    """Each parameter given any JSON value (or left out): an answer, or an error of the seed's codes other than a
    crash's SEARCH_ERROR."""
    params = list(tools()[name].parameters)
    args = data.draw(st.fixed_dictionaries({}, optional={p: _JSON for p in params}))
    error, answer = call(served, name, args)
    if error:
        assert answer["error"]["code"] in error_schema()[1] and answer["error"]["code"] != "SEARCH_ERROR", answer
        assert answer["error"]["field"] in params, answer
    elif args.get("format") != "markdown":
        assert same_shape(tools()[name].answer, answer) == []
