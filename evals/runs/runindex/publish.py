"""An eval's run published to the store besides its folder, and what to do when the store is down.

The folder is written first and stays the record: publishing reads it back
whole (``read_snapshot``) and adds it in one transaction. When the store cannot
be used, the eval still has its folder, and one line says the command that
publishes it later.
"""

from __future__ import annotations

import shlex
import textwrap
from typing import TYPE_CHECKING

from searchtrace.errors import BackendUnavailable
from searchtrace.evals.runs.store.opening import open_store_index
from searchtrace.evals.runs.store.snapshot import read_snapshot
from searchtrace.terminal import DEFAULT_WIDTH, cells, command_lines

if TYPE_CHECKING:
    from searchtrace.database import StoreUrl
    from searchtrace.evals.runs.runfolder import RunFolder

__all__ = ["not_published_lines", "publish_folder", "published_lines", "push_command"]


def push_command(folder: RunFolder, url: StoreUrl) -> str:
    """``searchtrace runs push DIR --store URL``, the URL without its password (from ``$PGPASSWORD``)."""
    return url.command(f"runs push {shlex.quote(str(folder.path))}")


def published_lines(run_id: str, added: bool, where: str, columns: int) -> list[str]:
    """``run ID published to store URL`` (or ``already in``) on one line when it fits in ``columns``, else the
    URL on a line of its own: a run id and a URL are never cut."""
    state = "published to" if added else "already in"
    line = f"run {run_id} {state} {where}"
    kind, _, place = where.partition(" ")  # "store postgresql://..."
    return [line] if cells(line) <= columns or not place else [f"run {run_id} {state} {kind}:", f"  {place}"]


def not_published_lines(message: str, folder: RunFolder, url: StoreUrl, columns: int) -> list[str]:
    """Why the run was not published, wrapped to ``columns``, and the command that publishes it later (whole,
    on one line when it fits, else with ``\\`` continuations)."""
    lines = textwrap.wrap(f"run not published: {message}", columns, subsequent_indent="  ", break_long_words=False,
                          break_on_hyphens=False)
    later = f"publish it later: {push_command(folder, url)}"
    if cells(later) <= columns:
        return [*lines, later]
    return [*lines, "publish it later:", *command_lines(["searchtrace", "runs", "push", str(folder.path), "--store",
                                                        url.unsecret()], columns)]


def publish_folder(folder: RunFolder, url: StoreUrl, columns: int = DEFAULT_WIDTH) -> tuple[bool, list[str]]:
    """Publish ``folder``'s run; (published, the lines to print, at most ``columns`` cells but for a long URL).

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
        return False, not_published_lines(exc.message, folder, url, columns)
    return True, published_lines(snapshot.run_id, added, index.where, columns)
