"""Another retriever's traffic as a query set (``querysets.services``): queries and a corpus from the documents
its searches returned (those without text or id counted), ``judge pool --from-traces``, ``eval --from-traces``
and where each gold document was kept or lost across its retriever and reranker spans."""

from __future__ import annotations

import json

import pytest
from foreign_fixtures import record_foreign, reranker, retriever

from searchtrace.cli import main
from searchtrace.errors import ValidationError
from searchtrace.evals.labels.querysets.build import queries_from_service
from searchtrace.evals.labels.querysets.services import ServiceFilter
from searchtrace.evals.labels.querysets.traffic import query_id
from searchtrace.evals.scoring.attribution import fates_summary, follow
from searchtrace.home import Home
from searchtrace.traces import TraceStore

DOCS = [{"metadata": json.dumps({"source": "kb-1"}), "content": "The harbour town lies on the river."},
        {"metadata": json.dumps({"source": "kb-2"})},  # no text sent
        {"metadata": json.dumps({"source": "kb-3"}), "content": "Ferry times."},
        {"content": "no id anywhere"}]


def searched(tracer, query, docs, kept=None):
    """A CHAIN with a RETRIEVER span, and a RERANKER keeping ``kept`` of its first three when given."""
    with tracer.start_as_current_span("chain", attributes={"openinference.span.kind": "CHAIN"}):
        with tracer.start_as_current_span("retriever", attributes=retriever(query, docs)):
            pass
        if kept is not None:
            with tracer.start_as_current_span("rerank", attributes=reranker(query, docs[:3], kept, len(kept))):
                pass


@pytest.fixture
def home(tmp_path):
    store = TraceStore(Home(tmp_path / "home").traces)
    store.set_doc_id_key("rag-app", "source")
    store.write(record_foreign(lambda t: searched(t, "harbour town", DOCS, kept=[DOCS[2], DOCS[0]])))
    store.write(record_foreign(lambda t: searched(t, "Harbour  Town", DOCS[2:])))  # the same query again
    store.write(record_foreign(lambda t: searched(t, "ferry", DOCS[1:3], kept=[DOCS[1]])))
    store.write(record_foreign(lambda t: searched(t, "elsewhere", DOCS[:1]), service="other-app"))
    store.close()
    return tmp_path / "home"


def test_a_service_query_set_has_its_queries_and_the_corpus_its_searches_returned(home, tmp_path):
    made = queries_from_service(tmp_path / "q", ServiceFilter("rag-app"), home=home)
    queries = [json.loads(line) for line in (tmp_path / "q" / "queries.jsonl").read_text().splitlines()]
    assert [(q["_id"], q["text"], q["metadata"]["count"]) for q in queries] == [
        (query_id("harbour town"), "harbour town", 2), (query_id("ferry"), "ferry", 1)]
    corpus = [json.loads(line) for line in (tmp_path / "q" / "corpus.jsonl").read_text().splitlines()]
    assert [(d["_id"], d["text"]) for d in corpus] == [
        ("kb-1", "The harbour town lies on the river."), ("kb-2", ""), ("kb-3", "Ferry times.")]
    assert not (tmp_path / "q" / "corpus.jsonl").is_symlink()
    assert made.info.corpus == {"documents": 3, "without_content": 1, "unidentified": 2}
    assert made.info.filters == {"service": "rag-app"} and made.info.dataset == ""


def test_a_service_query_set_over_a_dataset_links_its_corpus(home, tmp_path):
    dataset = tmp_path / "kb"
    dataset.mkdir()
    (dataset / "corpus.jsonl").write_text('{"_id": "kb-1", "title": "", "text": "The harbour town."}\n')
    made = queries_from_service(tmp_path / "q", ServiceFilter("rag-app", project="support"), dataset=dataset,
                                home=home)
    assert (tmp_path / "q" / "corpus.jsonl").resolve() == (dataset / "corpus.jsonl").resolve()
    assert (tmp_path / "q" / "corpus.jsonl").is_symlink() and made.info.corpus is None
    assert made.info.filters == {"service": "rag-app", "project": "support"} and made.info.dataset_name == "kb"


def test_a_service_without_searches_writes_nothing_and_says_why(home, tmp_path):
    from searchtrace.errors import NotFoundError

    with pytest.raises(NotFoundError, match="no search of service 'nobody'"):
        queries_from_service(tmp_path / "q", ServiceFilter("nobody"), home=home)
    assert not (tmp_path / "q").exists()


