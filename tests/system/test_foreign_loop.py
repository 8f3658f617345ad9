"""The label loop on someone else's retriever (issue 37's done-when): a real LangChain ``BM25Retriever`` (no
model), instrumented with ``openinference-instrumentation-langchain`` as its users do, exports through the
standard OTLP/HTTP exporter to a ``searchtrace collect`` process; then its searches are listed with their
document ids (LangChain sends no ``document.id``: the id comes from the metadata key ``collect --doc-id-key``
names for every service), ``queries from-traces --service`` makes a query set whose corpus is the documents the traces returned,
``judge pool --from-traces`` pools them, a simulated judge grades every pair with ``judge grade``, ``judge
export`` writes the qrels, and ``eval --from-traces`` finds judged@10 of the traces' own rankings 1.0. And GenAI
retrieval spans, built with the OpenTelemetry SDK as the conventions define them, sent as OTLP JSON compressed
with gzip, are listed as searches too.
"""

from __future__ import annotations

import base64
import gzip
import json
import warnings

import httpx
import pytest
from collect_process import Collector
from foreign_fixtures import genai, record_foreign

from searchtrace.cli import main

SERVICE, PROJECT = "kb-app", "support"
DOCS = {"kb-1": "The harbour town lies on the river mouth.", "kb-2": "Tide tables for the harbour, by month.",
        "kb-3": "Ferry times from the harbour to the island.", "kb-4": "The island has a lighthouse and a cafe.",
        "kb-5": "Fishing boats leave the harbour at dawn.", "kb-6": "River cruises start at the old bridge.",
        "kb-7": "The lighthouse opens to visitors in summer.", "kb-8": "Parking near the ferry terminal.",
        "kb-9": "Tide warnings are posted at the harbour office.", "kb-10": "The cafe on the island serves fish."}
QUERIES = ["harbour tide", "ferry to the island", "lighthouse visitors", "Harbour  TIDE", "fish cafe"]


