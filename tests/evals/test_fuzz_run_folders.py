"""Random damage to a run folder is refused naming the file, or was harmless and reads as before (issue 35).

One small completed run (with a journal) is made per module; each example copies it, damages it (bytes
flipped, inserted or deleted, a file cut short or deleted, junk files added, a ``run.json`` field set to
any JSON value) and reads it through every reader: ``RunFolder.summary()`` and what ``compare`` and
``gate`` read (the evaluation, the label-free side), what ``runs push`` reads (``read_snapshot``) and the
dashboard's run listing. Each reader raises a :class:`SearchtraceError` naming the damaged file, or
gives exactly what the undamaged folder gives: never another exception, never other data.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_folders import make_run, with_journal

from searchtrace.dashboard.data.runs import damaged_runs, list_runs
from searchtrace.errors import SearchtraceError
from searchtrace.evals import RunFolder
from searchtrace.evals.runs.store.snapshot import read_snapshot
from searchtrace.evals.verdicts.overlap.sides import read_side

FILES = ("run.json", "settings.json", "journal.jsonl", "per_query.parquet", "results.parquet", "run.trec",
         "rankings.parquet")
_CHECKS = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=_CHECKS)
FEW = settings(SETTINGS, max_examples=60)  # every reader reads the whole run: 50 ms an example
_COUNTER = itertools.count()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    folder = with_journal(make_run(tmp_path_factory.mktemp("made"), "fuzzed"))
    assert sorted(p.name for p in folder.path.iterdir()) == sorted(FILES)
    return folder.path


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("examples")


def _copy(pristine: Path, scratch: Path) -> Path:
    """A fresh home holding a copy of the run: a new path per example, so no verification is remembered."""
    home = scratch / f"home{next(_COUNTER)}"
    shutil.copytree(pristine, home / "runs" / pristine.name)
    return home


# -- what every reader gives, in a form that compares bit for bit ------------------------------------


def _run(run: Any) -> tuple[Any, ...]:
    return (run.queries.tolist(), run.docs.tolist(), run.query_index.tobytes(), run.doc_index.tobytes(),
            run.scores.tobytes())


def _summary(folder: RunFolder) -> Any:
    return folder.summary()


def _records(folder: RunFolder) -> Any:
    folder.summary()
    records = folder.records()
    if folder.journal.problems:
        raise folder.journal.problems[0]
    return records


def _evaluation(folder: RunFolder) -> Any:  # compare and gate with labels
    folder.summary()
    e = folder.evaluation()
    return e.query_ids.tolist(), {str(m): v.tobytes() for m, v in e.per_query.items()}


def _side(folder: RunFolder) -> Any:  # compare and gate without labels
    s = read_side(folder)
    return (s.summary, _run(s.run), s.query_ids.tolist(), s.bands.tobytes(), s.latency_ms.tobytes(),
            s.trace_ids.tolist())


def _snapshot(folder: RunFolder) -> Any:  # runs push
    s = read_snapshot(folder)
    return (s.summary, s.created_at, s.trec_tag, _run(s.rankings),
            {m: (ids, values.tobytes()) for m, (ids, values) in s.metrics.items()}, s.files)


READERS: dict[str, Callable[[RunFolder], Any]] = {"summary": _summary, "records": _records,
                                                  "evaluation": _evaluation, "side": _side, "snapshot": _snapshot}


def _listing(home: Path) -> Any:  # the dashboard's Runs page
    runs = list_runs(home)
    return runs.to_dict("records"), damaged_runs(home).to_dict("records")


@pytest.fixture(scope="module")
def expected(pristine, scratch) -> dict[str, Any]:
    home = _copy(pristine, scratch)
    folder = RunFolder(home / "runs" / pristine.name)
    return {name: read(folder) for name, read in READERS.items()} | {"listing": _listing(home)}


def _check(home: Path, damaged: str | None, expected: dict[str, Any]) -> None:
    """Every reader refuses the folder naming ``damaged`` and the listing shows it as damaged; or, when
    nothing is (None), every reader and the listing give what the undamaged folder gives."""
    folder = RunFolder(home / "runs" / next((home / "runs").iterdir()).name)
    for name, read in READERS.items():
        if damaged is None:
            assert _same(read(folder), expected[name]), name
            continue
        with pytest.raises(SearchtraceError) as refused:
            read(folder)
        assert damaged in refused.value.message, (name, refused.value.message)
    runs, problems = _listing(home)
    if damaged is None:
        assert (runs, problems) == expected["listing"]
    else:
        assert not runs and len(problems) == 1 and damaged in problems[0]["error"], problems


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.tobytes() == b.tobytes()
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


# -- damage --------------------------------------------------------------------------------------


@st.composite
def byte_damage(draw: st.DrawFn) -> tuple[str, str, float, bytes, int]:
    """(file, how, where as a fraction of its size, bytes, count)."""
    return (draw(st.sampled_from(FILES)), draw(st.sampled_from(["flip", "insert", "delete", "truncate"])),
            draw(st.floats(0, 1)), draw(st.binary(min_size=1, max_size=16)), draw(st.integers(1, 64)))


def _damage(path: Path, how: str, where: float, data: bytes, count: int) -> bool:
    """Damage ``path``; whether its bytes changed."""
    old = path.read_bytes()
    at = min(int(where * len(old)), max(len(old) - 1, 0))
    if how == "flip":
        new = old[:at] + bytes(b ^ d for b, d in zip(old[at:at + len(data)], data)) + old[at + len(data):]
    elif how == "insert":
        new = old[:at] + data + old[at:]
    elif how == "delete":
        new = old[:at] + old[at + count:]
    else:
        new = old[:at]
    path.write_bytes(new)
    return new != old


@SETTINGS
@given(damage=st.lists(byte_damage(), min_size=1, max_size=3))
def test_damaged_bytes_are_refused_naming_the_file(pristine, scratch, expected, damage):
    home = _copy(pristine, scratch)
    run = home / "runs" / pristine.name
    changed = [name for name, how, where, data, count in damage if _damage(run / name, how, where, data, count)]
    changed = [name for name in dict.fromkeys(changed) if _differs(run / name, pristine / name)]
    if not changed:
        _check(home, None, expected)
    elif len(changed) == 1:
        _check(home, changed[0], expected)
    else:  # several files damaged: the first found is named, whichever it is
        _check_any(home, changed)


def _differs(path: Path, original: Path) -> bool:
    """Whether ``path`` says something else than ``original``: for ``run.json``, JSON whitespace changed
    (a newline made a space) is the same document, read the same by every reader."""
    new, old = path.read_bytes(), original.read_bytes()
    if new == old:
        return False
    if path.name == "run.json":
        try:
            return json.dumps(json.loads(new), sort_keys=True) != json.dumps(json.loads(old), sort_keys=True)
        except ValueError:
            return True
    return True


def _check_any(home: Path, damaged: list[str]) -> None:
    folder = RunFolder(home / "runs" / next((home / "runs").iterdir()).name)
    for name, read in READERS.items():
        with pytest.raises(SearchtraceError) as refused:
            read(folder)
        assert any(d in refused.value.message for d in damaged), (name, refused.value.message)
    runs, problems = _listing(home)
    assert not runs and len(problems) == 1


@SETTINGS
@given(name=st.sampled_from(FILES))
def test_a_deleted_file_is_refused_naming_it(pristine, scratch, expected, name):
    home = _copy(pristine, scratch)
    (home / "runs" / pristine.name / name).unlink()
    if name == "run.json":  # no longer a completed run: listed nowhere, read by nobody
        assert _listing(home) == ([], [])
        with pytest.raises(SearchtraceError, match="run.json"):
            RunFolder.completed(home / "runs" / pristine.name)
        return
    _check(home, name, expected)


JUNK_NAMES = st.sampled_from([".hidden", "notes.txt", "run.json.bak", "extra.parquet", "a b", "ü", "-"]) | st.text(
    st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=20).filter(
    lambda n: n not in (".", "..") and n not in FILES and len(n.encode()) < 200)


@FEW
@given(junk=st.dictionaries(JUNK_NAMES, st.binary(max_size=64), min_size=1, max_size=3))
def test_junk_files_beside_the_run_change_nothing(pristine, scratch, expected, junk):
    home = _copy(pristine, scratch)
    for name, data in junk.items():
        (home / "runs" / pristine.name / name).write_bytes(data)
    _check(home, None, expected)


@SETTINGS
@given(name=st.sampled_from([n for n in FILES if n != "run.json"]))
def test_a_file_run_json_does_not_record_is_refused_naming_it(pristine, scratch, expected, name):
    home = _copy(pristine, scratch)
    run = home / "runs" / pristine.name
    data = json.loads((run / "run.json").read_text())
    del data["files"][name]
    from searchtrace.evals.runs.runfolder.summary import summary_sha256

    data["summary_sha256"] = summary_sha256(data)  # sealed again: only the listing is wrong
    (run / "run.json").write_text(json.dumps(data))
    _check(home, name, expected)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                max_size=3), max_leaves=8)


def _paths(data: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every key path of a JSON object, nested objects' keys included."""
    out = []
    for key, value in data.items():
        out.append((*prefix, key))
        if isinstance(value, dict):
            out.extend(_paths(value, (*prefix, key)))
    return out


