"""``eval DATASET --target``: any retriever, over HTTP or as a Python function, through the same runner."""

from __future__ import annotations

import json
import logging
import sys
import threading
import types
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from searchtrace.errors import error_object
from searchtrace.evals import EvalSettings, RunFolder
from searchtrace.evals.runs.target import SEARCH_PATH, STATS_PATH, TargetRetriever, resolve_target
from searchtrace.retriever import MAX_TOP_K

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def serve(search, stats: dict | None = None) -> tuple[ThreadingHTTPServer, str]:
    """A loopback server answering POST /v1/search with ``search(request)`` and GET /v1/stats with ``stats``
    (404 when None)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            if self.path != SEARCH_PATH:
                self.send_error(404)
                return
            self._json(search(json.loads(self.rfile.read(int(self.headers["Content-Length"])))))

        def do_GET(self) -> None:  # noqa: N802
            if self.path != STATS_PATH or stats is None:
                self.send_error(404)
                return
            self._json(stats)

        def _json(self, answer: dict) -> None:
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def trace_settings():
    from searchtrace.traces import TraceSettings

    return TraceSettings.resolve(environ={})


def fake_search(request: dict) -> dict:
    """A tiny retriever: the same three sample documents for every query (optional keys left out)."""
    return {"results": [{"id": doc, "score": 0.9 - i / 10, "confidenceBand": "high"}
                        for i, doc in enumerate(FAKE_DOCS[: request["top_k"]])],
            "bestScore": 0.9, "noConfidentResults": False, "retryHints": None, "traceId": "remote-1",
            "kg": [], "rewrite_terms": [], "degraded": []}


CORPUS = [json.loads(line)["_id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines() if line.strip()]
FAKE_DOCS = CORPUS[:3]


def answering(n: int, asked: list[int]):
    """A target answering each query with (at most top_k of) the corpus's first ``n`` documents, recording the
    top_k asked."""

    def search(request: dict) -> dict:
        asked.append(request["top_k"])
        docs = CORPUS[: min(n, request["top_k"])]
        return {"results": [{"id": doc, "score": 0.5, "confidenceBand": "medium"} for doc in docs],
                "bestScore": 0.5, "noConfidentResults": False, "retryHints": None, "traceId": "remote"}

    return search


def as_module(search, name: str) -> str:
    """``search`` importable as ``name:search`` (the caller removes the module)."""
    module = types.ModuleType(name)
    module.search = search  # type: ignore[attr-defined]
    sys.modules[name] = module
    return f"{name}:search"


@pytest.fixture
def config(tmp_path):
    from searchtrace.retriever.config.resolve import resolve_config

    return resolve_config(home=tmp_path / "home", environ={})


def test_http_and_function_targets_give_one_run_folder_format(tmp_path, config):
    from searchtrace.evals.runs.execution import run_eval

    module = types.ModuleType("searchtrace_test_target")
    module.search = fake_search  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    server, url = serve(fake_search)
    try:
        settings = EvalSettings(dataset=str(SAMPLE), depth=5)
        by_http = run_eval(settings, config, out=tmp_path / "http", target=url, progress=False,
                           trace_settings=trace_settings())
        by_function = run_eval(settings, config, out=tmp_path / "fn", target=f"{module.__name__}:search",
                               progress=False, trace_settings=trace_settings())
    finally:
        server.shutdown()
        del sys.modules[module.__name__]
    for folder, source in ((by_http, url), (by_function, f"{module.__name__}:search")):
        summary = folder.summary()
        assert summary.external is not None and (summary.external.kind, summary.external.source) == ("target", source)
        assert summary.retriever.mode == "target" and summary.errors == 0
        outcomes = folder.outcomes()
        assert outcomes and all(o.traced and o.trace_id and o.ranking for o in outcomes)
        assert [d for d, _ in outcomes[0].ranking] == FAKE_DOCS
        assert "search" in summary.latency_ms
    assert by_http.summary().metrics == by_function.summary().metrics
    assert RunFolder.completed(by_http.path).evaluation().mean("ndcg@10") >= 0


def test_a_failing_or_malformed_target_is_the_querys_error(tmp_path, config):
    from opentelemetry.sdk.trace import TracerProvider

    calls = iter([RuntimeError("boom"), {"results": [{"id": 3, "score": 1.0}]}, {"error": {"code": "X"}}])

    def flaky(request: dict) -> dict:
        answer = next(calls)
        if isinstance(answer, Exception):
            raise answer
        return answer

    target = TargetRetriever(flaky, "flaky:search", TracerProvider().get_tracer("t"), config, depth=5, shown=3)
    answers = target.search_many_detailed([{"query": "a", "top_k": 3}] * 3)
    assert [(a.response, a.detail) for a in answers] == [(None, None)] * 3
    assert "RuntimeError: boom" in answers[0].error.message
    assert "results[0].id" in answers[1].error.message
    assert answers[2].error.code.value == "SEARCH_ERROR" and "X" in answers[2].error.message  # an unknown code


def test_resolve_target_names_what_is_wrong():
    from searchtrace.errors import ValidationError

    with pytest.raises(ValidationError, match="URL or module:function"):
        resolve_target("not-a-target")
    with pytest.raises(ValidationError, match="cannot import"):
        resolve_target("no_such_module_here:search")
    with pytest.raises(ValidationError, match="has no function"):
        resolve_target("json:no_such_function")


@pytest.mark.slow
def test_a_target_wrapping_the_local_retriever_scores_as_the_local_eval(tmp_path, sample_config, sample_index_path,
                                                                         model):
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.retriever import open_retriever

    settings = EvalSettings(dataset=str(SAMPLE), mode="fast")  # the default depth, 100: recall@100 and map@100
    local = run_eval(settings, sample_config, out=tmp_path / "local", embedder=model, progress=False,
                     trace_settings=trace_settings())
    retriever = open_retriever(str(SAMPLE), sample_config, embedder=model, progress=False)
    lock = threading.Lock()

    def search(request: dict) -> dict:
        with lock:  # one search at a time, vectors from the embedding cache the local eval filled
            answer = retriever.search_many([request])[0]
            return dict(answer.response.to_json() if answer.response else error_object(answer.error))

    server, url = serve(search, {"maxTopK": MAX_TOP_K})  # as searchtrace serve states it
    try:
        remote = run_eval(settings, sample_config, out=tmp_path / "remote", target=url, progress=False,
                          trace_settings=trace_settings())
    finally:
        server.shutdown()
        retriever.close()
    want, got = local.summary(), remote.summary()
    assert got.errors == 0 and got.evaluated_queries == want.evaluated_queries
    assert got.metrics == want.metrics
    local_rankings = {o.query_id: [d for d, _ in o.ranking] for o in local.outcomes()}
    assert {o.query_id: [d for d, _ in o.ranking] for o in remote.outcomes()} == local_rankings


def test_an_interrupted_target_run_resumes_where_it_stopped(tmp_path, config):
    from searchtrace.evals.runs.execution import run_eval

    calls = {"n": 0, "stop_at": 40}

    def search(request: dict) -> dict:
        calls["n"] += 1
        if calls["n"] == calls["stop_at"]:
            raise KeyboardInterrupt  # as if the user pressed ^C mid-run
        return fake_search(request)

    module = types.ModuleType("searchtrace_test_resume")
    module.search = search  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    settings = EvalSettings(dataset=str(SAMPLE), depth=5, batch_size=8)
    target = f"{module.__name__}:search"
    try:
        with pytest.raises(KeyboardInterrupt):
            run_eval(settings, config, out=tmp_path / "r", target=target, progress=False,
                     trace_settings=trace_settings())
        folder = RunFolder(tmp_path / "r")
        done = len(folder.outcomes())
        assert folder.is_interrupted and 0 < done < calls["stop_at"]
        calls["n"], calls["stop_at"] = 0, -1
        resumed = run_eval(settings, config, out=tmp_path / "r", target=target, progress=False,
                           trace_settings=trace_settings())
    finally:
        del sys.modules[module.__name__]
    summary = resumed.summary()
    assert summary.timings.resumed and summary.errors == 0
    assert calls["n"] == summary.dataset.queries - done  # only the queries not journaled were searched


def test_a_target_nothing_answers_at_stops_before_the_run(tmp_path, capsys):
    """A URL where nothing listens: one line naming it, exit 1 (a failure, not bad input), and no run
    folder of zeros (every query an error) left behind to be gated."""
    import socket

    from searchtrace.cli import main

    with socket.socket() as probe:  # a loopback port nothing listens on: bound, then released
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "run"
    code = main(["eval", str(SAMPLE), "--target", f"http://127.0.0.1:{port}", "--out", str(out),
                 "--home", str(tmp_path / "home"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"nothing answers at http://127.0.0.1:{port}{SEARCH_PATH}" in err and "Traceback" not in err
    assert not out.exists()


def eval_warnings(caplog) -> list[str]:
    """The warnings the evals library logged, as the command line prints them (``warning: ...``)."""
    return [f"warning: {r.getMessage()}" for r in caplog.records
            if r.name.startswith("searchtrace.evals") and r.levelno == logging.WARNING]


def _queries() -> int:
    from searchtrace.retriever import load_dataset

    return len(list(load_dataset(SAMPLE).queries_for_split()))


def test_a_function_target_is_asked_the_eval_depth_and_one_answering_fewer_warns(tmp_path, config, caplog):
    """A target answering 10 results where 100 were asked (and the corpus has more): one warning with the
    counts, and the run records the depth it really scored."""
    from searchtrace.evals.runs.execution import run_eval

    asked: list[int] = []
    target = as_module(answering(10, asked), "searchtrace_test_ten")
    try:
        folder = run_eval(EvalSettings(dataset=str(SAMPLE)), config, out=tmp_path / "r", target=target,
                          progress=False, trace_settings=trace_settings())
    finally:
        del sys.modules["searchtrace_test_ten"]
    n = _queries()
    assert len(CORPUS) > 100 and asked == [100] * n  # the depth scored, not capped for a function
    warnings = eval_warnings(caplog)
    assert warnings == [f"warning: {n} of {n} queries got fewer than the 100 results asked (at most 10)"]
    assert all(len(line) <= 80 for line in warnings)
    summary = folder.summary()
    assert (summary.settings.depth, summary.depth) == (100, 10)
    assert json.loads((folder.path / "run.json").read_text())["scored_depth"] == 10


def test_a_target_answering_all_it_was_asked_does_not_warn(tmp_path, config, caplog):
    from searchtrace.evals.runs.execution import run_eval

    asked: list[int] = []
    target = as_module(answering(100, asked), "searchtrace_test_full")
    try:
        folder = run_eval(EvalSettings(dataset=str(SAMPLE), depth=40), config, out=tmp_path / "r", target=target,
                          progress=False, trace_settings=trace_settings())
    finally:
        del sys.modules["searchtrace_test_full"]
    assert set(asked) == {40} and eval_warnings(caplog) == []
    assert folder.summary().depth == 40


@pytest.mark.parametrize("stats,limit,warning", [
    ({"maxTopK": 20}, 20, "--depth 100 is above the target's maxTopK 20; asking for 20"),
    ({"datasets": {}}, 50, "the target states no maxTopK; --depth 100 asks for 50"),
    (None, 50, "the target states no maxTopK; --depth 100 asks for 50"),
])
def test_a_service_is_asked_the_depth_up_to_its_stated_maximum(tmp_path, config, caplog, stats, limit, warning):
    """A service stating maxTopK below the eval's depth is asked for its maximum, with one warning; one
    stating none (a server older than the field) for the limit servers had then."""
    from searchtrace.evals.runs.execution import run_eval

    asked: list[int] = []
    server, url = serve(answering(200, asked), stats)
    try:
        folder = run_eval(EvalSettings(dataset=str(SAMPLE)), config, out=tmp_path / "r", target=url,
                          progress=False, trace_settings=trace_settings())
    finally:
        server.shutdown()
    assert set(asked) == {limit}
    assert eval_warnings(caplog) == [f"warning: {warning}"]
    assert len(f"warning: {warning}") <= 80
    assert folder.summary().depth == limit
