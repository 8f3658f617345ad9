"""Widgets whose value lives in the URL: a link, a reload or Back reopens what was shown.

Streamlit keeps a keyed widget's value in the session, where the URL cannot
reach it. Here the URL parameter is the source of truth: before the widget is
drawn its session value is set from the URL, and a change by the user is
written to the URL by the widget's ``on_change`` callback, which runs before the
page's script does. A default value leaves the parameter out, so plain links
stay short. A URL value the widget cannot show (an option it lacks, a number out
of range, a date that is none) gets a one-line notice and is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

import streamlit as st

from searchtrace.dashboard.ui.text import md

__all__ = ["OWN_WRITE", "drop_params", "url_date_range", "url_multiselect", "url_number_input", "url_segmented", "url_selectbox",
           "url_text_input", "seed", "write_param"]

#: Session flag: the URL was just written by one of the page's own widgets (``context.restore`` follows it).
OWN_WRITE = "url-own-write"
RANGE = ".."  # between a date range's two dates in the URL


def write_param(param: str, value: object, default: object = None) -> None:
    """Set the URL's ``param`` to ``value`` (its text; a list: one parameter per item), or drop it for the
    default, None or an empty list; marks the URL as written by the page itself."""
    st.session_state[OWN_WRITE] = True
    if value == default or value is None or value == [] or value == "":
        if param in st.query_params:
            del st.query_params[param]
    elif isinstance(value, list):
        st.query_params[param] = [str(v) for v in value]
    else:
        st.query_params[param] = str(value)


def drop_params(*params: str) -> None:
    """Drop ``params`` from the URL (those of a part of the page not shown)."""
    for param in params:
        if param in st.query_params:
            del st.query_params[param]


def _refuse(label: str, value: object, param: str, shown: object) -> None:
    st.info(f"{md(label)}: {md(value, 80)} (the link's {md(param)}) is not a choice here; {md(shown)} is shown.")
    del st.query_params[param]


def seed(key: str, value: object) -> None:
    """Set the widget ``key``'s value to ``value`` before it is drawn (the URL's, for a widget of one's own)."""
    if st.session_state.get(key) != value:
        st.session_state[key] = value


def url_selectbox(container: Any, label: str, options: Sequence[str], *, key: str, param: str,
                  default: str | None = None, format_func: Callable[[Any], str] = str, **kwargs: Any) -> str:
    """A selectbox on ``container`` (``st`` or a column) showing the URL's ``param``; the value chosen."""
    options = list(options)
    fallback = default if default in options else (options[0] if options else None)
    wanted = st.query_params.get(param)
    if wanted is not None and wanted not in options:
        _refuse(label, wanted, param, "nothing" if fallback is None else format_func(fallback))
    seed(key, wanted if wanted in options else fallback)
    return container.selectbox(label, options, key=key, format_func=format_func,
                               on_change=lambda: write_param(param, st.session_state[key], fallback), **kwargs)


def url_segmented(container: Any, label: str, options: Sequence[str], *, key: str, param: str, default: str,
                  **kwargs: Any) -> str:
    """A segmented control showing the URL's ``param`` (``default`` when none, or when the user unselects)."""
    options = list(options)
    wanted = st.query_params.get(param)
    if wanted is not None and wanted not in options:
        _refuse(label, wanted, param, default)
    seed(key, wanted if wanted in options else default)
    chosen = container.segmented_control(label, options, key=key, **kwargs,
                                         on_change=lambda: write_param(param, st.session_state[key], default))
    return str(chosen or default)


def url_multiselect(container: Any, label: str, options: Sequence[str], *, key: str, param: str,
                    default: Sequence[str] = (), **kwargs: Any) -> list[str]:
    """A multiselect on ``container`` showing the URL's ``param`` values (those among ``options``); without
    the parameter, ``default`` (so emptying a multiselect with a default brings the default back)."""
    options = list(options)
    fallback = [v for v in default if v in options]
    wanted = st.query_params.get_all(param)
    value = [v for v in wanted if v in options] if wanted else fallback
    if len(value) < len(wanted):
        lacking = [v for v in wanted if v not in options]
        _refuse(label, ", ".join(lacking), param, ", ".join(value) or "none")
        if value:
            st.query_params[param] = value
        else:
            value = fallback
    seed(key, value)
    return list(container.multiselect(label, options, key=key, **kwargs,
                                      on_change=lambda: write_param(param, list(st.session_state[key]), fallback)))


def url_text_input(container: Any, label: str, *, key: str, param: str, **kwargs: Any) -> str:
    """A text input showing the URL's ``param`` (empty when none)."""
    seed(key, st.query_params.get(param) or "")
    return str(container.text_input(label, key=key, on_change=lambda: write_param(param, st.session_state[key]),
                                    **kwargs))


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def url_number_input(container: Any, label: str, *, key: str, param: str, default: int | float,
                     min_value: int | float, max_value: int | float | None = None, **kwargs: Any) -> int | float:
    """A number input showing the URL's ``param`` (``default`` when none); ints when ``default`` is one."""
    kind = type(default)
    value = default
    raw = st.query_params.get(param)
    if raw is not None:
        try:
            parsed = kind(raw)
            if parsed < min_value or (max_value is not None and parsed > max_value):
                raise ValueError(raw)
            value = parsed
        except ValueError:
            _refuse(label, raw, param, _number_text(default))
    seed(key, value)
    return kind(container.number_input(label, min_value=min_value, max_value=max_value, key=key, **kwargs,
                                       on_change=lambda: write_param(param, _number_text(st.session_state[key]),
                                                                     _number_text(default))))


def _dates(raw: str) -> tuple[date, date]:
    first, sep, last = raw.partition(RANGE)
    days = (date.fromisoformat(first), date.fromisoformat(last if sep else first))
    if days[1] < days[0]:
        raise ValueError(raw)
    return days


def url_date_range(container: Any, label: str, *, key: str, param: str, default: tuple[date, date],
                   **kwargs: Any) -> tuple[date, date]:
    """A date range input showing the URL's ``param`` (``2026-01-01..2026-01-07``); the range chosen (one day
    twice while the user has picked only the first)."""
    value = default
    raw = st.query_params.get(param)
    if raw is not None:
        try:
            value = _dates(raw)
        except ValueError:
            _refuse(label, raw, param, f"{default[0]} to {default[1]}")

    def changed() -> None:
        days = [d for d in st.session_state[key] if isinstance(d, date)]
        if len(days) == 2:  # a range being picked (one date) keeps the URL's until it is whole
            write_param(param, f"{days[0]}{RANGE}{days[1]}", f"{default[0]}{RANGE}{default[1]}")

    seed(key, value)
    picked = container.date_input(label, key=key, on_change=changed, **kwargs)
    days = [d for d in (picked if isinstance(picked, tuple) else (picked,)) if isinstance(d, date)]
    return (days[0], days[-1]) if days else value