def test_the_pool_from_traces_is_what_the_retriever_returned_and_eval_scores_it(home, tmp_path, capsys):
    qset, h = tmp_path / "q", ["--home", str(home)]
    assert main(["queries", "from-traces", str(qset), "--service", "rag-app", *h]) == 0
    assert "corpus from the traces: 3 documents, 1 of them without content" in capsys.readouterr().out
    assert main(["judge", "pool", str(qset), "--from-traces", "--depth", "2", *h]) == 0
    pool = {(p["query_id"], p["doc_id"]): p["sources"]
            for p in map(json.loads, (qset / "pool.jsonl").read_text().splitlines())}
    harbour, ferry = query_id("harbour town"), query_id("ferry")
    # harbour town: [kb-1, kb-2] then [kb-3]: each search's top 2; ferry: [kb-2, kb-3]
    assert set(pool) == {(harbour, "kb-1"), (harbour, "kb-2"), (harbour, "kb-3"), (ferry, "kb-2"), (ferry, "kb-3")}
    assert pool[(harbour, "kb-3")] == [{"source": "traces:rag-app", "rank": 1}]
    (qset / "qrels").mkdir()
    (qset / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\n{harbour}\tkb-1\t2\n{harbour}\tkb-2\t1\n"
                                             f"{ferry}\tkb-3\t1\n{ferry}\tkb-2\t0\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["eval", str(qset), "--from-traces", "--metrics", "ndcg@10", "--json", *h]) == 0
    out = capsys.readouterr()
    scored = json.loads(out.out)
    # the latest search of each: harbour town [kb-3] (nothing judged), ferry [kb-2, kb-3] (both judged)
    assert scored["queries"] == 2 and scored["metrics"]["judged@10"] == (0 + 1) / 2
    run = (qset / "traces.run").read_text().splitlines()
    assert run == sorted([f"{ferry} Q0 kb-2 1 2 traces:rag-app", f"{ferry} Q0 kb-3 2 1 traces:rag-app",
                          f"{harbour} Q0 kb-3 1 1 traces:rag-app"])
    # gold: harbour's kb-1 and kb-2 not retrieved by its latest search; ferry's kb-3 lost at the reranker
    assert out.err.splitlines() == ["gold documents of the traced searches: 3", "  0 found in the top 10",
                                    "  0 ranked out", "  2 not retrieved", "  1 lost at the reranker"]


def test_judge_pool_from_traces_refuses_a_dataset_not_made_from_a_service(tmp_path):
    from searchtrace.evals.labels.judgments.folder import JudgingFolder
    from searchtrace.evals.labels.querysets.services import traced_rankings

    (tmp_path / "d").mkdir()
    with pytest.raises(ValidationError, match="not a query set made from another retriever's traces"):
        traced_rankings(JudgingFolder(tmp_path / "d").root, tmp_path / "traces.sqlite", None)


def test_each_gold_document_is_followed_through_retriever_and_reranker():
    stages = [("retriever", ["a", "b", "c", "d"]), ("reranker", ["c", "a"])]
    fates = follow("q1", {"a": 2, "b": 1, "c": 1, "e": 1, "z": 0}, stages, k=1)
    assert [(f.doc_id, f.ranks, f.lost_at) for f in fates] == [
        ("a", (1, 2), "ranked_out"), ("b", (2, None), "reranker"), ("c", (3, 1), "found"),
        ("e", (None, None), "not_retrieved")]
    assert fates_summary(fates) == {"found": 1, "ranked_out": 1, "not_retrieved": 1, "reranker": 1}
    assert [f.lost_at for f in follow("q1", {"a": 1}, [("retriever", ["a"])], k=10)] == ["found"]


def test_a_document_id_with_whitespace_is_refused_not_written_into_the_run(tmp_path, capsys):
    store = TraceStore(Home(tmp_path / "home").traces)
    store.write(record_foreign(lambda t: searched(t, "q", [{"id": "kb 1"}, {"id": "kb-2"}])))
    store.close()
    h = ["--home", str(tmp_path / "home")]
    assert main(["queries", "from-traces", str(tmp_path / "q"), "--service", "rag-app", *h]) == 0
    (tmp_path / "q" / "qrels").mkdir()
    (tmp_path / "q" / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\n{query_id('q')}\tkb-2\t1\n")
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "q"), "--from-traces", *h]) == 2
    assert "document id 'kb 1' of service 'rag-app' holds whitespace" in capsys.readouterr().err
    assert not (tmp_path / "q" / "traces.run").exists()
