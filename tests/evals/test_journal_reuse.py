"""A journal reuses the records it appended: reading its own lines gives what parsing them gives, types included.

The fast path (a line byte for byte one this :class:`Journal` wrote) and the careful one (a fresh
``Journal`` on the same file, which parses every line) must agree on every record, every problem and
every type: over any records (hypothesis, non-finite floats and the runner's impossible combinations
included), and over the records real runs make (a function target with failures, hints and the
corrective loop; the local retriever).
"""

from __future__ import annotations

import json
import math
import sys
import types
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchtrace.evals.runs.runfolder import (
    CorrectiveOutcome,
    EvalSettings,
    QueryOutcome,
    RankedResult,
    RetryAttempt,
)
from searchtrace.evals.runs.runfolder.journal import Journal
from searchtrace.evals.scoring.attribution import GoldTrace, LostAt
from searchtrace.names import Band
from searchtrace.retriever import RetryHints, Triple

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"


def differs(a: Any, b: Any, where: str = "record") -> str | None:
    """Where ``a`` and ``b`` differ in value or in type (NaN equals NaN), or None."""
    if type(a) is not type(b):
        return f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{where}: {len(a)} vs {len(b)} items"
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := differs(x, y, f"{where}[{i}]"))), None)
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{where}: keys {list(a)} vs {list(b)}"
        return next((d for k in a if (d := differs(a[k], b[k], f"{where}.{k}"))), None)
    if hasattr(a, "__dataclass_fields__"):
        return next((d for k in a.__dataclass_fields__ if (d := differs(getattr(a, k), getattr(b, k), f"{where}.{k}"))),
                    None)
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return None
    if isinstance(a, float) and a == 0 and math.copysign(1, a) != math.copysign(1, b):
        return f"{where}: {a!r} vs {b!r}"
    return None if a == b else f"{where}: {a!r} vs {b!r}"


def test_differs_sees_values_and_types():
    assert differs(QueryOutcome("q", "", {"total": 1.0}), QueryOutcome("q", "", {"total": 1.0})) is None
    assert differs(QueryOutcome("q", "", {"total": 1.0}), QueryOutcome("q", "", {"total": 1})) == \
        "record.latency_ms.total: float vs int"
    assert differs(QueryOutcome("q", "", {}, degraded=("a",)), QueryOutcome("q", "", {}, degraded=["a"])) == \
        "record.degraded: tuple vs list"  # type: ignore[arg-type]
    assert differs((0.0,), (-0.0,)) == "record[0]: 0.0 vs -0.0"
    assert differs((math.nan,), (math.nan,)) is None


def assert_agree(journal: Journal) -> list[Any]:
    """``journal``'s read equals a fresh journal's parse of the same file: records, types, problems."""
    reused = journal.read()
    fresh = Journal(journal.path)
    parsed = fresh.read()
    assert len(reused) == len(parsed)
    for a, b in zip(reused, parsed):
        assert differs(a, b) is None, differs(a, b)
    assert [p.message for p in journal.problems] == [p.message for p in fresh.problems]
    return reused


TEXT = st.text(max_size=6) | st.sampled_from(["NaN", "Infinity", "é\u2028\"\\", ""])
FLOATS = st.floats() | st.sampled_from([0.1 + 0.2, 5e-324, -0.0, 1e16, 1.7976931348623157e308])
TEXTS = st.lists(TEXT, max_size=3).map(tuple)
RANKING = st.lists(st.tuples(TEXT, FLOATS), max_size=4).map(tuple)
RESULT = st.builds(RankedResult, doc_id=TEXT, relevance=FLOATS, band=st.sampled_from(Band), grade=st.integers(),
                   features=st.dictionaries(TEXT, FLOATS, max_size=3))
GOLD = st.builds(GoldTrace, query_id=TEXT, doc_id=TEXT, grade=st.integers(), stages=TEXTS,
                 fused_rank=st.none() | st.integers(), filtered=st.booleans(),
                 final_rank=st.none() | st.integers(), lost_at=st.sampled_from(LostAt))
QUERY = st.builds(
    QueryOutcome, query_id=TEXT, category=TEXT, latency_ms=st.dictionaries(TEXT, FLOATS, max_size=3),
    ranking=RANKING, results=st.lists(RESULT, max_size=3).map(tuple), best_score=FLOATS,
    no_confident=st.booleans(), bands=st.lists(st.sampled_from(Band), max_size=3).map(tuple), weak=st.booleans(),
    retry_hints=st.none() | st.builds(RetryHints, TEXTS, TEXTS, TEXT, TEXT),
    kg=st.none() | st.lists(st.builds(Triple, TEXT, TEXT, TEXT, TEXT), max_size=2).map(tuple),
    rewrite_terms=TEXTS, degraded=TEXTS, trace_id=TEXT, attribution=st.lists(GOLD, max_size=2).map(tuple),
    error=st.none() | TEXT, traced=st.booleans(), error_message=st.none() | TEXT)
CORRECTIVE = st.builds(CorrectiveOutcome, corrective_of=TEXT, chosen=TEXT, ranking=RANKING, best_score=FLOATS,
                       added_ms=FLOATS, tried=st.lists(st.builds(RetryAttempt, TEXT, TEXT, FLOATS, FLOATS),
                                                       max_size=2).map(tuple))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(QUERY | CORRECTIVE, min_size=1, max_size=3), min_size=1, max_size=3))
