"""compare and gate refuse runs scored on different queries or labels (exit 2), and say what they share."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.evals.fingerprints import qrels_fingerprint, queries_fingerprint, query_set_fingerprint

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "sample"


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
    from searchtrace.evals.execution import run_eval
    from searchtrace.traces import TraceSettings

    root = tmp_path_factory.mktemp("comparable")
    made = {}
    for name, dataset in (("base", SAMPLE), ("again", SAMPLE), ("relabelled", _relabelled(root)),
                          ("renamed", _renamed(root))):
        made[name] = run_eval(EvalSettings(dataset=str(dataset), mode="fast"), sample_config,
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
    del data["dataset"]["fingerprints"]
    (old / "run.json").write_text(json.dumps(data))
    assert main(["compare", str(old), str(runs["again"]), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert notes == ["queries and labels not checked: no fingerprints in base (run base); "
                     "evaluate it again to check them"]
