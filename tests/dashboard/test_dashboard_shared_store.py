"""The dashboard on the shared store: the document and attribute filters cover every trace (the store's own
filters, as on the home's file), a trace older than the newest 500 opens, and a store that cannot be used is named in the
sidebar while the home's runs still show."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from trace_fixtures import MS, T0, FakeSearch, record

pytestmark = pytest.mark.slow

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
S = 1000 * MS


@pytest.fixture
def shared_home(pg_db, tmp_path, monkeypatch):
    """An empty home on a store of 600 searches, the oldest two naming document 'needle', one asking 'Ferry'."""
    from searchtrace.dashboard.ui import cached
    from searchtrace.traces import PostgresTraceStore

    searches = [FakeSearch(start_ns=T0 + i * S, candidates=3, query="Ferry times" if i == 1 else f"hay {i}",
                           results=(("needle" if i < 2 else f"hay{i}", "high", 0.9),)) for i in range(600)]
    spans, ids = record(*searches)
    PostgresTraceStore(pg_db).write(spans)
    monkeypatch.setenv("SEARCHTRACE_HOME", str(tmp_path))
    monkeypatch.setenv("SEARCHTRACE_STORE", pg_db.url.conninfo)
    cached.st.cache_data.clear()
    return tmp_path, ids


def test_span_level_filters_cover_the_whole_shared_store(shared_home):
    from searchtrace.dashboard import data

    home, ids = shared_home
    assert data.list_traces(home, replace(data.SEARCHES, doc_id="needle"))["trace_id"].tolist() == [ids[1], ids[0]]
    assert data.list_traces(home, replace(data.SEARCHES, attribute=("input.value", "ferry")))["trace_id"].tolist() == [ids[1]]
    assert data.list_traces(home, replace(data.SEARCHES, doc_id="needle", attribute=("input.value", "FERRY")))["trace_id"].tolist() == [
        ids[1]]
    assert data.count_traces(home, replace(data.SEARCHES, doc_id="needle")) == 2
    assert len(data.list_traces(home, replace(data.SEARCHES, sources=("eval",)))) == 0 and data.count_traces(home) == 600


def test_the_traces_page_finds_an_old_trace_by_document_and_opens_it(shared_home):
    from streamlit.testing.v1 import AppTest

    home, ids = shared_home
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update({"doc": "needle", "trace": ids[0]})
    at.switch_page("views/traces.py").run()
    assert not at.exception, [e.message for e in at.exception]
    captions = [c.value for c in at.caption]
    assert any(c.startswith("2 matching traces in the whole store; the first 2 shown, newest first") for c in captions), captions
    assert any(ids[0] in c for c in captions), captions  # the picked trace's id under its heading


def test_a_store_that_cannot_be_used_is_named_and_the_homes_runs_still_show(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(tmp_path))
    monkeypatch.setenv("SEARCHTRACE_STORE", "postgresql://team:hunter2@127.0.0.1:9/none?connect_timeout=1")
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    assert not at.exception, [e.message for e in at.exception]
    warnings = [w.value for w in at.sidebar.warning]
    assert len(warnings) == 1 and "unreachable" in warnings[0] and "hunter2" not in warnings[0]
    assert [t.value for t in at.title] == ["Runs"]
