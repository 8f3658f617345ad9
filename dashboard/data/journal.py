"""One query's record in a run's ``journal.jsonl``, found without parsing the other lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dashboard.data.home import run_dir

__all__ = ["journal_record"]


def journal_record(home: str | Path, run_id: str, query_id: str) -> dict[str, Any] | None:
    """The journal record of ``query_id`` in ``run_id`` (not a corrective retry), or None.

    The journal writes compact JSON, so the record's line holds ``"query_id":"<id>"``;
    only lines holding that are parsed.
    """
    path = run_dir(home, run_id) / "journal.jsonl"
    if not path.is_file():
        return None
    needle = b'"query_id":' + json.dumps(query_id, ensure_ascii=False).encode()
    data = path.read_bytes()
    at = data.find(needle)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        if end < 0:
            break  # a torn last line
        record = json.loads(data[start:end])
        if record.get("query_id") == query_id and not record.get("corrective_of"):
            return record
        at = data.find(needle, end)
    return None
