"""Pools: the (query, document) pairs worth judging, drawn from several runs as TREC builds its qrels.

``judge pool DATASET --runs RUN... --depth K`` takes the union of each source's
top ``K`` per query, less what is already judged: a source is a run's final
ranking, and with ``--stages`` also the dense, keyword, graph and fused lists of
its traces (a document one stage found and fusion buried is judged too). Each
pair records which sources and ranks contributed it. ``--deeper N`` adds a
seeded random sample of ``N`` documents per query from ranks below ``K``, so the
labels also say something about what the pool's depth missed.

The pool is written to ``pool.jsonl`` in the dataset folder, a line per pair, in
the order a judge is shown them: queries by id, the pairs of
each shuffled by a seed. What a judge is shown is blind: no score, rank, band or
system (those stay in the file, for analysis after judging).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchtrace.database import StoreUrl
from searchtrace.durable import write_atomic
from searchtrace.errors import DataError, NotFoundError, ValidationError
from searchtrace.evals.labels.judgments.folder import JudgingFolder

__all__ = ["STAGE_SPANS", "Contribution", "Pool", "PooledPair", "build_pool", "pairs_of", "read_pool", "write_pool"]

STAGE_SPANS = ("dense", "keyword", "graph", "fuse")
"""The stage spans whose candidate lists ``--stages`` pools, beside the final ranking."""


@dataclass(frozen=True)
class Contribution:
    """One source's rank for a pooled pair (1 = its first)."""

    source: str
    rank: int


@dataclass(frozen=True)
class PooledPair:
    """A pair to judge, with what put it in the pool; ``deep``: drawn from below the pool's depth."""

    query_id: str
    doc_id: str
    sources: tuple[Contribution, ...]
    deep: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "doc_id": self.doc_id, "deep": self.deep,
                "sources": [{"source": c.source, "rank": c.rank} for c in self.sources]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str, line: int) -> PooledPair:
        try:
            sources = tuple(Contribution(str(s["source"]), int(s["rank"])) for s in data["sources"])
            return cls(str(data["query_id"]), str(data["doc_id"]), sources, bool(data.get("deep", False)))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(where, line, f"not a pooled pair ({exc})") from None


@dataclass(frozen=True)
class Pool:
    """What ``build_pool`` found: the new pairs in the order shown, and how many were already judged."""

    pairs: tuple[PooledPair, ...]
    already_judged: int
    sources: tuple[str, ...]
    depth: int

    def per_source(self) -> dict[str, int]:
        """Pairs each source contributed (a pair counts for every source that ranked it)."""
        out = dict.fromkeys(self.sources, 0)
        for pair in self.pairs:
            for c in pair.sources:
                out[c.source] = out.get(c.source, 0) + 1
        return out


def _rankings(run: Path, stages: bool, traces: Path | None,
              store: StoreUrl | None = None) -> dict[str, dict[str, list[str]]]:
    """source -> query -> doc ids best first: the run's final ranking, and its traces' stage lists (read from the
    shared store at ``store`` when given, else from the home's file ``traces``)."""
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.evals.runs.trec import read_run

    folder = RunFolder.completed(str(run))
    name = folder.run_id
    out = {name: {q: list(docs) for q, docs in read_run(folder.run_file).to_dict().items()}}
    if not stages:
        return out
    outcomes = [o for o in folder.outcomes() if o.trace_id]
    if not outcomes or (store is None and (traces is None or not traces.is_file())):
        raise ValidationError(f"run {name} has no stored traces to pool stages from (--stages needs runs made by "
                              "searchtrace eval, with their traces in the home's store)", field="stages")
    from searchtrace.traces import reading
    from searchtrace.traces import vocabulary as v

    with reading(traces or Path(), store) as reader:
        for o in outcomes:
            detail = reader.load_trace(o.trace_id) if reader else None
            for span in detail.spans if detail else ():
                if span.name in STAGE_SPANS and span.attributes.get(v.CANDIDATE_IDS):
                    out.setdefault(f"{name}:{span.name}", {})[o.query_id] = list(span.attributes[v.CANDIDATE_IDS])
    return out


