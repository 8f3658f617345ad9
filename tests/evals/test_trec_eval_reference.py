"""trec_eval's own test suite: every expected output of its ``make quicktest``, reproduced.

The inputs and expected outputs are trec_eval 10's, unchanged, in
``../shared/reference/trec_eval`` (its README lists the flags of each expected
output). Each case is scored with the switches matching trec_eval's flags, and
every measure both tools compute is compared, per query and ``all``, to the 4
decimals trec_eval prints. Measures searchtrace does not compute (bpref,
iprec_at_recall, gm_map, utility, ndcg with custom gains, ...) are listed in
the README.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.evals.runs.trec import read_qrels, read_run
from searchtrace.evals.scoring.metrics import Metric, QueryRules, evaluate

REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "trec_eval"
if not REFERENCE.is_dir():
    pytest.skip("trec_eval's reference files are not here", allow_module_level=True)

# expected output, trec_eval flags, qrels, results (the README's table)
CASES = [
    ("out.test", "", "qrels.test", "results.test"),
    ("out.test", "", "qrels.test.with-comments", "results.test"),
    ("out.comment.test", "", "qrels.comment.test", "results.comment.test"),
    ("out.test.a", "-m all_trec", "qrels.test", "results.test"),
    ("out.test.aq", "-m all_trec -q", "qrels.test", "results.test"),
    ("out.test.aqc", "-m all_trec -q -c", "qrels.test", "results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100", "qrels.test", "results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2", "qrels.rel_level", "results.test"),
    ("out.test.meas_params", "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
     "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 "
     "-mndcg_cut.10,20,23.4 -msuccess.2,5,20", "qrels.test", "results.test"),
]

# trec_eval measure -> searchtrace metric ("{k}": the cutoff)
MEASURES = {
    "map": "map", "Rprec": "rprec", "recip_rank": "mrr", "ndcg": "ndcg", "set_recall": "recall",
    "P_{k}": "precision@{k}", "recall_{k}": "recall@{k}", "ndcg_cut_{k}": "ndcg@{k}", "success_{k}": "hit@{k}",
    "map_cut_{k}": "map@{k}",
}
_CUT = re.compile(r"^(P|recall|ndcg_cut|success|map_cut)_(\d+)$")


def metric_of(measure: str) -> Metric | None:
    """The searchtrace metric of a trec_eval measure name, or None when we do not compute it."""
    if measure in MEASURES:
        return Metric.parse(MEASURES[measure])
    match = _CUT.match(measure)
    if match:
        return Metric.parse(MEASURES[f"{match.group(1)}_{{k}}"].format(k=match.group(2)))
    return None


def rules_of(flags: str) -> QueryRules:
    """trec_eval's flags as query rules."""
    max_docs = re.search(r"-M(\d+)", flags)
    level = re.search(r"-l(\d+)", flags)
    return QueryRules.trec_eval(complete=" -c" in f" {flags}", max_docs=int(max_docs.group(1)) if max_docs else None,
                                relevance_level=int(level.group(1)) if level else 1)


def expected(name: str) -> dict[tuple[str, str], str]:
    """(measure, query id or "all") -> the printed value."""
    out = {}
    for line in (REFERENCE / name).read_text().splitlines():
        measure, query, value = (part.strip() for part in line.split("\t"))
        out[(measure, query)] = value
    return out


@pytest.mark.parametrize(("output", "flags", "qrels", "results"), CASES,
                         ids=[f"{c[0]}[{c[2]}]" for c in CASES])
def test_matches_trec_eval(output, flags, qrels, results):
    want = expected(output)
    metrics = {measure: m for measure, _ in want if (m := metric_of(measure)) is not None}
    assert len(set(metrics.values())) >= 4  # every file has measures we compute
    ev = evaluate(read_qrels(REFERENCE / qrels), read_run(REFERENCE / results, extra_fields=True),
                  list(dict.fromkeys(metrics.values())), rules_of(flags))
    per_query = {m: dict(zip(ev.query_ids.tolist(), ev[m].tolist())) for m in ev.metrics}
    compared = 0
    for (measure, query), value in want.items():
        if measure == "num_q":
            assert len(ev.query_ids) == int(value)
            continue
        metric = metrics.get(measure)
        if metric is None:
            continue
        got = ev.mean(metric) if query == "all" else per_query[metric][query]
        assert abs(got - float(value)) <= 0.5e-4 + 1e-9, f"{measure} {query}: {got:.6f} != {value}"
        compared += 1
    if " -q" in f" {flags}":  # per-query rows: every evaluated query has them, and only those
        assert {q for _, q in want if q != "all"} == set(ev.query_ids.tolist())
    assert compared >= len(metrics)


def test_measures_without_a_match_are_the_ones_the_readme_lists():
    names = {m for case in CASES for m, _ in expected(case[0])}
    missing = sorted(n for n in names if metric_of(n) is None)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for family in {re.sub(r"_[\d.,=]+.*$|_at_recall.*$|_rel_P.*", "", n) for n in missing}:
        assert f"`{family}" in readme, f"{family} is neither computed nor listed in README.md"


@pytest.mark.parametrize(("output", "switches", "qrels", "results"), [
    ("out.comment.test", ["--trec-eval"], "qrels.comment.test", "results.comment.test"),
    ("out.test.aqcM", ["--trec-eval", "-c", "-M", "100"], "qrels.test", "results.trunc"),
    ("out.test.aql", ["--trec-eval", "-l", "2"], "qrels.rel_level", "results.test"),
])
def test_command_line_switches_reproduce_trec_eval(capsys, output, switches, qrels, results):
    want = expected(output)
    measures = {"map": "map", "recip_rank": "mrr", "Rprec": "rprec", "P_5": "precision@5",
                "ndcg_cut_10": "ndcg@10"}
    code = main(["eval", "--run", str(REFERENCE / results), "--qrels", str(REFERENCE / qrels), *switches,
                 "--metrics", *measures.values(), "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["queries"] == int(want[("num_q", "all")])
    for measure, metric in measures.items():
        if (measure, "all") in want:
            assert abs(out["metrics"][metric] - float(want[(measure, "all")])) <= 0.5e-4 + 1e-9, measure


def test_default_rules_differ_from_trec_eval_on_the_comment_file(capsys):
    """The query rules are the only difference: searchtrace leaves out the judged query without relevant docs."""
    want = expected("out.comment.test")
    main(["eval", "--run", str(REFERENCE / "results.comment.test"), "--qrels", str(REFERENCE / "qrels.comment.test"),
          "--metrics", "map", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["queries"] == int(want[("num_q", "all")]) - 1
    assert out["metrics"]["map"] == pytest.approx(float(want[("map", "all")]) * 31 / 30, abs=1e-4)
