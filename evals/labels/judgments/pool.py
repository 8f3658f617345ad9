"""Pools: the (query, document) pairs worth judging, drawn from several runs as TREC builds its qrels.

``judge pool DATASET --runs RUN... --depth K`` takes the union of each source's
top ``K`` per query, less what is already judged: a source is a run's final
ranking, and with ``--stages`` also the dense, keyword, graph and fused lists of
its traces (a document one stage found and fusion buried is judged too). Each
pair records which sources and ranks contributed it. ``--deeper N`` adds a
seeded random sample of ``N`` documents per query from ranks below ``K``, so the
labels also say something about what the pool's depth missed.

A pool adds, never replaces: pooling more runs into a dataset that has a pool
keeps every pair already there (judged or not) and adds the new runs' pairs;
a pair already pooled gets the new sources added to its own. ``--replace``
starts the pool again, and says how many pairs (and how many unjudged) it
discards.

The pool is written to ``pool.jsonl`` in the dataset folder (atomically), a
line per pair, in the order a judge is shown them: queries by id, the pairs
already pooled first in their order, then the new pairs of each query shuffled
by a seed. What a judge is shown is blind: no score, rank, band or
system (those stay in the file, for analysis after judging).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from searchtrace.database import StoreUrl
from searchtrace.durable import write_atomic
from searchtrace.errors import DataError, NotFoundError, ValidationError
from searchtrace.evals.labels.judgments.folder import JudgingFolder

__all__ = ["STAGE_SPANS", "Contribution", "Discarded", "Pool", "PooledPair", "build_pool", "discarded", "pairs_of",
           "read_pool", "write_pool"]

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

    def with_sources(self, found: Iterable[Contribution]) -> PooledPair:
        """This pair with the contributions of sources it does not list yet added (a source listed stays as is)."""
        listed = {c.source for c in self.sources}
        more = tuple(c for c in found if c.source not in listed)
        return replace(self, sources=self.sources + more) if more else self

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str, line: int) -> PooledPair:
        try:
            sources = tuple(Contribution(str(s["source"]), int(s["rank"])) for s in data["sources"])
            return cls(str(data["query_id"]), str(data["doc_id"]), sources, bool(data.get("deep", False)))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(where, line, f"not a pooled pair ({exc})") from None


@dataclass(frozen=True)
class Pool:
    """What ``build_pool`` made: the whole pool in the order shown (the pairs already pooled kept), how many of
    its pairs are new, and how many of the runs' pairs were left out as judged already."""

    pairs: tuple[PooledPair, ...]
    already_judged: int
    sources: tuple[str, ...]
    depth: int
    new: int = 0
    """How many of ``pairs`` this pooling added (the rest were in the pool before)."""

    def per_source(self) -> dict[str, int]:
        """Pairs each source contributed (a pair counts for every source that ranked it)."""
        out = dict.fromkeys(self.sources, 0)
        for pair in self.pairs:
            for c in pair.sources:
                if c.source in out:  # an earlier pooling's source is not this one's
                    out[c.source] += 1
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


def _ranked(sources: Mapping[str, Mapping[str, Sequence[Sequence[str]]]], query: str,
            depth: int) -> tuple[dict[str, list[Contribution]], set[str]]:
    """``query``'s documents in the top ``depth`` of some ranking of a source (a run has one per query; traces
    one per search), with each source's best rank; and those only below it."""
    found: dict[str, list[Contribution]] = {}
    below: set[str] = set()
    for source, lists in sources.items():
        best: dict[str, int] = {}
        for ranking in lists.get(query, ()):
            for rank, doc in enumerate(ranking, 1):
                if rank <= depth:
                    best[doc] = min(rank, best.get(doc, rank))
                else:
                    below.add(doc)
        for doc, rank in best.items():
            found.setdefault(doc, []).append(Contribution(source, rank))
    return found, below


