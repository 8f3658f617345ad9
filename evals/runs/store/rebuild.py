"""``run.trec`` and ``rankings.parquet`` rebuilt from a run's rankings, as bytes.

The store keeps a run's rankings as rows, not as these two files: a published
run whose files these rebuild byte for byte stores neither (the publisher checks);
any other keeps its own bytes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.evals.runs.runfolder import RunFolder

if TYPE_CHECKING:
    from searchtrace.evals.scoring.rankings import Run

__all__ = ["REBUILT", "rebuilt_files"]

REBUILT = (RunFolder.RUN_FILE, RunFolder.RANKINGS)
"""The files a run's rankings rebuild."""


def rebuilt_files(run: Run, tag: str) -> dict[str, bytes]:
    """``run.trec`` (``tag`` in its last column) and ``rankings.parquet`` of ``run``, by file name."""
    with tempfile.TemporaryDirectory(prefix="searchtrace-rankings-") as tmp:
        folder = RunFolder(Path(tmp))
        folder.write_run_file(run, tag)
        return {name: (folder.path / name).read_bytes() for name in REBUILT}
