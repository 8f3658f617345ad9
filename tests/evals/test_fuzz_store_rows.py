"""Damaged rows of the shared store's run tables: refused naming the table, the run and the field, or read as
what they say; never a traceback, never other data (issue 35). No server: the rows are what psycopg returns
for a real run published, each example with one value replaced by any value (hypothesis)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from datetime import UTC
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_folders import make_run, with_journal

from searchtrace.errors import DataError, SearchtraceError
from searchtrace.evals import RunFolder
from searchtrace.evals.runs.store.postgres_publish import stored_files
from searchtrace.evals.runs.store.rebuild import rebuilt_files
from searchtrace.evals.runs.store.rows import (
    entry_from_row,
    files_from_rows,
    head_from_row,
    listed_files,
    metrics_from_rows,
    rankings_from_rows,
    summary_from_files,
)
from searchtrace.evals.runs.store.snapshot import RunSnapshot, read_snapshot

WHERE = "store postgresql://team@db/runs"
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

NASTY = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12) | st.binary(max_size=12)
         | st.datetimes() | st.datetimes(timezones=st.just(UTC))
         | st.lists(st.none() | st.integers() | st.floats() | st.text(max_size=6), max_size=3)
         | st.sampled_from(["", "..", "../escaped.txt", "/etc/passwd", "a/b", "a\\b", "\x00", "q\n", "x" * 300,
                            "run.json", "settings.json", "run.trec", "0" * 64, "A" * 64, "\ud800", -1, 2**63]))


@dataclass
class Rows:
    """A run's rows as PostgreSQL gives them back."""

    run_id: str
    entry: list[Any]
    head: list[Any]
    ranked: list[list[Any]]
    scored: list[list[Any]]
    stored: list[list[Any]]


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[RunSnapshot, Rows]:
    folder = with_journal(make_run(tmp_path_factory.mktemp("made"), "pub", tags=("main", "nightly"), name="n"))
    snap = read_snapshot(RunFolder(folder.path))
    run = snap.rankings
    docs = run.docs[run.doc_index]
    ranked = [[q, docs[run.query_index == i].tolist(), run.scores[run.query_index == i].tolist()]
              for i, q in enumerate(run.queries.tolist())]
    scored = sorted([m, q, float(v)] for m, (ids, values) in snap.metrics.items() for q, v in zip(ids, values))
    stored = [[f.name, f.sha256, f.size, f.content] for f in sorted(stored_files(snap), key=lambda f: f.name)]
    assert [f[0] for f in stored if f[3] is None] == ["rankings.parquet", "run.trec"]  # rebuilt from the rows
    s = snap.summary
    rows = Rows(s.run_id, [s.run_id, s.name, list(s.tags), snap.created_at, s.dataset.name, s.retriever.mode],
                [snap.created_at, snap.trec_tag, run.docs.tolist()], ranked, scored, stored)
    return snap, rows


def _snapshot(rows: Rows) -> RunSnapshot:
    """What ``PostgresRunIndex.snapshot`` makes of the rows."""
    created_at, tag, doc_ids = head_from_row(rows.run_id, rows.head, WHERE)
    rankings = rankings_from_rows(rows.run_id, rows.ranked, doc_ids, WHERE)
    files = files_from_rows(rows.run_id, rows.stored, rebuilt_files(rankings, tag), WHERE)
    summary = summary_from_files(rows.run_id, files, WHERE)
    return RunSnapshot(summary, created_at, tag, rankings, metrics_from_rows(rows.run_id, rows.scored, WHERE), files)


def _same_run(a: Any, b: Any) -> bool:
    return (a.queries.tolist() == b.queries.tolist() and a.docs.tolist() == b.docs.tolist()
            and a.query_index.tobytes() == b.query_index.tobytes() and a.doc_index.tobytes() == b.doc_index.tobytes()
            and a.scores.tobytes() == b.scores.tobytes())


def _copy(rows: Rows) -> Rows:
    return copy.deepcopy(rows)


def test_undamaged_rows_read_as_the_run_published(published):
    snap, rows = published
    got = _snapshot(rows)
    assert got.summary == snap.summary and got.files == snap.files and got.trec_tag == snap.trec_tag
    assert got.created_at == snap.created_at and _same_run(got.rankings, snap.rankings)
    assert {m: (ids, v.tobytes()) for m, (ids, v) in got.metrics.items()} == {
        m: (ids, v.tobytes()) for m, (ids, v) in snap.metrics.items()}
    assert entry_from_row(rows.entry, WHERE) == snap.entry()
    assert listed_files(rows.run_id, [f[:3] for f in rows.stored], WHERE) == tuple(
        f.__class__(f.name, f.sha256, f.size) for f in snap.files)


# -- st_runs as listed ------------------------------------------------------------------------------------

ENTRY_FIELDS = ("run_id", "name", "summary.tags", "created_at", "dataset", "mode")


@SETTINGS
@given(column=st.integers(0, 5), value=NASTY, element=st.booleans())
def test_a_damaged_listed_run_is_refused_naming_the_field_or_read_as_it_says(published, column, value, element):
    _, rows = published
    row = list(rows.entry)
    if element and isinstance(row[column], list) and row[column]:
        row[column] = [value, *row[column][1:]]
    else:
        row[column] = value
    try:
        entry = entry_from_row(row, WHERE)
    except DataError as exc:
        assert exc.message.startswith(f"{WHERE}: st_runs row") and ENTRY_FIELDS[column] in exc.message, exc.message
        return
    said = (entry.run_id, entry.name, list(entry.tags), entry.created_at, entry.dataset, entry.mode)
    want = row[column]
    if column == 3:
        want = want.astimezone(UTC)
    if column == 5 and want is None:
        want = ""
    if column == 2 and want is None:
        want = []
    assert said[column] == want and type(said[column]) is type(want)
    assert all(isinstance(v, str) and v for v in (entry.run_id, entry.dataset, *entry.tags))


