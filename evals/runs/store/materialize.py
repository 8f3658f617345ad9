"""A run snapshot written as a run folder, whole or not at all.

The files are written into a hidden folder beside the target, each checked
against its sha256, flushed to disk (``searchtrace.durable``), and the folder is
renamed into place: a reader sees no folder or the complete one, never a part.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from searchtrace.durable import fsync_dir, fsync_tree
from searchtrace.errors import DataError, ValidationError
from searchtrace.evals.runs.store.snapshot import RunFile, sha256
from searchtrace.safepaths import checked_part, inside

__all__ = ["verified", "write_folder"]


def write_folder(files: tuple[RunFile, ...], path: Path, *, replace: bool = False) -> None:
    """Write ``files`` (each with its content) as the folder ``path``.

    Args:
        replace: put the new folder in place of an existing one (a cache); else an existing ``path`` is refused.

    Raises:
        ValidationError: ``path`` exists and ``replace`` is false.
        DataError: a file's content does not match its sha256 (nothing is written).
        ValidationError: a file's name is not one plain file name (``searchtrace.safepaths``; nothing is written).
    """
    for f in files:
        checked_part(f.name, "file name")
    if path.exists() and not replace:
        raise ValidationError(f"{path} already exists; choose another --out", field="out")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))  # one per writer
    try:
        tmp.chmod(0o755)  # mkdtemp's 0700 would hide an exported run from the rest of a team
        for f in files:
            if f.content is None or sha256(f.content) != f.sha256:
                raise DataError(f"{path / f.name}", None, "the content fetched does not match its sha256")
            inside(tmp, f.name, "file name").write_bytes(f.content)
        fsync_tree(tmp)
        _swap(tmp, path, replace)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fsync_dir(path.parent)


def _swap(tmp: Path, path: Path, replace: bool) -> None:
    if not replace:
        os.rename(tmp, path)  # an existing non-empty folder is refused by the rename itself
        return
    old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent)) / "run"
    try:
        os.rename(path, old)
    except FileNotFoundError:  # none yet, or another writer moved it away first
        pass
    try:
        os.rename(tmp, path)
    except OSError:
        if not path.is_dir():  # another process put its copy in place meanwhile: keep that one
            raise
    shutil.rmtree(old.parent, ignore_errors=True)


def verified(files: tuple[RunFile, ...], path: Path) -> bool:
    """Whether ``path`` holds exactly these files (names and sha256), nothing missing or torn."""
    if not path.is_dir():
        return False
    for f in files:
        checked_part(f.name, "file name")
    present = {p.name for p in path.iterdir() if not p.name.startswith(".")}
    if present != {f.name for f in files}:
        return False
    return all(sha256(inside(path, f.name, "file name").read_bytes()) == f.sha256 for f in files)
