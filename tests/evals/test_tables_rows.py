"""``per_query.parquet`` and ``results.parquet`` are the bytes rows of dicts made (how they were built before
rows of tuples): over any outcomes (hypothesis) and the journal of a real run folder."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from searchtrace.evals.runs.runfolder import QueryOutcome, RankedResult, per_query_table, results_table
from searchtrace.evals.runs.runfolder.tables import (
    BANDS,
    BEST_SCORE,
    NO_CONFIDENT,
    RESULT_COLUMNS,
    TRACE_ID,
    feature_column,
    latency_column,
)
from searchtrace.evals.scoring.metrics import Evaluation
from searchtrace.names import Band
from searchtrace.retriever import FEATURES


def per_query_as_dicts(outcomes: Sequence[QueryOutcome], ev: Evaluation) -> pd.DataFrame:
    """The table as rows of dicts (the reference)."""
    values = {m: dict(zip(ev.query_ids, ev[m])) for m in ev.metrics}
    stages = sorted({s for o in outcomes for s in o.latency_ms})
    rows = []
    for o in outcomes:
        row: dict[str, object] = {"query_id": o.query_id, "category": o.category}
        row |= {str(m): values[m].get(o.query_id, np.nan) for m in ev.metrics}
        row |= {BEST_SCORE: o.best_score, BANDS: ",".join(b.value for b in o.bands),
                NO_CONFIDENT: o.no_confident, "error": o.error, TRACE_ID: o.trace_id}
        row |= {latency_column(s): o.latency_ms.get(s, np.nan) for s in stages}
        rows.append(row)
    return pd.DataFrame(rows)


def results_as_dicts(outcomes: Sequence[QueryOutcome], features: Sequence[str]) -> pd.DataFrame:
    """The table as rows of dicts (the reference)."""
    rows = []
    for o in outcomes:
        for rank, res in enumerate(o.results, 1):
            rows.append({"query_id": o.query_id, "category": o.category, "rank": rank, "doc_id": res.doc_id,
                         "relevance": res.relevance, "band": res.band.value, "grade": res.grade,
                         "label": int(res.grade > 0)}
                        | {feature_column(name): res.features.get(name, np.nan) for name in features})
    return pd.DataFrame(rows, columns=[*RESULT_COLUMNS, *(feature_column(n) for n in features)])


def parquet(frame: pd.DataFrame) -> bytes:
    out = io.BytesIO()
    frame.to_parquet(out, index=False)
    return out.getvalue()


def assert_same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == list(want.columns)
    assert list(got.dtypes) == list(want.dtypes)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    if got.columns.is_unique:  # a table with a column twice is no parquet file
        assert parquet(got) == parquet(want)


TEXT = st.text(max_size=4)
NUMBER = st.floats() | st.integers(-5, 5)
RESULT = st.builds(RankedResult, doc_id=TEXT, relevance=NUMBER, band=st.sampled_from(Band), grade=st.integers(-1, 3),
                   features=st.dictionaries(st.sampled_from([*FEATURES[:3], "other"]), NUMBER, max_size=4))
OUTCOME = st.builds(QueryOutcome, query_id=st.sampled_from(["q1", "q2", "q3", "é"]), category=TEXT,
                    latency_ms=st.dictionaries(st.sampled_from(["total", "search", "dense"]), NUMBER, max_size=3),
                    results=st.lists(RESULT, max_size=3).map(tuple), best_score=NUMBER, no_confident=st.booleans(),
                    bands=st.lists(st.sampled_from(Band), max_size=3).map(tuple), error=st.none() | TEXT,
                    trace_id=TEXT)


@settings(max_examples=60, deadline=None)
@given(outcomes=st.lists(OUTCOME, max_size=4),
       metrics=st.dictionaries(st.sampled_from(["ndcg@10", "recall@5", "mrr@10"]),
                               st.lists(st.floats(0, 1) | st.just(np.nan), min_size=2, max_size=2), max_size=2),
       features=st.sampled_from([FEATURES, (), ("dense", "dense"), ("dense", "other")]))
def test_tables_are_what_rows_of_dicts_give(outcomes, metrics, features):
    ev = Evaluation.from_arrays(["q1", "é"], metrics)
    assert_same(per_query_table(outcomes, ev), per_query_as_dicts(outcomes, ev))
    assert_same(results_table(outcomes, features), results_as_dicts(outcomes, features))


def test_a_real_runs_tables_are_what_rows_of_dicts_give(tmp_path):
    from searchtrace.evals.runs import analysis
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.retriever import load_dataset

    sample = Path(__file__).resolve().parents[2] / "datasets" / "sample"
    folder = RunFolder(tmp_path / "r")
    (tmp_path / "r").mkdir()
    outcomes = [QueryOutcome(q.id, q.category, {"total": 1.5, "search": 1.25},
                             ranking=((f"d{i}", 1.0 / (i + 1)),),
                             results=(RankedResult(f"d{i}", 0.5, Band.MEDIUM, i % 2, dict(zip(FEATURES, (0.1, 2.0)))),),
                             best_score=0.5, no_confident=False, bands=(Band.MEDIUM,), trace_id=f"t{i}")
                for i, q in enumerate(load_dataset(sample, split="test").queries_for_split())]
    folder.append(outcomes)
    dataset = load_dataset(sample, split="test")
    ev = analysis.evaluation(folder.outcomes(), dataset.qrels, ["ndcg@10", "recall@100"])
    assert_same(per_query_table(folder.outcomes(), ev), per_query_as_dicts(folder.outcomes(), ev))
    assert_same(results_table(folder.outcomes(), FEATURES), results_as_dicts(folder.outcomes(), FEATURES))
