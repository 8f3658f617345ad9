"""A trace's span tree (``traces show``) as lines fitted to a width.

Each span is its name, its duration and its key attributes. At a width, the
attributes that do not fit on the span's line wrap onto the lines below it,
indented under its name, and an attribute longer than a whole line is cut with an
ellipsis; so no line is longer than the width. Without one (``--wide``) each
span is one line, nothing cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from searchtrace.terminal import one_line
from searchtrace.traces.spans import vocabulary as v
from searchtrace.traces.spans.foreign import is_own
from searchtrace.traces.store.records import SpanRecord, TraceDetail

if TYPE_CHECKING:  # rich is slow to import: imported where used
    from rich.text import Text

__all__ = ["tree_lines"]

GAP = "  "
_BRANCH, _LAST, _PIPE, _SPACE = "├── ", "└── ", "│   ", "    "


def tree_lines(detail: TraceDetail, columns: int | None) -> list[Text]:
    """The header line and one entry per span, children in start order, each fitted to ``columns`` (None: whole)."""
    from rich.text import Text

    ids = {s.span_id for s in detail.spans}
    children: dict[str | None, list[SpanRecord]] = {}
    for span in detail.spans:  # already in start order
        children.setdefault(span.parent_id if span.parent_id in ids else None, []).append(span)
    s = detail.summary
    header = [Text(f"trace {s.trace_id}"), Text(f"{s.start.astimezone():%Y-%m-%d %H:%M:%S}"),
              Text(f"{s.duration_ms:.1f} ms"), Text(f"{s.n_spans} spans")]
    if not s.complete:
        header.append(Text("(root span not stored yet)"))
    roots = children.get(None, [])
    lines = wrap("", _PIPE if roots else _SPACE, header, columns)

    def add(span: SpanRecord, guide: str, last: bool) -> None:
        below = guide + (_SPACE if last else _PIPE)
        kids = children.get(span.span_id, [])
        lines.extend(wrap(guide + (_LAST if last else _BRANCH), below + (_PIPE if kids else _SPACE),
                          span_items(span), columns))
        for i, child in enumerate(kids):
            add(child, below, i == len(kids) - 1)

    for i, root in enumerate(roots):
        add(root, "", i == len(roots) - 1)
    return lines


def wrap(first: str, then: str, items: Sequence[Text], columns: int | None) -> list[Text]:
    """``items`` two spaces apart after the guide ``first``; at ``columns``, those that do not fit go on lines
    after the guide ``then``, and an item longer than a whole line is cut with an ellipsis."""
    from rich.text import Text

    lines, line, empty = [], Text(first), True
    for item in items:
        if not empty and columns is not None and line.cell_len + len(GAP) + item.cell_len > columns:
            lines.append(line)
            line, empty = Text(then), True
        if not empty:
            line.append(GAP)
        line.append_text(_cut(item, None if columns is None else columns - line.cell_len))
        empty = False
    return [*lines, line]


def _cut(item: Text, room: int | None) -> Text:
    if room is None or item.cell_len <= room:
        return item
    cut = item.copy()
    cut.truncate(max(room, 1), overflow="ellipsis")
    return cut


def span_items(span: SpanRecord) -> list[Text]:
    """A span's name, duration, key attributes and errors, each a styled text."""
    from rich.text import Text

    items = [Text(span.name, style="bold red" if span.status == "ERROR" else "bold"),
             Text(f"{span.duration_ms:.1f} ms")]
    if not is_own(span.attributes, span.scope):  # another retriever's span: what it is, by either convention
        kind = span.attributes.get(v.OPENINFERENCE_SPAN_KIND) or span.attributes.get(v.GEN_AI_OPERATION_NAME)
        if isinstance(kind, str):
            items.append(Text(one_line(kind), style="cyan"))
    items += [Text(one_line(text)) for key, fmt in HIGHLIGHTS if key in span.attributes and (text := fmt(span.attributes[key]))]
    exceptions = [e.attributes for e in span.events if e.name == "exception"]
    for exc in exceptions:  # OpenTelemetry's exception event (semconv exception.type / exception.message)
        items.append(Text(one_line(f"{exc.get('exception.type')}: {exc.get('exception.message')}"), style="red"))
    if span.status == "ERROR" and not exceptions:
        items.append(Text(one_line(f"error: {span.status_message or ''}"), style="red"))
    return items


def _top(values: Any, n: int = 3) -> str:
    values = list(values)
    return ", ".join(map(str, values[:n])) + (f", … (+{len(values) - n})" if len(values) > n else "")


HIGHLIGHTS: list[tuple[str, Callable[[Any], str]]] = [
    (v.INPUT_VALUE, lambda x: f"query={x!r}"),
    (v.GEN_AI_RETRIEVAL_QUERY, lambda x: f"query={x!r}"),
    (v.MODE, lambda x: f"mode={x}"),
    (v.TOP_K, lambda x: f"top_k={x}"),
    (v.ERROR_CODE, lambda x: f"error={x}"),
    (v.DETECTED_ENTITIES, lambda x: f"entities=[{_top(x)}]"),
    (v.REWRITE_TERMS, lambda x: f"terms=[{_top(x)}]"),
    (v.EMBED_PRECOMPUTED, lambda x: "precomputed" if x else ""),
    (v.CANDIDATE_COUNT, lambda x: f"candidates={x}"),
    (v.CANDIDATE_IDS, lambda x: f"top=[{_top(x)}]"),
    (v.GRAPH_HITS, lambda x: f"triples={x}"),
    (v.FUSION_METHOD, lambda x: f"fusion={x}"),
    (v.RERANKER_MODEL_NAME, lambda x: f"reranker={x}"),
    (v.RERANKER_TOP_K, lambda x: f"keep={x}"),
    (v.FILTER_DROPPED_IDS, lambda x: f"dropped={len(x)}"),
    (v.RESULT_IDS, lambda x: f"results=[{_top(x, 5)}]"),
    (v.RESULT_BANDS, lambda x: f"bands=[{_top(x, 5)}]"),
    (v.BEST_SCORE, lambda x: f"bestScore={x:.3f}"),
    (v.NO_CONFIDENT_RESULTS, lambda x: "noConfidentResults" if x else ""),
    (v.DEGRADED, lambda x: f"degraded=[{', '.join(x)}]" if x else ""),
    (v.RETRY_DETECTED_ENTITIES, lambda x: f"retry.entities=[{_top(x)}]"),
    (v.RETRY_RELATED_TERMS, lambda x: f"retry.related=[{_top(x)}]"),
    (v.RETRY_NARROWER, lambda x: f"retry.narrower={x!r}" if x else ""),
    (v.RETRY_BROADER, lambda x: f"retry.broader={x!r}" if x else ""),
    (v.RUN_ID, lambda x: f"run={x}"),
    (v.QUERY_ID, lambda x: f"qid={x}"),
]
"""The attributes a span's entry shows, in this order, and how."""
