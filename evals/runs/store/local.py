"""The run index of a home folder: its completed run folders (``<home>/runs/<run id>``, and those it lists
outside itself, written with ``eval --out``: ``<home>/runs.outside``)."""

from __future__ import annotations

from searchtrace.errors import DataError, NotFoundError, ValidationError
from searchtrace.evals.runs.runfolder import RunFolder
from searchtrace.evals.runs.store.entry import RunEntry, RunSelector
from searchtrace.evals.runs.store.materialize import write_folder
from searchtrace.evals.runs.store.snapshot import RunFile, RunSnapshot, content_hash, read_snapshot, sha256
from searchtrace.home import Home

__all__ = ["HomeRunIndex"]


class HomeRunIndex:
    """The completed runs of ``home``; a run folder that cannot be read is left out of the list."""

    def __init__(self, home: Home) -> None:
        self.home = home

    @property
    def where(self) -> str:
        return f"home {self.home.root}"

    def entries(self, tag: str | None = None) -> list[RunEntry]:
        out = []
        for folder in RunFolder.all_in_home(self.home):
            try:
                out.append(_entry(folder))
            except (DataError, NotFoundError):
                continue
        found = [e for e in out if tag is None or tag in e.tags]
        return sorted(found, key=lambda e: (e.created_at, e.run_id), reverse=True)

    def find(self, selector: RunSelector) -> RunEntry:
        if selector.key is not None:
            folder = self.local_folder(selector.key)
            if folder is not None:
                return _entry(folder)
            named = [e for e in self.entries() if e.name == selector.key]
        else:
            named = self.entries(selector.tag)
        if not named:
            raise NotFoundError(f"no {selector.describe()} in {self.where}", field="run")
        return named[0]

    def snapshot(self, run_id: str) -> RunSnapshot:
        return read_snapshot(RunFolder.in_home(self.home, run_id))

    def files(self, run_id: str) -> tuple[RunFile, ...] | None:
        folder = self.local_folder(run_id)
        if folder is None:
            return None
        return tuple(RunFile(p.name, sha256(data := p.read_bytes()), len(data))
                     for p in sorted(folder.path.iterdir()) if p.is_file() and not p.name.startswith("."))

    def local_folder(self, run_id: str) -> RunFolder | None:
        try:
            return RunFolder.in_home(self.home, run_id)  # <home>/runs, else a folder written with eval --out
        except (ValidationError, NotFoundError):  # not a folder name (no run has it as its id), or no such run
            return None

    def publish(self, snapshot: RunSnapshot) -> bool:
        if self.local_folder(snapshot.run_id) is None:
            try:
                write_folder(snapshot.files, self.home.run(snapshot.run_id))
                return True
            except (OSError, ValidationError):  # the rename lost to another publisher's, or came after it
                if self.local_folder(snapshot.run_id) is None:
                    raise  # no other publisher's run there: a real failure
        there = self.local_folder(snapshot.run_id) or RunFolder(self.home.run(snapshot.run_id))
        if content_hash(read_snapshot(there).files) == snapshot.content_hash():
            return False
        raise ValidationError(f"{self.where} has another run with id {snapshot.run_id!r}", field="run")


def _entry(folder: RunFolder) -> RunEntry:
    s = folder.summary()
    return RunEntry(s.run_id if s.run_id == folder.run_id else folder.run_id, s.name, tuple(s.tags),
                    folder.created_at(s), s.dataset.name, s.retriever.mode)
