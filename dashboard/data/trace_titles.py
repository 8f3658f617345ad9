"""Titles and relation triples for a trace's documents tables, whatever called the search.

A search records its results' titles and its relation hits' triples on its span
(``searchtrace.result.titles``, ``searchtrace.relation.*``): it has them at hand.
A stage's candidates (up to 100 a stage, five stages) are not recorded with
titles: fetching them would cost every search a payload read of a few hundred
documents and its trace a few kilobytes. They are read when a trace is shown,
from the corpus of the dataset the search searched: an eval run's dataset, else
the folder the manifest of the searched index names (the span's
``searchtrace.dataset`` and ``searchtrace.index.key``), which is how served and
command-line traces get them.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Mapping

from searchtrace.dashboard.data.runs import run_folder
from searchtrace.errors import SearchtraceError, ValidationError
from searchtrace.home import Home
from searchtrace.safepaths import checked_part
from searchtrace.traces import vocabulary as v

__all__ = ["Triple", "dataset_path", "recorded_titles", "relation_triples", "triple_text"]

Triple = tuple[str, str, str]
"""A relation hit's subject, relation and object."""


def recorded_titles(search: Mapping[str, Any]) -> dict[str, str]:
    """The titles the search span recorded of its results, by id (untitled ones left out)."""
    ids, titles = search.get(v.RESULT_IDS) or (), search.get(v.RESULT_TITLES) or ()
    return {str(i): str(t) for i, t in zip(ids, titles) if t}


def relation_triples(search: Mapping[str, Any]) -> dict[str, Triple]:
    """The triple of each relation hit the search span recorded, by its id."""
    columns = [search.get(k) or () for k in (v.RELATION_IDS, v.RELATION_SUBJECTS, v.RELATION_PREDICATES,
                                             v.RELATION_OBJECTS)]
    return {str(i): (str(s), str(r), str(o)) for i, s, r, o in zip(*columns)}


def triple_text(triple: Triple) -> str:
    """``subject → relation → object``, as the Query page writes triples."""
    return " → ".join(triple)


@functools.lru_cache(maxsize=64)
def _index_dataset(home: str, dataset: str, key: str) -> str | None:
    """The dataset folder the manifest of index (dataset, key) names, when it still exists (an index's
    manifest never changes: cached)."""
    from searchtrace.retriever import DamagedIndex, read_manifest  # the index package loads on first use

    try:
        path = read_manifest(Home(Path(home)).index(dataset, key)).dataset_path
    except (DamagedIndex, OSError, ValueError):
        return None
    return path if path and Path(path).is_dir() else None


def dataset_path(home: str | Path, run_id: object, dataset: object, index_key: object) -> str | None:
    """The folder of the dataset a trace's search searched: its eval run's, else its index's (None: unknown)."""
    if run_id:
        try:
            return run_folder(home, str(run_id)).summary().dataset.path or None
        except (SearchtraceError, OSError):
            pass
    if _plain(dataset) and _plain(index_key):  # names from a span: never a path out of the home
        return _index_dataset(str(home), str(dataset), str(index_key))
    return None


def _plain(name: object) -> bool:
    try:
        checked_part(name, "name")
    except ValidationError:
        return False
    return isinstance(name, str) and not name.startswith(".")
