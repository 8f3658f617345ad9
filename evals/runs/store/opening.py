"""Which run index a command uses: the shared store when a URL is given, else the home's run folders.

The one place outside the backends that names them: every caller gets a :class:`RunIndex`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace.evals.runs.store.local import HomeRunIndex
from searchtrace.home import Home

if TYPE_CHECKING:
    from searchtrace.database import StoreUrl
    from searchtrace.evals.runs.store.protocol import RunIndex

__all__ = ["open_run_index", "open_store_index"]


def open_store_index(url: StoreUrl) -> RunIndex:
    """The store's run index, its schema version checked first.

    Raises:
        BackendUnavailable: the store cannot be reached.
        StoreVersionError: its schema is not this client's (one line: run ``searchtrace store migrate``, or upgrade).
    """
    from searchtrace.database import check_version, database
    from searchtrace.evals.runs.store.postgres import PostgresRunIndex

    db = database(url)
    check_version(db)
    return PostgresRunIndex(db)


def open_run_index(url: StoreUrl | None, home: Home) -> RunIndex:
    """The store's index when ``url`` is given, else ``home``'s run folders."""
    return open_store_index(url) if url is not None else HomeRunIndex(home)
