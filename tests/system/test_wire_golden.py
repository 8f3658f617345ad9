"""The search response and the error object on the wire, byte for byte: HTTP, MCP and the CLI against goldens.

Issue 22 replaces the response's TypedDicts and dicts with a frozen record and ``to_json()``; these
goldens hold what each surface sends today, so any change to a key, its order, a number's format,
an escape or a blank fails here. One server (the sample dataset; the HTTP API with MCP mounted at
``/mcp``) is started for the module; the CLI runs as a subprocess per call on the session's index.

Normalized, every other byte kept: the trace id, which differs on every call (its exact value,
read from the ``x-trace-id`` header, the response's ``traceId`` or the MCP error text's ``trace``
line and checked to be 32 lowercase hex, is replaced by ``<traceId>`` wherever it occurs). Every
score and rank is kept, the keyword engine's included: the keyword stage rescores its candidates,
so every build of the sample ranks and scores them the same way. Regenerate after an intended change with

    SEARCHTRACE_UPDATE_GOLDEN=1 pytest tests/system/test_wire_golden.py

and review the diff of ``tests/system/golden/wire/``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client.client import Client
from serve_helpers import make_service, running

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
GOLDEN = Path(__file__).resolve().parent / "golden" / "wire"
UPDATE = os.environ.get("SEARCHTRACE_UPDATE_GOLDEN") == "1"
DASHBOARD = "http://dash.example:8501"  # so the served responses carry traceUrl

TRACE_ID = re.compile(r"[0-9a-f]{32}")
PLACEHOLDER = "<traceId>"

CASE_MARK, SECTION_MARK = "=== case: ", "--- "

QUERIES = {q["_id"]: q["text"] for q in map(json.loads, (SAMPLE / "queries.jsonl").read_text("utf-8").splitlines())}


@dataclass(frozen=True)
class Search:
    """One search sent on every surface that can express it.

    Attributes:
        name: the case's name in the goldens and the test ids.
        request: the request body (HTTP), tool arguments (MCP), or flags (CLI).
        variant: None for the hybrid search, ``keyword`` / ``vector`` for the single-stage ones
            (HTTP and MCP only, as are the server fields ``fusion`` and ``dataset``).
    """

    name: str
    request: dict[str, Any]
    variant: str | None = None

    @property
    def on_cli(self) -> bool:
        return self.variant is None and not {"fusion", "dataset"} & set(self.request)


SEARCHES = (
    Search("multi-hop-graph", {"query": QUERIES["test-001"], "mode": "graph", "top_k": 2}),
    Search("multi-hop-graph-debug", {"query": QUERIES["test-002"], "mode": "graph", "top_k": 2, "debug": True}),
    Search("multi-hop-fast", {"query": QUERIES["test-003"], "mode": "fast", "top_k": 2}),
    Search("multi-hop-defaults", {"query": QUERIES["dev-001"]}),
    Search("keyword-exact-fast-debug", {"query": QUERIES["test-025"], "mode": "fast", "top_k": 2, "debug": True}),
    Search("keyword-exact", {"query": QUERIES["test-030"], "top_k": 2}),
    Search("paraphrase-graph-depth-0", {"query": QUERIES["test-053"], "mode": "graph", "depth": 0, "top_k": 2}),
    Search("paraphrase-graph-depth-3-debug", {"query": QUERIES["test-065"], "mode": "graph", "depth": 3, "top_k": 2,
                                              "debug": True}),
    Search("unanswerable-graph", {"query": QUERIES["test-082"], "mode": "graph", "top_k": 2}),
    Search("unanswerable-fast-debug", {"query": QUERIES["test-088"], "mode": "fast", "top_k": 2, "debug": True}),
    Search("filter-collection", {"query": QUERIES["test-077"], "collection": "biographies", "top_k": 2}),
    Search("filter-tags-any-graph", {"query": QUERIES["test-060"], "mode": "graph", "tags_any": ["bees", "guild"],
                                     "top_k": 2}),
    Search("filter-tags-all", {"query": QUERIES["dev-028"], "tags_all": ["town", "hallowmere"], "top_k": 2}),
    Search("filter-doc-ids-graph", {"query": QUERIES["test-001"], "mode": "graph", "top_k": 2,
                                    "doc_ids": ["bio-orsolya-venn", "gld-lampwrights-guild", "gaz-port-vell"]}),
    Search("filter-created-range-debug", {"query": QUERIES["test-057"], "created_after": "2020-01-01",
                                          "created_before": "2023-06-30T12:00:00Z", "top_k": 2, "debug": True}),
    Search("min-relevance", {"query": QUERIES["test-075"], "min_relevance": 0.5, "top_k": 3}),
    Search("gap-cutoff-candidates", {"query": QUERIES["test-062"], "gap_cutoff": 0.2, "candidates": 20, "top_k": 5}),
    Search("no-results", {"query": QUERIES["test-067"], "collection": "no-such-collection", "mode": "graph"}),
    # not from the sample: quotes and non-ASCII (escaping, UTF-8) and an alias (rewrite_terms)
    Search("non-ascii-alias-query", {"query": "Which café on the Great Isle sells “Quell’s Gold” — and where?",
                                     "mode": "graph", "top_k": 2}),
    Search("fusion-keyword-then-dense", {"query": QUERIES["test-026"], "fusion": "keyword_then_dense", "top_k": 2,
                                         "dataset": "sample"}),
    Search("keyword-endpoint", {"query": QUERIES["test-039"], "top_k": 2}, variant="keyword"),
    Search("vector-endpoint-debug", {"query": QUERIES["test-061"], "top_k": 2, "debug": True}, variant="vector"),
)

HTTP_ERRORS: tuple[tuple[str, str, bytes], ...] = (
    ("error-top-k-out-of-range", "/v1/search", b'{"query": "x", "top_k": 501}'),
    ("error-unknown-field", "/v1/search", b'{"query": "x", "colour": "red"}'),
    ("error-empty-query", "/v1/search", b'{"query": ""}'),
    ("error-every-problem", "/v1/search", b'{"query": " ", "top_k": 0, "candidates": 600, "mode": "slow"}'),
    ("error-bad-date", "/v1/search", b'{"query": "x", "created_after": "yesterday"}'),
    ("error-bad-fusion", "/v1/search", b'{"query": "x", "fusion": "best"}'),
    ("error-fusion-on-keyword", "/v1/search/keyword", b'{"query": "x", "fusion": "fuse"}'),
    ("error-not-an-object", "/v1/search", b"[1, 2]"),
    ("error-malformed-json", "/v1/search", b'{"query": '),
    ("error-unknown-dataset", "/v1/search", b'{"query": "x", "dataset": "nope"}'),
)

MCP_ERRORS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("error-top-k-out-of-range", "search", {"query": "x", "top_k": 501}),
    ("error-unknown-field", "search", {"query": "x", "colour": "red"}),
    ("error-empty-query", "search", {"query": ""}),
    ("error-every-problem", "search", {"query": " ", "top_k": 0, "candidates": 600, "mode": "slow"}),
    ("error-bad-date", "search", {"query": "x", "created_after": "yesterday"}),
    ("error-fusion-on-keyword", "search_keyword", {"query": "x", "fusion": "fuse"}),
    ("error-unknown-dataset", "search", {"query": "x", "dataset": "nope"}),
)

CLI_ERRORS: tuple[tuple[str, list[str]], ...] = (
    ("error-top-k-out-of-range", ["search", "x", "--top-k", "501"]),
    ("error-top-k-out-of-range-json", ["search", "x", "--top-k", "501", "--json"]),
    ("error-empty-query", ["search", "", "--json"]),
    ("error-every-problem", ["search", " ", "--top-k", "0", "--candidates", "600"]),
    ("error-bad-date-json", ["search", "x", "--created-after", "yesterday", "--json"]),
)

VARIANT_ROUTES = {None: "/v1/search", "keyword": "/v1/search/keyword", "vector": "/v1/search/vector"}
VARIANT_TOOLS = {None: "search", "keyword": "search_keyword", "vector": "search_vector"}


# --- the golden files -------------------------------------------------------------------------

Record = dict[str, str]
"""One case on one surface: section name -> its exact text."""


@dataclass
class Surface:
    """What one surface recorded, and its golden file."""

    name: str
    records: dict[str, Record] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return GOLDEN / f"{self.name}.txt"


def normalized(text: str, trace_id: str | None) -> str:
    """``text`` with every occurrence of ``trace_id`` (checked to be 32 lowercase hex) replaced by the
    placeholder."""
    if trace_id is None:
        return text
    assert TRACE_ID.fullmatch(trace_id), f"traceId is not 32 lowercase hex: {trace_id!r}"
    return text.replace(trace_id, PLACEHOLDER)


def write_golden(surface: Surface) -> None:
    """The goldens as text: a ``=== case:`` line per case, a ``--- section`` line per section, then its text."""
    lines = [f"# Wire goldens ({surface.name}) of tests/system/test_wire_golden.py; rewrite with SEARCHTRACE_UPDATE_GOLDEN=1.",
             f"# Each section holds the exact text after its '{SECTION_MARK}' line (a final newline is one empty line)."]
    for case, record in surface.records.items():
        lines.append(CASE_MARK + case)
        for section, text in record.items():
            body = text.split("\n")
            clash = [line for line in body if line.startswith((CASE_MARK, SECTION_MARK))]
            assert not clash, f"{surface.name} {case} {section}: a line looks like a marker: {clash[0]!r}"
            lines += [SECTION_MARK + section, *body]
    surface.path.parent.mkdir(parents=True, exist_ok=True)
    surface.path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))


def read_golden(path: Path) -> dict[str, Record]:
    """The inverse of :func:`write_golden`."""
    cases: dict[str, dict[str, list[str]]] = {}
    sections: dict[str, list[str]] | None = None
    lines: list[str] | None = None
    for line in path.read_bytes().decode("utf-8").split("\n")[:-1]:  # the file ends with a newline
        if line.startswith(CASE_MARK):
            sections, lines = cases.setdefault(line[len(CASE_MARK):], {}), None
        elif line.startswith(SECTION_MARK) and sections is not None:
            lines = sections.setdefault(line[len(SECTION_MARK):], [])
        elif lines is not None:
            lines.append(line)
    return {case: {name: "\n".join(text) for name, text in found.items()} for case, found in cases.items()}


def _pretty(text: str) -> str | None:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return None


def explain(surface: str, case: str, section: str, golden: str, got: str) -> str:
    """A readable account of one section's mismatch: a diff (of the pretty-printed JSON when it is JSON)."""
    at = next((i for i, (a, b) in enumerate(zip(golden, got)) if a != b), min(len(golden), len(got)))
    head = (f"wire format changed: surface={surface} case={case} section={section}\n"
            f"first difference at character {at}:\n"
            f"  golden   {golden[max(0, at - 40):at + 40]!r}\n"
            f"  recorded {got[max(0, at - 40):at + 40]!r}\n")
    a, b = _pretty(golden), _pretty(got)
    if a is not None and b is not None and a == b:
        return head + "(the same JSON value: only its bytes differ, e.g. spacing, escaping or number format)"
    if a is None or b is None:
        a, b = golden, got
    diff = difflib.unified_diff(a.splitlines(), b.splitlines(), f"golden/{surface}/{case}", f"recorded/{surface}/{case}",
                                lineterm="", n=3)
    return head + "\n".join(diff)


