"""Row picks held by identity: a table's picked row is its id, kept in the URL, never a row position.

A Streamlit dataframe reports its selection as row positions, and keeps that
selection when its rows change: after a filter, position 3 is another run, or
past the end. So the table's widget key carries a digest of the ids it shows
(new rows, a new widget with no stale selection), the pick is read back as an
id at once and written to the URL, and a redrawn table starts with the picked id
selected again wherever it now stands. A pick the current rows no longer show
is cleared, and the page says so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from searchtrace.dashboard.ui.text import md, show_table
from searchtrace.dashboard.ui.url_state import write_param

__all__ = ["pick_row", "table_key"]


def table_key(key: str, ids: Sequence[str]) -> str:
    """The widget key of the table ``key`` showing rows ``ids`` (in order)."""
    return f"{key}-{hashlib.sha1(chr(10).join(ids).encode()).hexdigest()[:12]}"


def _rows(state: object) -> list[int]:
    try:
        return list(state["selection"]["rows"])  # type: ignore[index]
    except (KeyError, TypeError):
        return []


def pick_row(table: pd.DataFrame, ids: Sequence[str], *, key: str, param: str, what: str,
             keep_unlisted: bool = False, notice: bool = True, **dataframe: Any) -> str | None:
    """Show ``table`` (one row per id of ``ids``, in order) with single-row selection; the picked id, or None.

    The pick lives in the URL parameter ``param``, the source of truth: a link, a reload or Back reopens it,
    and the table's selection is set from it before the table is drawn. A click writes the URL in the
    table's callback, before the page's script runs again. A pick that ``ids`` does not hold (a filter hid
    it, or the link names an id that does not exist) is cleared with a one-line notice naming it as a
    ``what`` (none without ``notice``: a span of another trace, say). With ``keep_unlisted``, a pick the
    table never showed (a link to a trace the list's filters or row limit leave out) is kept and returned;
    one the table showed and a filter then hid is still cleared.
    """
    ids = [str(i) for i in ids]
    widget = table_key(key, ids)
    wanted = st.query_params.get(param) or None
    shown_before = st.session_state.get(f"{key}-listed") == wanted
    if wanted is not None and wanted not in ids and not (keep_unlisted and not shown_before):
        if notice:
            st.info(f"The picked {what} {md(wanted)} is not among the rows shown (a filter hides it, or it does "
                    "not exist): the pick is cleared.")
        del st.query_params[param]
        wanted = None
    st.session_state[f"{key}-listed"] = wanted if wanted in ids else None
    target = [ids.index(wanted)] if wanted in ids else []
    if _rows(st.session_state.get(widget)) != target:
        st.session_state[widget] = {"selection": {"rows": target, "columns": []}}

    def picked() -> None:
        rows = [r for r in _rows(st.session_state.get(widget)) if 0 <= r < len(ids)]
        write_param(param, ids[rows[0]] if rows else None)

    show_table(st, table, key=widget, on_select=picked, selection_mode="single-row", **dataframe)
    return wanted
