"""A fuzzer's probe of a live ``searchtrace serve``: its HTTP API and its MCP tools, counted.

Usage:
    python benchmarks/probe_fuzz.py DATASET --home HOME [--http 20000] [--mcp 5000]

Starts ``searchtrace serve DATASET`` (the index already built in HOME) on a
loopback port, then:

- HTTP: schemathesis reads ``/openapi.json`` and sends requests generated from
  it, valid and invalid (``positive`` and ``negative``), spread over every
  operation until ``--http`` requests were sent; every response is checked
  against the document (status, body, content type) and every 5xx counted.
- MCP: ``--mcp`` JSON-RPC messages to ``/mcp``: ``tools/call`` of every tool
  with arguments drawn by hypothesis (each property of the tool's input schema
  given any JSON value, or left out, and keys the schema does not name), and
  messages that are not JSON-RPC at all; every reply's status counted, a 5xx or
  a reply that is not JSON-RPC is a failure.

A request unanswered in 30 s is a hang. Then the server must still answer
``/readyz``. Prints JSON: requests sent, statuses, failures (each kind with one
example), hangs; exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from bench_kill import _serve

TIMEOUT_S = 30.0
MAX_ROUNDS = 50  # at most this many passes over the operations, whatever the budget


def _json_values() -> Any:
    from hypothesis import strategies as st

    scalars = (st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats(allow_nan=False)
               | st.text(max_size=300))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                        | st.dictionaries(st.text(max_size=20), inner, max_size=5), max_leaves=20)


def _arguments(schema: dict[str, Any]) -> Any:
    """Hypothesis strategy of a tool's arguments: each named property any JSON value or absent, plus extras."""
    from hypothesis import strategies as st

    values = _json_values()
    props = sorted(schema.get("properties") or {})
    named = st.fixed_dictionaries({}, optional={p: values | st.just("harbour") | st.integers(0, 60) for p in props})
    extra = st.dictionaries(st.text(max_size=12), values, max_size=2)
    return st.tuples(named, extra).map(lambda pair: {**pair[1], **pair[0]})


class Tally:
    """What the probe sent and what came back."""

    def __init__(self) -> None:
        self.sent = 0
        self.statuses: Counter[str] = Counter()
        self.failures: dict[str, str] = {}

    def report(self) -> dict[str, Any]:
        return {"requests": self.sent, "statuses": dict(sorted(self.statuses.items())),
                "5xx": sum(n for s, n in self.statuses.items() if s.startswith("5")), "failures": self.failures}


def _fuzz_operation(op: Any, mode: str, url: str, examples: int, tally: Tally) -> None:
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings

    name = f"{op.method.upper()} {op.path} ({mode})"

    @given(case=op.as_strategy(schemathesis.GenerationMode(mode)))
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), print_blob=False)
    def run(case: Any) -> None:
        tally.sent += 1
        try:
            response = case.call(base_url=url, timeout=TIMEOUT_S)
        except Exception as exc:  # a hang or a reset: the probe's finding, not its end
            tally.failures.setdefault(f"{name}: {type(exc).__name__}", str(exc)[:300])
            return
        tally.statuses[str(response.status_code)] += 1
        try:
            case.validate_response(response)
        except Exception as exc:
            tally.failures.setdefault(f"{name}: contract", str(exc).splitlines()[0][:300])

    try:
        run()
    except Exception as exc:  # Unsatisfiable: an operation with nothing to get wrong
        tally.statuses[f"not generated: {type(exc).__name__}"] += 1


def _http(url: str, budget: int, out: dict[str, Any]) -> None:
    import schemathesis
    from schemathesis.config import SchemathesisConfig

    refusals = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5XX"]
    config = SchemathesisConfig.from_dict({"checks": {"negative_data_rejection": {"expected-statuses": refusals}}})
    loaded = schemathesis.openapi.from_url(f"{url}/openapi.json", config=config)
    operations = [r.ok() for r in loaded.get_all_operations()]  # type: ignore[union-attr]  # an Err raises
    per = max(1, budget // (2 * len(operations)))
    tally = Tally()
    rounds = [(mode, op) for _ in range(MAX_ROUNDS) for mode in ("positive", "negative") for op in operations]
    for mode, op in rounds:  # again while the budget lasts: hypothesis stops early on a small input space
        if tally.sent >= budget:
            break
        _fuzz_operation(op, mode, url, per, tally)
    out["http"] = {"operations": len(operations), **tally.report()}


def _mcp(url: str, budget: int, out: dict[str, Any]) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    tally = Tally()
    with httpx.Client(base_url=url, timeout=TIMEOUT_S, headers=headers) as client:
        hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "probe", "version": "0"}}}
        first = client.post("/mcp", json=hello)
        session = first.headers.get("mcp-session-id")
        if session:
            client.headers["mcp-session-id"] = session
        client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).json()
        listed = [(t["name"], t.get("inputSchema") or {}) for t in tools["result"]["tools"]]
        calls = st.one_of(*(st.tuples(st.just(name), _arguments(schema)) for name, schema in listed))
        junk = _json_values()

        def send(body: bytes, label: str) -> None:
            tally.sent += 1
            try:
                r = client.post("/mcp", content=body)
            except httpx.HTTPError as exc:
                tally.failures.setdefault(f"{label}: {type(exc).__name__}", str(exc)[:300])
                return
            tally.statuses[str(r.status_code)] += 1
            if r.status_code >= 500:
                tally.failures.setdefault(f"{label}: {r.status_code}", r.text[:300])
            elif r.status_code == 200 and "jsonrpc" not in r.text:
                tally.failures.setdefault(f"{label}: not JSON-RPC", r.text[:300])

        @given(call=calls, n=st.integers(2, 10**6))
        @settings(max_examples=int(budget * 0.8), deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), print_blob=False)
        def tool_calls(call: tuple[str, dict[str, Any]], n: int) -> None:
            name, arguments = call
            message = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name,
                                                                                    "arguments": arguments}}
            send(json.dumps(message).encode(), f"tools/call {name}")

        @given(body=junk | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
        @settings(max_examples=budget - int(budget * 0.8), deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), print_blob=False)
        def not_rpc(body: Any) -> None:
            send(body.encode("utf-8", "surrogatepass") if isinstance(body, str) else json.dumps(body).encode(),
                 "junk")

        tool_calls()
        not_rpc()
    out["mcp"] = {"tools": [n for n, _ in listed], **tally.report()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--http", type=int, default=20000, help="HTTP requests to send (default 20000)")
    parser.add_argument("--mcp", type=int, default=5000, help="MCP messages to send (default 5000)")
    args = parser.parse_args()
    process, url = _serve(args.dataset, args.home, ack=True, workers=1)
    out: dict[str, Any] = {}
    started = time.monotonic()
    try:
        _http(url, args.http, out)
        _mcp(url, args.mcp, out)
        out["ready_after"] = httpx.get(f"{url}/readyz", timeout=TIMEOUT_S).status_code
    finally:
        process.terminate()
        process.wait(60)
    out["seconds"] = round(time.monotonic() - started)
    print(json.dumps(out, indent=1))
    bad = out["http"]["5xx"] + out["mcp"]["5xx"] + len(out["http"]["failures"]) + len(out["mcp"]["failures"])
    return 1 if bad or out["ready_after"] != 200 else 0


if __name__ == "__main__":
    sys.exit(main())
