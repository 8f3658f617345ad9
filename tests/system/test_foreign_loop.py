"""The label loop on someone else's retriever (issue 37's done-when): a real LangChain ``BM25Retriever`` (no
model), instrumented with ``openinference-instrumentation-langchain`` as its users do, exports through the
standard OTLP/HTTP exporter to a ``searchtrace collect`` process; then its searches are listed with their
document ids (LangChain sends no ``document.id``: the id comes from the metadata key ``collect --doc-id-key``
names), ``queries from-traces --service`` makes a query set whose corpus is the documents the traces returned,
``judge pool --from-traces`` pools them, a simulated judge grades every pair with ``judge grade``, ``judge
export`` writes the qrels, and ``eval --from-traces`` finds judged@10 of the traces' own rankings 1.0.
"""

from __future__ import annotations

import json
import warnings

import pytest
from collect_process import Collector

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
    collector = Collector(home, "--doc-id-key", f"{SERVICE}=doc_id")
    try:
        _search_with_langchain(collector.url)
        assert collector.stop() == 0  # SIGTERM: what was acknowledged is written
    finally:
        collector.kill()
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
