"""The Judge page through Streamlit's AppTest: a named judge grades a pool blind, skips, notes, undoes,
moves on query by query; two judges are never handed one pair; the disagreements view adjudicates.

Each test judges a copy of ``datasets/sample`` with a small pool written here, so
every judgment is checked against ``judgments.jsonl`` itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from searchtrace.evals import JudgingSession, Kind
from searchtrace.evals.labels.judgments import Judgment, PooledPair
from searchtrace.evals.labels.judgments.pool import Contribution

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
JUDGE_PAGE = "views/judge.py"
SOURCE = "sample-graph-20250101T090000-base"
#: Two queries of the sample, three documents each, in the order shown.
POOL = [("test-001", "bio-orsolya-venn"), ("test-001", "gld-lampwrights-guild"), ("test-001", "bio-meribel-osk"),
        ("test-002", "shp-herons-wake"), ("test-002", "bio-meribel-osk"), ("test-002", "gaz-skerrow-isles")]


def write_pool(dataset: Path, pairs=POOL) -> None:
    lines = [PooledPair(q, d, (Contribution(SOURCE, rank), Contribution(f"{SOURCE}:dense", 40 + rank))).to_json()
             for rank, (q, d) in enumerate(pairs, 1)]
    (dataset / "pool.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.fixture
def dataset(tmp_path) -> Path:
    root = tmp_path / "mine"
    shutil.copytree(SAMPLE, root)
    write_pool(root)
    return root


@pytest.fixture
def home(tmp_path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def open_judge(home: Path, dataset: Path, monkeypatch, name: str | None = "ana"):
    """An AppTest on the Judge page with ``dataset`` typed; the judge's name given when ``name``."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.switch_page(JUDGE_PAGE).run()
    at.text_input(key="judge-dataset-path").input(str(dataset)).run()
    if name is not None:
        at.text_input(key="judge-name-input").input(name).run()
        at.button(key="judge-name-start").click().run()
    ok(at)
    return at


def ok(at) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert [t.value for t in at.title] == ["Judge"]


def stored(dataset: Path) -> list[Judgment]:
    return list(JudgingSession.open(dataset).store.read())


def shown_pair(at) -> tuple[str, str]:
    """The (query id, doc id) the page shows, from its caption."""
    caption = next(c.value for c in at.caption if c.value.startswith("query "))
    query, doc = caption.removeprefix("query ").split(" · document ")
    return query.replace("\\", ""), doc.replace("\\", "")


def page_text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [b.label for b in at.button]
    parts += [s.value for s in at.success] + [i.value for i in at.info] + [getattr(p, "text", "") or "" for p in at.get("progress")]
    return "\n".join(parts).replace("\\", "")  # Markdown escapes taken out


def test_the_name_is_asked_once_and_kept(home, dataset, monkeypatch):
    at = open_judge(home, dataset, monkeypatch, name=None)
    assert [b.key for b in at.button] == ["judge-name-start"]  # nothing to grade before a name
    at.button(key="judge-name-start").click().run()
    assert [e.value for e in at.error] == ["The name must be a non-empty line of printable characters."]
    at.text_input(key="judge-name-input").input("  ana  ").run()
    at.button(key="judge-name-start").click().run()
    ok(at)
    assert not [t for t in at.text_input if t.key == "judge-name-input"]
    at.switch_page("views/runs.py").run()
    at.switch_page(JUDGE_PAGE).run()
    at.text_input(key="judge-dataset-path").input(str(dataset)).run()
    assert not [t for t in at.text_input if t.key == "judge-name-input"]  # kept for the session
    assert any("judging as **ana**" in c.value for c in at.caption)


def test_grading_appends_the_judgment_with_its_note_and_the_next_pair_shows(home, dataset, monkeypatch):
    at = open_judge(home, dataset, monkeypatch)
    first = shown_pair(at)
    assert first == POOL[0] and "This query: 0 of 3 pairs done" in page_text(at)
    assert any("Orsolya Venn" in m.value for m in at.markdown)  # the query's text
    at.text_input(key="judge-note").input("names the guild").run()
    at.button(key="judge-grade-2").click().run()
    ok(at)
    [judgment] = stored(dataset)
    assert (judgment.pair, judgment.grade, judgment.judge, judgment.kind, judgment.note) == (
        POOL[0], 2, "ana", Kind.HUMAN, "names the guild")
    assert shown_pair(at) == POOL[1] and at.text_input(key="judge-note").value == ""
    assert "This query: 1 of 3 pairs done" in page_text(at) and "1 of 6 pairs done" in page_text(at)
    at.button(key="judge-grade-0").click().run()
    assert [(j.pair, j.grade, j.note) for j in stored(dataset)][1] == (POOL[1], 0, None)


