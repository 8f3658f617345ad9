"""Gate rules and their TOML file.

::

    alpha = 0.05                # significance level
    test = "randomization"      # or "t_test": whose Holm-corrected p-value to use
    [metrics."ndcg@10"]
    max_drop = 0.02             # largest allowed fall of the mean (absolute)
    min_value = 0.5             # smallest allowed candidate mean
    require_significance = false  # a drop past max_drop fails only if p < alpha

    [overlap]                   # for runs without labels (compared by their rankings alone)
    p = 0.9                     # RBO's persistence (default 0.9)
    min_mean_rbo = 0.8          # smallest allowed mean of the extrapolated RBO
    floor = 0.5                 # with max_share_below: a query under this RBO changed a lot,
    max_share_below = 0.1       # and at most this share of the queries may
    weighted = false            # true: traffic-weighted mean and share (a query set from traffic)

Every key is optional, but the file needs at least one ``[metrics."..."]``
table (runs with labels are judged by these) or an ``[overlap]`` table (runs
without labels: either run has none, or ``--no-labels``; see
:mod:`~searchtrace.evals.verdicts.gate.overlap`); unknown keys are errors. Without a
file, :data:`DEFAULT_CONFIG` applies: ndcg@10, recall@100 and mrr@10 may not
drop by more than 0.01 with p < 0.05 (Holm-corrected randomization test); no
minimum values, no ``[overlap]`` table.
"""

from __future__ import annotations

import enum
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchtrace.errors import DataError, SearchtraceError
from searchtrace.evals.scoring.metrics import Metric
from searchtrace.evals.verdicts.gate._values import Invalid, fraction, number
from searchtrace.evals.verdicts.gate.overlap import OverlapRules, overlap_rules

__all__ = ["DEFAULT_CONFIG", "GateConfig", "OverlapRules", "Rule", "SignificanceTest", "load_config"]


class SignificanceTest(str, enum.Enum):
    """Which paired test's Holm-corrected p-value a rule consults."""

    RANDOMIZATION = "randomization"
    T_TEST = "t_test"


@dataclass(frozen=True)
class Rule:
    """What one metric must satisfy; ``None`` disables a check."""

    metric: Metric
    max_drop: float | None = None
    min_value: float | None = None
    require_significance: bool = False


@dataclass(frozen=True)
class GateConfig:
    """The rules, the significance level and the test; and the coverage floor: a candidate whose Judged@10
    (``evals.metrics.COVERAGE_K``) is below ``judged_floor`` is refused (exit 2), since the documents it surfaces
    that nobody judged would be scored as a regression. ``overlap``: the label-free checks (None: runs without
    labels cannot be gated)."""

    rules: tuple[Rule, ...]
    alpha: float = 0.05
    test: SignificanceTest = SignificanceTest.RANDOMIZATION
    judged_floor: float = 0.9
    overlap: OverlapRules | None = None


DEFAULT_CONFIG = GateConfig(
    tuple(Rule(Metric.parse(m), max_drop=0.01, require_significance=True) for m in ("ndcg@10", "recall@100", "mrr@10"))
)

_TOP_KEYS = {"alpha", "test", "metrics", "judged_floor", "overlap"}
_RULE_KEYS = {"max_drop", "min_value", "require_significance"}
_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def _locate(text: str, table: str | None, key: str | None) -> int | None:
    """1-based line of ``key`` (within ``[metrics."table"]``, or ``[table]``, when given), else of the table."""
    lines = text.splitlines()
    start = 0
    if table is not None:
        heads = [i for i, line in enumerate(lines)
                 if f'"{table}"' in line or f"'{table}'" in line or line.strip() == f"[{table}]"]
        if not heads:
            return None
        start = heads[0]
    if key is not None:
        for i in range(start, len(lines)):
            if re.match(rf"\s*{re.escape(key)}\s*=", lines[i]) or (i == start and f"{key} =" in lines[i]):
                return i + 1
            if i > start and lines[i].lstrip().startswith("[") and table is not None:
                break
    return start + 1 if table is not None else None


def _rule(name: str, table: Any) -> Rule:
    if not isinstance(table, dict):
        raise Invalid(f'metrics."{name}" must be a table', name)
    unknown = sorted(set(table) - _RULE_KEYS)
    if unknown:
        allowed = ", ".join(sorted(_RULE_KEYS))
        raise Invalid(f'unknown key {unknown[0]!r} in [metrics."{name}"]; allowed: {allowed}', name, unknown[0])
    try:
        metric = Metric.parse(name)
    except SearchtraceError as exc:
        raise Invalid(exc.message, name) from None
    max_drop = table.get("max_drop")
    if max_drop is not None and number(max_drop, "max_drop", name) < 0:
        raise Invalid(f"max_drop must be >= 0, got {max_drop!r}", name, "max_drop")
    min_value = table.get("min_value")
    significance = table.get("require_significance", False)
    if not isinstance(significance, bool):
        message = f"require_significance must be true or false, got {significance!r}"
        raise Invalid(message, name, "require_significance")
    return Rule(
        metric,
        None if max_drop is None else float(max_drop),
        None if min_value is None else number(min_value, "min_value", name),
        significance,
    )


def _config(data: dict[str, Any]) -> GateConfig:
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise Invalid(f"unknown key {unknown[0]!r}; allowed: {', '.join(sorted(_TOP_KEYS))}", key=unknown[0])
    alpha = number(data.get("alpha", 0.05), "alpha")
    if not 0 < alpha < 1:
        raise Invalid(f"alpha must be in (0, 1), got {alpha!r}", key="alpha")
    try:
        test = SignificanceTest(data.get("test", SignificanceTest.RANDOMIZATION.value))
    except ValueError:
        allowed = [t.value for t in SignificanceTest]
        raise Invalid(f"test must be one of {allowed}, got {data['test']!r}", key="test") from None
    metrics = data.get("metrics", {})
    overlap = overlap_rules(data["overlap"]) if "overlap" in data else None
    if not isinstance(metrics, dict) or (not metrics and overlap is None):
        raise Invalid('no rules: add at least one [metrics."<metric>"] table, or an [overlap] table for runs '
                      "without labels", key="metrics")
    rules = tuple(_rule(name, table) for name, table in metrics.items())
    seen: dict[Metric, str] = {}
    for rule, name in zip(rules, metrics):
        if rule.metric in seen:
            raise Invalid(f"{name!r} and {seen[rule.metric]!r} are the same metric", name)
        seen[rule.metric] = name
    floor = fraction(data.get("judged_floor", 0.9), "judged_floor")
    return GateConfig(rules, alpha, test, floor, overlap)


def load_config(path: str | os.PathLike[str] | None) -> GateConfig:
    """Read a gate TOML file; ``None`` gives :data:`DEFAULT_CONFIG`.

    Raises:
        DataError: unreadable file, invalid TOML (with its line), an unknown
            key, a bad value or an unknown metric (with the line it is on).
    """
    if path is None:
        return DEFAULT_CONFIG
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(str(path), None, f"cannot read gate config: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _AT_LINE.search(str(exc))
        raise DataError(str(path), int(match.group(1)) if match else None, f"invalid TOML: {exc}") from None
    try:
        return _config(data)
    except Invalid as exc:
        raise DataError(str(path), _locate(text, exc.table, exc.key), str(exc)) from None
