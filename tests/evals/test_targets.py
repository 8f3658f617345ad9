"""Targets in any shape, in process: the target file's checks, the answer mapping, paging, and the error seam
over a loopback HTTP service (429 with Retry-After, 503, 500, malformed JSON, a timeout, no connection)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider

from searchtrace.errors import (
    BackendUnavailable,
    ConfigError,
    NotFoundError,
    Overloaded,
    SearchFailed,
    SearchTimeout,
    ValidationError,
)
from searchtrace.evals.runs.target import depth_to_ask, resolve_target
from searchtrace.evals.runs.targets import load_profile, open_shaped, parse_target_file, profile_names, target_spec
from searchtrace.evals.runs.targets.config import Answer
from searchtrace.evals.runs.targets.mapping import line_answer, map_results, response_json, results_of
from searchtrace.evals.runs.targets.shaped import pages
from searchtrace.evals.runs.targets.wire import retry_after_s

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
SECRET = "tok-3f9c-never-shown"
SERVICE_TOML = """
[target]
transport = "http"
url = "URL"
method = "POST"
path = "/find"
timeout_s = 2

[request]
query = "params.text"
depth = "params.size"
max_depth = 4
offset = "params.from"
static = { index = "docs" }

[headers]
X-Api-Key = { env = "TEST_TARGET_KEY" }

[answer]
results = "data.hits"
id = "{doc}#{part}"
score = "relevance"
text = "body"
"""


def serve(handler) -> tuple[ThreadingHTTPServer, str, list[dict]]:
    """A loopback service: ``handler(body, headers) -> (status, headers, bytes)``; records each request."""
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "body": body, "headers": dict(self.headers)})
            status, headers, payload = handler(body, self.headers)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            try:
                self.wfile.write(payload)
            except BrokenPipeError:  # a client that timed out has gone
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}", seen


def hits(body: dict, headers: object = None) -> tuple[int, dict, bytes]:
    """Eleven hits, two parts per document, paged by ``params.from``/``params.size``."""
    everything = [{"doc": f"d{i // 2}", "part": i % 2, "relevance": str(1 - i / 20), "body": f"text {i}"}
                  for i in range(11)]
    start, size = body["params"]["from"], body["params"]["size"]
    return 200, {"Content-Type": "application/json"}, json.dumps({"data": {"hits": everything[start:start + size]}}).encode()


@pytest.fixture
def target_file(tmp_path, monkeypatch):
    """Writes the service's target file for a URL; returns its path."""
    monkeypatch.setenv("TEST_TARGET_KEY", SECRET)

    def write(url: str = "http://127.0.0.1:9") -> Path:
        path = tmp_path / "target.toml"
        path.write_text(SERVICE_TOML.replace("URL", url), encoding="utf-8")
        return path

    return write


def test_a_target_file_pages_composes_ids_and_sends_its_header_and_traceparent(target_file):
    server, url, seen = serve(hits)
    search = open_shaped(f"target-file:{target_file(url)}")
    tracer = TracerProvider().get_tracer("t")
    try:
        with tracer.start_as_current_span("search") as span:
            answer = search({"query": "ferries", "top_k": 10})
    finally:
        search.close()
        server.shutdown()
    assert [r["id"] for r in answer["results"]] == [f"d{i}#{p}" for i in range(6) for p in (0, 1)][:10]
    assert answer["results"][1]["score"] == pytest.approx(0.95) and answer["results"][1]["content"] == "text 1"
    assert [(s["body"]["params"]["from"], s["body"]["params"]["size"]) for s in seen] == [(0, 4), (4, 4), (8, 2)]
    assert all(s["path"] == "/find" and s["body"]["params"]["text"] == "ferries" and s["body"]["index"] == "docs"
               for s in seen)
    assert all(s["headers"]["X-Api-Key"] == SECRET for s in seen)
    trace_id = format(span.get_span_context().trace_id, "032x")
    assert all(s["headers"]["traceparent"].split("-")[1] == trace_id for s in seen)


