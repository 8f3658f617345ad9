"""The runs store (the run index): completed runs listed, found by id, name or tag, read whole and published.

One protocol (``protocol``: :class:`RunIndex`), two backends: the run folders
of a home (``local``: :class:`HomeRunIndex`) and the store a team shares on
PostgreSQL (``postgres``: :class:`PostgresRunIndex`, with ``postgres_publish``
writing a run in one transaction), one contract suite on both; ``opening`` is
the factory every caller goes through (it alone names a backend). What the
protocol exchanges: ``entry`` (a listed run, and ``latest:tag=NAME``),
``snapshot`` (a completed run read whole, a damaged folder refused naming the
file); ``rebuild`` (``run.trec`` and ``rankings.parquet`` from the stored
rankings) and ``materialize`` (a run folder written whole or not at all); ``schema``
is its tables on PostgreSQL.

(The names below are imported ``as`` themselves, ruff's mark of a re-export, so
this package needs no entry in pyproject's per-file ignores.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.runs.store.entry import LATEST_TAG as LATEST_TAG
    from searchtrace.evals.runs.store.entry import RunEntry as RunEntry
    from searchtrace.evals.runs.store.entry import RunSelector as RunSelector
    from searchtrace.evals.runs.store.local import HomeRunIndex as HomeRunIndex
    from searchtrace.evals.runs.store.materialize import write_folder as write_folder
    from searchtrace.evals.runs.store.opening import open_run_index as open_run_index
    from searchtrace.evals.runs.store.opening import open_store_index as open_store_index
    from searchtrace.evals.runs.store.postgres import PostgresRunIndex as PostgresRunIndex
    from searchtrace.evals.runs.store.protocol import RunIndex as RunIndex
    from searchtrace.evals.runs.store.snapshot import RunFile as RunFile
    from searchtrace.evals.runs.store.snapshot import RunSnapshot as RunSnapshot
    from searchtrace.evals.runs.store.snapshot import read_snapshot as read_snapshot

__getattr__, __dir__, __all__ = exports(__name__, __file__)
