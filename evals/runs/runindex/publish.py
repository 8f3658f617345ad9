"""An eval's run published to the store besides its folder, and what to do when the store is down.

The folder is written first and stays the record: publishing reads it back
whole (``read_snapshot``) and adds it in one transaction. When the store cannot
be used, the eval still has its folder, and one line says the command that
publishes it later.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from searchtrace.errors import BackendUnavailable
from searchtrace.evals.runs.store.opening import open_store_index
from searchtrace.evals.runs.store.snapshot import read_snapshot

if TYPE_CHECKING:
    from searchtrace.database import StoreUrl
    from searchtrace.evals.runs.runfolder import RunFolder

__all__ = ["publish_folder", "push_command"]


def push_command(folder: RunFolder, url: StoreUrl) -> str:
    """``searchtrace runs push DIR --store URL``, the URL masked (the password comes from ``$PGPASSWORD``)."""
    return url.command(f"runs push {shlex.quote(str(folder.path))}")


def publish_folder(folder: RunFolder, url: StoreUrl) -> tuple[bool, list[str]]:
    """Publish ``folder``'s run; (published, the lines to print).

    A store that is unreachable, or whose schema is not this client's, is a
    failure to publish, not an error: one line names why, the next is the
    command to run later. A run the store already has, with the same content, counts as published.

    Raises:
        DataError, NotFoundError: the folder is damaged or incomplete.
        ValidationError: the store has another run with this id.
    """
    from searchtrace.database import StoreVersionError

    snapshot = read_snapshot(folder)
    try:
        index = open_store_index(url)
        added = index.publish(snapshot)
    except (BackendUnavailable, StoreVersionError) as exc:
        return False, [f"run not published: {exc.message}", f"publish it later: {push_command(folder, url)}"]
    state = "published to" if added else "already in"
    return True, [f"run {snapshot.run_id} {state} {index.where}"]