def test_the_file_names_the_key_at_fault():
    def refused(text: str) -> str:
        with pytest.raises(ConfigError) as caught:
            parse_target_file(text, "mine.toml")
        return caught.value.message

    good = SERVICE_TOML
    assert refused(good.replace('transport = "http"', 'transport = "ftp"')).startswith(
        "mine.toml: [target] transport: expected one of http, mcp-stdio, mcp-http, got 'ftp'")
    assert refused(good.replace('query = "params.text"\n', "")) == "mine.toml: [request] query: missing"
    assert refused(good.replace("max_depth = 4", "max_depth = 0")).startswith("mine.toml: [request] max_depth: expected "
                                                                            "an integer >= 1")
    literal = refused(good.replace('X-Api-Key = { env = "TEST_TARGET_KEY" }', 'X-Api-Key = "abc123"'))
    assert literal.startswith("mine.toml: [headers] X-Api-Key: expected { env = \"VARIABLE\" }") and "abc123" not in literal
    assert "[answer] sourse: unknown key" in refused(good.replace('results = "data.hits"', 'sourse = "json"'))
    assert "'structured' does not fit transport 'http'" in refused(good.replace('[answer]\n', '[answer]\nsource = '
                                                                               '"structured"\n'))
    assert refused("[target\n").startswith("mine.toml: not valid TOML")
    assert "[target] tool: missing" in refused(good.replace('transport = "http"', 'transport = "mcp-http"').replace(
        'method = "POST"\n', ""))


def test_a_header_whose_variable_is_unset_names_the_variable(target_file, monkeypatch):
    monkeypatch.delenv("TEST_TARGET_KEY")
    with pytest.raises(ConfigError, match=r"\[headers\] X-Api-Key reads \$TEST_TARGET_KEY, which is not set"):
        open_shaped(f"target-file:{target_file()}")


def test_the_answer_mapping_reads_ids_scores_and_refuses_naming_the_place():
    spec = Answer("json", "out.items", "{doc_id}#{chunk_id}", "score", "text")
    items, where = results_of({"out": {"items": [{"doc_id": 7, "chunk_id": "c1", "score": "0.500"},
                                                 {"doc_id": "d", "chunk_id": 2, "text": "t"}]}}, spec, "svc")
    mapped = map_results(items, spec, where, "svc")
    assert [(m.id, m.score, m.text) for m in mapped] == [("7#c1", 0.5, ""), ("d#2", None, "t")]
    with pytest.raises(SearchFailed, match=r"svc: out.items\[1\].score: expected a number or a numeric string, "
                                           r"got 'high'"):
        map_results([{"doc_id": 1, "chunk_id": 1}, {"doc_id": 1, "chunk_id": 2, "score": "high"}], spec, where, "svc")
    with pytest.raises(SearchFailed, match=r"svc: the answer has no out.items .*\[answer\] results"):
        results_of({"out": {}}, spec, "svc")
    with pytest.raises(SearchFailed, match=r"out.items\[0\].chunk_id"):
        map_results([{"doc_id": 1}], spec, where, "svc")
    with pytest.raises(SearchFailed, match="out.items is dict, not a list"):
        results_of({"out": {"items": {}}}, spec, "svc")
    # a document known by several chunks is ranked once, at its best place
    answer = response_json([*mapped, mapped[0]], depth=10)
    assert [r["id"] for r in answer["results"]] == ["7#c1", "d#2"] and answer["results"][1]["score"] == 0.0


_GONE = object()
_ODD = [_GONE, None, True, False, 0, 7, -1, 0.5, 12.5, float("nan"), float("inf"), "", "d1", "0.873", "high", [],
        ["a"], {}, {"x": 1}]


