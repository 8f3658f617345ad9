"""The Traces page's filter bar."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from searchtrace.dashboard.data import KINDS
from searchtrace.dashboard.ui import context
from searchtrace.dashboard.ui.url_state import url_number_input, url_selectbox, url_text_input
from searchtrace.names import Band
from searchtrace.traces import TraceFilter, TraceKind

__all__ = ["PARAMS", "SOURCES", "trace_filters"]

ANY = "any"
TRISTATE = {ANY: None, "yes": True, "no": False}
DEGRADED = {ANY: None, "any stage": True, "none": False, "dense": "dense", "keyword": "keyword",
            "graph": "graph"}
STATUS = {ANY: None, "errors only": True, "no errors": False}
SOURCES = ("http", "mcp", "cli", "eval", "python")  # values of searchtrace.source


#: The URL parameter of each filter, in the order the bar shows them (``context.restore`` takes them).
PARAMS = ("kind", "mode", "band", "confident", "degraded", "source", "status", "latency", "run", "text", "doc",
          "rows", "attr", "value")


def trace_filters(runs: pd.DataFrame) -> TraceFilter:
    """The filter widgets, each held in the URL (:data:`PARAMS`); returns the filter
    :func:`dashboard.data.list_traces` takes, its limit the rows asked for."""
    row = st.columns(6)
    kind = url_selectbox(row[0], "Kind", list(KINDS), key="tf-kind", param="kind",
                         help="a model load or a request that ran no search is not a search")
    mode = url_selectbox(row[1], "Mode", [ANY, "fast", "graph"], key="tf-mode", param="mode")
    band = url_selectbox(row[2], "Band", [ANY, *(b.value for b in Band)], key="tf-band", param="band")
    no_confident = url_selectbox(row[3], "noConfidentResults", list(TRISTATE), key="tf-noconf", param="confident")
    degraded = url_selectbox(row[4], "Degraded", list(DEGRADED), key="tf-degraded", param="degraded")
    source = url_selectbox(row[5], "Source", [ANY, *SOURCES], key="tf-source", param="source")
    first, *rest = st.columns(6)
    status = url_selectbox(first, "Status", list(STATUS), key="tf-status", param="status",
                           help="errors: the root span ended in error")
    min_latency = url_number_input(rest[0], "Latency at least (ms)", key="tf-lat", param="latency", default=0.0,
                                   min_value=0.0, step=10.0)
    run_ids = [ANY, *runs["run_id"].tolist()] if not runs.empty else [ANY]
    names = context.run_names(runs) if not runs.empty else {}
    run_id = url_selectbox(rest[1], "Run", run_ids, key="tf-run", param="run", format_func=lambda r: names.get(r, r))
    text = url_text_input(rest[2], "Query text contains", key="tf-text", param="text")
    doc_id = url_text_input(rest[3], "Document id", key="tf-doc", param="doc",
                            help="traces where any stage had this document")
    limit = url_number_input(rest[4], "Rows", key="tf-limit", param="rows", default=200, min_value=10,
                             max_value=5000, step=50)
    attr = st.query_params.get("attr")
    with st.expander("Filter by any attribute", expanded=bool(attr)):
        left, right = st.columns(2)
        key = url_text_input(left, "Attribute key", key="tf-attr-key", param="attr",
                             placeholder="searchtrace.fusion.method")
        value = url_text_input(right, "Value contains", key="tf-attr-value", param="value")
    kind_value = KINDS[kind]
    return TraceFilter(kind=TraceKind(kind_value) if kind_value else None, errors=STATUS[status],
                       mode=None if mode == ANY else mode, band=None if band == ANY else band,
                       no_confident=TRISTATE[no_confident], degraded=DEGRADED[degraded],
                       min_latency_ms=min_latency or None, run_id=None if run_id == ANY else run_id,
                       query_text=text.strip() or None, sources=() if source == ANY else (source,),
                       doc_id=doc_id.strip() or None,
                       attribute=(key.strip(), value.strip()) if key.strip() else None, limit=int(limit))
