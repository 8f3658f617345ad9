"""Gate: rules, verdicts, config loading and its errors, JUnit XML and Markdown."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from searchtrace.errors import DataError, ExitCode, ValidationError
from searchtrace.evals.scoring.metrics import Evaluation, Metric
from searchtrace.evals.verdicts.comparison import compare
from searchtrace.evals.verdicts.gate import (
    DEFAULT_CONFIG,
    GateConfig,
    Rule,
    SignificanceTest,
    gate,
    load_config,
    to_junit,
    to_markdown,
    to_text,
    write_junit,
)

IDS = [f"q{i}" for i in range(30)]
BASE = Evaluation.from_arrays(IDS, {"ndcg@10": [0.6] * 30, "map": [0.5, 0.3] * 15})
# ndcg@10 drops by 0.05 on every query (significant); map drops by 0.03 on average, mixed signs (not significant).
CAND = Evaluation.from_arrays(IDS, {"ndcg@10": [0.55] * 30, "map": [0.5 - 0.3, 0.3 + 0.24] * 15})
COMPARISON = compare(BASE, CAND, n_resamples=2000)


def config(**rules: dict) -> GateConfig:
    return GateConfig(tuple(Rule(Metric.parse(m.replace("_", "@")), **r) for m, r in rules.items()))


def test_passes_within_max_drop_and_above_min_value():
    result = gate(COMPARISON, config(ndcg_10={"max_drop": 0.06, "min_value": 0.5}))
    assert result.passed and result.exit_code is ExitCode.OK == 0
    assert result.results[0].reason == "0.5500 >= minimum 0.5; change -0.0500 within max_drop 0.06"


def test_fails_by_drop():
    result = gate(COMPARISON, config(ndcg_10={"max_drop": 0.02}))
    assert not result.passed and result.exit_code is ExitCode.FAILURE == 1
    assert result.results[0].reason.startswith("change -0.0500, a drop past max_drop 0.02, p=")


def test_fails_by_min_value():
    [rule] = gate(COMPARISON, config(ndcg_10={"min_value": 0.56})).results
    assert not rule.passed and rule.reason == "0.5500 is below the minimum 0.56"


def test_required_significance_turns_an_insignificant_drop_into_a_pass():
    drop = COMPARISON["map"].base_mean - COMPARISON["map"].candidate_mean
    assert drop == pytest.approx(0.03)
    assert not gate(COMPARISON, config(map={"max_drop": 0.01})).passed
    result = gate(COMPARISON, config(map={"max_drop": 0.01, "require_significance": True}))
    assert result.passed
    assert "but not significant" in result.results[0].reason
    # A significant drop still fails when significance is required.
    assert not gate(COMPARISON, config(ndcg_10={"max_drop": 0.01, "require_significance": True})).passed


def test_uses_the_configured_test():
    rules = config(map={"max_drop": 0.0, "require_significance": True}).rules
    tests = [(SignificanceTest.T_TEST, "p_t_test_holm"), (SignificanceTest.RANDOMIZATION, "p_randomization_holm")]
    for test, attribute in tests:
        [r] = gate(COMPARISON, GateConfig(rules, 0.05, test)).results
        assert r.p_value == getattr(COMPARISON["map"], attribute)


def test_rule_for_a_metric_not_compared_is_invalid_input():
    with pytest.raises(ValidationError, match="recall@5"):
        gate(COMPARISON, config(recall_5={"max_drop": 0.1}))


def test_default_config():
    assert load_config(None) is DEFAULT_CONFIG
    assert [str(r.metric) for r in DEFAULT_CONFIG.rules] == ["ndcg@10", "recall@100", "mrr@10"]
    assert all(r.max_drop == 0.01 and r.require_significance and r.min_value is None for r in DEFAULT_CONFIG.rules)


GOOD = """\
alpha = 0.01
test = "t_test"

[metrics."ndcg@10"]
max_drop = 0.02
min_value = 0.5
require_significance = false

