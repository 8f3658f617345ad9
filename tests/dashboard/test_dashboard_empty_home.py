"""Every dashboard page on a home with no runs and no traces: a message, never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
PAGES = [("views/runs.py", "Runs"), ("views/compare.py", "Compare"), ("views/query.py", "Query"),
         ("views/traces.py", "Traces"), ("views/calibration.py", "Calibration"), ("views/latency.py", "Latency"),
         ("views/judge.py", "Judge"), ("views/implicit.py", "Implicit judgments")]


@pytest.mark.parametrize(("script", "heading"), PAGES)
def test_page_on_an_empty_home(script, heading, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.switch_page(script).run()
    assert not at.exception, [e.message for e in at.exception]
    assert [t.value for t in at.title] == [heading]
    assert at.info or at.caption  # says there is nothing yet
    assert not (tmp_path / "traces.sqlite").exists()