def test_skip_hands_out_the_next_pair_and_judges_nothing(home, dataset, monkeypatch):
    at = open_judge(home, dataset, monkeypatch)
    at.button(key="judge-skip").click().run()
    assert shown_pair(at) == POOL[1] and stored(dataset) == []
    assert JudgingSession.open(dataset).queue.held() == {POOL[1]: "ana"}  # the hold moved with it
    at.button(key="judge-grade-1").click().run()
    at.button(key="judge-grade-1").click().run()
    assert "Every pair of query test-001 is done but 1 skipped." in page_text(at)
    at.button(key="judge-revisit").click().run()
    assert shown_pair(at) == POOL[0]


def test_undo_retracts_the_last_judgment_and_shows_its_pair_again(home, dataset, monkeypatch):
    at = open_judge(home, dataset, monkeypatch)
    assert at.button(key="judge-undo").disabled
    at.button(key="judge-grade-2").click().run()
    at.button(key="judge-grade-1").click().run()
    assert shown_pair(at) == POOL[2]
    at.button(key="judge-undo").click().run()
    ok(at)
    assert [(j.pair, j.grade) for j in stored(dataset)] == [(POOL[0], 2), (POOL[1], 1), (POOL[1], None)]
    assert shown_pair(at) == POOL[1] and "This query: 1 of 3 pairs done" in page_text(at)
    at.button(key="judge-undo").click().run()
    assert stored(dataset)[-1].pair == POOL[0] and stored(dataset)[-1].retracts
    assert shown_pair(at) == POOL[0] and at.button(key="judge-undo").disabled


def test_next_query_when_a_querys_pairs_are_done_and_progress_counts(home, dataset, monkeypatch):
    at = open_judge(home, dataset, monkeypatch)
    for _ in range(3):
        at.button(key="judge-grade-1").click().run()
    text = page_text(at)
    assert "Every pair of query test-001 is done." in text and "3 of 6 pairs done · 1 of 2 queries" in text
    assert not [b for b in at.button if b.key == "judge-grade-1"]
    at.button(key="judge-next-query").click().run()
    assert shown_pair(at) == POOL[3] and "This query: 0 of 3 pairs done" in page_text(at)
    for _ in range(3):
        at.button(key="judge-grade-0").click().run()
    assert "6 of 6 pairs done · 2 of 2 queries · 6 judged by ana" in page_text(at)
    at.button(key="judge-next-query").click().run()
    assert "Nothing left to judge in this pool for you" in page_text(at)
    assert sorted(j.pair for j in stored(dataset)) == sorted(POOL)


def test_the_page_is_blind(home, dataset, monkeypatch):
    at = open_judge(home, dataset, monkeypatch)
    text = page_text(at).casefold()
    for word in ("score", "rank", "band", "dense", SOURCE.casefold(), "41", "relevance"):
        assert word not in text, word
    assert "a grey heron" not in text and "gld-lampwrights-guild" not in text  # nor the query's answer or hops
    assert "collection: biographies · language: en" in text and "lampwright, inventor, lighthouses" in text


# -- judging in place on the Traces page ------------------------------------------------------


