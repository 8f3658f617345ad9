"""The text of the queries a verdict lists, beside their ids: read from the runs' dataset folders.

A run records its dataset's path (``run.json``); the queries are in its
``queries.jsonl``. A dataset moved or removed since leaves the ids alone: the
lists still read, only without text.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

from searchtrace.errors import SearchtraceError
from searchtrace.evals.runs.runfolder import RunFolder
from searchtrace.retriever import load_queries
from searchtrace.terminal import cells, fit, one_line

__all__ = ["query_texts", "text_line"]

log = logging.getLogger(__name__)


def query_texts(folders: Iterable[RunFolder]) -> dict[str, str]:
    """The query texts of the runs' datasets by id (the first run's text where two datasets disagree)."""
    texts: dict[str, str] = {}
    for path in dict.fromkeys(Path(f.summary().dataset.path) / "queries.jsonl" for f in folders):
        if not path.is_file():
            continue
        try:
            queries = load_queries(path)
        except (SearchtraceError, OSError) as exc:  # listed without text: the verdict stands without it
            log.info("query texts not shown: %s", getattr(exc, "message", exc))
            continue
        for q in queries:
            texts.setdefault(q.id, q.text)
    return texts


def text_line(texts: Mapping[str, str], query_id: str, columns: int, indent: str = "    ") -> list[str]:
    """The query's text on a line of its own, indented and cut to ``columns`` (none when it is not known)."""
    text = texts.get(query_id)
    return [fit(indent + one_line(text), columns)] if text and columns > cells(indent) else []