def check(surface: Surface, case: str) -> None:
    assert surface.path.exists(), f"{surface.path} is missing: run with SEARCHTRACE_UPDATE_GOLDEN=1"
    goldens = read_golden(surface.path)
    assert case in goldens, f"{surface.name}: case {case!r} has no golden: run with SEARCHTRACE_UPDATE_GOLDEN=1"
    golden, got = goldens[case], surface.records[case]
    assert list(golden) == list(got), f"{surface.name} {case}: sections {list(golden)} != recorded {list(got)}"
    problems = [explain(surface.name, case, s, golden[s], got[s]) for s in golden if golden[s] != got[s]]
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


def finish(surface: Surface) -> Surface:
    if UPDATE:
        write_golden(surface)
    return surface


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- recording each surface -------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(sample_index_path, sample_config, model):
    from opentelemetry.sdk.trace import TracerProvider

    from searchtrace.retriever.serve.http import create_app

    tracer = TracerProvider().get_tracer("test.wire")
    service = make_service([SAMPLE], sample_config, sample_index_path, model, tracer, timeout_s=120,
                           dashboard_url=DASHBOARD)
    service.open()
    with running(create_app(service)) as url:
        yield url
    service.close()


@pytest.fixture(scope="module")
def http(server) -> Surface:
    surface = Surface("http")
    with httpx.Client(base_url=server, timeout=120) as client:
        def record(case: str, route: str, body: bytes) -> None:
            r = client.post(route, content=body, headers={"content-type": "application/json"})
            trace_id = r.headers.get("x-trace-id")
            surface.records[case] = {
                "request": f"POST {route} {body.decode('utf-8')}",
                "status": str(r.status_code),
                "headers": "\n".join(f"{k}: {normalized(r.headers.get(k, '(none)'), trace_id)}"
                                     for k in ("content-type", "x-trace-id", "retry-after")),
                "body": normalized(r.content.decode("utf-8"), trace_id),
            }

        for search in SEARCHES:
            record(search.name, VARIANT_ROUTES[search.variant], _json(search.request).encode("utf-8"))
        for case, route, body in HTTP_ERRORS:
            record(case, route, body)
    return finish(surface)