def test_a_plain_result_mapped_fast_is_what_the_checked_mapping_reads():
    """The fast read of a plain result (one key a field) gives what the field-by-field mapping gives, or
    leaves the result to it: each field of a result changed to each odd value in turn (or left out), under
    a mapping with every field, one without score or text, and one excluding facts."""
    from searchtrace.evals.runs.targets.mapping import _mapped

    base = {"id": "d1", "score": 0.5, "content": "c", "component_type": "chunk"}
    items = [{k: v for k, v in {**base, key: value}.items() if v is not _GONE}
             for key in [*base, "other"] for value in _ODD] + [base, *_ODD[1:]]
    specs = [Answer("json", "results", "id", "score", "content"), Answer("json", "results", "id"),
             Answer("json", "results", "id", "score", "content", exclude={"component_type": "relation"}),
             Answer("json", "results", "id", "score", "content", exclude={"component_type": "chunk", "score": 0.5})]
    refused = 0
    for spec in specs:
        for item in items:
            excluded = spec.exclude and isinstance(item, dict) and all(item.get(k) == x for k, x in spec.exclude.items())
            try:
                expected = [] if excluded else [_mapped(item, spec, "results[0]")]
            except SearchFailed as exc:
                refused += 1
                with pytest.raises(SearchFailed) as caught:
                    map_results([item], spec, "results", "svc")
                assert (caught.value.message, caught.value.field) == (f"svc: {exc.message}", exc.field), item
                continue
            got = map_results([item], spec, "results", "svc")
            # compared as text: a score read as an int rather than a float differs
            assert repr([(m.id, m.score, m.text) for m in got]) == repr(
                [(m.id, m.score, m.text) for m in expected]), item
    assert 0 < refused < len(items) * len(specs)


def test_a_list_of_results_is_mapped_as_each_one_is_by_the_checked_mapping():
    """Odd results among plain ones: the same results as the field-by-field mapping of each in turn, or its
    first refusal, naming the result's place."""
    from searchtrace.evals.runs.targets.mapping import _mapped

    def checked(items, spec):
        out = []
        for i, item in enumerate(items):
            if spec.exclude and isinstance(item, Mapping) and all(item.get(k) == x for k, x in spec.exclude.items()):
                continue
            try:
                out.append(_mapped(item, spec, f"results[{i}]"))
            except SearchFailed as exc:
                return f"svc: {exc.message}", exc.field
        return repr(out)

    def fast(items, spec):
        try:
            return repr(map_results(items, spec, "results", "svc"))
        except SearchFailed as exc:
            return exc.message, exc.field

    base = {"id": "d1", "score": 0.5, "content": "c", "component_type": "chunk"}
    odd = [{**base, "id": 7}, {**base, "score": "0.25"}, {**base, "component_type": "relation"}, {**base, "id": ""},
           {"id": {"x": 1}}, "text", {**base, "content": 3}, {"id": [], "component_type": "relation"},
           MappingProxyType({**base, "component_type": "relation"}), MappingProxyType(base)]
    specs = [Answer("json", "results", "id", "score", "content", exclude={"component_type": "relation"}),
             Answer("json", "results", "id", "score", "content")]
    for spec in specs:
        for a in odd:
            for b in odd:
                items = [base, a, {**base, "id": "d2"}, b, base, a]
                assert fast(items, spec) == checked(items, spec), items


LINES_TOML = """
[target]
transport = "mcp-stdio"
tool = "search_documentation"

[request]
query = "query"

[answer]
source = "lines"
line = '^File: .*/(?P<doc>[^/]+)\\.md$'
error = '^Error'
id = "doc"
"""


class _Text:
    def __init__(self, text: str) -> None:
        self.text = text


def test_a_text_answer_s_lines_are_its_results_and_an_error_line_its_failure():
    spec = parse_target_file(LINES_TOML, "whoosh.toml").answer
    text = "Search Results for: 'x'\n====\nResult 1:\nFile: /d/a-1.md\nSection Index: 0\n\nFile: /d/b.md\n"
    rows = line_answer([_Text(text), _Text("File: /d/a-1.md")], spec, "svc")
    assert rows == [{"doc": "a-1"}, {"doc": "b"}, {"doc": "a-1"}]
    mapped = map_results(rows, spec, "lines", "svc")
    assert [r["id"] for r in response_json(mapped, depth=10)["results"]] == ["a-1", "b"]
    assert line_answer([_Text("No results found for query: 'x'")], spec, "svc") == []
    with pytest.raises(SearchFailed, match=r"svc: content\[1\].text line 2 is an error: Error: Documentation index"):
        line_answer([_Text("File: /d/a.md"), _Text("ok\nError: Documentation index not found.")], spec, "svc")


