"""Where a home folder keeps runs and traces, and when each run was made."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from retriever.errors import NotFoundError, ValidationError

__all__ = ["RUNS_FOLDER", "created_at", "run_dir", "runs_dir"]

RUNS_FOLDER = "runs"
# ``searchtrace eval`` names runs ``<dataset>-<mode>-<UTC stamp>-<settings key>``.
_STAMP = re.compile(r"(?:^|-)(\d{8}T\d{6})(?:-|$)")
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+=-]*$")


def runs_dir(home: str | Path) -> Path:
    """The folder holding the run folders of a home."""
    return Path(home).expanduser() / RUNS_FOLDER


def run_dir(home: str | Path, run_id: str) -> Path:
    """The folder of one completed run.

    Raises:
        ValidationError: ``run_id`` is not a plain folder name (it may come from a URL).
        NotFoundError: no completed run by that id.
    """
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise ValidationError(f"run id must be a folder name, got {run_id!r}", field="run")
    folder = runs_dir(home) / run_id
    if not (folder / "run.json").is_file():
        raise NotFoundError(f"no completed run {run_id!r} in {runs_dir(home)}", field="run")
    return folder


def created_at(folder: Path) -> datetime:
    """When a run was made: the UTC stamp in its folder name, else its ``run.json``'s mtime."""
    match = _STAMP.search(folder.name)
    if match:
        try:
            return datetime.strptime(match.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    return datetime.fromtimestamp((folder / "run.json").stat().st_mtime, tz=timezone.utc)
