"""An append-only, fsync'd journal of completed queries: what makes an eval resumable.

Each line is one completed query's JSON record. A line is written only after the
query's trace has been flushed, and the file is fsync'd after each batch, so
after a ``kill -9`` every line present is a complete query with its trace. A
torn last line (killed mid-write) is ignored on reading.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator, Sequence


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def read(self) -> list[dict]:
        """Complete records, in order; a torn final line is dropped."""
        if not self.path.exists():
            return []
        out = []
        with open(self.path, "rb") as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    break  # torn write
                out.append(json.loads(raw))
        return out

    def truncate_torn_tail(self) -> None:
        """Cut a torn final line so later appends start on a fresh line."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end != len(data):
            with open(self.path, "r+b") as fh:
                fh.truncate(end)

    def append(self, records: Sequence[dict]) -> None:
        if not records:
            return
        payload = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())

    def __iter__(self) -> Iterator[dict]:
        return iter(self.read())