# -- st_run_files as listed (what the cache checks its folder against) -------------------------------------


@SETTINGS
@given(number=st.integers(0, 6), column=st.integers(0, 2), value=NASTY)
def test_a_damaged_listed_file_is_refused_naming_the_row_or_read_as_it_says(published, number, column, value):
    _, rows = published
    listed = [list(f[:3]) for f in rows.stored]
    number %= len(listed)
    listed[number][column] = value
    try:
        files = listed_files(rows.run_id, listed, WHERE)
    except DataError as exc:
        assert re.match(rf"{re.escape(WHERE)}: st_run_files (row {number + 1}|rows \d+ and \d+) of run 'pub': ",
                        exc.message) and str(number + 1) in exc.message.split(" of run")[0], exc.message
        assert ("name", "sha256", "size")[column] in exc.message, exc.message
        return
    assert files is not None
    assert [[f.name, f.sha256, f.size] for f in files] == listed
    assert all("/" not in f.name and f.name not in (".", "..") and len(f.sha256) == 64 and f.size >= 0
               for f in files)


# -- a run read whole ---------------------------------------------------------------------------------------


@st.composite
def cell(draw: st.DrawFn, rows: Rows) -> tuple[str, int, int, int | None]:
    """(table, row, column, element of a list cell or None)."""
    table = draw(st.sampled_from(["head", "ranked", "scored", "stored"]))
    grid = getattr(rows, table)
    row = draw(st.integers(0, len(grid) - 1)) if table != "head" else 0
    cells = grid[row] if table != "head" else grid
    column = draw(st.integers(0, len(cells) - 1))
    value = cells[column]
    element = draw(st.integers(0, len(value) - 1)) if isinstance(value, list) and value and draw(
        st.booleans()) else None
    return table, row, column, element


TABLES = {"head": "st_runs", "ranked": "st_run_rankings", "scored": "st_run_metrics", "stored": "st_run_files"}


@SETTINGS
@given(data=st.data(), value=NASTY)
def test_a_damaged_row_of_a_run_is_refused_naming_it_or_changes_nothing_used(published, data, value):
    """Any value in any cell: a DataError naming the store, the run and a table of it; else the run's files
    (all a reader of the store uses: the cache and ``runs export`` write them) are the run's as published,
    and the metrics are what the rows say."""
    snap, original = published
    rows = _copy(original)
    table, row, column, element = data.draw(cell(rows))
    target = rows.head if table == "head" else getattr(rows, table)[row]
    if element is None:
        target[column] = value
    else:
        target[column][element] = value
    try:
        got = _snapshot(rows)
    except SearchtraceError as exc:
        assert isinstance(exc, DataError), exc
        assert exc.message.startswith(f"{WHERE}: ") and "'pub'" in exc.message, exc.message
        assert any(t in exc.message for t in TABLES.values()) or "run.json" in exc.message, exc.message
        return
    assert got.files == snap.files and got.summary == snap.summary and got.trec_tag == snap.trec_tag
    assert _same_run(got.rankings, snap.rankings)
    said: dict[str, tuple[list[str], list[float]]] = {}
    for metric, query, v in rows.scored:
        said.setdefault(metric, ([], []))[0].append(query)
        said[metric][1].append(v)
    assert {m: (ids, v.tolist()) for m, (ids, v) in got.metrics.items()} == said


@pytest.mark.parametrize("damage, named", [
    (lambda r: r.stored.pop(next(i for i, f in enumerate(r.stored) if f[0] == "run.json")),
     "st_run_files row of run 'pub': name: no run.json"),
    (lambda r: r.stored.append(list(r.stored[0])), "st_run_files rows 1 and 8 of run 'pub': name: 'journal.jsonl' listed twice"),
    (lambda r: r.ranked.append(list(r.ranked[0])), "st_run_rankings row 7 of run 'pub': query_id: 'q0' ranked twice"),
    (lambda r: r.scored.append(list(r.scored[0])), "st_run_metrics row"),
    (lambda r: r.head.__setitem__(2, r.head[2][1:]), "st_run_rankings row 1 of run 'pub': doc_ids: 'd0a' is not in"),
])
def test_rows_missing_or_twice_are_refused_naming_them(published, damage, named):
    _, original = published
    rows = _copy(original)
    damage(rows)
    with pytest.raises(DataError, match=named.replace("(", r"\(")):
        _snapshot(rows)


def test_a_run_json_of_another_run_or_not_json_is_refused(published):
    from searchtrace.evals.runs.store.snapshot import sha256

    _, original = published
    for content, named in ((b"\xff", "not UTF-8"), (b"[", "invalid JSON"), (b"[]", "must be a JSON object")):
        rows = _copy(original)
        summary = next(f for f in rows.stored if f[0] == "run.json")
        summary[1:] = [sha256(content), len(content), content]
        with pytest.raises(DataError, match=named):
            _snapshot(rows)

