"""The home folder: where indexes, the embedding cache, run folders and the trace store live.

Resolved once, flag > ``$SEARCHTRACE_HOME`` > ``~/.searchtrace``; every path in
it is named here and nowhere else::

    <home>/
      indexes/<dataset>-<key>/   one content-addressed index per dataset and configuration
      cache/embeddings.sqlite    embeddings by text hash
      cache/models/              ONNX encoders built from the model's weights, by their sha256
      runs/<run id>/             one folder per eval run
      runs.outside               the run folders written elsewhere (eval --out), one path a line
      traces.sqlite              the local trace store
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from searchtrace.environment import SEARCHTRACE_HOME
from searchtrace.envvalues import text
from searchtrace.errors import ValidationError
from searchtrace.safepaths import checked_part

__all__ = ["DEFAULT_HOME", "Home", "add_home_argument"]

DEFAULT_HOME = "~/.searchtrace"
"""The home folder when neither a flag nor ``$SEARCHTRACE_HOME`` names one."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+=-]*$")  # a run id: a plain folder name, safe from a URL


@dataclass(frozen=True)
class Home:
    """A home folder and the paths in it (nothing is created here).

    Attributes:
        root: the folder itself, ``~`` expanded.
    """

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).expanduser())

    @classmethod
    def resolve(cls, flag: str | os.PathLike[str] | None = None,
                environ: Mapping[str, str] | None = None) -> Home:
        """The home named by ``flag``, else ``$SEARCHTRACE_HOME``, else :data:`DEFAULT_HOME`."""
        env = os.environ if environ is None else environ
        return cls(Path(flag or text(env, SEARCHTRACE_HOME) or DEFAULT_HOME))

    @property
    def indexes(self) -> Path:
        """The folder of the built indexes."""
        return self.root / "indexes"

    @property
    def cache(self) -> Path:
        """The folder of caches that can be rebuilt."""
        return self.root / "cache"

    @property
    def embedding_cache(self) -> Path:
        """The embedding cache (SQLite, vectors by text hash)."""
        return self.cache / "embeddings.sqlite"

    @property
    def models(self) -> Path:
        """The folder of encoder graphs built from model weights (rebuilt when missing)."""
        return self.cache / "models"

    def onnx_model(self, weights_sha256: str, variant: str) -> Path:
        """The ONNX encoder built from the weights with this sha256, in ``variant`` (builder version, precision).

        A folder: ``model.onnx`` (the graph) and ``weights.bin`` (its tensors,
        which ONNX Runtime maps instead of parsing them out of the graph).
        """
        return self.models / f"{weights_sha256[:16]}-{variant}"

    def weights_stamp(self, file_key: str) -> Path:
        """Where the sha256 of a weights file is remembered, by its path, size and mtime (``file_key``)."""
        return self.models / f"weights-{file_key}.sha256"

    @property
    def runs(self) -> Path:
        """The folder of eval run folders."""
        return self.root / "runs"

    @property
    def runs_outside(self) -> Path:
        """The list of run folders written outside :attr:`runs` (``eval --out``), one absolute path a line."""
        return self.root / "runs.outside"

    @property
    def traces(self) -> Path:
        """The local trace store (SQLite)."""
        return self.root / "traces.sqlite"

    @property
    def trace_losses(self) -> Path:
        """The counts of spans lost before a store or collector took them (``traces.export.losses``)."""
        return self.root / "traces.losses"

    @property
    def trace_spill(self) -> Path:
        """The shared store's held spans, spilled per process so a kill does not lose them
        (``traces.export.spill``)."""
        return self.root / "traces.spill"

    def problem(self) -> str | None:
        """Why this home cannot be used at all (it exists and is not a folder), or None."""
        if self.root.exists() and not self.root.is_dir():
            return f"home {self.root} is a file, not a folder"
        return None

    def writable(self) -> bool:
        """Whether files can be created in the home (it is created if missing).

        Tried, not read from the mode bits: root ignores them, and a read-only
        mount refuses everyone.
        """
        import tempfile

        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=".write-probe-", dir=self.root)
        except OSError:
            return False
        os.close(fd)
        os.unlink(name)
        return True

    def index(self, dataset: str, key: str) -> Path:
        """The folder of the index of ``dataset`` under configuration ``key``."""
        # the names are checked, not resolved: a home's owner may link an index in from elsewhere
        return self.indexes / checked_part(f"{checked_part(dataset, 'dataset')}-{checked_part(key, 'index key')}",
                                           "index")

    def run(self, run_id: str) -> Path:
        """The folder of run ``run_id`` (it may not exist).

        Raises:
            ValidationError: ``run_id`` is not a plain folder name (it may come from a URL).
        """
        if not isinstance(run_id, str) or not _NAME.match(run_id):
            raise ValidationError(f"run id must be a folder name, got {run_id!r:.80}", field="run")
        return self.runs / checked_part(run_id, "run")  # checked, not resolved: a run may be linked in


def add_home_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--home`` flag every command that reads or writes the home folder takes."""
    parser.add_argument("--home", metavar="DIR",
                        help=f"home folder of indexes, runs and traces (default: ${SEARCHTRACE_HOME} or {DEFAULT_HOME})")