[metrics."recall@100"]
max_drop = 0.05
"""


def test_load_config(tmp_path):
    path = tmp_path / "gate.toml"
    path.write_text(GOOD)
    cfg = load_config(path)
    assert cfg.alpha == 0.01 and cfg.test is SignificanceTest.T_TEST
    assert cfg.rules == (
        Rule(Metric("ndcg", 10), 0.02, 0.5, False),
        Rule(Metric("recall", 100), 0.05, None, False),
    )


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('alpha = 0.05\n[metrics."ndcg@10"]\nmax_drop = = 1\n', 3, "invalid TOML"),
        ('alpha = 0.05\n[metrics."ndcg@10"]\nmax_drop = 0.1\nmaxdrop = 0.2\n', 4, "unknown key 'maxdrop'"),
        ('thresholds = 1\n[metrics."ndcg@10"]\nmax_drop = 0.1\n', 1, "unknown key 'thresholds'"),
        ('[metrics."ndcg@10"]\nmax_drop = 0.1\n\n[metrics."bleu@4"]\nmax_drop = 0.1\n', 4, "unknown metric 'bleu'"),
        ('[metrics."ndcg@10"]\nmax_drop = -0.1\n', 2, "max_drop must be >= 0"),
        ('[metrics."ndcg@10"]\nrequire_significance = "yes"\n', 2, "require_significance must be true or false"),
        ('[metrics."ndcg@10"]\nmin_value = "high"\n', 2, "min_value must be a finite number"),
        ('alpha = 1.5\n[metrics."map"]\nmax_drop = 0.1\n', 1, "alpha must be in (0, 1)"),
        ('test = "wilcoxon"\n[metrics."map"]\n', 1, "test must be one of"),
        ("alpha = 0.05\n", None, "no rules"),
        ('[metrics."map"]\n[metrics."MAP"]\n', 2, "are the same metric"),
    ],
)
def test_malformed_config_names_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "gate.toml"
    path.write_text(text)
    with pytest.raises(DataError) as info:
        load_config(path)
    assert info.value.path == str(path) and info.value.line == line
    assert message in str(info.value) and str(info.value).startswith(str(path))


def test_missing_config_file(tmp_path):
    with pytest.raises(DataError, match="cannot read gate config"):
        load_config(tmp_path / "nope.toml")


def test_junit_xml_structure(tmp_path):
    result = gate(COMPARISON, config(ndcg_10={"max_drop": 0.02}, map={"max_drop": 0.1}))
    path = tmp_path / "gate.xml"
    write_junit(result, path)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "2" and root.get("failures") == "1"
    [suite] = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["ndcg@10", "map"]
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("message").startswith("change -0.0500, a drop past")
    assert cases[1].find("failure") is None and "within max_drop" in cases[1].find("system-out").text
    assert ET.fromstring(to_junit(result).split("?>", 1)[1]) is not None


def test_junit_escapes_special_characters():
    result = gate(COMPARISON, config(ndcg_10={"min_value": 0.9}))
    xml = to_junit(result, suite='a<b>&"c"')
    assert ET.fromstring(xml.split("?>", 1)[1]).find("testsuite").get("name") == 'a<b>&"c"'


def test_markdown_summary():
    md = to_markdown(gate(COMPARISON, config(ndcg_10={"max_drop": 0.02}, map={"max_drop": 0.1})))
    assert md.startswith("### Quality gate ❌ failed\n")
    assert "| ndcg@10 | 0.6000 | 0.5500 | -0.0500 |" in md and "| **FAIL** |" in md
    assert "| map | 0.4000 | 0.3700 | -0.0300 |" in md
    assert to_markdown(gate(COMPARISON, config(map={"max_drop": 0.1}))).startswith("### Quality gate ✅ passed")


def test_a_change_has_one_sign_everywhere_and_zero_is_never_negative():
    """Runs scoring alike: the change is +0.0000 in the reason, the text, the Markdown and JUnit (it read
    "change -0.0000" beside a delta of "+0.0000": the reason negated base - candidate)."""
    same = gate(compare(BASE, BASE, n_resamples=200), config(ndcg_10={"max_drop": 0.01}, map={"max_drop": 0.01}))
    outputs = {"reason": same.results[0].reason, "text": "\n".join(to_text(same)), "markdown": to_markdown(same),
               "junit": to_junit(same)}
    for name, out in outputs.items():
        assert "-0.0000" not in out, name
    assert same.results[0].reason == "change +0.0000 within max_drop 0.01"
    assert "| ndcg@10 | 0.6000 | 0.6000 | +0.0000 |" in outputs["markdown"]
    dropped = gate(COMPARISON, config(map={"max_drop": 0.01}))
    row = next(line for line in to_text(dropped) if line.startswith("map"))
    assert row.split() == ["map", "0.4000", "0.3700", "-0.0300", f"{dropped.results[0].p_value:.4g}", "FAIL"]
    assert "change -0.0300, a drop past max_drop 0.01" in dropped.results[0].reason


def test_text_summary_fits_the_width_and_is_not_markdown():
    result = gate(COMPARISON, config(ndcg_10={"max_drop": 0.01, "min_value": 0.6, "require_significance": True},
                                     map={"max_drop": 0.01, "require_significance": True}))
    note = "note: the qrels differ: a label change, allowed by --allow-label-change (" + "x" * 90 + ")"
    for columns in (80, 60):
        lines = to_text(result, ("30 shared queries (0 only in base, 0 only in candidate)", note), columns)
        assert max(map(len, lines)) <= columns
        assert lines[0].startswith("quality gate failed: 1 of 2 rules failed (alpha 0.05,")
        text = "\n".join(lines)
        assert "|" not in text and "###" not in text and "**" not in text
        reasons = " ".join(line.strip() for line in lines if line.startswith("  "))
        assert "0.5500 is below the minimum 0.6" in reasons and "but not significant" in reasons
