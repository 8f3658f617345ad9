"""Gate results as text for a terminal, JUnit XML (for CI) and a Markdown summary (for a PR comment).

Every form writes a change as candidate - base with its sign (:func:`searchtrace.terminal.signed`).
"""

from __future__ import annotations

import math
import os
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from searchtrace.evals.gate.check import GateResult, RuleResult
from searchtrace.terminal import fit, signed

__all__ = ["to_junit", "to_markdown", "to_text", "write_junit"]


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
            failure.text = f"base {r.base:.6f}, candidate {r.candidate:.6f}, change {signed(r.delta, 6)}"
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(result: GateResult, path: str | os.PathLike[str], suite: str = "searchtrace-gate") -> None:
    """Write :func:`to_junit` to ``path`` (UTF-8)."""
    Path(path).write_text(to_junit(result, suite), encoding="utf-8")


def _f(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.4f}"


def _p(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.4g}"


def _verdict(result: GateResult) -> str:
    failed = sum(not r.passed for r in result.results)
    return (f"{'passed' if result.passed else 'failed'}: {failed} of {len(result.results)} rules failed "
            f"(alpha {result.config.alpha:g}, {result.config.test.value} test)")


_TEXT_HEADERS = ("metric", "base", "cand", "change", "p (Holm)", "result")


def _text_cells(r: RuleResult) -> tuple[str, ...]:
    return str(r.rule.metric), _f(r.base), _f(r.candidate), signed(r.delta), _p(r.p_value), \
        "pass" if r.passed else "FAIL"


def to_text(result: GateResult, notes: Sequence[str] = (), columns: int = 80) -> list[str]:
    """The verdict, ``notes``, and a row per rule with its reason indented below it: lines of at most ``columns``."""
    rows = [_TEXT_HEADERS, *(_text_cells(r) for r in result.results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_TEXT_HEADERS))]
    lines = textwrap.wrap(f"quality gate {_verdict(result)}", columns, subsequent_indent="  ")
    lines += [wrapped for note in notes for wrapped in textwrap.wrap(note, columns, subsequent_indent="  ")]
    for row, r in zip(rows, (None, *result.results)):
        cells = [row[0].ljust(widths[0]), *(cell.rjust(w) for cell, w in zip(row[1:-1], widths[1:-1])), row[-1]]
        lines.append(fit("  ".join(cells), columns))
        if r is not None:
            lines += textwrap.wrap(r.reason, columns, initial_indent="  ", subsequent_indent="    ")
    return lines


def to_markdown(result: GateResult, notes: Sequence[str] = ()) -> str:
    """A heading with the verdict, ``notes`` (one line each), and one table row per rule."""
    verdict = "✅ passed" if result.passed else "❌ failed"
    lines = [
        f"### Quality gate {verdict}",
        "",
        *(f"{note}  " for note in notes),
        *([""] if notes else []),
        "| metric | base | candidate | change | p (Holm) | result | reason |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for r in result.results:
        p = _p(r.p_value)
        status = "pass" if r.passed else "**FAIL**"
        reason = r.reason.replace("|", "\\|")
        cells = [str(r.rule.metric), _f(r.base), _f(r.candidate), signed(r.delta), p, status, reason]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"alpha {result.config.alpha:g}, {result.config.test.value} test"]
    return "\n".join(lines) + "\n"
