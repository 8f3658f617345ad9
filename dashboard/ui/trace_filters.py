"""The Traces page's filter bar."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pandas as pd
import streamlit as st

from searchtrace.dashboard.data import KINDS, PRESETS, TIME_RANGES, range_start
from searchtrace.dashboard.ui import context
from searchtrace.dashboard.ui.url_state import url_number_input, url_selectbox, url_text_input
from searchtrace.names import Band
from searchtrace.traces import TraceFilter, TraceKind, TraceOrder
from searchtrace.traces import vocabulary as v

__all__ = ["PARAMS", "SOURCES", "trace_filters"]

ANY = "any"
TRISTATE = {ANY: None, "yes": True, "no": False}
DEGRADED = {ANY: None, "any stage": True, "none": False, "dense": "dense", "keyword": "keyword",
            "graph": "graph"}
STATUS = {ANY: None, "errors only": True, "no errors": False, "failed in any way": "failed",
          "not failed": "not failed"}
SOURCES = tuple(s.value for s in v.Source)  # values of searchtrace.source
CUSTOM = "custom"  # no preset: the widgets' filter as set
ORDERS = {"newest first": TraceOrder.NEWEST, "oldest first": TraceOrder.OLDEST,
          "slowest first": TraceOrder.SLOWEST, "fastest first": TraceOrder.FASTEST}


#: The URL parameter of each filter, in the order the bar shows them (``context.restore`` takes them).
PARAMS = ("preset", "time", "order", "rows", "kind", "mode", "band", "confident", "degraded", "source", "status",
          "latency", "run", "text", "doc", "service", "attr", "value")


def trace_filters(runs: pd.DataFrame) -> TraceFilter:
    """The filter widgets, each held in the URL (:data:`PARAMS`); returns the filter
    :func:`dashboard.data.list_traces` takes, its limit the rows asked for. A preset sets the source, the kind
    and the failure filter in place of those widgets (which it disables)."""
    top = st.columns(4)
    preset = url_selectbox(top[0], "Preset", [CUSTOM, *PRESETS], key="tf-preset", param="preset",
                           help="; ".join(f"{p.name}: {p.about}" for p in PRESETS.values()))
    when = url_selectbox(top[1], "Time range", list(TIME_RANGES), key="tf-time", param="time",
                         help="traces that started this long ago or since (UTC)")
    order = url_selectbox(top[2], "Order", list(ORDERS), key="tf-order", param="order",
                          help="sorted by the store over every matching trace, not only the rows shown")
    limit = url_number_input(top[3], "Rows", key="tf-limit", param="rows", default=200, min_value=10,
                             max_value=5000, step=50)
    flt = _widgets(runs, preset == CUSTOM)
    flt = replace(flt, since=range_start(when, datetime.now().astimezone()), order=ORDERS[order], limit=int(limit))
    return flt if preset == CUSTOM else PRESETS[preset].apply(flt)


def _widgets(runs: pd.DataFrame, custom: bool) -> TraceFilter:
    """The filter the other widgets make (the source, kind and status ones only when no preset replaces them)."""
    row = st.columns(6)
    kind = url_selectbox(row[0], "Kind", list(KINDS), key="tf-kind", param="kind", disabled=not custom,
                         help="a model load or a request that ran no search is not a search (a preset sets it)")
    mode = url_selectbox(row[1], "Mode", [ANY, "fast", "graph"], key="tf-mode", param="mode")
    band = url_selectbox(row[2], "Band", [ANY, *(b.value for b in Band)], key="tf-band", param="band")
    no_confident = url_selectbox(row[3], "noConfidentResults", list(TRISTATE), key="tf-noconf", param="confident")
    degraded = url_selectbox(row[4], "Degraded", list(DEGRADED), key="tf-degraded", param="degraded")
    source = url_selectbox(row[5], "Source", [ANY, *SOURCES], key="tf-source", param="source", disabled=not custom,
                           help="the surface that called (a preset sets it)")
    first, *rest = st.columns(6)
    status = url_selectbox(first, "Status", list(STATUS), key="tf-status", param="status", disabled=not custom,
                           help="errors: the root span ended in error; failed in any way: that, an error code, "
                                "or an HTTP status of 400 or more")
    min_latency = url_number_input(rest[0], "Latency at least (ms)", key="tf-lat", param="latency", default=0.0,
                                   min_value=0.0, step=10.0)
    run_ids = [ANY, *runs["run_id"].tolist()] if not runs.empty else [ANY]
    names = context.run_names(runs) if not runs.empty else {}
    run_id = url_selectbox(rest[1], "Run", run_ids, key="tf-run", param="run", format_func=lambda r: names.get(r, r))
    text = url_text_input(rest[2], "Query text contains", key="tf-text", param="text")
    doc_id = url_text_input(rest[3], "Document id", key="tf-doc", param="doc",
                            help="traces where any stage had this document")
    service = url_text_input(rest[4], "Service", key="tf-service", param="service",
                             help="the resource's service.name: ours, or another retriever's")
    attr = st.query_params.get("attr")
    with st.expander("Filter by any attribute", expanded=bool(attr)):
        left, right = st.columns(2)
        key = url_text_input(left, "Attribute key", key="tf-attr-key", param="attr",
                             placeholder="searchtrace.fusion.method")
        value = url_text_input(right, "Value contains", key="tf-attr-value", param="value")
    kind_value = KINDS[kind]
    state = STATUS[status]
    errors, failed = (state, None) if not isinstance(state, str) else (None, state == "failed")
    return TraceFilter(kind=TraceKind(kind_value) if kind_value else None, errors=errors, failed=failed,
                       service=service.strip() or None,
                       mode=None if mode == ANY else mode, band=None if band == ANY else band,
                       no_confident=TRISTATE[no_confident], degraded=DEGRADED[degraded],
                       min_latency_ms=min_latency or None, run_id=None if run_id == ANY else run_id,
                       query_text=text.strip() or None, sources=() if source == ANY else (source,),
                       doc_id=doc_id.strip() or None,
                       attribute=(key.strip(), value.strip()) if key.strip() else None)
