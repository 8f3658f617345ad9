"""The dashboard's shared layout: every page reads from 800 to 1,600 pixels wide.

Streamlit shrinks a row of columns to fit, however narrow: at 800 pixels a row
of six filters leaves each one 60 pixels, so a select shows "sea" and a label
breaks as "Docum ent id", and a chart in half a row loses its bars. The rules
here let a row of columns wrap instead: a column is never narrower than a
label reads at (:data:`COLUMN_MIN`), nor one holding a chart or a table than
:data:`CHART_MIN`, so at 800 pixels the filters take two rows and a chart its
own. Below :data:`NARROW` the sidebar is narrower, which leaves the page the
room it needs. Labels, buttons and tabs break between words only: a button's label wraps
rather than ending in an ellipsis.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CHART_MIN", "COLUMN_MIN", "NARROW", "SIDEBAR_NARROW", "STYLE", "apply_layout", "key_columns_first"]

COLUMN_MIN = "10rem"  #: a column of filters or buttons: a label of two short words and a select's value
CHART_MIN = 300  #: px: a column holding a chart or a table
NARROW = 1200  #: px: below this viewport width the sidebar takes :data:`SIDEBAR_NARROW`
SIDEBAR_NARROW = "12.5rem"

# A column's own flex basis is a share of the row; min-width makes it wrap instead of shrinking.
STYLE = f"""<style>
[data-testid=stHorizontalBlock] {{ flex-wrap: wrap; row-gap: 0.5rem; }}
[data-testid=stColumn] {{ min-width: min(100%, {COLUMN_MIN}); }}
[data-testid=stColumn]:has([data-testid=stVegaLiteChart], [data-testid=stDataFrame]) {{
  min-width: min(100%, {CHART_MIN}px); }}
[data-testid=stWidgetLabel] p, [data-testid=stWidgetLabel] div, button p, [role=tab] p,
[data-testid=stMetricLabel] p, h1, h2, h3 {{
  word-break: normal; overflow-wrap: normal; hyphens: manual; }}
button [data-testid=stMarkdownContainer], button [data-testid=stMarkdownContainer] p {{
  white-space: normal; overflow: visible; text-overflow: clip; }}
@media (max-width: {NARROW - 1}px) {{
  section[data-testid=stSidebar] {{ width: {SIDEBAR_NARROW} !important; min-width: {SIDEBAR_NARROW} !important; }}
}}
</style>"""


def apply_layout() -> None:
    """Add :data:`STYLE` to the page (a style-only ``st.html`` takes no room on it)."""
    import streamlit as st

    st.html(STYLE)


def key_columns_first(columns: Iterable[str], *key: str) -> list[str]:
    """A table's column order with its ``key`` columns first (those it has, in the order given), then the
    rest in their order: the name, the first metric and the delta stay on screen at 800 pixels."""
    columns = [str(c) for c in columns]
    first = [c for c in key if c in columns]
    return first + [c for c in columns if c not in first]