def test_a_lines_answer_s_expression_names_every_field_read():
    def refused(text: str) -> str:
        with pytest.raises(ConfigError) as caught:
            parse_target_file(text, "whoosh.toml")
        return caught.value.message

    assert refused(LINES_TOML.replace('id = "doc"', 'id = "{doc}#{section}"')) == (
        "whoosh.toml: [answer] id: 'section' is not a named group of [answer] line (groups: doc)")
    assert refused(LINES_TOML.replace("line = '^File", "lin = '^File")).startswith("whoosh.toml: [answer] lin: "
                                                                                  "unknown key")
    assert refused(LINES_TOML.replace("(?P<doc>", "(?P<doc")).startswith("whoosh.toml: [answer] line: not a "
                                                                         "regular expression")
    assert refused(LINES_TOML.replace('source = "lines"', 'source = "text"')) == (
        'whoosh.toml: [answer] line: only for source = "lines"')


def test_pages_reach_the_depth_in_steps_of_the_cap():
    assert pages(100, 50, paged=True) == [(0, 50), (50, 50)]
    assert pages(120, 50, paged=True) == [(0, 50), (50, 50), (100, 20)]
    assert pages(100, 50, paged=False) == [(0, 50)]
    assert pages(30, None, paged=True) == [(0, 30)]


def test_retry_after_is_seconds_or_an_http_date():
    assert retry_after_s("7") == 7.0
    now = 1_800_000_000.0
    assert retry_after_s(formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30.0)
    assert retry_after_s(formatdate(now - 30, usegmt=True), now=now) == 0.0
    assert retry_after_s("soon") is None and retry_after_s(None) is None


def _failing(status: int, headers: dict, payload: bytes):
    return lambda body, _: (status, headers, payload)


@pytest.mark.parametrize(("status", "headers", "payload", "error", "words"), [
    (429, {"Retry-After": "7"}, b"{}", Overloaded, "HTTP 429 (overloaded, Retry-After 7 s)"),
    (503, {}, b"busy", Overloaded, "HTTP 503 (overloaded)"),
    (500, {}, b"{}", SearchFailed, "HTTP 500"),
    (200, {"Content-Type": "text/html"}, b"<html>", SearchFailed, "HTTP 200 with a body that is not JSON (text/html)"),
    (200, {}, b'{"data": {}}', SearchFailed, "the answer has no data.hits"),
])
def test_each_failure_is_the_error_the_client_discipline_reads(target_file, status, headers, payload, error, words):
    server, url, _ = serve(_failing(status, headers, payload))
    search = open_shaped(f"target-file:{target_file(url)}")
    try:
        with pytest.raises(error) as caught:
            search({"query": "q", "top_k": 3})
    finally:
        search.close()
        server.shutdown()
    assert words in caught.value.message and SECRET not in caught.value.message
    if status == 429:
        assert caught.value.retry_after_s == 7.0


def test_a_slow_service_is_a_timeout_and_no_service_is_unavailable(target_file):
    def slow(body, _):
        time.sleep(1.5)
        return hits(body)

    server, url, _ = serve(slow)
    path = target_file(url)
    path.write_text(path.read_text().replace("timeout_s = 2", "timeout_s = 0.3"))
    search = open_shaped(f"target-file:{path}")
    try:
        with pytest.raises(SearchTimeout, match=r"no answer within 0.3 s"):
            search({"query": "q", "top_k": 3})
    finally:
        server.shutdown()
    server.server_close()  # nothing answers there now
    with pytest.raises(BackendUnavailable):
        search({"query": "q", "top_k": 3})
    search.close()


