"""External runs: ``eval --run --out`` run folders that compare, gate and the dashboard read; degenerate input."""

from __future__ import annotations

import json
import math

import pytest

from searchtrace.cli import main
from searchtrace.evals import RunFolder, RunSummary
from searchtrace.evals.runs.trec import read_qrels, read_run
from searchtrace.evals.scoring.metrics import evaluate

QRELS = "".join(f"q{i} 0 d{i}a 2\nq{i} 0 d{i}b 1\nq{i} 0 d{i}c 0\n" for i in range(12))


def good_run(i: int) -> str:
    return f"q{i} Q0 d{i}a 1 3.0 good\nq{i} Q0 d{i}b 2 2.0 good\nq{i} Q0 d{i}x 3 1.0 good\n"


def bad_run(i: int) -> str:
    return f"q{i} Q0 d{i}x 1 3.0 bad\nq{i} Q0 d{i}y 2 2.0 bad\nq{i} Q0 d{i}b 3 1.0 bad\n"


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    """The home an ``eval --out`` lists its folder in: the test's own, never the user's."""
    monkeypatch.setenv("SEARCHTRACE_HOME", str(tmp_path / "home"))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "good.trec").write_text("".join(good_run(i) for i in range(12)))
    (tmp_path / "bad.trec").write_text("".join(bad_run(i) for i in range(12)))
    return tmp_path


def strict_json(text: str) -> dict:
    def no_nan(name: str) -> float:
        raise AssertionError(f"{name} in JSON output")
    return json.loads(text, parse_constant=no_nan)


def run_eval(files, run: str, out: str, *extra: str) -> int:
    return main(["eval", "--run", str(files / run), "--qrels", str(files / "qrels.txt"), "--out", str(files / out),
                 *extra])


def test_out_writes_a_complete_external_run_folder(files, capsys):
    assert run_eval(files, "good.trec", "D", "--json") == 0
    printed = strict_json(capsys.readouterr().out)
    folder = RunFolder.completed(files / "D")
    summary = folder.summary()
    assert printed["folder"] == str(folder.path)
    assert summary.external is not None and summary.external.kind == "run_file"
    assert summary.external.source == str((files / "good.trec").resolve())
    assert summary.retriever.mode == "external" and summary.evaluated_queries == 12
    from searchtrace.evals.scoring.metrics import DEFAULT_METRICS, coverage_metrics

    want = evaluate(read_qrels(files / "qrels.txt"), read_run(files / "good.trec"),
                    [*DEFAULT_METRICS, *coverage_metrics(DEFAULT_METRICS)])  # with Judged@k: 2 of 3 judged
    assert summary.metrics == {str(m): round(v, 6) for m, v in want.means.items()} == printed["metrics"]
    ev = folder.evaluation()
    assert sorted(ev.query_ids.tolist()) == sorted(want.query_ids.tolist())
    assert ev.mean("ndcg@10") == pytest.approx(want.mean("ndcg@10"))
    assert read_run(folder.run_file).to_dict() == read_run(files / "good.trec").to_dict()
    assert RunSummary.from_json(json.loads(folder.summary_file.read_text()), "run.json") == summary


def test_gate_and_compare_take_external_runs(files, capsys):
    assert run_eval(files, "good.trec", "B") == 0
    assert run_eval(files, "good.trec", "B2") == 0
    assert run_eval(files, "bad.trec", "D") == 0
    capsys.readouterr()
    assert main(["gate", "--baseline", str(files / "B"), "--candidate", str(files / "B2")]) == 0
    assert main(["gate", "--baseline", str(files / "B"), "--candidate", str(files / "D")]) == 1
    assert "ndcg@10" in capsys.readouterr().out
    assert main(["compare", str(files / "B"), str(files / "D"), "--json"]) == 0
    comparison = strict_json(capsys.readouterr().out)
    assert "ndcg@10" in json.dumps(comparison)


def test_out_refuses_a_folder_holding_a_run(files, capsys):
    assert run_eval(files, "good.trec", "D") == 0
    assert run_eval(files, "bad.trec", "D") == 2
    assert "already holds a run" in capsys.readouterr().err


def test_calibrate_explains_why_an_external_run_cannot_be_calibrated(files, capsys):
    assert run_eval(files, "good.trec", "D") == 0
    assert main(["calibrate", str(files / "D"), "--out", str(files / "cal.json")]) == 2
    err = capsys.readouterr().err
    assert "external run" in err and "no relevance features" in err


