"""A trace's spans as a tree: tree order and labels that show each span's depth.

The waterfall and the span table list spans one per row; a label carries the
nesting as visible characters (a ``· `` per level above the parent's, then
``└ ``), so it survives any alignment of the chart's axis labels.
"""

from __future__ import annotations

from collections.abc import Sequence

from searchtrace.traces import SpanRecord

__all__ = ["INDENT", "JOIN", "span_label", "tree_order"]

INDENT = "· "  # one per level between the root's children and the span
JOIN = "└ "  # a child's mark


def tree_order(spans: Sequence[SpanRecord]) -> list[tuple[SpanRecord, int]]:
    """Spans depth first, each parent before its children and siblings by start time, each with its depth.

    A span whose parent is not among ``spans`` is a root; roots are ordered by start time too.
    """
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[SpanRecord]] = {}
    for s in sorted(spans, key=lambda s: (s.start_ns, s.end_ns, s.span_id)):
        children.setdefault(s.parent_id if s.parent_id in ids else None, []).append(s)
    out: list[tuple[SpanRecord, int]] = []
    seen: set[str] = set()
    stack = [(s, 0) for s in reversed(children.get(None, []))]
    while stack:  # not recursive: a deep trace cannot reach Python's recursion limit
        span, depth = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        out.append((span, depth))
        stack.extend((c, depth + 1) for c in reversed(children.get(span.span_id, [])))
    return out


def span_label(name: str, depth: int) -> str:
    """``name`` marked with its depth: ``search``, ``└ embed``, ``· └ dense``, ``· · └ …``."""
    return name if depth <= 0 else INDENT * (depth - 1) + JOIN + name
