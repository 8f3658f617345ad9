"""A run named on the command line: a run folder's path, else a run id, a name or ``latest:tag=NAME``.

A path that exists is read as a run folder whatever the store. Otherwise the run
is looked up in the store when one is given (and read through the home's cache),
else among the home's run folders.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.errors import NotFoundError
from searchtrace.evals.runs.runfolder import RunFolder
from searchtrace.evals.runs.runindex.cache import cached_run
from searchtrace.evals.runs.store.entry import RunSelector
from searchtrace.evals.runs.store.opening import open_run_index, open_store_index
from searchtrace.home import Home

if TYPE_CHECKING:
    from searchtrace.database import StoreUrl

__all__ = ["resolve_run"]


def resolve_run(argument: str, store: StoreUrl | None, home: Home) -> RunFolder:
    """The completed run folder ``argument`` names.

    Raises:
        NotFoundError: no such folder or run, naming what was asked and where it was looked for (exit 2).
        BackendUnavailable, StoreVersionError: the store cannot be used.
    """
    path = Path(argument)
    if path.exists():
        return RunFolder.completed(path)
    selector = RunSelector.parse(argument)
    if store is not None:
        index = open_store_index(store)
        return cached_run(index, index.find(selector).run_id, home)
    local = open_run_index(None, home)
    try:
        return cached_run(local, local.find(selector).run_id, home)
    except NotFoundError:
        raise NotFoundError(f"{argument}: no such run folder, and no {selector.describe()} in {local.where} "
                            "(a run in a shared store needs --store or $SEARCHTRACE_STORE)", field="run") from None