def _check_dataset(folder: JudgingFolder, runs: Sequence[Path]) -> None:
    """Every run scored this dataset's queries over its corpus. Raises ValidationError naming the odd run."""
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.retriever import dataset_fingerprint

    mine = dataset_fingerprint(folder.root)
    for run in runs:
        info = RunFolder.completed(str(run)).summary().dataset
        if info.fingerprint and info.fingerprint != mine:
            raise ValidationError(f"run {run} scored another dataset ({info.path}), not {folder.root}: a pool is "
                                  "drawn from runs of one dataset", field="runs")


def build_pool(folder: JudgingFolder, runs: Sequence[Path], depth: int, *, stages: bool = False, deeper: int = 0,
               seed: int = 0, traces: Path | None = None, store: StoreUrl | None = None) -> Pool:
    """The pool of ``runs`` at ``depth`` less the pairs already judged (see the module docstring).

    Raises:
        ValidationError: no run, a depth below 1, runs of another dataset, ``--stages`` without traces.
    """
    if not runs:
        raise ValidationError("give at least one run folder to pool (--runs)", field="runs")
    if depth < 1 or deeper < 0:
        raise ValidationError(f"depth must be >= 1 and deeper >= 0, got {depth} and {deeper}", field="depth")
    _check_dataset(folder, runs)
    sources: dict[str, dict[str, list[str]]] = {}
    for run in runs:
        sources |= _rankings(run, stages, traces, store)
    queries, _ = folder.ids()
    judged = {(j.query_id, j.doc_id) for j in folder.store().read()}
    rng = random.Random(seed)
    pairs: list[PooledPair] = []
    already = 0
    for query in sorted(q for q in {q for lists in sources.values() for q in lists} if q in queries):
        found: dict[str, list[Contribution]] = {}
        below: set[str] = set()
        for source, lists in sources.items():
            for rank, doc in enumerate(lists.get(query, ()), 1):
                if rank <= depth:
                    found.setdefault(doc, []).append(Contribution(source, rank))
                else:
                    below.add(doc)
        already += sum((query, d) in judged for d in found)
        chosen = [PooledPair(query, d, tuple(c)) for d, c in found.items() if (query, d) not in judged]
        rest = sorted(d for d in below - set(found) if (query, d) not in judged)
        chosen += [PooledPair(query, d, (), deep=True) for d in rng.sample(rest, min(deeper, len(rest)))]
        rng.shuffle(chosen)  # the order a judge sees: nothing of rank or system in it
        pairs += chosen
    return Pool(tuple(pairs), already, tuple(sources), depth)


def write_pool(folder: JudgingFolder, pool: Pool) -> Path:
    """Write ``pool.jsonl`` whole (replacing an earlier pool: its judged pairs are in the store)."""
    path = folder.pool
    payload = "".join(json.dumps(p.to_json(), ensure_ascii=False) + "\n" for p in pool.pairs).encode("utf-8")
    write_atomic(path, lambda tmp: tmp.write_bytes(payload))
    return path


def read_pool(folder: JudgingFolder) -> tuple[PooledPair, ...]:
    """The pool's pairs in the order shown.

    Raises:
        NotFoundError: no pool yet. DataError: a damaged line (file and line named).
    """
    path = folder.pool
    if not path.is_file():
        raise NotFoundError(f"no pool in {folder.root}: run `searchtrace judge pool {folder.root} --runs RUN ...`",
                            field="pool")
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise DataError(str(path), number, f"not JSON ({exc})") from None
        out.append(PooledPair.from_json(data, str(path), number))
    return tuple(out)


def pairs_of(pool: Iterable[PooledPair]) -> list[tuple[str, str]]:
    """The (query id, doc id) pairs, in order: the candidates a judging session hands out."""
    return [(p.query_id, p.doc_id) for p in pool]
