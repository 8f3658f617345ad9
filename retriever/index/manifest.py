"""``manifest.json``: what an index folder holds, every file with its size and sha256.

The manifest is written last, so its presence marks a complete index. Opening
checks every file's presence, size and modification time, and hashes a file
whose time has changed since the build (a write, a copy that did not keep
times): so a file truncated, deleted, replaced or rewritten in place is found
at once, while an untouched index is opened without reading its hundreds of
megabytes. ``searchtrace index --verify`` hashes every file whatever its time
(a disk that flips bits keeps times).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from searchtrace.errors import ErrorCode, SearchtraceError

__all__ = ["MANIFEST", "SHARD", "DamagedIndex", "FileEntry", "IndexManifest", "Problem", "check", "describe",
           "read_manifest", "sha256_of"]

MANIFEST = "manifest.json"
SHARD = "shard"  # the Qdrant Edge shard folder
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileEntry:
    """One file of an index: its size in bytes, its sha256 and its modification time (ns) when built."""

    size: int
    sha256: str
    mtime_ns: int = 0


@dataclass(frozen=True)
class Problem:
    """What is wrong with one file of an index."""

    file: str
    what: str

    def __str__(self) -> str:
        return f"{self.file}: {self.what}"


class DamagedIndex(SearchtraceError):
    """An index folder whose files are missing, truncated, altered or unreadable.

    The message names the folder, each damaged file, and the command that rebuilds it.
    """

    code = ErrorCode.SEARCH_ERROR

    def __init__(self, folder: Path, problems: list[Problem], fix: str) -> None:
        listed = "; ".join(map(str, problems[:5])) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        super().__init__(f"index {folder} is damaged ({listed}); {fix}", field="index")
        self.folder = folder
        self.problems = problems


@dataclass(frozen=True)
class IndexManifest:
    """What an index holds and how it was built.

    Attributes:
        key: the content-addressed key (dataset bytes + index configuration).
        dataset, dataset_fingerprint, dataset_path: the dataset indexed (its folder when built).
        n_docs, n_triples: documents and triples indexed.
        avg_len: the corpus' mean token length (BM25's ``avg_len``).
        model, dim: the embedding model and its dimension.
        vector_backend: ``edge`` or the Qdrant URL; collection: its collection name.
        graph_backend: ``memory``, ``neo4j`` or ``none``.
        built_at, build_seconds: when and how long.
        embedded_texts: texts this build embedded (not served from the cache).
        parts: part vectors in the ``parts`` multivector (0 = none).
        files: every other file of the folder, by path relative to it.
    """

    key: str
    dataset: str
    dataset_fingerprint: str
    n_docs: int
    n_triples: int
    avg_len: float
    model: str
    dim: int
    vector_backend: str
    collection: str
    graph_backend: str
    built_at: float
    build_seconds: float
    embedded_texts: int
    parts: int = 0
    dataset_path: str = ""
    files: Mapping[str, FileEntry] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["files"] = {name: asdict(entry) for name, entry in sorted(self.files.items())}
        return out

    @classmethod
    def from_json(cls, data: object, path: Path) -> IndexManifest:
        """Read a manifest; anything missing or mistyped raises :class:`DamagedIndex`."""
        def bad(what: str) -> DamagedIndex:
            return DamagedIndex(path.parent, [Problem(MANIFEST, what)], "")

        if not isinstance(data, dict):
            raise bad("not a JSON object")
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name == "files":
                continue
            if f.name not in data:
                if f.default is not MISSING:
                    continue
                raise bad(f"missing {f.name!r}")
            value, kind = data[f.name], _KINDS[f.name]
            if not isinstance(value, kind) or isinstance(value, bool):
                raise bad(f"{f.name!r} must be {kind}, got {value!r:.60}")
            values[f.name] = value
        files = data.get("files")
        if not isinstance(files, dict) or not all(
                isinstance(e, dict) and isinstance(e.get("size"), int) and isinstance(e.get("sha256"), str)
                and isinstance(e.get("mtime_ns", 0), int) for e in files.values()):
            raise bad("'files' must map each file to its size, sha256 and time")
        return cls(**values, files={str(k): FileEntry(e["size"], e["sha256"], e.get("mtime_ns", 0))
                                    for k, e in files.items()})


_KINDS: dict[str, type | tuple[type, ...]] = {
    "key": str, "dataset": str, "dataset_fingerprint": str, "n_docs": int, "n_triples": int,
    "avg_len": (int, float), "model": str, "dim": int, "vector_backend": str, "collection": str,
    "graph_backend": str, "built_at": (int, float), "build_seconds": (int, float), "embedded_texts": int,
    "parts": int, "dataset_path": str,
}


def sha256_of(path: Path) -> str:
    """The sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def describe(folder: Path) -> dict[str, FileEntry]:
    """Every file under ``folder`` but the manifest, with its size and hash."""
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            relative = path.relative_to(folder).as_posix()
            if relative != MANIFEST:
                st = path.stat()
                out[relative] = FileEntry(st.st_size, sha256_of(path), st.st_mtime_ns)
    return out


def read_manifest(folder: Path) -> IndexManifest:
    """The manifest of an index folder.

    Raises:
        DamagedIndex: it is missing, unreadable, or not a manifest.
    """
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DamagedIndex(folder, [Problem(MANIFEST, "missing")], "") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DamagedIndex(folder, [Problem(MANIFEST, f"unreadable ({exc})")], "") from None
    return IndexManifest.from_json(data, path)


def check(folder: Path, manifest: IndexManifest, *, deep: bool = False) -> list[Problem]:
    """What is wrong with the folder's files against the manifest (nothing: an empty list).

    Every file must exist with its recorded size; a file is hashed when its
    modification time differs from the build's, and every file when ``deep``.
    """
    problems = []
    for name, entry in sorted(manifest.files.items()):
        path = folder / name
        try:
            st = path.stat()
        except OSError:
            problems.append(Problem(name, "missing"))
            continue
        if st.st_size != entry.size:
            problems.append(Problem(name, f"{st.st_size} bytes, {entry.size} expected (truncated or replaced)"))
        elif (deep or st.st_mtime_ns != entry.mtime_ns) and sha256_of(path) != entry.sha256:
            problems.append(Problem(name, "content differs from the manifest's hash"))
    return problems
