"""The eval runner end to end on datasets/sample: run folder, metrics equal to pytrec_eval, resume after kill -9."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, sample_config, sample_index_path, model):
    from searchtrace.evals import EvalSettings
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.traces import TraceSettings

    out = tmp_path_factory.mktemp("runs") / "r1"
    settings = EvalSettings(dataset=str(SAMPLE), mode="graph", depth=100)
    return run_eval(settings, sample_config, out=out, embedder=model, progress=False,
                    trace_settings=TraceSettings.resolve(environ={})).path


def test_run_folder_files(run_dir, sample_dataset):
    summary = json.loads((run_dir / "run.json").read_text())
    assert set(summary["metrics"]) == {"ndcg@10", "recall@5", "recall@100", "mrr@10", "map@100", "precision@10", "hit@10",
                                       "judged@5", "judged@10", "judged@100", "ndcg_min@10",
                                       "ndcg_max@10"}  # coverage, bounds
    per_query_judged = pd.read_parquet(run_dir / "per_query.parquet")["judged@10"].dropna()
    assert 0 < summary["metrics"]["judged@10"] < 1  # the sample's qrels list relevant documents only
    assert summary["metrics"]["judged@10"] == pytest.approx(per_query_judged.mean())
    assert summary["dataset"]["fingerprint"] and summary["packages"]["qdrant-edge-py"]
    assert summary["retriever"]["mode"] == "graph" and summary["errors"] == 0
    per_query = pd.read_parquet(run_dir / "per_query.parquet")
    queries = sample_dataset.queries_for_split()
    assert len(per_query) == len(queries)
    assert {"query_id", "category", "ndcg@10", "bestScore", "bands", "noConfidentResults", "latency_dense_ms"} <= set(per_query)
    lines = (run_dir / "run.trec").read_text().splitlines()
    assert lines and len(lines[0].split()) == 6
    assert summary["latency_ms"]["dense"]["n"] == len(queries)
    for stage in ("dense", "keyword", "graph", "fuse", "filter", "shape"):
        assert summary["latency_ms"][stage]["p50"] > 0


def test_run_records_search_settings_and_refuses_to_resume_under_others(run_dir, sample_config):
    from dataclasses import replace

    from searchtrace.errors import ValidationError
    from searchtrace.evals import EvalSettings, RunFolder
    from searchtrace.evals.runs.execution.loop import run_folder
    from searchtrace.retriever.config.model import FusionConfig
    from searchtrace.retriever.config.resolve import search_fingerprint
    from searchtrace.retriever.types import FusionMethod

    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["retriever"]["fusion"]["method"] == "dbsf"
    assert summary["retriever"]["graph"]["method"] == "ppr"
    assert summary["settings"]["retriever"] == search_fingerprint(sample_config)
    interrupted = run_dir.parent / "interrupted"
    interrupted.mkdir()
    settings = EvalSettings(dataset=str(SAMPLE), mode="graph", retriever=search_fingerprint(sample_config))
    (interrupted / "settings.json").write_text(json.dumps(summary["settings"] | {"retriever": settings.retriever}))
    assert run_folder(settings, sample_config, interrupted) == (RunFolder(interrupted), True)
    other = replace(sample_config, fusion=FusionConfig(method=FusionMethod.RRF))
    with pytest.raises(ValidationError, match="other settings"):
        run_folder(replace(settings, retriever=search_fingerprint(other)), other, interrupted)


def test_metrics_equal_pytrec_eval(run_dir, sample_dataset):
    import pytrec_eval

    summary = json.loads((run_dir / "run.json").read_text())
    run: dict = {}
    for line in (run_dir / "run.trec").read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    qrels = {q: d for q, d in sample_dataset.qrels.items() if any(g > 0 for g in d.values())}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "recall_5", "recall_100", "P_10", "map_cut_100"})
    scores = ev.evaluate(run)
    mean = lambda key: sum(s[key] for s in scores.values()) / len(scores)  # noqa: E731
    assert summary["metrics"]["ndcg@10"] == pytest.approx(mean("ndcg_cut_10"), abs=1e-6)
    assert summary["metrics"]["recall@5"] == pytest.approx(mean("recall_5"), abs=1e-6)
    assert summary["metrics"]["recall@100"] == pytest.approx(mean("recall_100"), abs=1e-6)
    assert summary["metrics"]["precision@10"] == pytest.approx(mean("P_10"), abs=1e-6)
    assert summary["metrics"]["map@100"] == pytest.approx(mean("map_cut_100"), abs=1e-6)


def test_attribution_confidence_and_abstention(run_dir):
    summary = json.loads((run_dir / "run.json").read_text())
    att = summary["attribution"]
    assert att["gold_documents"] == sum(att["lost_at"].values()) > 0
    assert set(att["candidate_recall"]) >= {"dense", "keyword", "graph", "any"}
    conf = summary["confidence"]
    assert 0 <= conf["ece"] <= 1 and 0 <= conf["brier"] <= 1 and 0.5 < conf["auroc"] <= 1
    bp = conf["band_precision"]
    assert bp["high"]["precision"] > bp["medium"]["precision"] > bp["low"]["precision"]
    ab = summary["abstention"]
    assert ab["unanswerable"] == 12 and ab["recall"] == 1.0
    results = pd.read_parquet(run_dir / "results.parquet")
    assert {"f_dense", "f_coverage", "label", "relevance", "band"} <= set(results)


def test_traces_carry_run_and_query_ids(run_dir, sample_config):
    from searchtrace.traces.store.records import TraceFilter
    from searchtrace.traces.store.sqlite import TraceStore

    store = TraceStore(sample_config.home.traces).open()
    try:
        traces = store.list_traces(TraceFilter(run_id=run_dir.name, limit=1000))
    finally:
        store.close()
    per_query = pd.read_parquet(run_dir / "per_query.parquet")
    assert sorted(t.query_id for t in traces) == sorted(per_query["query_id"])


def test_external_trec_run_is_scored(run_dir, capsys):
    from searchtrace.cli import main

    assert main(["eval", "--run", str(run_dir / "run.trec"), "--qrels", str(SAMPLE / "qrels" / "test.tsv"),
                 "--json", "--metrics", "ndcg@10"]) == 0
    out = json.loads(capsys.readouterr().out)
    summary = json.loads((run_dir / "run.json").read_text())
    assert out["metrics"]["ndcg@10"] == pytest.approx(summary["metrics"]["ndcg@10"], abs=1e-6)


def test_killed_eval_resumes_without_losing_completed_queries(tmp_path, sample_config, sample_index_path):
    """kill -9 mid-run, start the same command again: it finishes, and every query has one result and its trace."""
    out = tmp_path / "run"
    home = sample_config.home
    cmd = [sys.executable, "-m", "searchtrace", "eval", str(SAMPLE), "--home", str(home.root), "--out", str(out),
           "--mode", "fast", "--no-progress", "--json", "--batch-size", "8"]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    journal = out / "journal.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and journal.read_text().count("\n") >= 16:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the eval finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = [json.loads(line)["query_id"] for line in journal.read_text().splitlines() if line.endswith("}")]
    assert 16 <= len(done_before) < 100
    assert not (out / "run.json").exists()

    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["timings"]["resumed"] is True
    per_query = pd.read_parquet(out / "per_query.parquet")
    assert per_query["query_id"].is_unique and set(done_before) <= set(per_query["query_id"])

    from searchtrace.traces.store.records import TraceFilter
    from searchtrace.traces.store.sqlite import TraceStore

    store = TraceStore(home.traces).open()
    try:
        traced = {t.query_id for t in store.list_traces(TraceFilter(run_id=out.name, limit=10_000))}
        assert store.integrity_check()
    finally:
        store.close()
    assert set(per_query["query_id"]) <= traced


def test_a_local_eval_scores_condensed_lists_when_asked(tmp_path, sample_config, model):
    """``--unjudged condensed``: the run's own ranking, its unjudged documents removed before scoring."""
    from searchtrace.evals import EvalSettings, RunFolder
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.evals.runs.trec import read_run
    from searchtrace.evals.scoring.metrics import QueryRules, evaluate
    from searchtrace.evals.scoring.rankings import Qrels
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.traces import TraceSettings

    settings = EvalSettings(dataset=str(SAMPLE), mode="fast", unjudged="condensed")
    folder = run_eval(settings, sample_config, out=tmp_path / "c", embedder=model, progress=False,
                      trace_settings=TraceSettings.resolve(environ={}, store=False))
    qrels = {q: d for q, d in load_dataset(SAMPLE).qrels.items() if d}
    want = evaluate(Qrels.from_dict(qrels), read_run(folder.run_file), ["ndcg@10"], QueryRules(judged_only=True))
    assert folder.summary().metrics["ndcg@10"] == pytest.approx(want.mean("ndcg@10"), abs=1e-6)
    assert json.loads(folder.settings_file.read_text())["unjudged"] == "condensed"
    assert RunFolder(folder.path).settings() == settings.__class__.from_json(
        json.loads(folder.settings_file.read_text()), "settings.json")
    assert "unjudged" not in EvalSettings(dataset="x").to_json()  # the default is not written
