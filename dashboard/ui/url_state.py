"""Widgets whose value lives in the URL: a link, a reload or Back reopens what was shown.

Streamlit keeps a keyed widget's value in the session, where the URL cannot
reach it. Here the URL parameter is the source of truth: before the widget is
drawn its session value is set from the URL (a value the options lack falls back
to the default), and a change by the user is written to the URL by the widget's
``on_change`` callback, which runs before the page's script does. A default
value leaves the parameter out, so plain links stay short.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

__all__ = ["url_multiselect", "url_selectbox"]


def _write(param: str, value: object, default: object) -> None:
    if value == default or value is None or value == []:
        if param in st.query_params:
            del st.query_params[param]
    elif isinstance(value, list):
        st.query_params[param] = [str(v) for v in value]
    else:
        st.query_params[param] = str(value)


def url_selectbox(container: Any, label: str, options: Sequence[str], *, key: str, param: str,
                  default: str | None = None, format_func: Callable[[Any], str] = str, **kwargs: Any) -> str:
    """A selectbox on ``container`` (``st`` or a column) showing the URL's ``param``; the value chosen."""
    options = list(options)
    fallback = default if default in options else (options[0] if options else None)
    wanted = st.query_params.get(param)
    value = wanted if wanted in options else fallback
    if st.session_state.get(key) != value:
        st.session_state[key] = value
    return container.selectbox(label, options, key=key, format_func=format_func,
                               on_change=lambda: _write(param, st.session_state[key], fallback), **kwargs)


def url_multiselect(container: Any, label: str, options: Sequence[str], *, key: str, param: str,
                    **kwargs: Any) -> list[str]:
    """A multiselect on ``container`` showing the URL's ``param`` values (those among ``options``)."""
    options = list(options)
    value = [v for v in st.query_params.get_all(param) if v in options]
    if st.session_state.get(key) != value:
        st.session_state[key] = value
    return list(container.multiselect(label, options, key=key,
                                      on_change=lambda: _write(param, list(st.session_state[key]), []), **kwargs))
