"""The Traces page's filter bar."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from searchtrace.dashboard.data import KINDS
from searchtrace.dashboard.ui import context
from searchtrace.names import Band

__all__ = ["SOURCES", "trace_filters"]

ANY = "any"
TRISTATE = {ANY: None, "yes": True, "no": False}
DEGRADED = {ANY: None, "any stage": True, "none": False, "dense": "dense", "keyword": "keyword",
            "graph": "graph"}
STATUS = {ANY: None, "errors only": True, "no errors": False}
SOURCES = ("http", "mcp", "cli", "eval", "python")  # values of searchtrace.source


def trace_filters(runs: pd.DataFrame) -> tuple[dict[str, Any], int]:
    """The filter widgets; returns :func:`dashboard.data.list_traces` keyword arguments and the row limit."""
    row = st.columns(6)
    kind = row[0].selectbox("Kind", list(KINDS), key="tf-kind",
                            help="a model load or a request that ran no search is not a search")
    mode = row[1].selectbox("Mode", [ANY, "fast", "graph"], key="tf-mode")
    band = row[2].selectbox("Band", [ANY, *(b.value for b in Band)], key="tf-band")
    no_confident = row[3].selectbox("noConfidentResults", list(TRISTATE), key="tf-noconf")
    degraded = row[4].selectbox("Degraded", list(DEGRADED), key="tf-degraded")
    source = row[5].selectbox("Source", [ANY, *SOURCES], key="tf-source")
    first, *rest = st.columns(6)
    status = first.selectbox("Status", list(STATUS), key="tf-status", help="errors: the root span ended in error")
    min_latency = rest[0].number_input("Latency at least (ms)", min_value=0.0, value=0.0, step=10.0, key="tf-lat")
    run_ids = [ANY, *runs["run_id"].tolist()] if not runs.empty else [ANY]
    names = context.run_names(runs) if not runs.empty else {}
    wanted = context.param("run")
    run_id = rest[1].selectbox("Run", run_ids, index=run_ids.index(wanted) if wanted in run_ids else 0, key="tf-run",
                               format_func=lambda r: names.get(r, r))
    text = rest[2].text_input("Query text contains", key="tf-text")
    doc_id = rest[3].text_input("Document id", key="tf-doc", help="traces where any stage had this document")
    limit = rest[4].number_input("Rows", min_value=10, max_value=5000, value=200, step=50, key="tf-limit")
    with st.expander("Filter by any attribute"):
        left, right = st.columns(2)
        key = left.text_input("Attribute key", key="tf-attr-key", placeholder="searchtrace.fusion.method")
        value = right.text_input("Value contains", key="tf-attr-value")
    filters = {"kind": KINDS[kind], "errors": STATUS[status],
               "mode": None if mode == ANY else mode, "band": None if band == ANY else band,
               "no_confident": TRISTATE[no_confident], "degraded": DEGRADED[degraded],
               "min_latency_ms": min_latency or None, "run_id": None if run_id == ANY else run_id,
               "query_text": text.strip() or None, "source": None if source == ANY else source,
               "doc_id": doc_id.strip() or None,
               "attribute": (key.strip(), value.strip()) if key.strip() else None}
    return filters, int(limit)
