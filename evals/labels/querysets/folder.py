"""The query-set folder: a BEIR dataset whose queries came from traffic, over another dataset's corpus.

It holds ``queries.jsonl`` (each query's ``metadata`` says how often it was asked,
its inclusion probability and the traces it came from: :class:`QueryOrigin`),
``queryset.json`` (how it was made: :class:`QuerySetInfo`), and symbolic links
``corpus.jsonl`` and ``triples.jsonl`` to the source dataset's files, resolved
to absolute paths: nothing is copied, and every loader, the index key and the
dataset fingerprint read the source's bytes through them. No ``qrels/`` yet:
labels come from judging.

The folder is written aside and renamed into place whole, so a crash leaves the
old folder or the new one.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from searchtrace.durable import fsync_dir, fsync_tree, naming
from searchtrace.evals.labels.querysets.traffic import TrafficQuery
from searchtrace.retriever import Query

__all__ = ["FORMAT_VERSION", "INFO_FILE", "LINKED", "QueryOrigin", "QuerySetInfo", "origins", "read_info", "write_folder"]

FORMAT_VERSION = 1
"""Version of ``queryset.json`` and of the metadata a query set's queries carry."""

INFO_FILE = "queryset.json"
QUERIES_FILE = "queries.jsonl"
LINKED = ("corpus.jsonl", "triples.jsonl")
"""The source dataset's files a query set links to (those it has)."""


@dataclass(frozen=True)
class QueryOrigin:
    """What a query set's query records of its traffic, in its ``metadata``.

    Attributes:
        count: how many traces asked it.
        inclusion_probability: its chance to be in the sample (see ``querysets.sampling``).
        trace_ids: the traces that asked it, oldest first.
    """

    count: int
    inclusion_probability: float
    trace_ids: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "inclusion_probability": self.inclusion_probability,
                "trace_ids": list(self.trace_ids)}

    @classmethod
    def of(cls, query: Query) -> QueryOrigin:
        """The origin a loaded query's metadata records. Raises KeyError or TypeError for another query's."""
        meta = query.metadata
        return cls(int(meta["count"]), float(meta["inclusion_probability"]), tuple(meta["trace_ids"]))


@dataclass(frozen=True)
class QuerySetInfo:
    """``queryset.json``: how a query set was made.

    Attributes:
        dataset: the source dataset's folder (absolute); dataset_name: its name, which the traces record.
        filters: which traces were read, besides the dataset (option -> value; absent: any).
        sampling, n, seed: how the queries were picked (n None: all).
        searches: traces matched whose search ran; uncaptured: of them, those without a query text.
        distinct: distinct queries among them; queries: how many were written.
        created_at: ISO time of writing.
        corpus: for a corpus made from another retriever's traces (no dataset linked: ``dataset`` is ""), how
            many documents it holds, how many had no text in the traces and how many came without an id.
    """

    dataset: str
    dataset_name: str
    filters: Mapping[str, Any]
    sampling: str
    n: int | None
    seed: int
    searches: int
    uncaptured: int
    distinct: int
    queries: int
    created_at: str
    version: int = FORMAT_VERSION
    corpus: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        out = {**asdict(self), "filters": dict(self.filters)}
        if self.corpus is None:
            del out["corpus"]
        else:
            out["corpus"] = dict(self.corpus)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QuerySetInfo:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k != "corpus"}, corpus=data.get("corpus"))


def read_info(folder: Path) -> QuerySetInfo:
    """The ``queryset.json`` of a query-set folder."""
    return QuerySetInfo.from_json(json.loads((folder / INFO_FILE).read_text(encoding="utf-8")))


def origins(folder: Path) -> dict[str, QueryOrigin] | None:
    """What each query of a query-set folder records of its traffic, by query id; None when ``folder`` is not a
    query set (no ``queryset.json``). A query whose metadata lacks its origin is left out.

    Raises:
        DataError: a malformed ``queries.jsonl``.
    """
    from searchtrace.retriever import load_queries

    if not (folder / INFO_FILE).is_file():
        return None
    out = {}
    for query in load_queries(folder / QUERIES_FILE):
        try:
            out[query.id] = QueryOrigin.of(query)
        except (KeyError, TypeError, ValueError):
            continue
    return out


def query_line(query: TrafficQuery, probability: float) -> str:
    """One line of ``queries.jsonl``."""
    origin = QueryOrigin(query.count, probability, query.trace_ids)
    return json.dumps({"_id": query.id, "text": query.text, "metadata": origin.to_json()}, ensure_ascii=False)


def write_folder(out: Path, dataset: Path | None, chosen: Iterable[tuple[TrafficQuery, float]], info: QuerySetInfo,
                 corpus: Mapping[str, str] | None = None) -> None:
    """Write the query set to ``out`` whole, replacing what is there (the caller decided it may): linked to
    ``dataset``'s corpus, or with ``corpus`` (id -> text) written as its own ``corpus.jsonl``."""
    building = out.with_name(f".{out.name}.building-{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    try:
        with naming(building):
            _fill(building, dataset, chosen, info, out if out.is_dir() else None)
            if corpus is not None:
                _write_corpus(building / LINKED[0], corpus)
            fsync_tree(building)
        _replace(out, building)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise


def _write_corpus(path: Path, corpus: Mapping[str, str]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"_id": doc_id, "title": "", "text": text}, ensure_ascii=False) + "\n"
                          for doc_id, text in corpus.items())


def _fill(folder: Path, dataset: Path | None, chosen: Iterable[tuple[TrafficQuery, float]], info: QuerySetInfo,
          replaced: Path | None = None) -> None:
    for name in LINKED:
        if dataset is not None and (dataset / name).exists():
            (folder / name).symlink_to((dataset / name).resolve())
    chosen = list(chosen)
    with (folder / QUERIES_FILE).open("w", encoding="utf-8") as handle:
        handle.writelines(query_line(q, p) + "\n" for q, p in chosen)
    (folder / INFO_FILE).write_text(json.dumps(info.to_json(), indent=2, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    _carry_judgments(folder, dataset, {q.id for q, _ in chosen}, replaced)


def _carry_judgments(folder: Path, dataset: Path | None, ids: set[str], replaced: Path | None) -> None:
    """The query set's judgments: those of the folder it replaces, whole (a label is never lost to ``--force``),
    then the source dataset's judgments of its queries not already there (labels are keyed by query id and doc
    id, so those made on the source, e.g. judging live traffic on the Traces page, count here too)."""
    from searchtrace.evals.labels.judgments import JUDGMENTS_FILE, JudgingFolder

    target = JudgingFolder(folder)
    kept: set = set()
    if replaced is not None and (replaced / JUDGMENTS_FILE).is_file():
        shutil.copyfile(replaced / JUDGMENTS_FILE, target.judgments)
        kept = set(target.store().read())
    if dataset is not None and (dataset / JUDGMENTS_FILE).is_file():
        carried = [j for j in JudgingFolder(dataset).store().read() if j.query_id in ids and j not in kept]
        if carried:
            target.store().append(carried)


def _replace(out: Path, building: Path) -> None:
    """Rename ``building`` to ``out``; an ``out`` already there is moved aside first, then removed."""
    aside = out.with_name(f".{out.name}.replaced-{os.getpid()}")
    if out.is_dir():
        out.rename(aside)
    building.rename(out)
    fsync_dir(out.parent)
    shutil.rmtree(aside, ignore_errors=True)
