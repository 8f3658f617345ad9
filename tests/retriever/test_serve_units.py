"""The server's pure parts: settings resolution, the text an LLM reads, the variants' search settings."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchtrace.errors import ConfigError, NotFoundError
from searchtrace.names import Band, Mode
from searchtrace.retriever.response import Metadata, RelationHit, Result, RetryHints, SearchResponse
from searchtrace.retriever.serve import render
from searchtrace.retriever.serve.config import ServeConfig, is_loopback


def test_settings_resolve_argument_over_variable_over_default():
    env = {"SEARCHTRACE_SERVE_TIMEOUT": "5", "SEARCHTRACE_SERVE_MAX_INFLIGHT": "7",
           "SEARCHTRACE_CORS_ORIGINS": "https://a.example, https://b.example", "SEARCHTRACE_API_KEY": "k",
           "SEARCHTRACE_DASHBOARD_URL": "http://dash:8501/"}
    resolved = ServeConfig.resolve(environ=env)
    assert (resolved.timeout_s, resolved.max_inflight, resolved.api_key) == (5.0, 7, "k")
    assert resolved.cors_origins == ("https://a.example", "https://b.example")
    assert resolved.trace_url("ab" * 16) == f"http://dash:8501/traces?trace={'ab' * 16}"
    assert ServeConfig.resolve(timeout_s=0.5, max_inflight=2, environ=env).timeout_s == 0.5
    default = ServeConfig.resolve(environ={})
    assert (default.host, default.timeout_s, default.max_inflight, default.cors_origins) == ("127.0.0.1", 2.0, 32, ())
    assert default.trace_url("ab" * 16) is None


@pytest.mark.parametrize("env,names", [({"SEARCHTRACE_SERVE_TIMEOUT": "soon"}, "SEARCHTRACE_SERVE_TIMEOUT"),
                                       ({"SEARCHTRACE_SERVE_MAX_INFLIGHT": "1.5"}, "SEARCHTRACE_SERVE_MAX_INFLIGHT"),
                                       ({"SEARCHTRACE_SERVE_TIMEOUT": "0"}, "timeout")])
def test_bad_settings_name_the_setting(env, names):
    with pytest.raises(ConfigError, match=names):
        ServeConfig.resolve(environ=env)


def test_an_argument_overrides_a_variable_without_reading_it_and_blank_variables_are_unset():
    env = {"SEARCHTRACE_SERVE_TIMEOUT": "soon", "SEARCHTRACE_SERVE_MAX_INFLIGHT": "many"}
    assert ServeConfig.resolve(timeout_s=3, max_inflight=4, environ=env).timeout_s == 3
    with pytest.raises(ConfigError, match="SEARCHTRACE_SERVE_MAX_INFLIGHT must be a whole number >= 1, got '0'"):
        ServeConfig.resolve(environ={"SEARCHTRACE_SERVE_MAX_INFLIGHT": "0"})
    blank = ServeConfig.resolve(environ={"SEARCHTRACE_SERVE_TIMEOUT": " ", "SEARCHTRACE_API_KEY": "",
                                         "SEARCHTRACE_DASHBOARD_URL": " "})
    assert (blank.timeout_s, blank.api_key, blank.dashboard_url) == (2.0, None, None)


def test_loopback_addresses():
    assert all(map(is_loopback, ["127.0.0.1", "127.9.9.9", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "10.0.0.1", "example.org", "192.168.1.2"]))


RESULT = Result("d1", "Dorian Fleet\nA physician who settled in Emberly.", 0.724, Band.HIGH,
                Metadata(title="Dorian Fleet"))
RELATION = RelationHit("r1", "Dorian Fleet", "wrote", "The Waters", 0.51, Band.MEDIUM)


def test_result_lines():
    assert render.result_line(1, RESULT) == "1. Dorian Fleet [d1] — 72% relevant · high — A physician who settled in Emberly."
    assert render.result_line(2, RELATION) == "2. Dorian Fleet —wrote→ The Waters (51% relevant · medium)"
    sourced = RelationHit("r1", "Dorian Fleet", "wrote", "The Waters", 0.51, Band.MEDIUM, Metadata("Fleet"), ("d1", "d4"))
    assert render.result_line(2, sourced) == "2. Dorian Fleet —wrote→ The Waters [d1, d4] (51% relevant · medium)"


def test_snippet_is_one_line_cut_at_a_word():
    text = "word " * 100
    cut = render.snippet(text, 23)
    assert cut == "word word word word…" and len(cut) <= 23
    assert render.snippet("a\n b\tc") == "a b c"
    assert render.snippet("word " * 100, 20) == "word word word word…"  # a word ending at the line's end is kept


@given(st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=12), min_size=1, max_size=40),
       st.integers(min_value=2, max_value=80))
def test_a_snippet_keeps_whole_words_only(words, limit):
    """Issue 24: snippets were cut mid-word."""
    text = " ".join(words)
    cut = render.snippet(text, limit)
    assert len(cut) <= limit
    if len(text) <= limit:
        assert cut == text
        return
    kept = cut[:-1]
    assert cut.endswith("…") and text.startswith(kept)
    fitting = [k for k in range(1, len(words) + 1) if len(" ".join(words[:k])) <= limit - 1]
    assert kept == (" ".join(words[:max(fitting)]) if fitting else words[0][:limit - 1])


def test_retry_footer_only_when_nothing_is_confident():
    hints = RetryHints(("Emberly",), ("springs", "gout"), "Emberly springs", "Emberly")
    weak = SearchResponse(results=(RESULT,), kg=(), rewrite_terms=(), best_score=0.724, no_confident_results=True,
                          retry_hints=hints, trace_id="t" * 32, mode=Mode.FAST, degraded=())
    lines = render.response_text(weak).splitlines()
    assert lines[-2] == 'No confident match — try: "Emberly springs"; "Emberly"; related terms: springs, gout'
    assert lines[-1] == "trace " + "t" * 32
    confident = replace(weak, no_confident_results=False)
    assert not any(line.startswith("No confident") for line in render.response_text(confident).splitlines())
    assert render.retry_footer(None) == "No confident match — try: rephrasing with more specific terms"


def test_error_text():
    assert render.error_text(NotFoundError("unknown ids: x", field="ids")) == "NOT_FOUND (ids): unknown ids: x"


def test_variants_differ_only_in_fusion_settings():
    from dataclasses import replace

    from searchtrace.names import Stage
    from searchtrace.retriever.config.model import RetrieverConfig
    from searchtrace.retriever.serve.service import Variant, variant_config
    from searchtrace.retriever.types import FusionMethod

    config = RetrieverConfig()
    keyword = variant_config(config, Variant.KEYWORD)
    vector = variant_config(config, Variant.VECTOR)
    assert not keyword.fusion.enabled(Stage.DENSE) and keyword.fusion.enabled(Stage.KEYWORD)
    assert not vector.fusion.enabled(Stage.KEYWORD) and vector.fusion.enabled(Stage.DENSE)
    assert not keyword.fusion.enabled(Stage.GRAPH) and not vector.fusion.enabled(Stage.GRAPH)
    assert replace(keyword, fusion=config.fusion) == config
    assert variant_config(config, Variant.HYBRID) == config  # the configured fusion, unchanged
    for method in FusionMethod:
        chosen = variant_config(config, Variant.HYBRID, method)
        assert chosen.fusion.method is method and replace(chosen, fusion=config.fusion) == config
    assert variant_config(config, Variant.HYBRID, FusionMethod.KEYWORD_THEN_DENSE).fusion.enabled(Stage.KEYWORD)
    ktd = replace(config, fusion=replace(config.fusion, method=FusionMethod.KEYWORD_THEN_DENSE))
    assert variant_config(ktd, Variant.HYBRID) == ktd
    assert variant_config(ktd, Variant.KEYWORD).fusion.method is FusionMethod.DBSF  # one list: a score fusion


@pytest.mark.slow
def test_search_spans_record_their_source(traced):
    from searchtrace.traces import vocabulary

    retriever, exporter = traced()
    retriever.search({"query": "Emberly"})
    retriever.search({"query": "Emberly"}, source=vocabulary.Source.MCP)
    sources = [s.attributes["searchtrace.source"] for s in exporter.get_finished_spans() if s.name == "search"]
    assert sources == ["python", "mcp"]
    cli_retriever, cli_exporter = traced(source=vocabulary.Source.CLI)
    cli_retriever.search({"query": "Emberly"})
    assert [s.attributes["searchtrace.source"] for s in cli_exporter.get_finished_spans() if s.name == "search"] == [
        "cli"]


def test_a_worker_killed_by_a_signal_is_named_by_it_and_a_bus_error_by_its_likely_cause():
    import signal

    from searchtrace.retriever.serve.workers import ended

    assert ended(1) == "exited with code 1"
    assert ended(-signal.SIGKILL) == "was killed by SIGKILL"
    assert ended(-signal.SIGBUS) == "was killed by SIGBUS (a memory-mapped file on a full disk, most likely)"


def test_search_schema_docstring_states_the_limits_the_schema_enforces():
    """Issue 39: the docstring said top_k <= 50 and 8192 bytes while the code allowed 500 and counted characters."""
    from searchtrace.retriever.serve.schemas import search_schema

    props = search_schema(["sample"], with_fusion=True)["properties"]
    doc = " ".join((search_schema.__doc__ or "").split())
    assert f"top_k <= {props['top_k']['maximum']}" in doc and props["top_k"]["maximum"] == 500
    assert f"candidates <= {props['candidates']['maximum']}" in doc
    assert f"query <= {props['query']['maxLength']} characters" in doc and "bytes" not in doc.replace("not bytes", "")
    assert f"lists <= {props['doc_ids']['maxItems']} items" in doc and f"depth <= {props['depth']['maximum']}" in doc
