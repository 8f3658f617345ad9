"""The store a team shares, as the dashboard sees it: its runs beside the home's, its traces instead of the
home's file, named in the sidebar (its URL masked) with what is wrong when it cannot be used.

The dashboard process learns the store from ``$SEARCHTRACE_STORE`` (``searchtrace dashboard --store`` sets it
for the Streamlit process, so the password never appears on a command line). A store's run is read through
its verified cache folder in the home (``evals.runindex``), so every page reads it as it reads a run folder.
"""

from __future__ import annotations

from pathlib import Path

from searchtrace.database import StoreUrl, resolve_store_url
from searchtrace.errors import SearchtraceError
from searchtrace.evals import RunFolder, cached_run, open_store_index
from searchtrace.home import Home

__all__ = ["shared_store", "store_problem", "store_run", "store_runs"]


def shared_store() -> StoreUrl | None:
    """The shared store this dashboard reads (None: the home's files only)."""
    return resolve_store_url(None)


def store_runs(home: str | Path) -> list[RunFolder]:
    """Every run published to the shared store, as verified folders in ``home``'s cache, newest first (none
    without a store, or when it cannot be used: :func:`store_problem` says why)."""
    url = shared_store()
    if url is None:
        return []
    try:
        index = open_store_index(url)
        return [cached_run(index, entry.run_id, Home(Path(home))) for entry in index.entries()]
    except SearchtraceError:
        return []


def store_run(home: str | Path, run_id: str) -> RunFolder | None:
    """The shared store's run ``run_id`` as a verified cache folder, or None (no store, no such run)."""
    url = shared_store()
    if url is None:
        return None
    try:
        return cached_run(open_store_index(url), run_id, Home(Path(home)))
    except SearchtraceError:
        return None


def store_problem() -> str | None:
    """Why the shared store cannot be used now (unreachable, or its schema not this client's), or None."""
    url = shared_store()
    if url is None:
        return None
    try:
        open_store_index(url)
    except SearchtraceError as exc:
        return exc.message
    return None
