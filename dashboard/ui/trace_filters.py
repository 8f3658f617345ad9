"""The Traces page's filter bar."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from searchtrace.dashboard.ui import context
from searchtrace.names import Band

__all__ = ["trace_filters"]

ANY = "any"
TRISTATE = {ANY: None, "yes": True, "no": False}
DEGRADED = {ANY: None, "any stage": True, "none": False, "dense": "dense", "keyword": "keyword",
            "graph": "graph"}


def trace_filters(runs: pd.DataFrame) -> tuple[dict[str, Any], int]:
    """The filter widgets; returns :func:`dashboard.data.list_traces` keyword arguments and the row limit."""
    row = st.columns(4)
    mode = row[0].selectbox("Mode", [ANY, "fast", "graph"], key="tf-mode")
    band = row[1].selectbox("Band", [ANY, *(b.value for b in Band)], key="tf-band")
    no_confident = row[2].selectbox("noConfidentResults", list(TRISTATE), key="tf-noconf")
    degraded = row[3].selectbox("Degraded", list(DEGRADED), key="tf-degraded")
    row = st.columns(4)
    min_latency = row[0].number_input("Latency at least (ms)", min_value=0.0, value=0.0, step=10.0, key="tf-lat")
    run_ids = [ANY, *runs["run_id"].tolist()] if not runs.empty else [ANY]
    wanted = context.param("run")
    run_id = row[1].selectbox("Run", run_ids, index=run_ids.index(wanted) if wanted in run_ids else 0, key="tf-run")
    text = row[2].text_input("Query text contains", key="tf-text")
    limit = row[3].number_input("Rows", min_value=10, max_value=5000, value=200, step=50, key="tf-limit")
    filters = {"mode": None if mode == ANY else mode, "band": None if band == ANY else band,
               "no_confident": TRISTATE[no_confident], "degraded": DEGRADED[degraded],
               "min_latency_ms": min_latency or None, "run_id": None if run_id == ANY else run_id,
               "query_text": text.strip() or None}
    return filters, int(limit)