def _set(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


@settings(SETTINGS, max_examples=100)
@given(pick=st.data(), value=JSON)
def test_an_edited_run_json_field_is_refused_naming_run_json(pristine, scratch, expected, pick, value):
    home = _copy(pristine, scratch)
    run = home / "runs" / pristine.name
    data = json.loads((run / "run.json").read_text())
    path = pick.draw(st.sampled_from(_paths(data)))
    _set(data, path, value)
    (run / "run.json").write_text(json.dumps(data, indent=2))
    edited = json.loads((run / "run.json").read_text()) != json.loads((pristine / "run.json").read_text())
    _check(home, "run.json" if edited else None, expected)


@settings(SETTINGS, max_examples=100)
@given(pick=st.data(), value=JSON)
def test_a_run_json_edited_and_sealed_again_reads_or_is_refused_naming_it(pristine, scratch, pick, value):
    """Someone who recomputes summary_sha256 gets past the seal: every field is still checked, and any
    value is read or refused as a DataError naming run.json, never a crash of any reader."""
    from searchtrace.evals.runs.runfolder.summary import summary_sha256

    home = _copy(pristine, scratch)
    run = home / "runs" / pristine.name
    data = json.loads((run / "run.json").read_text())
    _set(data, pick.draw(st.sampled_from([p for p in _paths(data) if p[0] not in ("files", "summary_sha256")])),
         value)
    data["summary_sha256"] = summary_sha256(data)
    (run / "run.json").write_text(json.dumps(data, indent=2))
    folder = RunFolder(run)
    for name, read in READERS.items():
        try:
            read(folder)
        except SearchtraceError as exc:
            assert "run.json" in exc.message or name == "evaluation", (name, exc.message)
    runs, problems = _listing(home)
    assert len(runs) + len(problems) == 1
