"""No table of the dashboard reads "None" or "nan" for a missing value: every page, through AppTest, on homes
with missing values (runs without tags or notes, the first run of a dataset, a model load's trace, a refused
request, a rank-only run, a judge's pair without a note, implicit pairs without a human label)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app.py"
MISSING = {"None", "nan", "NaN", "<NA>", "NaT", "null"}


def shown_cells(element) -> list[str]:
    """What a table's cells read in the browser: a missing value reads as the table's placeholder ("None"
    without one), any other as the pandas Styler's display text when styled, else as its text."""
    from streamlit import dataframe_util

    proto = element.proto
    data = element.value
    placeholder = proto.placeholder if proto.HasField("placeholder") else "None"
    styled = proto.arrow_data.styler.display_values
    display = dataframe_util.convert_arrow_bytes_to_pandas_df(styled) if styled else None
    out = []
    for i in range(len(data)):
        for j in range(data.shape[1]):
            value = data.iat[i, j]
            if pd.api.types.is_scalar(value) and pd.isna(value):
                out.append(placeholder)
            elif display is not None:
                out.append(str(display.iat[i, j]))
            else:
                out.append(str(value))
    return out


def assert_no_none(at, what: str) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert at.dataframe, f"{what}: no table shown"
    for element in at.dataframe:
        bad = sorted({c for c in shown_cells(element) if c.strip() in MISSING})
        assert not bad, f"{what}: table {element.key or element.proto.id[-30:]} shows {bad}"


def _open(at, script: str, **params: str):
    at.query_params.clear()
    at.query_params.update(params)
    return at.switch_page(script).run()


@pytest.fixture
def app(mixed_home, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(mixed_home))
    return AppTest.from_file(str(APP), default_timeout=120).run()


def test_shown_cells_reads_a_missing_value_as_the_placeholder():
    from streamlit.testing.v1 import AppTest

    script = ("import streamlit as st\nimport pandas as pd\n"
              "frame = pd.DataFrame({'a': ['x', None], 'b': [1.5, float('nan')]})\n"
              "st.dataframe(frame, key='plain')\n"
              "st.dataframe(frame.style.format({'b': '{:.2f}'}), key='styled', placeholder='')\n")
    at = AppTest.from_string(script).run()
    assert shown_cells(at.dataframe[0]) == ["x", "1.5", "None", "None"]
    assert shown_cells(at.dataframe[1]) == ["x", "1.50", "", ""]


def test_every_table_goes_through_the_blank_placeholder():
    """A table drawn with st.dataframe directly would show "None": only ``text.show_table`` draws them."""
    calls = {str(p.relative_to(ROOT)): n for p in (ROOT / "dashboard").rglob("*.py")
             if (n := len(re.findall(r"\.dataframe\(|\.table\(|data_editor\(", p.read_text(encoding="utf-8"))))}
    assert calls == {"dashboard/ui/text.py": 1}


@pytest.mark.parametrize("script, params", [
    ("views/runs.py", {}),
    ("views/compare.py", {}),
    ("views/query.py", {}),
    ("views/calibration.py", {"run": "sample-graph-20250104T090000-nodense"}),
    ("views/latency.py", {}),
    ("views/latency.py", {"view": "served traffic", "window": "all"}),
])
def test_run_pages_show_no_none(app, script, params):
    at = _open(app, script, **params)
    assert_no_none(at, f"{script} {params}")


@pytest.mark.parametrize("which", ["load", "failed", "served", "refused", "docs"])
def test_traces_page_shows_no_none(app, live_home, which):
    at = _open(app, "views/traces.py", kind="all", trace=live_home[which])
    assert_no_none(at, f"traces {which}")
    listed = at.dataframe[0].value
    assert live_home[which] in set(listed["trace_id"])  # the list holds rows of every kind, with gaps


def test_judge_disagreements_show_no_none(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest
    from test_dashboard_judge import POOL, SAMPLE, write_pool

    from searchtrace.evals import JudgingSession

    dataset = tmp_path / "mine"
    shutil.copytree(SAMPLE, dataset)
    write_pool(dataset)
    session = JudgingSession.open(dataset)
    session.record(*POOL[0], 2, "ana")  # no note
    session.record(*POOL[0], 0, "bo", note="off topic")
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("SEARCHTRACE_HOME", str(tmp_path / "home"))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at = _open(at, "views/judge.py", dataset=str(dataset), view="Disagreements")
    at.text_input(key="judge-name-input").input("cy").run()
    at.button(key="judge-name-start").click().run()
    assert_no_none(at, "judge disagreements")


def test_implicit_page_shows_no_none(served, monkeypatch):
    from streamlit.testing.v1 import AppTest

    home, dataset = served
    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at = _open(at, "views/implicit.py", dataset=str(dataset))
    assert_no_none(at, "implicit")