def test_dashboard_lists_and_reads_an_external_run(files):
    from searchtrace.dashboard.data import list_runs, per_query

    home = files / "home"
    assert run_eval(files, "good.trec", "home/runs/ext") == 0
    runs = list_runs(home)
    row = runs[runs["run_id"] == "ext"].iloc[0]
    assert row["mode"] == "external" and row["evaluated"] == 12
    table = per_query(home, "ext", ["query_id", "ndcg@10"])
    assert len(table) == 12 and table["ndcg@10"].between(0, 1).all()


def test_format_2_summaries_still_read(files):
    assert run_eval(files, "good.trec", "D") == 0
    data = json.loads((files / "D" / "run.json").read_text())
    data["format"] = 2
    del data["external"], data["files"], data["summary_sha256"]  # a format-2 run.json recorded no checksums
    data["settings"]["format"] = 2
    summary = RunSummary.from_json(data, "run.json")
    assert summary.external is None and summary.evaluated_queries == 12


# -- degenerate input --------------------------------------------------------------------------


def test_qrels_without_any_relevant_document_exit_2(files, capsys):
    (files / "norel.txt").write_text("q0 0 d0a 0\nq1 0 d1a 0\n")
    code = main(["eval", "--run", str(files / "good.trec"), "--qrels", str(files / "norel.txt"), "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "no relevant judgment (grade >= 1)" in captured.err and "norel.txt" in captured.err
    assert "nan" not in captured.err.lower()


def test_no_common_query_id_exit_2_with_the_reason(files, capsys):
    (files / "other.trec").write_text("x1 Q0 d0a 1 1.0 t\nx2 Q0 d0a 1 1.0 t\n")
    code = main(["eval", "--run", str(files / "other.trec"), "--qrels", str(files / "qrels.txt")])
    err = capsys.readouterr().err
    assert code == 2 and "share no query id" in err and "'x1'" in err and "'q0'" in err


def test_a_run_missing_most_judged_queries_warns_on_stderr(files, capsys):
    (files / "few.trec").write_text(good_run(0) + good_run(1))
    code = main(["eval", "--run", str(files / "few.trec"), "--qrels", str(files / "qrels.txt"), "--json"])
    captured = capsys.readouterr()
    assert code == 0
    assert "warning:" in captured.err and "results for 2 of the 12 queries" in captured.err
    out = strict_json(captured.out)
    assert out["queries"] == 12 and all(math.isfinite(v) for v in out["metrics"].values())


def test_c_needs_trec_eval(files, capsys):
    code = main(["eval", "--run", str(files / "good.trec"), "--qrels", str(files / "qrels.txt"), "-c"])
    assert code == 2 and "-c goes with --trec-eval" in capsys.readouterr().err


def test_every_unreadable_input_is_named_at_once_and_nothing_is_written(files, capsys):
    code = main(["eval", "--run", str(files / "missing.trec"), "--qrels", str(files / "missing.qrels"),
                 "--out", str(files / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "missing.trec: cannot read file" in err and "missing.qrels: cannot read file" in err
    assert not (files / "out").exists()
    code = main(["eval", "--run", str(files), "--qrels", str(files / "qrels.txt")])
    assert code == 2 and f"{files}: a folder, not a file" in capsys.readouterr().err


def test_condensed_lists_score_as_trec_eval_minus_j(files, capsys):
    """``--unjudged condensed``: bad.trec's unjudged d{i}x and d{i}y are removed, d{i}b (grade 1) rises to rank 1."""
    import pytrec_eval

    argv = ["eval", "--run", str(files / "bad.trec"), "--qrels", str(files / "qrels.txt"), "--trec-eval", "--json",
            "--metrics", "ndcg@10", "map", "bpref", "judged@10"]
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)["metrics"]
    assert main([*argv, "--unjudged", "condensed"]) == 0
    condensed = json.loads(capsys.readouterr().out)["metrics"]
    qrels, run = read_qrels(files / "qrels.txt").to_dict(), read_run(files / "bad.trec").to_dict()
    want = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map"}, judged_docs_only_flag=True).evaluate(run)
    assert condensed["ndcg@10"] == pytest.approx(sum(v["ndcg_cut_10"] for v in want.values()) / 12)
    assert condensed["map"] == pytest.approx(sum(v["map"] for v in want.values()) / 12)
    assert condensed["ndcg@10"] > plain["ndcg@10"] and plain["judged@10"] == pytest.approx(1 / 3)