def test_the_flags_name_one_target():
    assert target_spec("mcp+stdio:node srv.js", "broad_chunks_search", None, None) == \
        "mcp+stdio:node srv.js --tool broad_chunks_search"
    assert target_spec(None, None, None, ["huginn", "http://h:1"]) == "target-profile:huginn http://h:1"
    assert target_spec("http://h:1", None, None, None) == "http://h:1"
    for args, words in ((("mcp+http://h/mcp", None, None, None), "needs --tool NAME"),
                        (("http://h", "t", None, None), "--tool goes with"),
                        (("http://h", None, "f.toml", None), "not --target and --target-file"),
                        ((None, None, None, ["huginn"]), "takes a NAME and its URL or command")):
        with pytest.raises(ValidationError, match=words):
            target_spec(*args)


def test_the_five_profiles_load_and_a_shaped_cap_bounds_the_depth_asked(monkeypatch):
    assert profile_names() == ["concept-rag", "hawki", "huginn", "proxysql", "singlestore-kag"]
    loaded = {name: load_profile(name) for name in profile_names()}
    assert loaded["proxysql"].headers[0].env == "PROXYSQL_MCP_TOKEN" and loaded["proxysql"].request.offset == "offset"
    assert loaded["concept-rag"].answer.source == "text" and loaded["hawki"].answer.id == "metadata.url"
    with pytest.raises(NotFoundError, match="profiles: concept-rag, hawki"):
        load_profile("elastic")
    server, url, _ = serve(hits)
    try:
        hawki_like = resolve_target(f"target-profile:huginn {url}")
        assert depth_to_ask(hawki_like, 100) == (100, None)  # no cap stated: asked as deep as the eval scores
        hawki_like.spec = load_profile("hawki")
        depth, warning = depth_to_ask(hawki_like, 100)
        assert depth == 50 and "above the most the target answers (50, no paging)" in warning
        hawki_like.close()
    finally:
        server.shutdown()


def test_an_mcp_target_on_the_command_line_reads_our_contract_from_the_tool_named():
    """``--target mcp+http://... --tool NAME``: the tool gets our request, ``top_k`` the depth; its structured
    ``results`` are read as our response's (id, score, content). Nothing is connected until the first query."""
    server, url, seen = serve(hits)
    search = open_shaped(target_spec(f"mcp+{url}/mcp", "search", None, None))
    try:
        assert (search.spec.target.transport, search.spec.target.tool) == ("mcp-http", "search")
        ours = {"query": "q", "top_k": 5, "candidates": 100, "mode": "fast"}
        assert search.body("q", 0, 7, ours) == {"query": "q", "top_k": 7, "candidates": 100, "mode": "fast"}
        assert (search.spec.answer.results, search.spec.answer.id, search.spec.answer.score) == ("results", "id", "score")
        assert search.origin == f"MCP at {url}/mcp" and not seen
    finally:
        search.close()
        server.shutdown()


def test_a_target_nothing_answers_at_or_a_command_not_found_stops_before_the_run(tmp_path):
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on: bound, then released
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(BackendUnavailable, match=rf"profile huginn at http://127.0.0.1:{port}/api/search: nothing "
                                                 "answers"):
        open_shaped(f"target-profile:huginn http://127.0.0.1:{port}")
    with pytest.raises(ValidationError, match="command 'no-such-mcp-server-here' not found"):
        open_shaped("target-profile:concept-rag no-such-mcp-server-here --stdio")