def _search_with_langchain(url: str) -> None:
    """What a LangChain user runs: their retriever, the instrumentor and the standard exporter (README)."""
    from langchain_core.documents import Document
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community announces its sunset
        from langchain_community.retrievers import BM25Retriever

    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE,
                                                        "openinference.project.name": PROJECT}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        retriever = BM25Retriever.from_documents(
            [Document(page_content=text, metadata={"doc_id": doc_id}) for doc_id, text in DOCS.items()], k=4)
        for query in QUERIES:
            assert len(retriever.invoke(query)) == 4
        assert provider.force_flush(30_000)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def _grade(query: str, text: str) -> int:
    """The simulated judge: 2 when the text holds two of the query's words, 1 for one, else 0."""
    words = {w for w in query.casefold().split() if len(w) > 3}
    return min(2, sum(w in text.casefold() for w in words))


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.slow
def test_the_label_loop_runs_on_a_langchain_retriever_s_traces(tmp_path, capsys):
    home = tmp_path / "home"
    collector = Collector(home, "--doc-id-key", "doc_id")  # every service's (the README names one: SERVICE=KEY)
    try:
        _search_with_langchain(collector.url)
        assert collector.stop() == 0  # SIGTERM: what was acknowledged is written
    finally:
        collector.kill()
    assert "document ids of every service without document.id: metadata key 'doc_id'" in collector.log.read_text()
    h = ["--home", str(home)]
    capsys.readouterr()

    assert main(["traces", "list", "--service", SERVICE, "--format", "json", *h]) == 0
    listed = json.loads(capsys.readouterr().out)
    searches = [s for trace in listed for s in trace["searches"]]
    assert sorted(s["query"] for s in searches) == sorted(QUERIES)
    for s in searches:
        assert len(s["doc_ids"]) == 4 and set(s["doc_ids"]) <= set(DOCS) and s["unidentified"] == 0

    qset = tmp_path / "kb-queries"
    assert main(["queries", "from-traces", str(qset), "--service", SERVICE, "--project", PROJECT, *h]) == 0
    said = capsys.readouterr().out
    returned = {d for s in searches for d in s["doc_ids"]}
    assert f"corpus from the traces: {len(returned)} documents, 0 of them without content" in said
    corpus = {d["_id"]: d["text"] for d in _lines(qset / "corpus.jsonl")}
    assert corpus == {d: DOCS[d] for d in returned}
    queries = {q["_id"]: q["text"] for q in _lines(qset / "queries.jsonl")}
    assert len(queries) == 4  # "Harbour  TIDE" is "harbour tide" asked again

    assert main(["judge", "pool", str(qset), "--from-traces", *h]) == 0
    pool = _lines(qset / "pool.jsonl")
    by_query: dict[str, set[str]] = {}
    for s in searches:
        qid = next(q for q, text in queries.items() if text.casefold().split() == s["query"].casefold().split())
        by_query.setdefault(qid, set()).update(s["doc_ids"])
    assert {(p["query_id"], p["doc_id"]) for p in pool} == {(q, d) for q, ds in by_query.items() for d in ds}
    assert {c["source"] for p in pool for c in p["sources"]} == {f"traces:{SERVICE}"}

    for pair in pool:
        grade = _grade(queries[pair["query_id"]], corpus[pair["doc_id"]])
        assert main(["judge", "grade", str(qset), pair["query_id"], pair["doc_id"], str(grade), "--judge",
                     "simulated"]) == 0
    assert main(["judge", "export", str(qset), "--split", "test"]) == 0
    qrels = (qset / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    assert len(qrels) == len(pool) + 1  # a header, then a line per judged pair
    capsys.readouterr()

    assert main(["eval", str(qset), "--from-traces", "--metrics", "ndcg@10", "--json", *h]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert scored["queries"] == 4
    assert scored["metrics"]["judged@10"] == 1.0
    assert 0 < scored["metrics"]["ndcg@10"] <= 1


def _otlp_json(spans) -> bytes:
    """OTLP JSON of SDK spans as the specification writes it: protobuf's JSON mapping with hex ids."""
    from google.protobuf import json_format
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    document = json_format.MessageToDict(encode_spans(spans))
    for rs in document["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(document).encode()


def test_genai_retrieval_spans_sent_as_gzipped_otlp_json_are_listed_as_searches(tmp_path, capsys):
    def searches(tracer):
        with tracer.start_as_current_span("answer", attributes={"gen_ai.operation.name": "chat"}):
            for query, docs in (("tide tables", [{"id": "doc_1", "score": 0.9}, {"id": "doc_2"}]),
                                ("ferry times", [{"id": "doc_3", "score": 0.4}, {"score": 0.2}])):
                with tracer.start_as_current_span("retrieval kb", attributes=genai(query, docs, top_k=2)):
                    pass

    spans = record_foreign(searches, service="genai-app", project=None, scope="my.genai.app")
    home = tmp_path / "home"
    collector = Collector(home)
    try:
        r = httpx.post(collector.url, content=gzip.compress(_otlp_json(spans)),
                       headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}, timeout=30)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        assert json.loads(r.content) == {}  # nothing rejected: no partialSuccess
        assert collector.stop() == 0
    finally:
        collector.kill()
    capsys.readouterr()
    assert main(["traces", "list", "--service", "genai-app", "--format", "json", "--home", str(home)]) == 0
    (trace,) = json.loads(capsys.readouterr().out)
    assert (trace["n_spans"], trace["service"], trace["source"]) == (3, "genai-app", "otlp")
    assert [(s["query"], s["doc_ids"], s["scores"], s["unidentified"]) for s in trace["searches"]] == [
        ("tide tables", ["doc_1", "doc_2"], [0.9, None], 0), ("ferry times", ["doc_3", None], [0.4, 0.2], 1)]
