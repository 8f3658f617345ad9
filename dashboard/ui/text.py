"""Strings from data or the URL shown as text, links only to the app, and the dashboard's number formats.

Streamlit renders titles, captions, alerts and ``st.markdown`` as Markdown: a
query text like ``[Click to re-login](https://x.example)`` or ``![](https://x.example/t.png)``
would become a link or an outside image. :func:`md` escapes every ASCII
punctuation character (CommonMark backslash escapes), which also stops emoji and
colour directives (``:``) and math (``$``); newlines become spaces so no block
(heading, list, quote) starts. GFM's bare-URL and e-mail autolinks are found in
the text after escapes are resolved (remark-gfm rewrites text nodes), so escaping
cannot stop them: a word joiner (U+2060, invisible) goes inside ``://`` and after ``www``
and ``@``, which breaks the patterns without changing what is shown.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from searchtrace.names import Band

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BAND_BACKGROUND", "EMPTY", "JOINER", "MEDIUM", "METRIC_FORMAT", "MS_FORMAT", "GOLD_BACKGROUND", "app_url",
           "band_style", "gold_rows", "md", "metric", "ms", "plain_heading", "show_table"]

_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_AUTOLINK = re.compile(r"(://|www|@)", re.IGNORECASE)
JOINER = "\u2060"  # word joiner: zero width, no line break
METRIC_FORMAT = "%.3f"  # metric values, relevance, scores
MS_FORMAT = "%.1f ms"  # durations in milliseconds, the unit on every figure
#: Background of a band's cells (the charts use the same hues, stronger).
BAND_BACKGROUND = dict(zip((b.value for b in Band), ("#c8e6c9", "#fff3c4", "#ffcdd2")))  # best band first
GOLD_BACKGROUND = "#fff8e1"  # a gold document's row (its rank, gold and title cells)
MEDIUM = 240  # px: a text column of medium width (titles, names)
EMPTY = ""  # what a table shows for a missing value (Streamlit's default is "None")


def md(value: object, limit: int | None = None) -> str:
    """``value`` as Markdown that shows exactly its characters (on one line, cut to ``limit``)."""
    text = " ".join(str(value).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    broken = _AUTOLINK.sub(lambda m: ":" + JOINER + "//" if m.group(1) == "://" else m.group(1) + JOINER, text)
    return _PUNCTUATION.sub(r"\\\1", broken)


def plain_heading(value: object, level: int = 3) -> str:
    """HTML for a heading showing ``value`` exactly (for ``st.html``): escaped, so no tag, link or image can
    start, and not Markdown, so nothing becomes an autolink and no word joiner is needed: copying it gives
    back the text."""
    import html

    return f"<h{level}>{html.escape(' '.join(str(value).split()))}</h{level}>"


def app_url(page: str, **params: object) -> str:
    """A relative link to one of the app's pages with URL-encoded parameters (None values left out)."""
    query = urlencode({k: str(v) for k, v in params.items() if v is not None})
    return f"{page}?{query}" if query else page


def metric(value: float | None) -> str:
    """A metric value: 3 decimals, ``n/a`` when undefined."""
    return "n/a" if value is None or value != value else f"{value:.3f}"


def ms(value: float | None) -> str:
    """A duration: ms with 1 decimal (s with 1 decimal from 10 s)."""
    if value is None or value != value:
        return "n/a"
    return f"{value / 1000:.1f} s" if value >= 10_000 else f"{value:.1f} ms"


def band_style(band: object) -> str:
    """CSS for a cell holding a band name (pandas Styler)."""
    color = BAND_BACKGROUND.get(str(band))
    return f"background-color: {color}" if color else ""


def gold_rows(data: pd.DataFrame, marked: str = "gold", cells: tuple[str, ...] = ("rank", "gold", "title")) -> Any:
    """CSS per cell (for ``Styler.apply(..., axis=None)``): ``cells`` shaded on rows whose ``marked`` column
    is not empty, so a gold document stands out among many rows."""
    import pandas as pd

    gold = data[marked].astype(str) != ""
    return pd.DataFrame({c: [f"background-color: {GOLD_BACKGROUND}" if g else "" for g in gold]
                         if c in cells else "" for c in data.columns}, index=data.index)


def show_table(container: Any, data: object, **kwargs: Any) -> Any:
    """A table: ``container``'s ``dataframe`` (``st``, a column, a container…) of ``data``, with missing
    values shown as :data:`EMPTY`: every table of the app goes through here, so none reads "None"."""
    return container.dataframe(data, placeholder=EMPTY, **kwargs)
