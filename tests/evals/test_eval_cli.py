"""compare, gate and calibrate from the command line, on real runs of datasets/sample."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from searchtrace.cli import main

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


@pytest.fixture(scope="module")
def runs(tmp_path_factory, sample_config, sample_index_path, model):
    from searchtrace.evals import EvalSettings
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.traces import TraceSettings

    root = tmp_path_factory.mktemp("cli-runs")
    made = {}
    for name, split, mode in (("graph", None, "graph"), ("fast", None, "fast"), ("dev", "dev", "graph")):
        made[name] = run_eval(EvalSettings(dataset=str(SAMPLE), split=split, mode=mode), sample_config,
                              out=root / name, embedder=model, progress=False,
                              trace_settings=TraceSettings.resolve(environ={}, store=False)).path
    return made


def test_compare_json_and_markdown(runs, capsys):
    assert main(["compare", str(runs["graph"]), str(runs["fast"]), "--json", "--metrics", "ndcg@10", "mrr@10"]) == 0
    body = json.loads(capsys.readouterr().out)
    base = json.loads((runs["graph"] / "run.json").read_text())["metrics"]["ndcg@10"]
    row = body["metrics"]["ndcg@10"]
    assert row["base"] == pytest.approx(base, abs=1e-6)  # run.json rounds to 6 decimals
    assert row["ci"]["low"] <= row["delta"] <= row["ci"]["high"]
    assert row["wins"] + row["ties"] + row["losses"] == body["n_queries"]
    assert main(["compare", str(runs["graph"]), str(runs["fast"]), "--markdown"]) == 0
    assert "| ndcg@10 |" in capsys.readouterr().out


def test_gate_passes_on_itself_and_fails_on_a_regression(runs, tmp_path, capsys):
    junit = tmp_path / "gate.xml"
    assert main(["gate", "--baseline", str(runs["graph"]), "--candidate", str(runs["graph"]), "--junit", str(junit)]) == 0
    suite = ET.parse(junit).getroot()
    assert suite.find(".//failure") is None and len(suite.findall(".//testcase")) >= 1
    config = tmp_path / "gate.toml"
    config.write_text('[metrics."ndcg@10"]\nmax_drop = 0.0\nmin_value = 0.99\n')
    code = main(["gate", "--baseline", str(runs["graph"]), "--candidate", str(runs["fast"]), "--config", str(config),
                 "--junit", str(junit), "--markdown", str(tmp_path / "gate.md")])
    assert code == 1
    assert ET.parse(junit).getroot().find(".//failure") is not None
    assert "FAIL" in (tmp_path / "gate.md").read_text()


def test_gate_invalid_input_exits_2(runs, tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[metrics."ndcg@10"]\nmax_dorp = 0.1\n')
    assert main(["gate", "--baseline", str(runs["graph"]), "--candidate", str(runs["fast"]), "--config", str(bad)]) == 2
    assert str(bad) in capsys.readouterr().err
    assert main(["gate", "--baseline", str(tmp_path), "--candidate", str(runs["fast"])]) == 2  # not a regression
    assert "not a completed run folder" in capsys.readouterr().err


def test_calibrate_on_dev_improves_calibration_on_test(runs, tmp_path, capsys):
    from searchtrace.retriever.search.confidence import LogisticRelevance, load_calibration

    out = tmp_path / "calibration.json"
    assert main(["calibrate", str(runs["dev"]), "--out", str(out), "--eval-run", str(runs["graph"]), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["held_out"] is True and report["fitted_on"]["split"] == "dev"
    assert report["after"]["ece"] < report["before"]["ece"]
    assert isinstance(load_calibration(out), LogisticRelevance)


@pytest.mark.parametrize("damaged", ["per_query.parquet", "run.json"])
def test_compare_and_gate_name_a_damaged_run_file(runs, tmp_path, capsys, damaged):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(runs["fast"], copy)
    path = copy / damaged
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert main(["compare", str(runs["graph"]), str(copy)]) == 2
    assert str(path) in capsys.readouterr().err
    assert main(["gate", "--baseline", str(runs["graph"]), "--candidate", str(copy)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err
