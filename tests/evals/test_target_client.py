"""An eval target as a real client: failures recorded and never scored, retries, concurrency, resume.

The targets here answer in process: an :class:`HttpTarget` over ``httpx.MockTransport`` (the
proxy in front of a service, answering 500, 429 or garbage for chosen queries) or a plain
function. A loopback server's timeouts and secrets are in ``tests/system/test_target_client_http.py``.
"""

from __future__ import annotations

import json
import sys
import threading
import types
import zlib
from collections import Counter
from pathlib import Path

import httpx
import pytest

from searchtrace.errors import BackendUnavailable, Overloaded, SearchFailed, SearchTimeout, ValidationError
from searchtrace.evals import EvalSettings, RunFolder
from searchtrace.evals.runs.client import ClientPolicy, RetryingSearch, retry_after_seconds
from searchtrace.evals.runs.masking import mask_target, redact, secrets_of
from searchtrace.evals.runs.target import HttpTarget, TargetRetriever

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
QUERIES = {json.loads(line)["text"]: json.loads(line)["_id"]
           for line in (SAMPLE / "queries.jsonl").read_text().splitlines() if line.strip()}
CORPUS = [json.loads(line)["_id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines() if line.strip()]
QRELS: dict[str, dict[str, int]] = {}
for _row in (SAMPLE / "qrels" / "test.tsv").read_text().splitlines()[1:]:
    _q, _d, _g = _row.split("\t")
    QRELS.setdefault(_q, {})[_d] = int(_g)
def _split_ids() -> list[str]:
    from searchtrace.retriever import load_dataset

    return [q.id for q in load_dataset(SAMPLE, split="test").queries_for_split()]


TEST_IDS = _split_ids()
FAILING = set(TEST_IDS[::max(1, len(TEST_IDS) // 15)][:15])


def ranking(qid: str, k: int) -> list[str]:
    """A deterministic ranking that is neither perfect nor empty: the corpus rotated by the query's hash, one
    gold document put at a rank that depends on the query."""
    h = zlib.crc32(qid.encode())
    docs = CORPUS[h % len(CORPUS):] + CORPUS[: h % len(CORPUS)]
    gold = sorted(QRELS.get(qid, {}))
    if gold:
        docs.remove(gold[h % len(gold)])
        docs.insert(h % 7, gold[h % len(gold)])
    return docs[:k]


def answer(request: dict) -> dict:
    qid = QUERIES[request["query"]]
    return {"results": [{"id": d, "score": 0.5, "confidenceBand": "medium"} for d in ranking(qid, request["top_k"])],
            "bestScore": 0.5, "noConfidentResults": False, "retryHints": None, "traceId": "remote"}


def proxy(fail: set[str], calls: Counter | None = None, overload: dict[str, int] | None = None):
    """An HttpTarget whose service answers :func:`answer`, 500 for the queries in ``fail``, and 429 with
    ``Retry-After: 7`` the first ``overload[qid]`` times a query is asked."""
    lock = threading.Lock()

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/v1/stats"):
            return httpx.Response(404)
        body = json.loads(request.content)
        qid = QUERIES[body["query"]]
        with lock:
            if calls is not None:
                calls[qid] += 1
            seen = calls[qid] if calls is not None else 1
        if overload and seen <= overload.get(qid, 0):
            return httpx.Response(429, headers={"Retry-After": "7"}, text="slow down")
        if qid in fail:
            return httpx.Response(500, text="Internal Server Error")
        return httpx.Response(200, json=answer(body))

    return HttpTarget("http://proxy.test", transport=httpx.MockTransport(handle))


@pytest.fixture
def config(tmp_path):
    from searchtrace.retriever.config.resolve import resolve_config

    return resolve_config(home=tmp_path / "home", environ={})


@pytest.fixture
def module():
    """A module name to put a target in (``name:search``), removed afterwards."""
    name = "searchtrace_test_client_target"
    yield name
    sys.modules.pop(name, None)


def install(name: str, search) -> str:
    mod = types.ModuleType(name)
    mod.search = search  # type: ignore[attr-defined]
    sys.modules[name] = mod
    return f"{name}:search"


def trace_settings():
    from searchtrace.traces import TraceSettings

    return TraceSettings.resolve(environ={})


def trec_rows(folder: RunFolder) -> list[tuple[str, ...]]:
    """run.trec without its tag column (each run's own id)."""
    return [tuple(line.split()[:5]) for line in folder.run_file.read_text().splitlines()]


def pytrec_means(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    import pytrec_eval

    per = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "recip_rank"}).evaluate(run)
    return {m: sum(v[m] for v in per.values()) / len(per) for m in ("ndcg_cut_10",)}


def test_failed_queries_are_recorded_and_left_out_of_the_metrics(tmp_path, config, module, capsys):
    """15 queries answered 500: eval says 15 failed (exit 1), run.json lists them with their errors, run.trec
    holds none of them, and the metrics are those of the answered queries alone (checked with pytrec_eval)."""
    from searchtrace.cli import main

    assert len(FAILING) == 15
    spec = install(module, proxy(FAILING))
    out = tmp_path / "run"
    code = main(["eval", str(SAMPLE), "--target", spec, "--out", str(out), "--home", str(tmp_path / "home"),
                 "--no-progress", "--depth", "10"])
    err = capsys.readouterr().err
    assert code == 1
    answered = len(TEST_IDS) - 15
    assert f"15 failed queries of {len(TEST_IDS)}" in err and f"over the {answered} that answered" in err
    assert all(len(line) <= 80 for line in err.splitlines()) and "Traceback" not in err
    summary = RunFolder(out).summary()
    assert summary.errors == 15 and summary.evaluated_queries == len(set(QRELS) - FAILING)
    assert {q.query_id for q in summary.failed} == FAILING
    assert {(q.code, q.message) for q in summary.failed} == {("SEARCH_ERROR", "http://proxy.test/v1/search: HTTP 500")}
    journal = {o.query_id: o for o in RunFolder(out).outcomes()}
    assert all(journal[q].error_message == "http://proxy.test/v1/search: HTTP 500" for q in FAILING)
    rows = trec_rows(RunFolder(out))
    assert not {r[0] for r in rows} & FAILING
    run: dict[str, dict[str, float]] = {}
    for qid, _, doc, _, score in rows:
        run.setdefault(qid, {})[doc] = float(score)
    want = pytrec_means(run, {q: QRELS[q] for q in QRELS if q not in FAILING})
    assert summary.metrics["ndcg@10"] == pytest.approx(want["ndcg_cut_10"], abs=1e-6)


def test_gate_refuses_a_candidate_with_failed_queries_unless_allowed(tmp_path, config, module, capsys):
    from searchtrace.cli import main

    home = tmp_path / "home"
    common = ["--home", str(home), "--no-progress", "--depth", "10"]
    install(module, proxy(set()))
    assert main(["eval", str(SAMPLE), "--target", f"{module}:search", "--out", str(tmp_path / "base"), *common]) == 0
    install(module, proxy(FAILING))
    assert main(["eval", str(SAMPLE), "--target", f"{module}:search", "--out", str(tmp_path / "cand"), *common]) == 1
    capsys.readouterr()
    gate = ["gate", "--baseline", str(tmp_path / "base"), "--candidate", str(tmp_path / "cand"), "--home", str(home)]
    assert main(gate) == 2
    err = capsys.readouterr().err
    assert "error: the candidate has 15 failed queries, above --allow-failed 0" in err
    named = {word for line in err.splitlines() if line.startswith(("failed:", " ")) for word in line.split()}
    assert FAILING <= named  # every failed query named
    assert all(len(line) <= 80 for line in err.splitlines())
    assert main([*gate, "--allow-failed", "14"]) == 2
    capsys.readouterr()
    assert main([*gate, "--allow-failed", "15"]) == 0  # same rankings on every query both answered
    captured = capsys.readouterr()
    assert "note: the candidate has 15 failed queries" in captured.err
    # and the other way round: a baseline with failures is said, not refused
    assert main(["gate", "--baseline", str(tmp_path / "cand"), "--candidate", str(tmp_path / "base"),
                 "--home", str(home)]) == 0
    assert "note: the baseline has 15 failed queries" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "base"), str(tmp_path / "cand"), "--home", str(home)]) == 0
    assert "the candidate has 15 failed queries" in capsys.readouterr().out


def test_an_overloaded_target_is_asked_again_after_its_retry_after(tmp_path, config, module):
    """429 with Retry-After twice for one query, then an answer: three attempts, two waits of the 7 s it asked
    (to the injected sleep, never the clock), the query recorded as answered."""
    from searchtrace.evals.runs.execution import run_eval

    calls: Counter = Counter()
    first = TEST_IDS[0]
    spec = install(module, proxy(set(), calls, overload={first: 2}))
    waits: list[float] = []
    folder = run_eval(EvalSettings(dataset=str(SAMPLE), depth=10), config, out=tmp_path / "r", target=spec,
                      progress=False, trace_settings=trace_settings(), sleep=waits.append)
    assert calls[first] == 3 and waits == [7.0, 7.0]
    assert folder.summary().errors == 0
    assert set(calls.values()) - {0} <= {1, 3}


def test_each_retry_is_an_event_on_the_search_span(config):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from searchtrace.traces import vocabulary as v

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    calls: Counter = Counter()
    first = TEST_IDS[0]
    text = next(t for t, q in QUERIES.items() if q == first)
    waits: list[float] = []
    search = RetryingSearch(proxy(set(), calls, overload={first: 2}), ClientPolicy(), sleep=waits.append)
    target = TargetRetriever(search, "http://proxy.test", provider.get_tracer("t"), config, depth=5, shown=5)
    target.search_detailed({"query": text, "top_k": 5}, run_id="r", query_id=first)
    (span,) = exporter.get_finished_spans()
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    assert events == [(v.TARGET_RETRY_EVENT, {v.TARGET_RETRY_ATTEMPT: n, v.ERROR_CODE: "OVERLOADED",
                                              v.TARGET_RETRY_DELAY_S: 7.0}) for n in (1, 2)]


def mock(handler) -> HttpTarget:
    return HttpTarget("http://svc.test", timeout_s=0.5, transport=httpx.MockTransport(handler))


def test_http_target_raises_by_the_error_seam():
    def timeout(request):
        raise httpx.ReadTimeout("read timed out", request=request)

    def refused(request):
        raise httpx.ConnectError("connection refused", request=request)

    cases = [(timeout, SearchTimeout, "no answer within 0.5 s"), (refused, BackendUnavailable, "connection refused"),
             (lambda r: httpx.Response(503, headers={"Retry-After": "3"}), Overloaded, "HTTP 503"),
             (lambda r: httpx.Response(200, text="{not json"), SearchFailed, "not JSON"),
             (lambda r: httpx.Response(200, json=[1, 2]), SearchFailed, "not a JSON object"),
             (lambda r: httpx.Response(500, json={"detail": "x"}), SearchFailed, "HTTP 500")]
    for handler, error, text in cases:
        with pytest.raises(error, match=text):
            mock(handler)({"query": "q", "top_k": 1})
    with pytest.raises(Overloaded) as raised:
        mock(lambda r: httpx.Response(429, headers={"Retry-After": "12"}))({"query": "q"})
    assert raised.value.retry_after_s == 12.0


def test_retry_after_reads_seconds_and_dates():
    assert retry_after_seconds("5") == 5.0 and retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None and retry_after_seconds("-3") == 0.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date passed: no wait


def test_retries_are_bounded_and_only_for_passing_faults():
    """A timeout is asked again ``retries`` times with doubling backoff (half fixed, half jitter), then raised;
    a failed search or a validation error is raised at once."""
    attempts: list[int] = []

    def failing(error):
        def search(request):
            attempts.append(1)
            raise error
        return search

    waits: list[float] = []
    policy = ClientPolicy(retries=3, backoff_s=1.0)
    with pytest.raises(SearchTimeout):
        RetryingSearch(failing(SearchTimeout("t")), policy, sleep=waits.append, rand=lambda: 0.0)({})
    assert len(attempts) == 4 and waits == [0.5, 1.0, 2.0]
    waits.clear()
    with pytest.raises(BackendUnavailable):
        RetryingSearch(failing(BackendUnavailable("b")), policy, sleep=waits.append, rand=lambda: 1.0)({})
    assert waits == [1.0, 2.0, 4.0]  # full jitter at its top: the whole backoff
    for error in (SearchFailed("500"), ValidationError("bad")):
        attempts.clear()
        with pytest.raises(type(error)):
            RetryingSearch(failing(error), policy, sleep=waits.append)({})
        assert len(attempts) == 1
    waits.clear()
    with pytest.raises(Overloaded):
        RetryingSearch(failing(Overloaded("o", retry_after_s=3600)), ClientPolicy(retries=1), sleep=waits.append)({})
    assert waits == [60.0]  # an hour asked, the cap given


def test_policy_bounds_name_the_flag():
    for kwargs, flag in (({"concurrency": 0}, "--concurrency"), ({"concurrency": 65}, "--concurrency"),
                         ({"retries": -1}, "--retries"), ({"timeout_s": 0}, "--target-timeout")):
        with pytest.raises(ValidationError, match=flag):
            ClientPolicy(**kwargs)


def test_client_flags_without_a_target_or_out_of_bounds_are_one_line(tmp_path, capsys):
    from searchtrace.cli import main

    home = ["--home", str(tmp_path / "home"), "--no-progress"]
    assert main(["eval", str(SAMPLE), "--concurrency", "4", "--retries", "1", *home]) == 2
    err = capsys.readouterr().err
    assert err == "error: --concurrency, --retries ask a --target; the local retriever takes none of them\n"
    assert main(["eval", str(SAMPLE), "--target", "json:loads", "--concurrency", "65", *home]) == 2
    err = capsys.readouterr().err
    assert "--concurrency must be 1-64, got 65" in err and "Traceback" not in err
    assert not (tmp_path / "home" / "runs").exists()


def test_a_malformed_answer_is_the_querys_error_and_not_retried(tmp_path, config, module):
    from searchtrace.evals.runs.execution import run_eval

    asked = Counter()

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/v1/stats"):
            return httpx.Response(404)
        qid = QUERIES[json.loads(request.content)["query"]]
        asked[qid] += 1
        return httpx.Response(200, text="<html>oops") if qid == TEST_IDS[1] else \
            httpx.Response(200, json=answer(json.loads(request.content)))

    spec = install(module, HttpTarget("http://svc.test", transport=httpx.MockTransport(handle)))
    folder = run_eval(EvalSettings(dataset=str(SAMPLE), depth=10), config, out=tmp_path / "r", target=spec,
                      progress=False, trace_settings=trace_settings(), sleep=lambda s: None)
    (failed,) = folder.summary().failed
    assert (failed.query_id, failed.code) == (TEST_IDS[1], "SEARCH_ERROR") and "not JSON" in failed.message
    assert asked[TEST_IDS[1]] == 1


def test_a_run_interrupted_at_concurrency_4_resumes_to_the_uninterrupted_run(tmp_path, config, module):
    from searchtrace.evals.runs.execution import run_eval

    settings = EvalSettings(dataset=str(SAMPLE), depth=10, batch_size=8)
    spec = install(module, answer)
    whole = run_eval(settings, config, out=tmp_path / "whole", target=spec, progress=False,
                     trace_settings=trace_settings())
    lock, state = threading.Lock(), {"n": 0, "stop_at": 30}

    def interrupted(request: dict) -> dict:
        with lock:
            state["n"] += 1
            stop = state["n"] == state["stop_at"]
        if stop:
            raise KeyboardInterrupt  # as ^C mid-run
        return answer(request)

    install(module, interrupted)
    client = ClientPolicy(concurrency=4)
    with pytest.raises(KeyboardInterrupt):
        run_eval(settings, config, out=tmp_path / "r", target=spec, progress=False, trace_settings=trace_settings(),
                 client=client)
    folder = RunFolder(tmp_path / "r")
    done = {o.query_id for o in folder.outcomes()}
    assert folder.is_interrupted and 0 < len(done) < len(TEST_IDS)
    with lock:
        state["n"], state["stop_at"] = 0, -1
    resumed = run_eval(settings, config, out=tmp_path / "r", target=spec, progress=False,
                       trace_settings=trace_settings(), client=client)
    assert state["n"] == len(TEST_IDS) - len(done)  # only what was not journaled, asked again
    assert trec_rows(resumed) == trec_rows(whole)
    assert resumed.summary().metrics == whole.summary().metrics


def test_concurrency_keeps_n_searches_in_flight_each_in_its_own_eval_trace(tmp_path, config, module):
    """Four searches meet at a barrier of four parties: the run only answers if four are in flight at once.
    Each query's trace holds its own search span, named by the run and the query."""
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.home import Home
    from searchtrace.traces import vocabulary as v
    from searchtrace.traces.store.opening import open_trace_store

    barrier = threading.Barrier(4, timeout=10)

    def together(request: dict) -> dict:
        barrier.wait()
        return answer(request)

    spec = install(module, together)
    settings = EvalSettings(dataset=str(SAMPLE), depth=10, batch_size=8)
    folder = run_eval(settings, config, out=tmp_path / "r", target=spec, progress=False,
                      trace_settings=trace_settings(), client=ClientPolicy(concurrency=4))
    assert len(TEST_IDS) % 4 == 0 and folder.summary().errors == 0
    outcomes = folder.outcomes()
    assert len({o.trace_id for o in outcomes}) == len(outcomes) == len(TEST_IDS)
    store = open_trace_store(Home(config.home.root).traces).open()
    try:
        for o in outcomes:
            detail = store.load_trace(o.trace_id)
            assert detail is not None
            (span,) = [sp for sp in detail.spans if sp.name == v.SEARCH_SPAN]
            assert (span.attributes[v.RUN_ID], span.attributes[v.QUERY_ID]) == (folder.run_id, o.query_id)
    finally:
        store.close()


def test_a_slow_query_holds_back_neither_the_other_searches_nor_their_journal(tmp_path, config, module):
    """A sliding window, not waves: the first query answers only once every other query has been answered
    (an event, waited for at most 10 s). Searched in waves of a batch, the first wave would wait for it and
    the others would never be asked; kept 4 in flight, they all are, and journaled before it (all but those still
    handing their answers on)."""
    from searchtrace.evals.runs.execution import run_eval

    slow, lock = TEST_IDS[0], threading.Lock()
    others, released = threading.Event(), []
    answered: list[str] = []

    def one_slow(request: dict) -> dict:
        qid = QUERIES[request["query"]]
        if qid == slow:
            released.append(others.wait(timeout=10))
        out = answer(request)
        with lock:
            answered.append(qid)
            if len(answered) == len(TEST_IDS) - 1 and slow not in answered:
                others.set()
        return out

    spec = install(module, one_slow)
    settings = EvalSettings(dataset=str(SAMPLE), depth=10, batch_size=8)
    folder = run_eval(settings, config, out=tmp_path / "r", target=spec, progress=False,
                      trace_settings=trace_settings(), client=ClientPolicy(concurrency=4))
    assert released == [True]  # the others were all answered while the slow one was in flight
    assert answered[-1] == slow and folder.summary().errors == 0
    journal = [o.query_id for o in folder.outcomes()]
    # journaled as answers come back: behind the slow one, at most the three other queries in flight when the
    # last of them was answered (each thread hands its answer on after the event is set, a race not ours)
    assert sorted(journal) == sorted(TEST_IDS) and journal.index(slow) >= len(TEST_IDS) - 4
    assert trec_rows(folder) == trec_rows(run_eval(settings, config, out=tmp_path / "one", target=spec,
                                                   progress=False, trace_settings=trace_settings()))


def test_target_secrets_are_masked():
    spec = "https://bob:hunter2pw@svc.test/rag?api_key=TOPSECRET99&mode=fuse&access_token=tok123"
    assert mask_target(spec) == "https://bob:****@svc.test/rag?api_key=****&mode=fuse&access_token=****"
    assert mask_target("https://ghp_abc123@svc.test/") == "https://****@svc.test/"
    assert mask_target("mod:search") == "mod:search" and secrets_of("mod:search") == ()
    assert redact(f"cannot reach {spec}", secrets_of(spec)) == f"cannot reach {mask_target(spec)}"
