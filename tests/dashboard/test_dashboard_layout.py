"""The dashboard's shared layout (``dashboard.ui.layout``): the key columns' order and the style's rules.
What the style does to a page is checked in Chromium (``tests/system/dashboard/test_dashboard_layout_browser.py``)."""

from __future__ import annotations

from searchtrace.dashboard.ui.layout import CHART_MIN, COLUMN_MIN, STYLE, key_columns_first


def test_key_columns_come_first_in_the_order_given_and_the_rest_keep_theirs():
    columns = ["name", "created_at", "dataset", "baseline", "delta", "vs baseline", "mode", "ndcg@10", "run_id"]
    assert key_columns_first(columns, "name", "ndcg@10", "delta", "vs baseline") == [
        "name", "ndcg@10", "delta", "vs baseline", "created_at", "dataset", "baseline", "mode", "run_id"]


def test_a_key_column_the_table_lacks_is_skipped_and_no_column_is_lost_or_doubled():
    assert key_columns_first(["a", "b", "c"], "c", "missing", "a") == ["c", "a", "b"]
    assert key_columns_first(["a", "b"]) == ["a", "b"]


def test_the_style_wraps_rows_of_columns_at_the_minimum_widths():
    assert STYLE.startswith("<style>") and STYLE.endswith("</style>")
    assert "[data-testid=stHorizontalBlock] { flex-wrap: wrap;" in STYLE
    assert f"min-width: min(100%, {COLUMN_MIN});" in STYLE
    assert f"min-width: min(100%, {CHART_MIN}px);" in STYLE
