"""The run index: completed runs listed, found by id, name or tag, read whole, published and exported.

One protocol (:class:`RunIndex`), two implementations: the run folders of a
home (:class:`HomeRunIndex`) and the store a team shares on PostgreSQL
(:class:`PostgresRunIndex`). ``compare`` and ``gate`` read a store's run through
a verified cache folder in the home (:func:`resolve_run`), so every code path
that reads a run folder reads it unchanged.

(The names below are imported ``as`` themselves, ruff's mark of a re-export, so
this package needs no entry in pyproject's per-file ignores.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.runs.runindex.entry import LATEST_TAG as LATEST_TAG
    from searchtrace.evals.runs.runindex.entry import RunEntry as RunEntry
    from searchtrace.evals.runs.runindex.entry import RunSelector as RunSelector
    from searchtrace.evals.runs.runindex.home_index import HomeRunIndex as HomeRunIndex
    from searchtrace.evals.runs.runindex.materialize import write_folder as write_folder
    from searchtrace.evals.runs.runindex.opening import open_run_index as open_run_index
    from searchtrace.evals.runs.runindex.opening import open_store_index as open_store_index
    from searchtrace.evals.runs.runindex.postgres import PostgresRunIndex as PostgresRunIndex
    from searchtrace.evals.runs.runindex.protocol import RunIndex as RunIndex
    from searchtrace.evals.runs.runindex.publish import publish_folder as publish_folder
    from searchtrace.evals.runs.runindex.publish import push_command as push_command
    from searchtrace.evals.runs.runindex.resolve import resolve_run as resolve_run
    from searchtrace.evals.runs.runindex.snapshot import RunFile as RunFile
    from searchtrace.evals.runs.runindex.snapshot import RunSnapshot as RunSnapshot
    from searchtrace.evals.runs.runindex.snapshot import read_snapshot as read_snapshot

__getattr__, __dir__, __all__ = exports(__name__, __file__)
