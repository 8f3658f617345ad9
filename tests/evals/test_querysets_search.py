"""A query set from real searches of the sample: the traces record the dataset, and eval runs on the set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.evals.labels.querysets import QueryOrigin, query_id
from searchtrace.home import Home
from searchtrace.retriever import dataset_fingerprint, load_dataset
from searchtrace.traces import CaptureConfig, TraceStore
from searchtrace.traces import vocabulary as v

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


@pytest.fixture
def traffic(traced, tmp_path):
    """A home whose store holds searches of the sample through each surface; and the judged queries asked."""
    retriever, exporter = traced()
    hidden, hidden_exporter = traced(capture=CaptureConfig(capture_query=False))
    first, second, third = load_dataset(SAMPLE).queries_for_split()[:3]
    retriever.search({"query": first.text}, source=v.Source.HTTP)
    retriever.search({"query": first.text.upper()}, source=v.Source.MCP)
    retriever.search({"query": first.text.replace(" ", "  ")}, source=v.Source.CLI)
    retriever.search({"query": second.text})  # the Python API
    retriever.search({"query": third.text}, source=v.Source.EVAL)  # an eval's own query: not traffic
    hidden.search({"query": second.text}, source=v.Source.HTTP)
    spans = [*exporter.get_finished_spans(), *hidden_exporter.get_finished_spans()]
    assert {s.attributes[v.DATASET] for s in spans if s.name == v.SEARCH_SPAN} == {"sample"}
    store = TraceStore(Home(tmp_path / "home").traces)
    store.write(spans)
    store.close()
    return tmp_path / "home", first, second


def test_a_query_set_from_real_searches_then_eval_on_it(traffic, tmp_path, sample_config, model, capsys):
    home, first, second = traffic
    out = tmp_path / "traffic-set"
    assert main(["queries", "from-traces", str(out), "--dataset", str(SAMPLE), "--home", str(home)]) == 0
    assert "1 searches recorded no query text" in capsys.readouterr().out
    got = {q.text: (q.id, QueryOrigin.of(q).count) for q in load_dataset(out).queries}
    assert got == {first.text: (query_id(first.text), 3), second.text: (query_id(second.text), 1)}

    run = tmp_path / "unlabelled-run"
    assert main(["eval", str(out), "--home", str(sample_config.home.root), "--no-progress", "--out", str(run)]) == 0
    assert "no labels yet; 2 queries ranked" in capsys.readouterr().out  # ranked for judge pool, nothing scored
    ranked = {line.split()[0] for line in (run / "run.trec").read_text().splitlines()}
    assert ranked == {query_id(first.text), query_id(second.text)}
    assert not sample_config.home.runs.exists() or not any(p.name.startswith("traffic-set")
                                                           for p in sample_config.home.runs.iterdir())

    # labelled as the sample labels the same queries, it is scored over the linked corpus
    sample = load_dataset(SAMPLE)
    (out / "qrels").mkdir()
    rows = [f"{query_id(q.text)}\t{doc}\t{grade}" for q in (first, second) for doc, grade in sample.qrels[q.id].items()]
    (out / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    from searchtrace.evals import EvalSettings, run_eval
    from searchtrace.traces import TraceSettings

    run = run_eval(EvalSettings(dataset=str(out)), sample_config, out=tmp_path / "run", embedder=model,
                   progress=False, trace_settings=TraceSettings.resolve(environ={}, store=False))
    written = json.loads((run.path / "run.json").read_text())
    assert written["dataset"]["fingerprint"] == dataset_fingerprint(SAMPLE)
    assert (written["dataset"]["name"], written["dataset"]["queries"]) == ("traffic-set", 2)
    assert 0.0 < written["metrics"]["recall@100"] <= 1.0