def test_reused_records_are_what_parsing_gives(tmp_path_factory, batches):
    journal = Journal(tmp_path_factory.mktemp("j") / "journal.jsonl")
    for batch in batches:
        journal.append(batch)
    assert_agree(journal)
    lines = [json.dumps(r.to_json() | ({"kg": [asdict(t) for t in r.kg]} if getattr(r, "kg", None) else {}),
                        ensure_ascii=False, separators=(",", ":")) + "\n" for batch in batches for r in batch]
    assert journal.path.read_text(encoding="utf-8") == "".join(lines)  # a line is its record's JSON


def test_a_line_changed_on_disk_is_parsed_again_and_a_copied_one_reused(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl")
    records = [QueryOutcome(f"q{i}", "", {"total": float(i)}, ranking=(("d", 0.5),)) for i in range(3)]
    journal.append(records)
    lines = journal.path.read_bytes().splitlines(keepends=True)
    journal.path.write_bytes(lines[2] + lines[1].replace(b'"d"', b'"e"') + b"{broken\n" + lines[0])
    read = assert_agree(journal)
    assert [r.query_id for r in read] == ["q2", "q1", "q0"] and read[0] is records[2] and read[2] is records[0]
    assert read[1].ranking == (("e", 0.5),)
    assert [p.line for p in journal.problems] == [3]


def test_a_line_a_reader_may_refuse_is_parsed_never_reused(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl")
    nan = QueryOutcome("q0", "", {"total": 1.0}, best_score=math.nan)
    stray = QueryOutcome("q1", "", {"total": 1.0}, error_message="no error, yet a message")
    journal.append([nan, stray])
    read = assert_agree(journal)
    assert [r.query_id for r in read] == ["q1"] and read[0].error_message is None
    assert "bestScore" in journal.problems[0].message


# --- the records real runs make -----------------------------------------------------------------------------------

CORPUS = [json.loads(line)["_id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines() if line.strip()]

ANSWERS = {"weak": lambda docs: {
    "results": [{"id": d, "score": round(0.31 - i / 97, 7), "confidenceBand": "low"} for i, d in enumerate(docs)],
    "bestScore": 0.1 + 0.2, "noConfidentResults": True, "traceId": "remote",
    "retryHints": {"detectedEntities": ["Vell"], "relatedTerms": ["harbour", "ë"], "narrowerQuery": "vell harbour",
                   "broaderQuery": "harbours"},
    "kg": [{"subject": "a", "relation": "b", "object": "c", "doc_id": docs[0]}], "rewrite_terms": ["x"],
    "degraded": ["graph"]}}


def _search(request: dict) -> dict:
    """A target answering each query by its text: an error, weak results with hints, or confident ones."""
    text = request["query"]
    bucket = sum(map(ord, text)) % 4
    if bucket == 0:
        raise RuntimeError(f"no answer for {text!r}")
    docs = CORPUS[bucket: bucket + min(request["top_k"], 30)]
    if bucket == 1 or text in ("vell harbour", "harbours"):
        return ANSWERS["weak"](docs)
    return {"results": [{"id": d, "score": 1 / (i + 3), "confidenceBand": "high" if i < 2 else "medium"}
                        for i, d in enumerate(docs)],
            "bestScore": 1 / 3, "noConfidentResults": False, "retryHints": None, "traceId": "remote", "kg": [],
            "rewrite_terms": [], "degraded": []}


def test_a_target_runs_records_with_failures_and_corrections_are_reused_as_parsed(tmp_path):
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.traces import TraceSettings

    module = types.ModuleType("searchtrace_test_reuse_target")
    module.search = _search  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    try:
        folder = run_eval(EvalSettings(dataset=str(SAMPLE), depth=40, corrective=True),
                          resolve_config(home=tmp_path / "home", environ={}), out=tmp_path / "r",
                          target=f"{module.__name__}:search", progress=False,
                          trace_settings=TraceSettings.resolve(environ={}))
    finally:
        del sys.modules[module.__name__]
    read = assert_agree(folder.journal)
    kinds = {(type(r).__name__, getattr(r, "error", None) is not None, getattr(r, "weak", False)) for r in read}
    assert kinds == {("QueryOutcome", True, False), ("QueryOutcome", False, True), ("QueryOutcome", False, False),
                     ("CorrectiveOutcome", False, False)}
    assert all(a is b for a, b in zip(read, folder.journal.read()))  # reused, not parsed


@pytest.mark.slow
def test_a_local_runs_records_are_reused_as_parsed(tmp_path, sample_config, sample_index_path, model):
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.traces import TraceSettings

    folder = run_eval(EvalSettings(dataset=str(SAMPLE), mode="graph", depth=100, corrective=True), sample_config,
                      out=tmp_path / "r", embedder=model, progress=False,
                      trace_settings=TraceSettings.resolve(environ={}))
    read = assert_agree(folder.journal)
    outcomes = [r for r in read if isinstance(r, QueryOutcome)]
    assert any(r.retry_hints for r in outcomes) and any(r.attribution for r in outcomes)
    assert any(isinstance(r, CorrectiveOutcome) for r in read) and all(r.results[0].features for r in outcomes)
    assert all(a is b for a, b in zip(read, folder.journal.read()))
