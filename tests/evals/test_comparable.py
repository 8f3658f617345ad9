"""compare and gate refuse runs scored on different queries or labels (exit 2), and say what they share."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.evals.scoring.fingerprints import qrels_fingerprint, queries_fingerprint, query_set_fingerprint

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def _relabelled(root: Path) -> Path:
    """A copy of the sample with one qrels grade changed."""
    out = root / "relabelled"
    shutil.copytree(SAMPLE, out)
    qrels = out / "qrels" / "test.tsv"
    lines = qrels.read_text().splitlines()
    q, d, grade = lines[1].split("\t")
    lines[1] = "\t".join([q, d, "0" if grade.strip() != "0" else "1"])
    qrels.write_text("\n".join(lines) + "\n")
    return out


def _renamed(root: Path) -> Path:
    """A copy of the sample whose queries have other ids: no query in common with it."""
    out = root / "renamed"
    shutil.copytree(SAMPLE, out)
    rows = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines() if x.strip()]
    (out / "queries.jsonl").write_text("".join(json.dumps({**r, "_id": "x-" + r["_id"]}) + "\n" for r in rows))
    for tsv in (out / "qrels").glob("*.tsv"):
        lines = tsv.read_text().splitlines()
        tsv.write_text("\n".join([lines[0]] + ["x-" + x for x in lines[1:] if x.strip()]) + "\n")
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory, sample_config, sample_index_path, model):
    from searchtrace.evals import EvalSettings
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.traces import TraceSettings

    root = tmp_path_factory.mktemp("comparable")
    made = {}
    for name, dataset, depth in (("base", SAMPLE, 100), ("again", SAMPLE, 100), ("relabelled", _relabelled(root), 100),
                                 ("renamed", _renamed(root), 100), ("shallow", SAMPLE, 50)):
        made[name] = run_eval(EvalSettings(dataset=str(dataset), mode="fast", depth=depth), sample_config,
                              out=root / "runs" / name, embedder=model, progress=False,
                              trace_settings=TraceSettings.resolve(environ={}, store=False)).path
    return made


def _fingerprints(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())["dataset"]["fingerprints"]


def test_run_json_records_separate_fingerprints(runs, sample_dataset):
    data = json.loads((runs["base"] / "run.json").read_text())
    assert data["format"] == 3
    prints = data["dataset"]["fingerprints"]
    assert prints["queries"] == queries_fingerprint((q.id, q.text) for q in sample_dataset.queries)
    assert prints["qrels"] == qrels_fingerprint(sample_dataset.qrels)
    scored = [q.id for q in sample_dataset.queries_for_split()]
    assert prints["scored"] == query_set_fingerprint(scored)
    import hashlib
    assert prints["corpus"] == hashlib.sha256((SAMPLE / "corpus.jsonl").read_bytes()).hexdigest()
    # one changed grade changes the qrels hash only; other ids change the queries and the scored set
    rel, ren = _fingerprints(runs["relabelled"]), _fingerprints(runs["renamed"])
    assert (rel["qrels"] != prints["qrels"], rel["queries"], rel["corpus"]) == (True, prints["queries"],
                                                                               prints["corpus"])
    assert ren["queries"] != prints["queries"] and ren["scored"] != prints["scored"]


def test_same_data_compares_and_reports_shared_counts(runs, capsys):
    assert main(["compare", str(runs["base"]), str(runs["again"]), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert (body["shared"], body["only_in_base"], body["only_in_candidate"], body["notes"]) == (
        body["n_queries"], 0, 0, [])
    assert main(["compare", str(runs["base"]), str(runs["again"])]) == 0
    assert f"{body['shared']} shared queries (0 only in base, 0 only in candidate)" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["compare", "gate"])
def test_no_shared_query_exits_2(runs, capsys, command):
    argv = ([command, str(runs["base"]), str(runs["renamed"])] if command == "compare"
            else [command, "--baseline", str(runs["base"]), "--candidate", str(runs["renamed"])])
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert "no query in common" in line and "the queries differ" in line
    assert "0 shared queries" in line


@pytest.mark.parametrize("command", ["compare", "gate"])
def test_relabelled_qrels_exit_2_unless_allowed(runs, capsys, tmp_path, command):
    argv = ([command, str(runs["base"]), str(runs["relabelled"])] if command == "compare"
            else [command, "--baseline", str(runs["base"]), "--candidate", str(runs["relabelled"])])
    assert main(argv) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "the qrels differ" in line and "--allow-label-change" in line
    md = tmp_path / "gate.md"
    extra = ["--markdown", str(md)] if command == "gate" else ["--markdown"]
    assert main([*argv, "--allow-label-change", *extra]) in (0, 1)
    out = capsys.readouterr().out
    assert "the qrels differ: a label change, allowed by --allow-label-change" in out
    assert "shared queries" in out
    if command == "gate":
        assert "allowed by --allow-label-change" in md.read_text()


@pytest.mark.parametrize("command", ["compare", "gate"])
def test_missing_run_folder_is_exit_2_in_both(runs, tmp_path, capsys, command):
    missing = str(tmp_path / "nowhere")
    argv = ([command, str(runs["base"]), missing] if command == "compare"
            else [command, "--baseline", str(runs["base"]), "--candidate", missing])
    assert main(argv) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("error: ") and "nowhere" in line


def test_older_run_without_fingerprints_is_read_and_noted(runs, tmp_path, capsys):
    old = tmp_path / "old-run"
    shutil.copytree(runs["base"], old)
    data = json.loads((old / "run.json").read_text())
    data["format"] = 2
    del data["dataset"]["fingerprints"], data["files"], data["summary_sha256"]  # format 2 recorded no checksums
    (old / "run.json").write_text(json.dumps(data))
    assert main(["compare", str(old), str(runs["again"]), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert notes == ["queries and labels not checked: no fingerprints in base (run base); "
                     "evaluate it again to check them"]


def test_gate_on_runs_of_different_depths_exits_2_naming_both(runs, capsys, tmp_path):
    """The default rules include recall@100, which a run scored to depth 50 cannot reach."""
    from searchtrace.evals import RunFolder

    assert main(["gate", "--baseline", str(runs["base"]), "--candidate", str(runs["shallow"])]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert "depth 100 (base) vs 50 (candidate)" in line and "recall@100" in line and len(line) <= 80
    assert "ndcg@10" not in line and "mrr@10" not in line  # cut within depth 50: comparable
    rules = tmp_path / "gate.toml"
    rules.write_text('[metrics."ndcg@10"]\nmax_drop = 0.0\n[metrics."precision@10"]\nmax_drop = 0.0\n')
    assert main(["gate", "--baseline", str(runs["base"]), "--candidate", str(runs["shallow"]),
                 "--config", str(rules)]) == 0  # the top 10 of both depths are the same
    assert (RunFolder(runs["base"]).summary().depth, RunFolder(runs["shallow"]).summary().depth) == (100, 50)


def test_compare_of_runs_of_different_depths_gives_no_significance_to_deep_metrics(runs, capsys):
    assert main(["compare", str(runs["base"]), str(runs["shallow"]), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    deep = [m for m in body["metrics"] if m in ("recall@100", "map@100")]
    assert deep == ["recall@100", "map@100"]
    assert body["notes"][0] == "depth 100 (base) vs 50 (candidate): no p-values for recall@100, map@100"
    assert set(body["coverage"]) == {"judged@5", "judged@10", "judged@100", "ndcg_min@10",
                                     "ndcg_max@10"}  # beside, not tested
    assert not any(m.startswith(("judged", "ndcg_min", "ndcg_max")) for m in body["metrics"])
    for name, item in body["metrics"].items():
        untested = name in deep
        assert (item["p"]["randomization_holm"] is None) == untested, name
        assert (item["ci"]["low"] is None) == untested, name
    assert body["metrics"]["recall@100"]["base"] != body["metrics"]["recall@100"]["candidate"]
    assert main(["compare", str(runs["base"]), str(runs["shallow"])]) == 0
    out = capsys.readouterr().out
    assert "note: depth 100 (base) vs 50 (candidate): no p-values for recall@100, map@100" in out


def test_depth_bound_metrics_are_those_cut_deeper_or_not_cut():
    from searchtrace.evals.verdicts.comparability import Comparability

    verdict = Comparability(10, 0, 0, depths=(100, 50))
    metrics = ["ndcg@10", "precision@50", "hit@51", "recall@100", "map", "mrr", "rprec", "ndcg"]
    assert [str(m) for m in verdict.depth_bound(metrics)] == ["hit@51", "recall@100", "map", "mrr", "rprec", "ndcg"]
    assert Comparability(10, 0, 0, depths=(50, 50)).depth_bound(metrics) == ()
    assert Comparability(10, 0, 0, depths=(50, 50)).depth_note(metrics) is None


def test_gate_refuses_a_candidate_whose_top_10_is_mostly_unjudged(runs, capsys, tmp_path, sample_config, model):
    """Issue 25: on labels judged here, a candidate surfacing documents nobody judged would be scored as a
    regression; below the coverage floor the gate says so and names the command that fixes it (exit 2). A
    benchmark's qrels (no judgments store) are gated as before."""
    from searchtrace.evals import EvalSettings, RunFolder
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.traces import TraceSettings

    judged = RunFolder(runs["again"]).summary().metrics["judged@10"]
    assert judged is not None and judged < 0.9  # the sample's qrels list relevant documents only
    assert main(["gate", "--baseline", str(runs["base"]), "--candidate", str(runs["again"])]) in (0, 1)
    capsys.readouterr()
    own = tmp_path / "own"
    shutil.copytree(SAMPLE, own)
    (own / "judgments.jsonl").write_text("")  # labels judged here
    run = run_eval(EvalSettings(dataset=str(own), mode="fast"), sample_config, out=tmp_path / "run", embedder=model,
                   progress=False, trace_settings=TraceSettings.resolve(environ={}, store=False)).path
    assert main(["gate", "--baseline", str(run), "--candidate", str(run)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    judged = RunFolder(run).summary().metrics["judged@10"]
    assert f"judged@10 is {judged:.2f}, below the gate's floor 0.90" in line
    assert f"searchtrace judge pool {own.resolve()} --runs {run} --depth 10" in line
    rules = tmp_path / "gate.toml"
    rules.write_text(f'judged_floor = {int(judged * 100) / 100}\n[metrics."ndcg@10"]\nmax_drop = 0.0\n')
    assert main(["gate", "--baseline", str(run), "--candidate", str(run), "--config", str(rules)]) == 0
    rules.write_text('judged_floor = 1.5\n[metrics."ndcg@10"]\nmax_drop = 0.0\n')
    assert main(["gate", "--baseline", str(run), "--candidate", str(run), "--config", str(rules)]) == 2
    assert "judged_floor must be in [0, 1], got 1.5" in capsys.readouterr().err
