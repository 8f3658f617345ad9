"""What a user meets in a terminal or a CI log: progress lines, 80-column tables, honest messages."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.progress import ProgressLines
from searchtrace.retriever.response import SearchResponse

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_lines_at_least_every_interval_and_a_last_one():
    import io

    clock, stream = Clock(), io.StringIO()
    bar = ProgressLines(40, "indexing", "doc", every_s=10, stream=stream, clock=clock)
    printed_at = []
    for _ in range(40):
        clock.now += 1.3
        bar.update(1)
        if bar.lines > len(printed_at):
            printed_at.append(clock.now)
    bar.close()
    lines = stream.getvalue().splitlines()
    gaps = [b - a for a, b in zip([0.0, *printed_at], printed_at)]
    assert len(printed_at) == 5 and all(10 <= g < 10 + 1.3 for g in gaps)  # never 10 s without a line
    assert lines[0] == "indexing: 8/40 docs (20%), 10 s, about 42 s left"  # 32 more at 8 per 10.4 s
    assert lines[-1] == "indexing: 40/40 docs (100%), 52 s, done"


def test_progress_lines_estimate_the_time_left_from_the_work_done_here():
    import io

    clock, stream = Clock(), io.StringIO()
    bar = ProgressLines(10_000, "embedding", "text", initial=4_000, every_s=60, stream=stream, clock=clock)
    clock.now += 60
    bar.update(10)  # 10 texts a minute, 5,990 to go: the 4,000 done before do not count in the rate
    clock.now += 3_540
    bar.update(4_990)  # 5,000 in an hour, 1,000 to go
    assert stream.getvalue().splitlines() == ["embedding: 4,010/10,000 texts (40%), 60 s, about 9 h 59 min left",
                                              "embedding: 9,000/10,000 texts (90%), 3600 s, about 12 min left"]


def test_short_work_prints_nothing(capsys):
    clock = Clock()
    with ProgressLines(3, "eval", "query", every_s=10, clock=clock) as bar:
        bar.update(3)
    assert capsys.readouterr().err == ""


def test_compare_fits_80_columns_with_unique_labels(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    baseline = REPO / ".ci" / "baseline"
    assert main(["compare", str(baseline), str(baseline)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(x.rstrip()) for x in lines) <= 80
    assert "…" not in out  # nothing cut: metric names, numbers, W/T/L
    metrics = json.loads((baseline / "run.json").read_text())["metrics"]
    rows = {x.split()[0] for x in lines if x.split()}
    assert set(metrics) <= rows  # every metric in full, so no two rows read alike
    header = next(x for x in lines if x.lstrip().startswith("metric"))
    labels = re.split(r"\s{2,}", header.strip())
    assert len(labels) == len(set(labels)) == 8
    assert "shared queries (0 only in base, 0 only in candidate)" in out


def test_eval_summary_title_never_splits_a_run_id(monkeypatch, capsys):
    from searchtrace.evals.summary_text import metric_table

    monkeypatch.setenv("COLUMNS", "30")
    run_id = "scifact-graph-20261124T081148-5abcc306b6"
    metric_table([f"run {run_id}", "scifact / test: 300 judged of 300 queries"], {"ndcg@10": 0.5})
    assert f"run {run_id}\n" in capsys.readouterr().out


def _response(n_chunks: int, n_kg: int) -> SearchResponse:
    scores = [0.87, 0.62, 0.55, 0.41][:n_chunks]
    chunks = [{"id": f"doc-{i}", "content": f"title {i}\ntext", "score": s, "confidenceBand": "medium",
               "component_type": "chunk", "metadata": {}} for i, s in enumerate(scores)]
    relations = [{"id": "rel:1", "content": "A knows B", "score": 0.5, "confidenceBand": "medium",
                  "component_type": "relation", "subject": "A", "relation": "knows", "object": "B"}]
    kg = [{"subject": f"S{i}", "relation": "r", "object": f"O{i}", "doc_id": "doc-0"} for i in range(n_kg)]
    return SearchResponse.from_json({"results": chunks[:2] + relations + chunks[2:], "kg": kg, "rewrite_terms": [], "bestScore": 0.87,
                                     "noConfidentResults": False, "retryHints": None, "traceId": "t" * 32,
                                     "mode": "graph", "degraded": []})


def test_search_prints_the_response_in_its_order_and_how_many_triples(monkeypatch, capsys):
    """Issue 24: the table re-sorted passages and listed facts apart, disagreeing with the JSON and the trace."""
    from searchtrace.retriever.cli import _print_response

    monkeypatch.setenv("COLUMNS", "120")
    _print_response(_response(4, 11))
    out = capsys.readouterr().out
    order = [out.index(name) for name in ("doc-0", "doc-1", "rel:1", "doc-2", "doc-3")]  # the response's order
    assert order == sorted(order) and "A —knows→ B" in out
    assert "kg (8 of 11 triples; --json: all)" in out and "(S7, r, O7)" in out and "(S8, r, O8)" not in out
    _print_response(_response(2, 3))
    assert "kg (3 of 3 triples)" in capsys.readouterr().out


@pytest.mark.slow
def test_index_needs_only_the_corpus_says_built_then_reused_and_shows_progress(tmp_path, monkeypatch, capsys):
    data = tmp_path / "tiny"
    data.mkdir()
    with (data / "corpus.jsonl").open("w") as f:
        for i in range(5):
            f.write(json.dumps({"_id": f"d{i}", "title": f"Doc {i}", "text": f"The river {i} runs north."}) + "\n")
    monkeypatch.setenv("SEARCHTRACE_PROGRESS_SECONDS", "0")
    home = str(tmp_path / "home")
    assert main(["index", str(data), "--home", home, "--no-parts"]) == 0
    captured = capsys.readouterr()
    assert re.search(r"5 documents, 0 triples, 5 texts embedded, built in [\d.]+ s", captured.out)
    assert "embedding: 5/5 texts (100%)" in captured.err and "indexing:" not in captured.err  # one bar
    assert main(["index", str(data), "--home", home, "--no-parts", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reused"] is True
    assert main(["index", str(data), "--home", home, "--no-parts"]) == 0
    assert "up to date, reused" in capsys.readouterr().out
    assert main(["search", "river", "--dataset", str(data), "--home", home, "--no-parts", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"]


@pytest.mark.slow
def test_eval_warns_about_the_qrels_rows_it_drops_and_shows_progress(tmp_path, monkeypatch, capsys,
                                                                      sample_config, sample_index_path):
    data = tmp_path / "sample"
    shutil.copytree(SAMPLE, data)
    with (data / "qrels" / "test.tsv").open("a") as f:
        f.write("test-001\tno-such-doc\t1\n")
    monkeypatch.setenv("SEARCHTRACE_PROGRESS_SECONDS", "0")
    assert main(["eval", str(data), "--home", str(sample_config.home.root), "--out", str(tmp_path / "run"),
                 "--metrics", "ndcg@10", "--mode", "fast"]) == 0
    err = capsys.readouterr().err
    assert "warning: 1 qrels rows name a query or document the dataset does not have" in err
    assert re.search(r"warning: .*test\.tsv:\d+: unknown corpus id 'no-such-doc' \(query 'test-001'\)", err)
    assert re.search(r"^eval: \d+/100 queries", err, re.M)
