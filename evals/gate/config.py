"""Gate rules and their TOML file.

::

    alpha = 0.05                # significance level
    test = "randomization"      # or "t_test": whose Holm-corrected p-value to use
    [metrics."ndcg@10"]
    max_drop = 0.02             # largest allowed fall of the mean (absolute)
    min_value = 0.5             # smallest allowed candidate mean
    require_significance = false  # a drop past max_drop fails only if p < alpha

Every key is optional except at least one ``[metrics."..."]`` table; unknown
keys are errors. Without a file, :data:`DEFAULT_CONFIG` applies: ndcg@10,
recall@100 and mrr@10 may not drop by more than 0.01 with p < 0.05
(Holm-corrected randomization test); no minimum values.
"""

from __future__ import annotations

import enum
import math
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchtrace.errors import DataError, SearchtraceError
from searchtrace.evals.metrics import Metric

__all__ = ["DEFAULT_CONFIG", "GateConfig", "Rule", "SignificanceTest", "load_config"]


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
    that nobody judged would be scored as a regression."""

    rules: tuple[Rule, ...]
    alpha: float = 0.05
    test: SignificanceTest = SignificanceTest.RANDOMIZATION
    judged_floor: float = 0.9


DEFAULT_CONFIG = GateConfig(
    tuple(Rule(Metric.parse(m), max_drop=0.01, require_significance=True) for m in ("ndcg@10", "recall@100", "mrr@10"))
)

_TOP_KEYS = {"alpha", "test", "metrics", "judged_floor"}
_RULE_KEYS = {"max_drop", "min_value", "require_significance"}
_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)")


class _Invalid(ValueError):
    """A semantic error, with the table and key it concerns (to find its line)."""

    def __init__(self, message: str, table: str | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.table, self.key = table, key


def _locate(text: str, table: str | None, key: str | None) -> int | None:
    """1-based line of ``key`` (within ``[metrics."table"]`` when given), else of the table."""
    lines = text.splitlines()
    start = 0
    if table is not None:
        heads = [i for i, line in enumerate(lines) if f'"{table}"' in line or f"'{table}'" in line]
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


def _number(value: Any, what: str, table: str | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Invalid(f"{what} must be a finite number, got {value!r}", table, what)
    return float(value)


def _rule(name: str, table: Any) -> Rule:
    if not isinstance(table, dict):
        raise _Invalid(f'metrics."{name}" must be a table', name)
    unknown = sorted(set(table) - _RULE_KEYS)
    if unknown:
        allowed = ", ".join(sorted(_RULE_KEYS))
        raise _Invalid(f'unknown key {unknown[0]!r} in [metrics."{name}"]; allowed: {allowed}', name, unknown[0])
    try:
        metric = Metric.parse(name)
    except SearchtraceError as exc:
        raise _Invalid(exc.message, name) from None
    max_drop = table.get("max_drop")
    if max_drop is not None and _number(max_drop, "max_drop", name) < 0:
        raise _Invalid(f"max_drop must be >= 0, got {max_drop!r}", name, "max_drop")
    min_value = table.get("min_value")
    significance = table.get("require_significance", False)
    if not isinstance(significance, bool):
        message = f"require_significance must be true or false, got {significance!r}"
        raise _Invalid(message, name, "require_significance")
    return Rule(
        metric,
        None if max_drop is None else float(max_drop),
        None if min_value is None else _number(min_value, "min_value", name),
        significance,
    )


def _config(data: dict[str, Any]) -> GateConfig:
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise _Invalid(f"unknown key {unknown[0]!r}; allowed: {', '.join(sorted(_TOP_KEYS))}", key=unknown[0])
    alpha = _number(data.get("alpha", 0.05), "alpha")
    if not 0 < alpha < 1:
        raise _Invalid(f"alpha must be in (0, 1), got {alpha!r}", key="alpha")
    try:
        test = SignificanceTest(data.get("test", SignificanceTest.RANDOMIZATION.value))
    except ValueError:
        allowed = [t.value for t in SignificanceTest]
        raise _Invalid(f"test must be one of {allowed}, got {data['test']!r}", key="test") from None
    metrics = data.get("metrics")
    if not isinstance(metrics, dict) or not metrics:
        raise _Invalid('no rules: add at least one [metrics."<metric>"] table', key="metrics")
    rules = tuple(_rule(name, table) for name, table in metrics.items())
    seen: dict[Metric, str] = {}
    for rule, name in zip(rules, metrics):
        if rule.metric in seen:
            raise _Invalid(f"{name!r} and {seen[rule.metric]!r} are the same metric", name)
        seen[rule.metric] = name
    floor = _number(data.get("judged_floor", 0.9), "judged_floor")
    if not 0 <= floor <= 1:
        raise _Invalid(f"judged_floor must be in [0, 1], got {floor!r}", key="judged_floor")
    return GateConfig(rules, alpha, test, floor)


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
    except _Invalid as exc:
        raise DataError(str(path), _locate(text, exc.table, exc.key), str(exc)) from None
