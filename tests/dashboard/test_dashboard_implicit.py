"""The Implicit page through Streamlit's AppTest: what agents' fetches say of a copy of the sample, shown apart
from people's labels without writing anything, then written by the recompute button."""

from __future__ import annotations

import json
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
PAGE = "views/implicit.py"


def test_the_page_shows_the_clicks_apart_and_recompute_writes_them(served, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from searchtrace.evals import JudgingSession, Kind

    home, dataset = served
    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.switch_page(PAGE).run()
    assert [t.value for t in at.title] == ["Implicit judgments"] and at.info  # asks for a dataset
    at.text_input(key="implicit-dataset-path").input(str(dataset)).run()
    assert not at.exception, [e.message for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["standing human labels"] == "1" and metrics["standing implicit labels"] == "0"
    assert (metrics["searches"], metrics["fetches"], metrics["clicks"], metrics["unknown trace ids"]) == (
        "30", "11", "10", "1")
    assert any("eeeeeeeeeeee" in c.value for c in at.caption)
    assert len(at.get("vega_lite_chart")) == 1  # the rate by position
    pairs = at.dataframe[0].value
    assert pairs.iloc[0]["doc_id"] == json.loads((SAMPLE / "corpus.jsonl").open().readline())["_id"]
    assert pairs.iloc[0]["clicks"] == 10 and pairs.iloc[0]["grade"] >= 1
    assert at.dataframe[1].value.shape == (3, 3)  # agreement with ana's label
    assert not [j for j in JudgingSession.open(dataset).store.read() if j.kind is Kind.IMPLICIT]  # shown only

    # the recompute asks first: a click says what it would write and writes nothing; cancel leaves it unwritten
    recompute = at.button(key="implicit-recompute")
    assert recompute.proto.type != "primary"
    recompute.click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("writes implicit labels" in w.value for w in at.warning)
    assert not [j for j in JudgingSession.open(dataset).store.read() if j.kind is Kind.IMPLICIT]
    at.button(key="implicit-recompute-cancel").click().run()
    assert not at.warning and not [b for b in at.button if b.key == "implicit-recompute-confirm"]
    assert not [j for j in JudgingSession.open(dataset).store.read() if j.kind is Kind.IMPLICIT]
    at.button(key="implicit-recompute").click().run()
    at.button(key="implicit-recompute-confirm").click().run()
    assert not at.exception, [e.message for e in at.exception]
    written = [j for j in JudgingSession.open(dataset).store.read() if j.kind is Kind.IMPLICIT]
    assert written and any(s.value.startswith(f"{len(written)} judgments written") for s in at.success)
    assert {m.label: m.value for m in at.metric}["standing implicit labels"] == str(len(written))
    assert not [b for b in at.button if b.key == "implicit-recompute-confirm"]  # asked again next time
    at.button(key="implicit-recompute").click().run()
    at.button(key="implicit-recompute-confirm").click().run()  # nothing changed: nothing more written
    assert len([j for j in JudgingSession.open(dataset).store.read() if j.kind is Kind.IMPLICIT]) == len(written)
    assert any(s.value.startswith("0 judgments written") for s in at.success)
