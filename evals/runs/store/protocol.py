"""The run index: where completed runs are listed, found, read whole and published.

Two implementations keep the same contract (``tests/test_run_index_contract.py``):
:class:`~searchtrace.evals.runs.store.local.HomeRunIndex`, the run folders of
a home, and :class:`~searchtrace.evals.runs.store.postgres.PostgresRunIndex`, the
store a team shares.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from searchtrace.evals.runs.runfolder import RunFolder
from searchtrace.evals.runs.store.entry import RunEntry, RunSelector
from searchtrace.evals.runs.store.snapshot import RunFile, RunSnapshot

__all__ = ["RunIndex"]


@runtime_checkable
class RunIndex(Protocol):
    """Completed runs, by id, name and tag."""

    @property
    def where(self) -> str:
        """The index, for a message: ``home /path`` or ``store postgresql://user:****@host/db``."""
        ...

    def entries(self, tag: str | None = None) -> list[RunEntry]:
        """Every run (with ``tag`` when given), newest first."""
        ...

    def find(self, selector: RunSelector) -> RunEntry:
        """The run asked for: an id; else the newest run of that name; or the newest with the tag.

        Raises:
            NotFoundError: no such run, naming what was asked and :attr:`where`.
        """
        ...

    def snapshot(self, run_id: str) -> RunSnapshot:
        """The whole run ``run_id``, every file with its content.

        Raises:
            NotFoundError: no run by that id.
        """
        ...

    def files(self, run_id: str) -> tuple[RunFile, ...] | None:
        """The run's files by name, without their content (name, sha256, size); None: no such run."""
        ...

    def local_folder(self, run_id: str) -> RunFolder | None:
        """The run's folder when it already is one on this machine (read it in place), else None."""
        ...

    def publish(self, snapshot: RunSnapshot) -> bool:
        """Add the run whole, or not at all; True when added, False when the same run was there already.

        Raises:
            ValidationError: another run with this id is there (different content).
        """
        ...
