"""The Latency page's served-traffic view: lays out a :class:`dashboard.data.Traffic` over a chosen window."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import streamlit as st

from searchtrace.dashboard.data import WINDOWS, since_for
from searchtrace.dashboard.data.traffic import ALL, BY, LIVE_SOURCES, REQUEST, STAGE_SAMPLE, TRAFFIC_LIMIT
from searchtrace.dashboard.ui import cached, charts
from searchtrace.dashboard.ui.text import MS_FORMAT, show_table
from searchtrace.dashboard.ui.url_state import drop_params, url_date_range, url_segmented, url_selectbox

__all__ = ["TRAFFIC_PARAMS", "show_traffic"]

TRAFFIC_PARAMS = ("window", "dates", "source", "by")  # what the view keeps in the URL

DATES = "dates"  # the window picker's choice of a date range
MS_COLUMNS = ("p50", "p95", "p99")


def _window() -> tuple[int | None, int | None, str]:
    """The window picker: (since, until) in epoch ns and how to say it."""
    left, right = st.columns([1, 2])
    options = [*WINDOWS, DATES]
    choice = url_selectbox(left, "Window", options, key="latency-window", param="window", default=options[1])
    if choice != DATES:
        drop_params("dates")
        return since_for(WINDOWS[choice]), None, choice
    today = datetime.now(UTC).date()
    first, last = url_date_range(right, "Dates (UTC)", key="latency-dates", param="dates",
                                 default=(today - timedelta(days=7), today))
    since = datetime.combine(first, time(), UTC)
    until = datetime.combine(last, time(), UTC) + timedelta(days=1)
    return int(since.timestamp()) * 10**9, int(until.timestamp()) * 10**9, f"{first} to {last}"


def _ms_columns() -> dict[str, Any]:
    """Milliseconds and counts, each with its unit."""
    counts = {c: st.column_config.NumberColumn(c, format=f"%d {unit}") for c, unit in
              (("requests", "req"), ("n", "traces"), ("errors", "err"), ("429", "req"), ("504", "req"))}
    return {**counts, **{c: st.column_config.NumberColumn(c, format=MS_FORMAT) for c in MS_COLUMNS}}


def show_traffic(home: Path) -> None:
    """Live traffic (every source but eval runs) in a window: per source, per minute and per stage."""
    since, until, said = _window()
    seen = cached.traffic(home, since, until)
    if seen.requests.empty:
        st.info(f"No live traffic ({', '.join(LIVE_SOURCES)}) in this window ({said}). Eval runs are in the "
                "other view; a search records its source from this version on.")
        return
    more = f"; the window holds more, so these are its newest {TRAFFIC_LIMIT:,}" if seen.truncated else ""
    st.caption(f"{len(seen.requests):,} requests and searches, {said}{more}. A request's time is its root span's "
               "(the server span when served). 429: refused, every search slot taken; 504: timed out.")
    st.subheader("Per source")
    show_table(st, seen.by_source, hide_index=True, key="latency-traffic-sources", column_config=_ms_columns())
    st.altair_chart(charts.requests_per_minute(seen.per_minute, seen.bucket_min), width="stretch")
    st.subheader("Latency over time")
    by = url_segmented(st, "Per", list(BY), key="latency-traffic-by", param="by", default=BY[0],
                       help="service: the resource's service.name, another retriever's included")
    st.altair_chart(charts.latency_over_time(seen.over_time[seen.over_time["by"] == by], seen.bucket_min),
                    width="stretch")
    st.subheader("Per stage")
    sources = [s for s in dict.fromkeys(seen.stages["source"])]
    source = url_selectbox(st, "Source", sources, key="latency-traffic-source", param="source", default=ALL)
    table = seen.stages[seen.stages["source"] == source].drop(columns="source")
    st.caption(f"The newest {seen.stage_traces:,} traces' spans (at most {STAGE_SAMPLE:,}); `{REQUEST}` is the "
               "whole request.")
    show_table(st, table, hide_index=True, key="latency-traffic-stages", height=38 + 35 * len(table),
                 column_config=_ms_columns())
