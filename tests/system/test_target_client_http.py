"""``eval --target URL`` against a loopback server: a real timeout, Retry-After over the wire, and no secret of
the URL in the run folder, the trace store or the output."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from searchtrace.errors import SearchTimeout
from searchtrace.evals import RunFolder
from searchtrace.evals.runs.target import HttpTarget

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
CORPUS = [json.loads(line)["_id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines() if line.strip()]
SECRETS = ("hunter2pw", "TOPSECRET99")


def serve(answer) -> tuple[ThreadingHTTPServer, str]:
    """A loopback server: ``answer(path, body) -> (status, headers, bytes)`` for each POST; HEAD answers 405."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, headers, data = answer(self.path, body)
            self.send_response(status)
            for k, val in headers.items():
                self.send_header(k, val)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_HEAD(self) -> None:  # noqa: N802
            self.send_response(405)
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def ok(body: dict) -> bytes:
    return json.dumps({"results": [{"id": d, "score": 0.5, "confidenceBand": "medium"} for d in CORPUS[:5]],
                       "bestScore": 0.5, "noConfidentResults": False, "retryHints": None,
                       "traceId": "remote"}).encode()


def test_a_slow_service_is_a_timeout_and_429_is_overloaded_with_its_retry_after():
    def answer(path, body):
        if body["query"] == "slow":
            time.sleep(1.0)
        if body["query"] == "busy":
            return 429, {"Retry-After": "4"}, b'{"error": {"code": "OVERLOADED", "message": "busy", "field": null}}'
        return 200, {"Content-Type": "application/json"}, ok(body)

    server, url = serve(answer)
    target = HttpTarget(url, timeout_s=0.2)
    try:
        with pytest.raises(SearchTimeout, match="no answer within 0.2 s"):
            target({"query": "slow", "top_k": 5})
        from searchtrace.errors import Overloaded

        with pytest.raises(Overloaded) as busy:
            target({"query": "busy", "top_k": 5})
        assert busy.value.retry_after_s == 4.0
        assert [r["id"] for r in target({"query": "fine", "top_k": 5})["results"]] == CORPUS[:5]
    finally:
        target.close()
        server.shutdown()


def test_secrets_of_the_target_url_reach_no_file_and_no_output(tmp_path, capsys):
    """A URL with a password and a token: some queries fail with an error naming the URL; nothing the run
    writes (run folder, home with its trace store) or prints holds either secret."""
    from searchtrace.cli import main

    calls = {"n": 0}
    lock = threading.Lock()

    def answer(path, body):
        assert path.startswith("/v1/search?api_key=TOPSECRET99")  # the token reaches the service
        with lock:
            calls["n"] += 1
            n = calls["n"]
        if n % 10 == 0:
            return 500, {}, b"upstream failed"
        return 200, {"Content-Type": "application/json"}, ok(body)

    server, url = serve(answer)
    spec = url.replace("http://", "http://bob:hunter2pw@") + "/?api_key=TOPSECRET99"
    home, out = tmp_path / "home", tmp_path / "run"
    try:
        code = main(["eval", str(SAMPLE), "--target", spec, "--out", str(out), "--home", str(home),
                     "--no-progress", "--depth", "5", "--concurrency", "4", "--retries", "0"])
    finally:
        server.shutdown()
    printed = capsys.readouterr()
    assert code == 1  # some queries failed
    summary = RunFolder(out).summary()
    assert summary.errors > 0 and summary.external is not None
    assert summary.external.source == spec.replace("hunter2pw", "****").replace("TOPSECRET99", "****")
    files = [p for root in (out, home) for p in root.rglob("*") if p.is_file()]
    for path in files:
        data = path.read_bytes()
        assert not any(s.encode() in data for s in SECRETS), path
    assert not any(s in printed.out + printed.err for s in SECRETS)
    # the trace store packs large values compressed: read every stored span back, as text, through the store
    from searchtrace.home import Home
    from searchtrace.traces.store.opening import open_trace_store

    store = open_trace_store(Home(home).traces).open()
    try:
        traces = [store.load_trace(o.trace_id) for o in RunFolder(out).outcomes()]
    finally:
        store.close()
    text = json.dumps([[(sp.name, dict(sp.attributes), sp.status_message,
                         [(e.name, dict(e.attributes)) for e in sp.events]) for sp in t.spans]
                       for t in traces if t is not None], default=str)
    assert len(traces) == summary.dataset.queries and "127.0.0.1" in text  # the target is there, masked
    assert not any(s in text for s in SECRETS)
