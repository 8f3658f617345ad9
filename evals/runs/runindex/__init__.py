"""The run index at work: a run named on the command line, read through the home's cache, published.

The index itself is :mod:`searchtrace.evals.runs.store` (one protocol, the
home's run folders and the shared store). ``compare`` and ``gate`` read a
store's run through a verified cache folder in the home (``cache``:
:func:`cached_run`; ``resolve``: :func:`resolve_run`, a path, id, name or tag),
so every code path that reads a run folder reads it unchanged; ``publish`` is
``eval --store``; ``cli`` is ``searchtrace runs push``, ``export`` and ``list``.

(The names below are imported ``as`` themselves, ruff's mark of a re-export, so
this package needs no entry in pyproject's per-file ignores.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.runs.runindex.cache import cached_run as cached_run
    from searchtrace.evals.runs.runindex.publish import publish_folder as publish_folder
    from searchtrace.evals.runs.runindex.publish import push_command as push_command
    from searchtrace.evals.runs.runindex.resolve import resolve_run as resolve_run

__getattr__, __dir__, __all__ = exports(__name__, __file__)
