"""A trace's results as pairs to judge in place, on the Traces page.

A judgment's key is (query id, doc id), whatever showed the pair: a trace of an
eval run carries its query id on the search span; live traffic carries only the
query text, whose id is the one every query set gives it
(:func:`searchtrace.evals.query_id` of the normalized text). The judgments go to
the dataset folder the search searched: the eval run's, else the folders the
home's runs scored whose name is the dataset the trace records.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from searchtrace.dashboard.data.documents import documents
from searchtrace.dashboard.data.judging import dataset_folders
from searchtrace.dashboard.data.runs import run_folder
from searchtrace.dashboard.data.traces import Waterfall
from searchtrace.errors import SearchtraceError
from searchtrace.evals import query_id as traffic_query_id
from searchtrace.traces import vocabulary as v

__all__ = ["TraceResults", "trace_results"]


@dataclass(frozen=True)
class TraceResults:
    """What judging a trace's results needs.

    Attributes:
        trace_id: recorded with each judgment.
        query_id: the pair's query id; None when the trace has neither an id nor a query text.
        query: the query text ("" when not recorded).
        dataset: the dataset's name the trace records, if any.
        folders: the dataset folders the judgments may go to, the likeliest first.
        results: the search's results, (doc id, title) in the response's order.
    """

    trace_id: str
    query_id: str | None
    query: str
    dataset: str | None
    folders: tuple[str, ...]
    results: tuple[tuple[str, str], ...]


def _attribute(view: Waterfall, span: str, key: str) -> str | None:
    rows = view.attributes[(view.attributes["name"] == span) & (view.attributes["key"] == key)]
    return str(rows["value"].iloc[0]) if not rows.empty else None


def _run_dataset(home: str | Path, run_id: object) -> list[str]:
    if not run_id:
        return []
    try:
        path = run_folder(home, str(run_id)).summary().dataset.path
    except (SearchtraceError, OSError):
        return []
    return [str(Path(path).resolve())] if path and Path(path).is_dir() else []


def _result_ids(view: Waterfall) -> list[str]:
    roots = view.spans[view.spans["name"] == v.SEARCH_SPAN]["span_id"].astype(str).tolist()
    table = view.documents.get(roots[0]) if roots else None
    return table["doc_id"].astype(str).tolist() if table is not None else []


def trace_results(home: str | Path, view: Waterfall) -> TraceResults:
    """The trace's results and the key and folders their judgments take."""
    summary = view.summary
    query = str(summary.get("query") or "")
    recorded = summary.get("query_id")
    query_id = str(recorded) if recorded else traffic_query_id(query) if query.strip() else None
    dataset = _attribute(view, v.SEARCH_SPAN, v.DATASET)
    folders = _run_dataset(home, summary.get("run_id"))
    folders += [f for f in dataset_folders(home) if dataset and Path(f).name == dataset and f not in folders]
    titles = documents(folders[0]) if folders else {}
    results = tuple((doc, titles.get(doc, ("", ""))[0]) for doc in _result_ids(view))
    return TraceResults(str(summary["trace_id"]), query_id, query, dataset, tuple(folders), results)
