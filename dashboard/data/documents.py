"""Document titles, texts and metadata from a dataset's ``corpus.jsonl``, and query texts from its ``queries.jsonl``."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Mapping

import pandas as pd

__all__ = ["MAX_DATASET_FILE", "SNIPPET", "documents", "find_queries", "metadata", "query_texts", "snippet"]

MAX_DATASET_FILE = 64 * 2**20  # larger corpus or queries files are not read for display
SNIPPET = 160  # characters of a document's text shown beside its title


def _file(dataset_path: str | None, name: str) -> Path | None:
    path = Path(dataset_path or "") / name
    if not dataset_path or not path.is_file() or path.stat().st_size > MAX_DATASET_FILE:
        return None
    return path


@functools.lru_cache(maxsize=4)
def _corpus(path: str, mtime_ns: int) -> dict[str, tuple[str, str]]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out[str(row.get("_id"))] = (str(row.get("title") or ""), str(row.get("text") or ""))
    return out


@functools.lru_cache(maxsize=8)
def _queries(path: str, mtime_ns: int) -> dict[str, str]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out[str(row.get("_id"))] = str(row.get("text") or "")
    return out


def documents(dataset_path: str | None) -> Mapping[str, tuple[str, str]]:
    """Each document's (title, text), by id; empty when the dataset is gone or too large to read for display."""
    path = _file(dataset_path, "corpus.jsonl")
    return _corpus(str(path), path.stat().st_mtime_ns) if path else {}


@functools.lru_cache(maxsize=4)
def _metadata(path: str, mtime_ns: int) -> dict[str, tuple[tuple[str, str], ...]]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
                out[str(row.get("_id"))] = tuple((str(k), _value(v)) for k, v in sorted(meta.items()))
    return out


def _value(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def metadata(dataset_path: str | None) -> Mapping[str, tuple[tuple[str, str], ...]]:
    """Each document's metadata as (key, text) pairs, by id (empty when the corpus is gone or too large)."""
    path = _file(dataset_path, "corpus.jsonl")
    return _metadata(str(path), path.stat().st_mtime_ns) if path else {}


def query_texts(dataset_path: str | None) -> Mapping[str, str]:
    """Each query's text, by id (empty when the dataset is gone)."""
    path = _file(dataset_path, "queries.jsonl")
    return _queries(str(path), path.stat().st_mtime_ns) if path else {}


def snippet(text: str, limit: int = SNIPPET) -> str:
    """The start of a text on one line, cut at a word near ``limit``."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def find_queries(dataset_path: str | None, query_ids: list[str], needle: str, limit: int = 50) -> pd.DataFrame:
    """Queries among ``query_ids`` whose text (or id) contains ``needle``, case-insensitive: query_id, text."""
    texts = query_texts(dataset_path)
    folded = needle.casefold().strip()
    rows = [{"query_id": q, "text": texts.get(q, "")} for q in query_ids
            if folded in texts.get(q, "").casefold() or folded in q.casefold()]
    return pd.DataFrame(rows[:limit], columns=["query_id", "text"])
