"""Gate results as text for a terminal, JUnit XML (for CI) and a Markdown summary (for a PR comment).

Every form writes a change as candidate - base with its sign (:func:`searchtrace.terminal.signed`); the
label-free checks (runs without labels) come as their own rows: check, value, limit, result.
"""

from __future__ import annotations

import math
import os
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from searchtrace.evals.verdicts.gate.check import GateResult, RuleResult
from searchtrace.evals.verdicts.gate.overlap import OverlapCheck
from searchtrace.terminal import fit, signed

__all__ = ["to_junit", "to_markdown", "to_text", "write_junit"]


def _cases(result: GateResult) -> list[tuple[str, bool, str, str]]:
    """(name, passed, reason, figures) of every rule and check."""
    cases = [(str(r.rule.metric), r.passed, r.reason,
              f"base {r.base:.6f}, candidate {r.candidate:.6f}, change {signed(r.delta, 6)}") for r in result.results]
    return cases + [(c.name, c.passed, c.reason, f"value {c.value:.6f}, limit {c.limit:g}") for c in result.overlap]


def to_junit(result: GateResult, suite: str = "searchtrace-gate") -> str:
    """One ``<testcase>`` per rule or label-free check, with a ``<failure>`` when it fails."""
    cases = _cases(result)
    failures = sum(not passed for _, passed, _, _ in cases)
    root = ET.Element("testsuites", tests=str(len(cases)), failures=str(failures))
    node = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(failures), errors="0")
    for name, passed, reason, figures in cases:
        case = ET.SubElement(node, "testcase", classname=suite, name=name)
        if passed:
            ET.SubElement(case, "system-out").text = reason
        else:
            failure = ET.SubElement(case, "failure", message=reason, type="regression")
            failure.text = figures
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
    cases = _cases(result)
    failed = sum(not passed for _, passed, _, _ in cases)
    how = [f"alpha {result.config.alpha:g}, {result.config.test.value} test"] if result.results else []
    how += ["no labels: rank-biased overlap"] if result.overlap else []
    return f"{'passed' if result.passed else 'failed'}: {failed} of {len(cases)} rules failed ({'; '.join(how)})"


_TEXT_HEADERS = ("metric", "base", "cand", "change", "p (Holm)", "result")
_OVERLAP_HEADERS = ("check", "value", "limit", "result")


def _text_cells(r: RuleResult) -> tuple[str, ...]:
    return str(r.rule.metric), _f(r.base), _f(r.candidate), signed(r.delta), _p(r.p_value), \
        "pass" if r.passed else "FAIL"


def _overlap_cells(c: OverlapCheck) -> tuple[str, ...]:
    return c.name, _f(c.value), f"{c.limit:g}", "pass" if c.passed else "FAIL"


def _text_rows(headers: tuple[str, ...], rows: list[tuple[str, ...]], reasons: list[str], columns: int) -> list[str]:
    """A header and a row per rule, its reason indented below it."""
    table = [headers, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    lines = []
    for row, reason in zip(table, (None, *reasons)):
        cells = [row[0].ljust(widths[0]), *(cell.rjust(w) for cell, w in zip(row[1:-1], widths[1:-1])), row[-1]]
        lines.append(fit("  ".join(cells), columns))
        if reason is not None:
            lines += textwrap.wrap(reason, columns, initial_indent="  ", subsequent_indent="    ")
    return lines


def to_text(result: GateResult, notes: Sequence[str] = (), columns: int = 80) -> list[str]:
    """The verdict, ``notes``, and a row per rule with its reason indented below it: lines of at most ``columns``."""
    lines = textwrap.wrap(f"quality gate {_verdict(result)}", columns, subsequent_indent="  ")
    lines += [wrapped for note in notes for wrapped in textwrap.wrap(note, columns, subsequent_indent="  ")]
    if result.results or not result.overlap:
        lines += _text_rows(_TEXT_HEADERS, [_text_cells(r) for r in result.results],
                            [r.reason for r in result.results], columns)
    if result.overlap:
        lines += _text_rows(_OVERLAP_HEADERS, [_overlap_cells(c) for c in result.overlap],
                            [c.reason for c in result.overlap], columns)
    return lines


def to_markdown(result: GateResult, notes: Sequence[str] = ()) -> str:
    """A heading with the verdict, ``notes`` (one line each), and one table row per rule."""
    verdict = "✅ passed" if result.passed else "❌ failed"
    lines = [f"### Quality gate {verdict}", "", *(f"{note}  " for note in notes), *([""] if notes else [])]
    if result.results or not result.overlap:
        lines += ["| metric | base | candidate | change | p (Holm) | result | reason |",
                  "|---|---:|---:|---:|---:|---|---|"]
        for r in result.results:
            cells = [str(r.rule.metric), _f(r.base), _f(r.candidate), signed(r.delta), _p(r.p_value),
                     "pass" if r.passed else "**FAIL**", r.reason.replace("|", "\\|")]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", f"alpha {result.config.alpha:g}, {result.config.test.value} test"]
    if result.overlap:
        lines += [*([""] if result.results else []), "| check | value | limit | result | reason |",
                  "|---|---:|---:|---|---|"]
        for c in result.overlap:
            cells = [c.name, _f(c.value), f"{c.limit:g}", "pass" if c.passed else "**FAIL**",
                     c.reason.replace("|", "\\|")]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", "no labels: rank-biased overlap (Webber, Moffat and Zobel 2010), extrapolated"]
    return "\n".join(lines) + "\n"
