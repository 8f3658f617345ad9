"""Comparing two run folders without labels: per query as the scalar measures say, the means and their traffic
weights, the order of the most changed, the gate's [overlap] checks and reports, and bad input (no model)."""

from __future__ import annotations

import json
import math
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from searchtrace.cli import main
from searchtrace.errors import DataError, ValidationError
from searchtrace.evals import OverlapComparison, QueryOrigin, QuerySetInfo, compare_overlap, jaccard, new_in_top, rbo
from searchtrace.evals.labels.querysets import origins
from searchtrace.evals.runs.trec import read_run
from searchtrace.evals.verdicts.gate import (
    GateConfig,
    OverlapRules,
    gate_overlap,
    load_config,
    to_junit,
    to_markdown,
    to_text,
)
from searchtrace.evals.verdicts.overlap.weights import traffic_weights

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"


def run_file(path: Path, rankings: dict[str, list[str]]) -> Path:
    lines = [f"{q} Q0 {d} {rank} {100 - rank} run" for q, docs in rankings.items() for rank, d in enumerate(docs, 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Three external run folders over the sample's test queries: a base, a candidate that reshuffles, cuts and
    replaces, and a run of other query ids (another query set)."""
    root = tmp_path_factory.mktemp("overlap-runs")
    qrels = SAMPLE / "qrels" / "test.tsv"
    queries = sorted({line.split("\t")[0] for line in qrels.read_text().splitlines()[1:]})
    docs = [json.loads(line)["_id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    rng = random.Random(26)
    base = {q: rng.sample(docs, rng.randint(5, 40)) for q in queries}
    candidate = {}
    for q, ranking in base.items():
        changed = ranking[: rng.randint(1, len(ranking))]
        rng.shuffle(changed) if rng.random() < 0.5 else None
        candidate[q] = list(dict.fromkeys(changed + rng.sample(docs, rng.randint(0, 20))))
    candidate[queries[0]] = list(base[queries[0]])  # one unchanged
    other_qrels = root / "other-qrels.tsv"  # the same labels, under other query ids
    other_qrels.write_text("\n".join(line if i == 0 else f"x-{line}"
                                     for i, line in enumerate(qrels.read_text().splitlines())) + "\n")
    out = {}
    for name, rankings, labels in (("base", base, qrels), ("candidate", candidate, qrels),
                                   ("other", {f"x-{q}": r for q, r in base.items()}, other_qrels)):
        out[name] = root / name
        assert main(["eval", "--run", str(run_file(root / f"{name}.trec", rankings)), "--qrels", str(labels),
                     "--out", str(out[name]), "--home", str(root / "home")]) == 0
    return out


def test_each_query_is_the_scalar_measures_of_its_two_rankings(folders):
    comparison = compare_overlap(folders["base"], folders["candidate"])
    base, candidate = (read_run(folders[side] / "run.trec").to_dict() for side in ("base", "candidate"))
    assert comparison.shared == len(base) and comparison.ps == (0.9, 0.98) and comparison.k == 10
    for i, q in enumerate(comparison.query_ids.tolist()):
        a, b = list(base[q]), list(candidate[q])
        for j, p in enumerate(comparison.ps):
            one = rbo(a, b, p, first_scores=list(base[q].values()), second_scores=list(candidate[q].values()))
            assert tuple(comparison.rbo[j, :, i]) == pytest.approx((one.ext, one.min, one.res), abs=1e-12)
        assert comparison.jaccard[i] == jaccard(a, b, 10) and comparison.new_in_top[i] == new_in_top(a, b, 10)
    assert comparison.weights is None and comparison.weighted_means() is None  # not a query set from traffic
    assert comparison.notes == ("queries not checked: no fingerprints in base (run base), candidate (run candidate); "
                                "evaluate it again to check them",)
    means = comparison.means()
    assert means.rbo[0].ext == pytest.approx(comparison.rbo[0, 0].mean()) and math.isnan(means.latency_delta_ms)


def test_blocks_of_queries_give_what_one_block_gives(folders, monkeypatch):
    from searchtrace.evals.verdicts.overlap import compare as module

    whole = compare_overlap(folders["base"], folders["candidate"])
    monkeypatch.setattr(module, "BLOCK_CELLS", 100)  # a few queries per block
    blocked = compare_overlap(folders["base"], folders["candidate"]).rbo
    assert np.allclose(blocked, whole.rbo, rtol=0, atol=1e-12)  # sums over fewer zero columns: the last bits


def test_the_most_changed_come_lowest_rbo_first_then_by_id_and_unchanged_ones_never(folders):
    comparison = compare_overlap(folders["base"], folders["candidate"])
    listed = comparison.most_changed(1000)
    ext = dict(zip(comparison.query_ids.tolist(), comparison.ext().tolist()))
    assert [q.query_id for q in listed] == sorted((q for q in ext if ext[q] < 1 - 1e-9), key=lambda q: (ext[q], q))
    assert 0 < len(listed) < comparison.shared  # the one left unchanged is not listed
    assert listed[0].trace_ids == ("", "") and listed[0].bands == ("none", "none")  # a run file: no trace, no band


def test_the_command_without_labels_as_json_and_as_text(folders, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["compare", str(folders["base"]), str(folders["candidate"]), "--no-labels", "--json", "--top",
                 "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["label_free"] == "--no-labels" and len(out["most_changed"]) == 3 and len(out["queries"]) == out["shared"]
    assert out["mean"]["latency_delta_ms"] is None and set(out["mean"]["rbo"]) == {"0.9", "0.98"}
    assert main(["compare", str(folders["base"]), str(folders["candidate"]), "--no-labels"]) == 0
    text = capsys.readouterr().out
    assert "most changed, lowest RBO p=0.9 first" in text and "no trace recorded" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert main(["compare", str(folders["base"]), str(folders["candidate"]), "--no-labels", "--metrics",
                 "ndcg@10"]) == 2
    assert "--metrics needs labels" in capsys.readouterr().err


def test_runs_of_other_queries_are_refused_in_one_line_with_nothing_written(folders, capsys, tmp_path):
    before = {p: p.read_bytes() for side in ("base", "other") for p in folders[side].iterdir()}
    assert main(["compare", str(folders["base"]), str(folders["other"]), "--no-labels"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: the runs cannot be compared: no query in common")
    config = tmp_path / "gate.toml"
    config.write_text("[overlap]\nmin_mean_rbo = 0.5\n")
    assert main(["gate", "--baseline", str(folders["base"]), "--candidate", str(folders["other"]), "--no-labels",
                 "--config", str(config)]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
    assert before == {p: p.read_bytes() for side in ("base", "other") for p in folders[side].iterdir()}
    with pytest.raises(ValidationError, match="p must be in"):
        compare_overlap(folders["base"], folders["candidate"], ps=(1.0,))


# -- traffic weights ------------------------------------------------------------------------------


def comparison_of(ext: list[float], weights: list[float] | None) -> OverlapComparison:
    n = len(ext)
    values = np.array(ext)
    return OverlapComparison(
        base="b", candidate="c", ps=(0.9,), k=10, query_ids=np.array([f"q{i}" for i in range(n)], dtype=object),
        rbo=np.stack([values, values * 0.9, values * 0.1])[None], jaccard=values, new_in_top=np.arange(n),
        bands=np.array([[0, 1, 2, 3][: n], [1, 1, 0, 3][: n]]), latency_delta_ms=np.array([1.0, np.nan, 3.0, 5.0][: n]),
        trace_ids=np.array([["a"] * n, ["b"] * n], dtype=object),
        weights=None if weights is None else np.array(weights), only_in_base=0, only_in_candidate=0)


def test_traffic_weighted_means_are_horvitz_thompson_ratios():
    ext, counts, probability = [0.2, 0.4, 0.9, 1.0], [5, 1, 2, 2], [1.0, 0.5, 0.25, 1.0]
    found = {f"q{i}": QueryOrigin(c, p, ()) for i, (c, p) in enumerate(zip(counts, probability))}
    weights, note = traffic_weights(found, [f"q{i}" for i in range(4)])
    assert note is None and weights.tolist() == [5 / 1.0, 1 / 0.5, 2 / 0.25, 2 / 1.0]
    comparison = comparison_of(ext, weights.tolist())
    w = np.array([5, 2, 8, 2])
    assert comparison.weighted_means().rbo[0].ext == pytest.approx((w * ext).sum() / w.sum())
    assert comparison.weighted_means().latency_delta_ms == pytest.approx((5 * 1 + 8 * 3 + 2 * 5) / (5 + 8 + 2))
    assert comparison.means().rbo[0].ext == pytest.approx(np.mean(ext))
    assert comparison.share_below(0.9, 0.5) == 0.5 and comparison.share_below(0.9, 0.5, weighted=True) == 7 / 17
    assert traffic_weights(found, ["q0", "elsewhere"])[1] == \
        "no traffic weights: 1 queries of the runs lack their count in the query set"
    changes = comparison.band_changes()
    assert (changes.up, changes.same, changes.down) == (1, 2, 1)  # 2 -> 0 up, 0 -> 1 down


def test_a_query_set_folder_gives_each_query_its_origin(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "a", "text": "x", "metadata": QueryOrigin(3, 0.5, ("t1",)).to_json()}) + "\n"
        + json.dumps({"_id": "b", "text": "y"}) + "\n")
    assert origins(folder) is None  # not a query set: no queryset.json
    info = QuerySetInfo("/d", "d", {}, "all", None, 0, 4, 0, 2, 2, "2026-01-01T00:00:00+00:00")
    (folder / "queryset.json").write_text(json.dumps(info.to_json()))
    assert origins(folder) == {"a": QueryOrigin(3, 0.5, ("t1",))}


# -- the gate's [overlap] table -----------------------------------------------------------------


def test_the_overlap_table_is_read_and_checked(tmp_path):
    path = tmp_path / "gate.toml"
    path.write_text("[overlap]\np = 0.98\nmin_mean_rbo = 0.8\nfloor = 0.5\nmax_share_below = 0.1\nweighted = true\n")
    config = load_config(path)
    assert config.rules == () and config.overlap == OverlapRules(0.98, 0.8, 0.5, 0.1, True)


@pytest.mark.parametrize(("text", "line", "message"), [
    ("[overlap]\nmin_mean_rbo = 0.8\nceiling = 1\n", 3, "unknown key 'ceiling' in [overlap]; allowed: p,"),
    ("[overlap]\nfloor = 0.5\n", 2, "floor and max_share_below go together"),
    ("[overlap]\np = 1.0\nmin_mean_rbo = 0.8\n", 2, "p must be in (0, 1)"),
    ("[overlap]\nmin_mean_rbo = 1.5\n", 2, "min_mean_rbo must be in [0, 1]"),
    ("[overlap]\nweighted = \"yes\"\nmin_mean_rbo = 0.5\n", 2, "weighted must be true or false"),
    ("alpha = 0.05\n[overlap]\n", 2, "[overlap] checks nothing"),
])
def test_a_bad_overlap_table_names_its_line(tmp_path, text, line, message):
    path = tmp_path / "gate.toml"
    path.write_text(text)
    with pytest.raises(DataError) as info:
        load_config(path)
    assert info.value.line == line and message in str(info.value)


def test_the_overlap_checks_pass_and_fail_with_their_reasons():
    comparison = comparison_of([0.2, 0.4, 0.9, 1.0], [5, 2, 8, 2])
    config = GateConfig((), overlap=OverlapRules(0.9, min_mean_rbo=0.6, floor=0.5, max_share_below=0.25))
    result = gate_overlap(comparison, config)
    mean, share = result.overlap
    assert mean.value == pytest.approx(np.mean([0.2, 0.4, 0.9, 1.0])) and mean.passed  # 0.625 >= 0.6
    assert not share.passed and share.value == 0.5 and result.exit_code == 1
    assert share.reason == "2 of 4 queries under RBO 0.5 at p=0.9: share 0.5000, over max_share_below 0.25"
    weighted = gate_overlap(comparison, GateConfig((), overlap=OverlapRules(0.9, 0.64, weighted=True)))
    assert weighted.overlap[0].value == pytest.approx((5 * 0.2 + 2 * 0.4 + 8 * 0.9 + 2 * 1.0) / 17) and weighted.passed  # 0.647 >= 0.64
    with pytest.raises(ValidationError, match="weighted = true needs a query set from traffic"):
        gate_overlap(comparison_of([0.5], None), GateConfig((), overlap=OverlapRules(0.9, 0.7, weighted=True)))
    with pytest.raises(ValidationError, match=r"without labels are gated by the config's \[overlap\] table"):
        gate_overlap(comparison, GateConfig(()))
    with pytest.raises(ValidationError, match="no RBO at p=0.5"):
        gate_overlap(comparison, GateConfig((), overlap=OverlapRules(0.5, 0.7)))


def test_the_reports_carry_the_overlap_checks():
    comparison = comparison_of([0.2, 0.4, 0.9, 1.0], None)
    result = gate_overlap(comparison, GateConfig((), overlap=OverlapRules(0.9, 0.7, 0.5, 0.25)))
    lines = to_text(result, ["4 shared queries"], 80)
    assert lines[0] == "quality gate failed: 2 of 2 rules failed (no labels: rank-biased overlap)"
    assert lines[2].split() == ["check", "value", "limit", "result"] and all(len(line) <= 80 for line in lines)
    assert lines[3].split() == ["mean", "RBO", "p=0.9", "0.6250", "0.7", "FAIL"]
    markdown = to_markdown(result)
    assert "| mean RBO p=0.9 | 0.6250 | 0.7 | **FAIL** | mean 0.6250 is below the minimum 0.7 |" in markdown
    cases = ET.fromstring(to_junit(result)).findall(".//testcase")
    assert [c.get("name") for c in cases] == ["mean RBO p=0.9", "share RBO<0.5"]
    assert all(c.find("failure") is not None for c in cases)