def plant_live_trace(store_path: Path, query: str, results: tuple[str, ...], dataset: str) -> str:
    """A live-traffic search trace (source http, no run or query id) of ``query`` on ``dataset``; its id."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from searchtrace.traces import TraceStore
    from searchtrace.traces import vocabulary as v

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    root: dict[str, Any] = {v.INPUT_VALUE: query, v.MODE: "fast", v.SOURCE: "http", v.DATASET: dataset, v.RESULT_IDS: results,
            v.RESULT_BANDS: ("high",) * len(results), v.RESULT_RELEVANCE: (0.9,) * len(results)}
    with provider.get_tracer("live").start_as_current_span("search", attributes=root) as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
    store = TraceStore(store_path)
    store.write(exporter.get_finished_spans())
    store.close()
    return trace_id


@pytest.fixture
def traced_home(dashboard_home, dataset, tmp_path, run_ids) -> Path:
    """A home with one eval run of the fixture home, its dataset now ``dataset`` (a copy), and all its traces."""
    from dataclasses import replace

    from searchtrace.evals import RunFolder

    home = tmp_path / "traced-home"
    run = run_ids["base"]
    shutil.copytree(dashboard_home / "runs" / run, home / "runs" / run)
    shutil.copy(dashboard_home / "traces.sqlite", home / "traces.sqlite")
    folder = RunFolder(home / "runs" / run)
    summary = folder.summary()
    folder.write_summary(replace(summary, dataset=replace(summary.dataset, path=str(dataset))))
    return home


def open_trace(home: Path, trace_id: str, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.query_params["trace"] = trace_id
    at.switch_page("views/traces.py").run()
    at.text_input(key="traces-judge-name-input").input("bo").run()
    at.button(key="traces-judge-name-start").click().run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_an_eval_traces_results_are_judged_in_place_under_its_query_id(traced_home, dataset, monkeypatch, run_ids):
    from searchtrace.traces import TraceFilter, TraceStore
    from searchtrace.traces import vocabulary as v

    store = TraceStore(traced_home / "traces.sqlite")
    summary = store.list_traces(TraceFilter(run_id=run_ids["base"], limit=1))[0]
    root = next(s for s in store.load_trace(summary.trace_id).spans if s.name == "search")
    store.close()
    at = open_trace(traced_home, summary.trace_id, monkeypatch)
    assert any(f"query id {summary.query_id}" in c.value.replace("\\", "") for c in at.caption)
    buttons = [b.key for b in at.button if b.key and b.key.startswith("traces-judge-")]
    assert len(buttons) == 3 * summary.n_results  # a button per grade for every result
    at.text_input(key="traces-judge-note").input("on topic").run()
    at.button(key="traces-judge-1-2").click().run()
    assert not at.exception
    [judgment] = stored(dataset)
    assert judgment.pair == (summary.query_id, root.attributes[v.RESULT_IDS][1])
    assert (judgment.grade, judgment.judge, judgment.note, judgment.trace_id) == (2, "bo", "on topic", summary.trace_id)
    assert any("your grade **2**" in m.value for m in at.markdown)


def test_a_live_traces_results_are_judged_under_the_query_sets_id(traced_home, dataset, monkeypatch):
    from searchtrace.evals import query_id

    text = "  Where was the HERON'S Wake built? "
    trace_id = plant_live_trace(traced_home / "traces.sqlite", text, ("shp-herons-wake", "gaz-skerrow-isles"),
                                dataset.name)
    at = open_trace(traced_home, trace_id, monkeypatch)
    at.button(key="traces-judge-0-1").click().run()
    [judgment] = stored(dataset)
    assert judgment.pair == (query_id("where was the heron's wake built?"), "shp-herons-wake")
    assert judgment.query_id.startswith("q") and judgment.trace_id == trace_id and judgment.grade == 1


# -- two judges at once, disagreements ----------------------------------------------------------


def test_two_judges_on_two_pages_never_hold_the_same_pair(home, dataset, monkeypatch):
    ana = open_judge(home, dataset, monkeypatch, "ana")
    bo = open_judge(home, dataset, monkeypatch, "bo")
    assert shown_pair(ana) == POOL[0] and shown_pair(bo) == POOL[1]
    direct = JudgingSession.open(dataset)  # a third judge, in another process's way
    assert direct.next_pair("cy", POOL) == POOL[2]
    ana.button(key="judge-grade-2").click().run()
    assert "Other judges hold the 2 other pairs of query test-001 left." in page_text(ana)
    ana.button(key="judge-next-query").click().run()
    assert shown_pair(ana) == POOL[3]
    bo.run()
    assert shown_pair(bo) == POOL[1]  # bo keeps the pair they hold across reruns
    assert direct.queue.held() == {POOL[1]: "bo", POOL[2]: "cy", POOL[3]: "ana"}
    bo.button(key="judge-grade-0").click().run()
    assert [(j.pair, j.judge) for j in stored(dataset)] == [(POOL[0], "ana"), (POOL[1], "bo")]


def test_the_disagreements_view_lists_a_conflict_and_records_an_adjudication(home, dataset, monkeypatch):
    session = JudgingSession.open(dataset)
    session.record(*POOL[0], 2, "ana", note="the guild is named")
    session.record(*POOL[0], 0, "bo", note="off topic")
    session.record(*POOL[1], 1, "ana")
    session.record(*POOL[1], 1, "bo")  # agreed: not listed
    at = open_judge(home, dataset, monkeypatch, "cy")
    at.segmented_control(key="judge-view").set_value("Disagreements").run()
    ok(at)
    [table] = [d.value for d in at.dataframe]
    assert table[["query_id", "doc_id", "grades"]].values.tolist() == [[*POOL[0], "ana 2 · bo 0"]]
    assert table["notes"].iloc[0] == "ana: the guild is named · bo: off topic"
    at.text_input(key="judge-adjudication-note").input("names it outright").run()
    at.button(key="judge-adjudicate-2").click().run()
    ok(at)
    last = stored(dataset)[-1]
    assert (last.pair, last.grade, last.judge, last.note) == (POOL[0], 2, "cy", "adjudication: names it outright")
    assert not at.dataframe  # the only pending pair is settled
    at.toggle(key="judge-disputes-pending").set_value(False).run()
    table = at.dataframe[0].value
    assert table["adjudicated"].tolist() == [2] and table["grades"].iloc[0] == "ana 2 · bo 0 · cy 2"


def test_query_terms_are_highlighted_and_the_text_stays_text():
    from searchtrace.dashboard.data import PairView, highlight
    from searchtrace.dashboard.ui.judge_parts import _markdown

    pieces = highlight("Herons nest. The heron's [sigil](https://evil.example) <b>x</b>\n\nWhat of it?",
                       "What is the heron sigil?")
    assert "".join(p for p, _ in pieces) == ("Herons nest. The heron's [sigil](https://evil.example) <b>x</b>\n\n"
                                            "What of it?")
    assert [p for p, term in pieces if term] == ["Herons", "heron", "sigil"]  # not "What", "The": common words
    shown = _markdown(PairView("q", "d", "", "", pieces, (), True))
    assert shown == ("**Herons** nest\\. The **heron**\\'s \\[**sigil**\\]\\(https\\:\u2060\\/\\/evil\\.example\\) "
                     "\\<b\\>x\\<\\/b\\>\n\nWhat of it\\?")


# -- the page's process killed mid-stream --------------------------------------------------------


def test_the_page_process_killed_while_judging_leaves_a_readable_store(home, dataset):
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    from searchtrace.evals.labels.judgments import JudgingFolder, read_pool

    docs = [json.loads(line)["_id"] for line in (dataset / "corpus.jsonl").read_text().splitlines() if line.strip()]
    write_pool(dataset, [("test-001", d) for d in docs[:150]])
    code = textwrap.dedent("""
        import sys
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file(sys.argv[1], default_timeout=60).run()
        at.switch_page("views/judge.py").run()
        at.text_input(key="judge-dataset-path").input(sys.argv[2]).run()
        at.text_input(key="judge-name-input").input("ana").run()
        at.button(key="judge-name-start").click().run()
        for i in range(150):
            at.button(key="judge-grade-1").click().run()
            print(i, flush=True)
        """)
    env = {**os.environ, "SEARCHTRACE_HOME": str(home), "PYTHONPATH": str(APP.parents[1])}
    child = subprocess.Popen([sys.executable, "-c", code, str(APP), str(dataset)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    assert child.stdout is not None
    acked = [child.stdout.readline() for _ in range(25)]
    child.send_signal(signal.SIGKILL)
    acked += child.stdout.readlines()
    assert child.wait(30) == -signal.SIGKILL and len(acked) < 150
    judged = [j.pair for j in stored(dataset)]  # reads: no damaged line
    pool = [(p.query_id, p.doc_id) for p in read_pool(JudgingFolder.at(dataset))]
    assert len(acked) <= len(judged) <= len(acked) + 1  # at most the click in flight is lost
    assert judged == pool[: len(judged)]
    session = JudgingSession.open(dataset)  # the killed process's lock does not block the next judge
    held = session.queue.held()  # the pair shown when it was killed stays held until its TTL ends
    assert set(held.values()) <= {"ana"} and set(held) - set(judged) <= set(pool[len(judged):])
    # killed between recording a judgment and releasing its pair (a race this test does not control): at most
    # that one judged pair is still held, and it is never handed out again, being judged
    assert len(set(held) & set(judged)) <= 1
    assert session.next_pair("bo", pool) == next(p for p in pool[len(judged):] if p not in held)


def test_a_bad_folder_or_a_missing_pool_is_one_line_naming_it(home, dataset, tmp_path, monkeypatch):
    at = open_judge(home, tmp_path / "nowhere", monkeypatch, name=None)
    assert [e.value.replace("\\", "") for e in at.error] == [f"no dataset folder {tmp_path / 'nowhere'}"]
    (dataset / "pool.jsonl").unlink()
    at.text_input(key="judge-dataset-path").input(str(dataset)).run()
    at.text_input(key="judge-name-input").input("ana").run()
    at.button(key="judge-name-start").click().run()
    [error] = [e.value.replace("\\", "") for e in at.error]
    assert error == f"no pool in {dataset}: run `searchtrace judge pool {dataset} --runs RUN ...`"
