"""A content hash of a dataset's index inputs, for cache keys and run provenance."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from searchtrace.errors import DataError

__all__ = ["dataset_fingerprint"]

_CHUNK = 1 << 20


def dataset_fingerprint(root: str | Path) -> str:
    """Content hash of a dataset's index inputs, independent of its folder name.

    sha256 over the bytes of ``corpus.jsonl`` and, when present, a NUL byte
    and ``triples.jsonl`` (NUL cannot occur in valid JSON lines). Without
    triples it equals ``sha256sum corpus.jsonl``.
    """
    root = Path(root)
    digest = hashlib.sha256()
    _hash_file(root / "corpus.jsonl", digest)
    if (root / "triples.jsonl").exists():
        digest.update(b"\0")
        _hash_file(root / "triples.jsonl", digest)
    return digest.hexdigest()


def _hash_file(path: Path, digest: Any) -> None:
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except (FileNotFoundError, IsADirectoryError) as exc:
        raise DataError(str(path), None, f"cannot read file: {exc.strerror}") from None