def test_the_command_line_lists_the_profiles_and_refuses_a_half_named_target(tmp_path, capsys):
    from searchtrace.cli import main

    assert main(["eval", "--target-profile", "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed[:5]] == profile_names() and all(len(line) <= 80 for line in listed)
    assert main(["targets", "show", "proxysql"]) == 0
    assert capsys.readouterr().out == (Path(__file__).resolve().parents[2] / "evals/runs/targets/profiles/"
                                       "proxysql.toml").read_text(encoding="utf-8")
    code = main(["eval", str(SAMPLE), "--target", "mcp+http://127.0.0.1:9/mcp", "--out", str(tmp_path / "r"),
                 "--home", str(tmp_path / "home")])
    err = capsys.readouterr().err
    assert code == 2 and "an MCP target needs --tool NAME" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_a_service_scoring_outside_0_to_1_is_evaluated_by_its_order(target_file, tmp_path):
    """BM25-like scores (12.5, -3) are not relevances: the run finishes, ranked by the service's order, and the
    analysis that reads relevance as a probability is given 0 for them."""
    from searchtrace.cli import main

    def bm25(body, headers=None):
        start, size = body["params"]["from"], body["params"]["size"]
        everything = [{"doc": f"d{i}", "part": 0, "relevance": 12.5 - 3 * i, "body": ""} for i in range(10)]
        return 200, {"Content-Type": "application/json"}, json.dumps(
            {"data": {"hits": everything[start:start + size]}}).encode()

    server, url, _ = serve(bm25)
    try:
        code = main(["eval", str(SAMPLE), "--target-file", str(target_file(url)), "--depth", "8", "--out",
                     str(tmp_path / "run"), "--home", str(tmp_path / "home"), "--no-progress"])
    finally:
        server.shutdown()
    assert code in (0, 1)  # 1: a made-up ranking may fail the run's own checks; 2 would be the analysis refusing
    lines = (tmp_path / "run" / "run.trec").read_text().splitlines()
    first = [line.split()[2] for line in lines if line.split()[0] == lines[0].split()[0]]
    assert first == [f"d{i}#0" for i in range(8)]
    answer = response_json(map_results([{"doc": "a", "part": 0, "relevance": 12.5}, {"doc": "b", "part": 0,
                                                                                   "relevance": 0.25}],
                                       Answer("json", "", "{doc}#{part}", "relevance"), "", "svc"), 5)
    assert [r["score"] for r in answer["results"]] == [0.0, 0.25]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=20)
_BODIES = [b'{"n": 123456789012345678901234567890}', b'{"n": -9223372036854775809}', b'[18446744073709551615]',
           b'{"s": NaN}', b'[Infinity]', b'[1e400]', b'"\\ud800"', b'\xef\xbb\xbf{"a": 1}', '{"a": 1}'.encode("utf-16"),
           b'{"a": 1, "a": 2, "b": 3}', b"[1,]", b"", b"not json", b'"\xff"', b"[" * 5000 + b"]" * 5000,
           b'{"id": "1234567890123456789012"}', b"1.7976931348623159e308", b"-0.0", b"[-0]"]


def _decoded(read, body: bytes) -> object:
    """The value read (as text, so an int read as a float differs, and a dict's key order), or the error's type."""
    import httpx

    reply = httpx.Response(200, content=body)
    try:
        return repr(read(reply))
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__


@settings(max_examples=300, deadline=None)
@given(value=_JSON, spaced=st.booleans())
def test_an_answer_decoded_fast_is_what_httpx_decodes(value, spaced):
    """json_of reads each JSON value as ``reply.json()`` does: the same values, of the same types."""
    from searchtrace.evals.runs.targets.wire import json_of

    text = json.dumps(value, ensure_ascii=spaced, separators=(", ", ": ") if spaced else (",", ":"))
    assert _decoded(json_of, text.encode()) == _decoded(lambda r: r.json(), text.encode())


@pytest.mark.parametrize("body", _BODIES)
def test_a_body_orjson_reads_otherwise_is_decoded_as_httpx_decodes_it(body):
    """Big integers, NaN, numbers past a double, byte order marks, UTF-16, deep nesting: json_of gives what
    ``reply.json()`` gives, or fails as it fails."""
    from searchtrace.evals.runs.targets.wire import json_of

    assert _decoded(json_of, body) == _decoded(lambda r: r.json(), body)
