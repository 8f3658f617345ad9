"""A run written with ``eval --out`` outside the home is on the dashboard: its data layer lists it, the Runs page
shows it, a Compare link to it opens it; a listed folder since removed is a note, never a broken page."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dashboard_fixtures import SAMPLE

pytestmark = pytest.mark.slow

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
RUNS, COMPARE = "views/runs.py", "views/compare.py"
BASE, OUTSIDE, GONE = "sample-graph-20250101T090000-base", "b1", "b2"


@pytest.fixture(scope="module")
def homes(tmp_path_factory, model, warm_cache) -> dict[str, Path]:
    """A home with one run of its own, and two runs written with --out elsewhere (the second to be removed)."""
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.evals.runs.runfolder import EvalSettings
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.traces import TraceSettings

    root = tmp_path_factory.mktemp("outside")
    home = warm_cache(root / "home")
    config = resolve_config(home=home, environ={})
    out = {"home": home, BASE: home / "runs" / BASE, OUTSIDE: root / "elsewhere" / OUTSIDE,
           GONE: root / "other" / GONE}
    for run, mode in ((BASE, "graph"), (OUTSIDE, "fast"), (GONE, "fast")):
        run_eval(EvalSettings(dataset=str(SAMPLE), mode=mode), config, out=out[run], embedder=model,
                 progress=False, trace_settings=TraceSettings.resolve(environ={}))
    return out


def fresh(home: Path, script: str, params: dict[str, str], monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.query_params.clear()
    at.query_params.update(params)
    at = at.switch_page(script).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def not_a_choice(at) -> list[str]:
    return [i.value for i in at.info if "is not a choice here" in i.value]


def test_the_data_layer_lists_an_out_run_and_reads_it_in_place(homes):
    from searchtrace.dashboard.data import list_runs, load_run
    from searchtrace.dashboard.data.runs import run_folder

    home = homes["home"]
    assert set(list_runs(home)["run_id"]) == {BASE, OUTSIDE, GONE}
    assert run_folder(home, OUTSIDE).path == homes[OUTSIDE].resolve()
    assert load_run(home, OUTSIDE).retriever.mode == "fast"


def test_the_runs_page_shows_an_out_run(homes, monkeypatch):
    at = fresh(homes["home"], RUNS, {}, monkeypatch)
    shown = at.dataframe[0].value
    assert set(shown["run_id"]) == {BASE, OUTSIDE, GONE}


def test_a_compare_link_to_an_out_run_opens_it(homes, monkeypatch):
    at = fresh(homes["home"], COMPARE, {"base": BASE, "cand": OUTSIDE}, monkeypatch)
    assert not not_a_choice(at)
    assert at.selectbox(key="compare-base").value == BASE
    assert at.selectbox(key="compare-cand").value == OUTSIDE


def test_a_removed_out_folder_is_a_note_and_the_rest_still_listed(homes, monkeypatch):
    """Last in the module: it removes a folder the others list."""
    from searchtrace.dashboard.data import gone_runs, list_runs

    shutil.rmtree(homes[GONE])
    home = homes["home"]
    assert set(list_runs(home)["run_id"]) == {BASE, OUTSIDE}
    assert gone_runs(home) == [homes[GONE].resolve()]
    import streamlit as st

    st.cache_data.clear()  # the pages' tables are cached for TTL_S: as a reload after it
    at = fresh(home, RUNS, {}, monkeypatch)
    assert set(at.dataframe[0].value["run_id"]) == {BASE, OUTSIDE}
    notes = [i.value.replace("\\", "") for i in at.info if "is gone" in i.value]
    assert len(notes) == 1 and str(homes[GONE].resolve()) in notes[0]
    at = fresh(home, COMPARE, {"base": BASE, "cand": GONE}, monkeypatch)
    assert len(not_a_choice(at)) == 1  # a link to it says so in one line, and the page still opens