def build_pool(folder: JudgingFolder, runs: Sequence[Path], depth: int, *, stages: bool = False, deeper: int = 0,
               seed: int = 0, traces: Path | None = None, store: StoreUrl | None = None,
               existing: Sequence[PooledPair] = (),
               traced: Mapping[str, Mapping[str, Sequence[Sequence[str]]]] | None = None) -> Pool:
    """The pool of ``runs`` at ``depth`` less the pairs already judged, added to the pool ``existing`` (see the
    module docstring): its pairs are all kept, in their order, each with the new sources that ranked it added.
    ``traced``: more sources (name -> query -> rankings, each doc ids best first), such as what another
    retriever returned in each search of its traces (``judge pool --from-traces``): a document is pooled when in
    the top ``depth`` of any of them.

    Raises:
        ValidationError: no run nor traced source, a depth below 1, runs of another dataset, ``--stages`` without
            traces.
    """
    if not runs and not traced:
        raise ValidationError("give at least one run folder to pool (--runs), or --from-traces", field="runs")
    if depth < 1 or deeper < 0:
        raise ValidationError(f"depth must be >= 1 and deeper >= 0, got {depth} and {deeper}", field="depth")
    _check_dataset(folder, runs)
    sources: dict[str, Mapping[str, Sequence[Sequence[str]]]] = dict(traced or {})
    for run in runs:
        sources |= {name: {q: [docs] for q, docs in lists.items()}
                    for name, lists in _rankings(run, stages, traces, store).items()}
    queries, _ = folder.ids()
    judged = {(j.query_id, j.doc_id) for j in folder.store().read()}
    pooled: dict[str, list[PooledPair]] = {}
    for pair in existing:
        pooled.setdefault(pair.query_id, []).append(pair)
    ranked = {q for lists in sources.values() for q in lists if q in queries}
    rng = random.Random(seed)
    pairs: list[PooledPair] = []
    already = new = 0
    for query in sorted(ranked | set(pooled)):
        found, below = _ranked(sources, query, depth) if query in ranked else ({}, set())
        kept = [p.with_sources(found.get(p.doc_id, ())) for p in pooled.get(query, ())]
        taken = {p.doc_id for p in kept}
        fresh = [d for d in found if d not in taken]
        already += sum((query, d) in judged for d in fresh)
        chosen = [PooledPair(query, d, tuple(found[d])) for d in fresh if (query, d) not in judged]
        if query in ranked:
            rest = sorted(d for d in below - set(found) - taken if (query, d) not in judged)
            chosen += [PooledPair(query, d, (), deep=True) for d in rng.sample(rest, min(deeper, len(rest)))]
            rng.shuffle(chosen)  # the order a judge sees: nothing of rank or system in it
        pairs += kept + chosen
        new += len(chosen)
    return Pool(tuple(pairs), already, tuple(sources), depth, new)


@dataclass(frozen=True)
class Discarded:
    """What replacing a pool drops: its pairs the new pool lacks, and how many of them nobody judged yet."""

    pairs: int
    unjudged: int


def discarded(folder: JudgingFolder, existing: Sequence[PooledPair], pool: Pool) -> Discarded:
    """The pairs of ``existing`` that ``pool`` (made afresh, ``--replace``) would drop."""
    keep = set(pairs_of(pool.pairs))
    lost = [pair for pair in pairs_of(existing) if pair not in keep]
    judged = {(j.query_id, j.doc_id) for j in folder.store().read()} if lost else set()
    return Discarded(len(lost), sum(pair not in judged for pair in lost))


def write_pool(folder: JudgingFolder, pool: Pool) -> Path:
    """Write ``pool.jsonl`` whole, aside then renamed over the old one (``pool`` holds every pair to keep)."""
    path = folder.pool
    payload = "".join(json.dumps(p.to_json(), ensure_ascii=False) + "\n" for p in pool.pairs).encode("utf-8")
    write_atomic(path, lambda tmp: tmp.write_bytes(payload))
    return path


def read_pool(folder: JudgingFolder, *, missing_ok: bool = False) -> tuple[PooledPair, ...]:
    """The pool's pairs in the order shown (none when there is no pool and ``missing_ok``).

    Raises:
        NotFoundError: no pool yet. DataError: a damaged line (file and line named).
    """
    path = folder.pool
    if missing_ok and not path.exists():
        return ()
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