def _mcp_trace_id(result: Any) -> str | None:
    """The response's traceId, or the id on an error text's ``trace`` line."""
    structured = result.structured_content or {}
    if isinstance(structured.get("traceId"), str):
        return structured["traceId"]
    last = (result.content[-1].text if result.content else "").rsplit("\n", 1)[-1]
    found = re.fullmatch(r"trace (\S+)", last)
    return found.group(1) if found else None


@pytest.fixture(scope="module")
def mcp(server) -> Surface:
    surface = Surface("mcp")
    calls = [(s.name, VARIANT_TOOLS[s.variant], s.request) for s in SEARCHES] + list(MCP_ERRORS)

    async def main() -> None:
        async with Client(f"{server}/mcp", read_timeout_seconds=120) as client:
            for case, tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                trace_id = _mcp_trace_id(result)
                record = {"call": f"{tool} {_json(arguments)}", "isError": _json(result.is_error)}
                for i, item in enumerate(result.content):
                    record[f"content[{i}] {item.type}"] = normalized(getattr(item, "text", repr(item)), trace_id)
                # the client hands structured content over parsed: dumped compactly in its received key order
                record["structuredContent"] = normalized(
                    json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")), trace_id)
                surface.records[case] = record

    anyio.run(main)
    return finish(surface)


def cli_flags(request: dict[str, Any]) -> list[str]:
    """``searchtrace search`` arguments for a request (the query first)."""
    flags = [request["query"]]
    for key, value in request.items():
        option = "--" + key.replace("_", "-")
        if key == "query":
            continue
        if value is True:
            flags.append(option)
        elif isinstance(value, list):
            flags += [option, *value]
        else:
            flags += [option, str(value)]
    return flags


@pytest.fixture(scope="module")
def cli(sample_index_path, sample_config) -> Surface:
    surface = Surface("cli")
    home = str(sample_config.home.root)
    env = {k: x for k, x in os.environ.items() if not k.startswith(("SEARCHTRACE_", "OTEL_"))}
    env.update({"PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
                "HF_HUB_OFFLINE": "1", "SEARCHTRACE_OTLP": "0",
                "PYTHONUTF8": "1"})  # stdout in UTF-8 whatever the runner's locale, so the bytes do not depend on it

    def record(case: str, args: list[str]) -> None:
        argv = [*args, "--dataset", str(SAMPLE), "--home", home, "--no-progress"]
        out = subprocess.run([sys.executable, "-m", "searchtrace", *argv], capture_output=True, timeout=300,
                             cwd=REPO, env=env)
        stdout, stderr = out.stdout.decode("utf-8"), out.stderr.decode("utf-8")
        try:
            trace_id = json.loads(stdout).get("traceId")
        except ValueError:  # not JSON: compared as it is, and the diff shows it
            trace_id = None
        shown = ["<sample>" if a == str(SAMPLE) else "<home>" if a == home else a for a in argv]
        surface.records[case] = {"argv": _json(["searchtrace", *shown]), "exit": str(out.returncode),
                                 "stdout": normalized(stdout, trace_id), "stderr": normalized(stderr, trace_id)}

    for search in SEARCHES:
        if search.on_cli:
            record(search.name, ["search", *cli_flags(search.request), "--json"])
    for case, args in CLI_ERRORS:
        record(case, args)
    return finish(surface)


# --- the tests --------------------------------------------------------------------------------

HTTP_CASES = [s.name for s in SEARCHES] + [c for c, *_ in HTTP_ERRORS]
MCP_CASES = [s.name for s in SEARCHES] + [c for c, *_ in MCP_ERRORS]
CLI_CASES = [s.name for s in SEARCHES if s.on_cli] + [c for c, _ in CLI_ERRORS]


@pytest.mark.parametrize("case", HTTP_CASES)
def test_http(http, case):
    check(http, case)


@pytest.mark.parametrize("case", MCP_CASES)
def test_mcp(mcp, case):
    check(mcp, case)


@pytest.mark.parametrize("case", CLI_CASES)
def test_cli(cli, case):
    check(cli, case)


@pytest.mark.parametrize("name,cases", [("http", HTTP_CASES), ("mcp", MCP_CASES), ("cli", CLI_CASES)])
def test_goldens_hold_exactly_the_cases(name, cases):
    """A golden left behind by a removed case is stale; a case without one is caught by its own test."""
    path = Surface(name).path
    assert path.exists(), f"{path} is missing: run with SEARCHTRACE_UPDATE_GOLDEN=1"
    assert list(read_golden(path)) == cases


def test_every_surface_sends_the_same_response(http, mcp, cli):
    """HTTP's body, MCP's structured content and the CLI's JSON are one response (the CLI has no traceUrl)."""
    for search in SEARCHES:
        body = json.loads(http.records[search.name]["body"])
        assert json.loads(mcp.records[search.name]["structuredContent"]) == body, search.name
        assert body["traceUrl"] == f"{DASHBOARD}/traces?trace={PLACEHOLDER}", search.name
        if search.on_cli:
            del body["traceUrl"]
            assert json.loads(cli.records[search.name]["stdout"]) == body, search.name
