"""A store's run as a folder in the home's cache, so every reader of run folders reads it unchanged.

The cache folder of a run is keyed by its id and checked against the store's
list of its files (names and sha256) each time it is used: one that is partial,
torn or of other content (another store's run of the same id) is written again,
whole (``materialize``), before anything reads it.
"""

from __future__ import annotations

from pathlib import Path

from searchtrace.errors import NotFoundError
from searchtrace.evals.runs.runfolder import RunFolder
from searchtrace.evals.runs.store.materialize import verified, write_folder
from searchtrace.evals.runs.store.protocol import RunIndex
from searchtrace.home import Home

__all__ = ["cache_folder", "cached_run"]


def cache_folder(home: Home, run_id: str) -> Path:
    """Where ``home`` caches the store's run ``run_id`` (``home.run`` checks the id is a plain folder name)."""
    return home.cache / "runs" / home.run(run_id).name


def cached_run(index: RunIndex, run_id: str, home: Home) -> RunFolder:
    """The run as a folder: in place when the index holds folders, else its verified cache folder.

    Raises:
        NotFoundError: the index has no run ``run_id``.
    """
    local = index.local_folder(run_id)
    if local is not None:
        return local
    files = index.files(run_id)
    if files is None:
        raise NotFoundError(f"no run {run_id!r} in {index.where}", field="run")
    path = cache_folder(home, run_id)
    if not verified(files, path):
        write_folder(index.snapshot(run_id).files, path, replace=True)
    return RunFolder(path)
