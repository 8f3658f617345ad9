"""Gate results as JUnit XML (for CI) and a Markdown summary (for a PR comment)."""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from searchtrace.evals.gate.check import GateResult

__all__ = ["to_junit", "to_markdown", "write_junit"]


def to_junit(result: GateResult, suite: str = "searchtrace-gate") -> str:
    """One ``<testcase>`` per rule, with a ``<failure>`` when it fails."""
    failures = sum(not r.passed for r in result.results)
    root = ET.Element("testsuites", tests=str(len(result.results)), failures=str(failures))
    node = ET.SubElement(
        root, "testsuite", name=suite, tests=str(len(result.results)), failures=str(failures), errors="0"
    )
    for r in result.results:
        case = ET.SubElement(node, "testcase", classname=suite, name=str(r.rule.metric))
        if r.passed:
            ET.SubElement(case, "system-out").text = r.reason
        else:
            failure = ET.SubElement(case, "failure", message=r.reason, type="regression")
            failure.text = f"base {r.base:.6f}, candidate {r.candidate:.6f}, delta {r.delta:+.6f}"
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(result: GateResult, path: str | os.PathLike[str], suite: str = "searchtrace-gate") -> None:
    """Write :func:`to_junit` to ``path`` (UTF-8)."""
    Path(path).write_text(to_junit(result, suite), encoding="utf-8")


def _f(value: float, signed: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def to_markdown(result: GateResult, notes: Sequence[str] = ()) -> str:
    """A heading with the verdict, ``notes`` (one line each), and one table row per rule."""
    verdict = "✅ passed" if result.passed else "❌ failed"
    lines = [
        f"### Quality gate {verdict}",
        "",
        *(f"{note}  " for note in notes),
        *([""] if notes else []),
        "| metric | base | candidate | delta | p (Holm) | result | reason |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for r in result.results:
        p = "n/a" if math.isnan(r.p_value) else f"{r.p_value:.4g}"
        status = "pass" if r.passed else "**FAIL**"
        reason = r.reason.replace("|", "\\|")
        cells = [str(r.rule.metric), _f(r.base), _f(r.candidate), _f(r.delta, True), p, status, reason]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"alpha {result.config.alpha:g}, {result.config.test.value} test"]
    return "\n".join(lines) + "\n"
