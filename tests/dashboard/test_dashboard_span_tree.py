"""A trace's spans in tree order with their depth in the label, and the waterfall that shows them."""

from __future__ import annotations

import random

import pandas as pd

from searchtrace.dashboard.data.span_tree import span_label, tree_order
from searchtrace.dashboard.ui import charts
from searchtrace.traces import SpanRecord

#: (span id, parent id, start): a depth-3 tree whose siblings start out of id order.
TREE = (("root", None, 0), ("embed", "root", 5), ("retrieve", "root", 10), ("shape", "root", 40),
        ("keyword", "retrieve", 25), ("dense", "retrieve", 12), ("graph", "retrieve", 18),
        ("ppr", "graph", 20), ("hops", "graph", 19))


def _span(span_id: str, parent: str | None, start: int) -> SpanRecord:
    return SpanRecord(trace_id="t" * 32, span_id=span_id, parent_id=parent, name=span_id, kind="INTERNAL",
                      start_ns=start, end_ns=start + 3, status="OK", status_message=None, scope=None, attributes={})


def test_tree_order_puts_parents_first_and_siblings_by_start_whatever_the_input_order():
    spans = [_span(*row) for row in TREE]
    expected = [("root", 0), ("embed", 1), ("retrieve", 1), ("dense", 2), ("graph", 2), ("hops", 3),
                ("ppr", 3), ("keyword", 2), ("shape", 1)]
    for seed in range(20):
        random.Random(seed).shuffle(spans)
        assert [(s.span_id, d) for s, d in tree_order(spans)] == expected, seed


def test_an_orphan_is_a_root_and_every_span_is_listed_once():
    spans = [_span("a", None, 5), _span("b", "gone", 1), _span("c", "a", 6)]
    assert [(s.span_id, d) for s, d in tree_order(spans)] == [("b", 0), ("a", 0), ("c", 1)]


def test_labels_mark_each_level_visibly():
    spans = [_span(*row) for row in reversed(TREE)]
    labels = [span_label(s.name, d) for s, d in tree_order(spans)]
    assert labels == ["root", "└ embed", "└ retrieve", "· └ dense", "· └ graph", "· · └ hops", "· · └ ppr",
                      "· └ keyword", "└ shape"]


def test_the_waterfall_keeps_tree_order_one_row_a_span_and_left_aligned_labels():
    spans = pd.DataFrame({"label": ["search", "└ dense", "└ dense", "· └ x"], "name": ["search", "dense", "dense", "x"],
                          "start_ms": [0.0, 1.0, 2.0, 3.0], "end_ms": [9.0, 2.0, 3.0, 4.0],
                          "duration_ms": [9.0, 1.0, 1.0, 1.0], "status": ["OK"] * 4, "skipped": ["", "", "", ""]})
    spec = charts.waterfall(spans).to_dict()
    y = spec["layer"][0]["encoding"]["y"]
    assert y["sort"] is None and y["axis"]["labelAlign"] == "left"
    assert y["axis"]["labelPadding"] == y["axis"]["labelLimit"] == 12 + 7 * len("└ dense")  # the longest label
    rows = next(iter(spec["datasets"].values()))
    shown = [r["row"] for r in rows]
    assert len(set(shown)) == 4  # two spans of one name are two rows, not one
    assert [r.replace("\u200b", "") for r in shown] == ["search", "└ dense", "└ dense", "· └ x"]
