"""The Query page's gold documents stage by stage, on real evals of datasets/sample (the fixture home).

Each sentence's ranks are checked against the trace's spans read from the store
here, and the final ranks against ``run.trec``, apart from the code that wrote them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from searchtrace.dashboard.data import query_run
from searchtrace.dashboard.data.runs import run_folder
from searchtrace.traces import TraceStore
from searchtrace.traces import vocabulary as v

pytestmark = pytest.mark.slow
APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
FUSE = re.compile(r"lost at fuse: rank (\d+) at (\w+) → (\d+), below the cut of 10$")
RETRIEVAL = re.compile(r"lost at retrieval: its best rank, (\d+) at (\w+), is below the cut of 10; final rank (.+)$")
RETRIEVERS = ("dense", "keyword", "graph")


def trec_ranks(home: Path, run_id: str, query_id: str) -> dict[str, int]:
    rows = (line.split() for line in (home / "runs" / run_id / "run.trec").read_text().splitlines())
    return {doc: int(rank) for query, _, doc, rank, *_ in rows if query == query_id}


def span_ranks(home: Path, trace_id: str, doc: str) -> dict[str, int | None]:
    """The document's rank in the recorded candidates of each retrieval span and the fusion's that ran (a skipped
    stage has none), read from the store."""
    store = TraceStore(home / "traces.sqlite")
    try:
        detail = store.load_trace(trace_id)
    finally:
        store.close()
    assert detail is not None, trace_id
    ranks: dict[str, int | None] = {}
    for span in detail.spans:
        if span.name in (*RETRIEVERS, "fuse") and v.SKIPPED not in span.attributes:
            ids = list(span.attributes.get(v.CANDIDATE_IDS, ()))
            ranks[span.name] = ids.index(doc) + 1 if doc in ids else None
    return ranks


def sentences(home: Path, run_id: str) -> list[tuple[str, str, str, str]]:
    """(query id, doc id, trace id, sentence) of every gold document of the run."""
    out = []
    for outcome in run_folder(home, run_id).outcomes():
        view = query_run(home, run_id, outcome.query_id)
        assert view is not None and view.trace_id
        out += [(outcome.query_id, str(d), view.trace_id, str(w))
                for d, w in zip(view.gold_path["doc_id"], view.gold_path["where"])]
    return out


def test_the_stage_that_lost_each_gold_document_agrees_with_its_trace(dashboard_home, run_ids):
    run = run_ids["base"]
    said = sentences(dashboard_home, run)
    kinds = {"fuse": 0, "retrieval": 0, "found": 0}
    for query, doc, trace_id, where in said:
        final = trec_ranks(dashboard_home, run, query).get(doc)
        ranks = span_ranks(dashboard_home, trace_id, doc)
        if where.startswith("found"):
            assert where == f"found: rank {final}, within the cut of 10" and final <= 10
            kinds["found"] += 1
        elif m := FUSE.match(where):
            best, stage, fused = int(m[1]), m[2], int(m[3])
            assert ranks[stage] == best <= 10 and ranks["fuse"] == fused > 10 and (final is None or final > 10)
            kinds["fuse"] += 1
        elif m := RETRIEVAL.match(where):
            best, stage = int(m[1]), m[2]
            found = [r for s, r in ranks.items() if s in RETRIEVERS and r is not None]
            assert ranks[stage] == best == min(found) > 10
            assert m[3] == (str(final) if final else "not in the first 100")
            kinds["retrieval"] += 1
        else:
            assert where.startswith("not retrieved"), where
            assert all(ranks[s] is None for s in RETRIEVERS if s in ranks)
    assert all(kinds.values()), kinds  # the sample's graph run loses gold documents both ways


def test_with_the_dense_stage_off_what_dense_alone_would_find_is_not_retrieved(dashboard_home, run_ids):
    """The nodense run skips the dense stage (fusion weight 0): a gold document the base run's dense stage had and
    no stage of the nodense search returned reads "not retrieved", naming the stages that ran."""
    dense_had = {(o.query_id, t.doc_id) for o in run_folder(dashboard_home, run_ids["base"]).outcomes()
                 for t in o.attribution if "dense" in t.stages}
    lost = [(q, d, t) for q, d, t, w in sentences(dashboard_home, run_ids["nodense"])
            if w == "not retrieved: no retrieval stage (keyword, graph) returned it"]
    assert {(q, d) for q, d, _ in lost} & dense_had  # dense would have had some of them
    for _, doc, trace_id in lost:
        ranks = span_ranks(dashboard_home, trace_id, doc)
        assert "dense" not in ranks and ranks["keyword"] is None and ranks["graph"] is None


def test_the_query_page_names_the_stage_and_shows_bands_as_chips(dashboard_home, run_ids, monkeypatch):
    from streamlit.testing.v1 import AppTest

    base = run_ids["base"]
    query, doc, _, where = next(s for s in sentences(dashboard_home, base) if s[3].startswith("lost at fuse"))
    monkeypatch.setenv("SEARCHTRACE_HOME", str(dashboard_home))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.query_params.update({"query": query, "run": base, "base": run_ids["fast"]})
    at.switch_page("views/query.py").run()
    assert not at.exception, [e.message for e in at.exception]
    text = "\n".join(m.value for m in at.markdown).replace("\\", "")
    assert f"- {doc} (" in text and where in text  # the sentence, beside the document it is about
    path = next(d.value for d in at.dataframe if "lost_stage" in d.value.columns)
    row = path.set_index("doc_id").loc[doc]
    assert row["lost_stage"] == "fuse" and {"dense", "keyword", "graph", "fuse", "rerank", "filter"} <= set(path.columns)
    # each result's relevance, band and move sit right after its rank and grade
    results = at.dataframe[0].value
    assert list(results.columns[:5]) == ["rank", "gold", "relevance", "band", "moved"]
    # the bands across runs: a list per run shown as chips coloured by band, not a comma-joined string
    across = next(d for d in at.dataframe if "bands" in d.value.columns)
    bands = [list(b) for b in across.value["bands"]]  # a list cell comes back from Arrow as an array
    assert all(b and set(b) <= {"high", "medium", "low"} for b in bands) and all(len(b) > 1 for b in bands)
    assert not any(isinstance(b, str) for b in across.value["bands"])
    config = json.loads(across.proto.columns)["bands"]
    assert config["type_config"]["type"] == "multiselect"
    colours = {o["value"]: o.get("color") for o in config["type_config"]["options"]}
    assert set(colours) == {"high", "medium", "low"} and len(set(colours.values())) == 3
