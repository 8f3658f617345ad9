"""``judge implicit``: graded judgments from what agents fetched after their searches.

Composes the steps: the dataset's impressions and fetches read from the trace
store's columns (:meth:`searchtrace.traces.TraceStore.interactions`), fetches
linked to the searches they follow (:mod:`.clicks`), click-through rate by
position and each (query, doc) pair's clicks over expected clicks
(:mod:`.coec`), grades by stated thresholds (:mod:`.click_grades`), written as
``implicit`` judgments of the judge :data:`IMPLICIT_JUDGE`, and compared with
the human and imported labels or a qrels file (:mod:`.reference`).

A search's query id: the id of the dataset's query with the same normalized
text (:func:`searchtrace.evals.labels.querysets.normalize`), else the id every query
set gives that text (:func:`searchtrace.evals.labels.querysets.query_id`); a search
whose text was not recorded still counts toward the rates by position, but
judges nothing. Documents the corpus lacks (a relation row, another corpus of
the same name) are never judged.

Rerunning changes only what changed: a pair whose grade is the one standing is
left as it is (its note keeps the figures of the run that set it), a new grade
is appended, and a pair no longer judged is retracted. Human and imported
labels are never touched; ``judge export`` leaves implicit ones out unless
asked (``--kind implicit``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from searchtrace.database import StoreUrl
from searchtrace.errors import NotFoundError
from searchtrace.evals.labels.implicit.click_grades import ClickThresholds, click_grades
from searchtrace.evals.labels.implicit.clicks import ClickLog, LinkCounts, link
from searchtrace.evals.labels.implicit.coec import PairEvidence, PositionCtr, pair_evidence, position_ctr
from searchtrace.evals.labels.implicit.reference import (
    ReferenceAgreement,
    agreement_with,
    qrels_reference,
    store_reference,
)
from searchtrace.evals.labels.judgments.folder import JudgingFolder
from searchtrace.evals.labels.judgments.labels import standing
from searchtrace.evals.labels.judgments.records import Judgment, Kind, Pair, now
from searchtrace.evals.labels.querysets.traffic import normalize, query_id
from searchtrace.home import Home
from searchtrace.progress import progress
from searchtrace.retriever import dataset_name, load_queries
from searchtrace.traces import InteractionFilter, reading

__all__ = ["IMPLICIT_JUDGE", "ImplicitPair", "ImplicitReport", "implicit_judgments"]

IMPLICIT_JUDGE = "implicit:coec"
"""The judge implicit judgments are recorded under."""


@dataclass(frozen=True)
class ImplicitPair:
    """A pair judged from clicks, with the evidence behind its grade.

    Attributes:
        trace_id: the latest search that showed it.
    """

    query_id: str
    doc_id: str
    grade: int
    clicks: int
    impressions: int
    expected: float
    coec: float
    trace_id: str

    @property
    def pair(self) -> Pair:
        return (self.query_id, self.doc_id)

    def note(self) -> str:
        """The evidence, kept in the judgment's note so a grade can be checked."""
        return (f"coec {self.coec:.3f} = {self.clicks} clicks / {self.expected:.3f} expected "
                f"over {self.impressions} impressions")

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ImplicitReport:
    """What ``judge implicit`` read, found and wrote.

    Attributes:
        dataset, name: the dataset folder and the name its traces record.
        store: the trace store read.
        counts: impressions, fetches, clicks and what could not be linked.
        ctr: click-through rate by position.
        uncaptured: impressions without a recorded query text (counted in ``ctr``, judging nothing).
        outside_corpus: pairs with a grade whose document the corpus lacks (not judged).
        pairs: the pairs judged, by query and doc.
        added, changed, unchanged, retracted: against the judge's standing implicit labels.
        written: judgments appended (0 on a dry run).
        agreement: with the reference, when it grades any pair judged.
    """

    dataset: str
    name: str
    store: str
    judge: str
    thresholds: ClickThresholds
    counts: LinkCounts
    ctr: PositionCtr
    uncaptured: int
    outside_corpus: int
    pairs: tuple[ImplicitPair, ...]
    added: int
    changed: int
    unchanged: int
    retracted: int
    written: int
    agreement: ReferenceAgreement | None

    def grade_counts(self) -> dict[int, int]:
        """How many pairs have each grade."""
        out: dict[int, int] = {}
        for p in self.pairs:
            out[p.grade] = out.get(p.grade, 0) + 1
        return dict(sorted(out.items()))

    def to_json(self) -> dict[str, Any]:
        ctr = self.ctr
        return {"dataset": self.dataset, "name": self.name, "store": self.store, "judge": self.judge,
                "thresholds": dict(self.thresholds.__dict__), "counts": self.counts.to_json(),
                "ctr": {"impressions": ctr.impressions.tolist(), "clicks": ctr.clicks.tolist(),
                        "ctr": [round(float(x), 6) for x in ctr.ctr], "depth": ctr.depth, "mean": ctr.mean},
                "uncaptured": self.uncaptured, "outside_corpus": self.outside_corpus,
                "judgments": {"added": self.added, "changed": self.changed, "unchanged": self.unchanged,
                              "retracted": self.retracted, "written": self.written,
                              "grades": {str(g): n for g, n in self.grade_counts().items()}},
                "agreement": self.agreement.to_json() if self.agreement else None,
                "pairs": [p.to_json() for p in self.pairs]}


def implicit_judgments(dataset: str | Path, *, home: str | Path | None = None, since: datetime | int | None = None,
                       until: datetime | int | None = None, thresholds: ClickThresholds = ClickThresholds(),
                       qrels: Sequence[str | Path] = (), dry_run: bool = False, bars: bool = False,
                       store: StoreUrl | str | None = None) -> ImplicitReport:
    """Judge ``dataset``'s (query, doc) pairs from the clicks its served traffic left in ``home``'s trace store.

    Args:
        dataset: the dataset folder (its folder name is what its traces record).
        home: the home whose trace store is read (default: ``$SEARCHTRACE_HOME``, else the default home).
        since, until: the traces read, by start (inclusive, exclusive).
        thresholds: where COEC becomes a grade.
        qrels: compare with these qrels files (benchmark convention) instead of the human and imported labels.
        dry_run: write nothing.
        bars: a progress bar (else plain lines every few seconds when the reading is long).
        store: the shared store (a ``postgresql://`` URL) the traces are read from and the judgments read from
            and written to (default: the home's trace store and ``judgments.jsonl`` beside the dataset).

    Raises:
        NotFoundError: no dataset folder, or no served search of it in the store (nothing is written).
        SearchtraceError: a damaged trace store.
        DataError: a damaged judgments file or qrels file.
    """
    folder = JudgingFolder.at(dataset, store)
    name, scale = dataset_name(folder.root), folder.scale()
    reference_files = [Path(p) for p in qrels]
    url = folder.shared  # the store as the folder parsed it (None: the home's trace file)
    store_path = Home.resolve(home).traces
    log = _read(store_path, url, InteractionFilter(name, since, until), bars)
    if not log.counts.impressions:
        raise NotFoundError(f"no served search of dataset {name!r} in {url.masked() if url else store_path}"
                            f"{' in that window' if since or until else ''}: nothing to judge", field="traces")
    ctr = position_ctr(np.array([len(i.shown) for i in log.impressions]), log.click_position)
    queries = _query_ids(log, {normalize(q.text): q.id for q in load_queries(folder.root / "queries.jsonl")})
    pairs, evidence, latest = _evidence(log, queries, ctr)
    grades, judged = click_grades(evidence, scale, thresholds)
    corpus = folder.doc_ids()
    inside = np.array([doc in corpus for _, doc in pairs], dtype=bool)
    chosen = tuple(ImplicitPair(*pairs[i], int(grades[i]), int(evidence.clicks[i]), int(evidence.impressions[i]),
                                float(evidence.expected[i]), float(evidence.coec[i]), log.impressions[latest[i]].trace_id)
                   for i in np.flatnonzero(judged & inside))
    judgments = folder.store()
    existing = judgments.read()
    changes = _changes(chosen, existing)
    if not dry_run:
        judgments.append(changes.judgments)
    reference = qrels_reference(reference_files, scale) if reference_files else store_reference(
        existing, judgments.location)
    agreement = agreement_with({p.pair: p.grade for p in chosen}, reference, scale)
    return ImplicitReport(str(folder.root), name, url.masked() if url else str(store_path), IMPLICIT_JUDGE, thresholds, log.counts, ctr,
                          sum(q is None for q in queries), int((judged & ~inside).sum()), chosen, changes.added,
                          changes.changed, len(chosen) - changes.added - changes.changed, changes.retracted,
                          0 if dry_run else len(changes.judgments), agreement if agreement.pairs else None)


def _read(store_path: Path, url: StoreUrl | None, flt: InteractionFilter, bars: bool) -> ClickLog:
    """The dataset's impressions and clicks (from the shared store at ``url`` when given), with progress over the
    traces read."""
    with reading(store_path, url) as store:
        if store is None:
            return link([], lambda ids: ())
        shown = progress(store.count_interactions(flt), "reading traces", "trace", bars=bars)
        try:
            return link(store.interactions(flt), lambda ids: set(store.stored(list(ids))), shown.update)
        finally:
            shown.close()


def _query_ids(log: ClickLog, dataset_ids: Mapping[str, str]) -> list[str | None]:
    """Each impression's query id (None when its text was not recorded and it has no eval query id)."""
    by_text: dict[str, str] = {}
    out: list[str | None] = []
    for imp in log.impressions:
        if imp.query_id:
            out.append(imp.query_id)
        elif imp.query is None:
            out.append(None)
        else:
            if imp.query not in by_text:
                key = normalize(imp.query)
                by_text[imp.query] = dataset_ids.get(key) or query_id(imp.query)
            out.append(by_text[imp.query])
    return out


def _evidence(log: ClickLog, queries: Sequence[str | None],
              ctr: PositionCtr) -> tuple[list[Pair], PairEvidence, np.ndarray]:
    """The pairs the impressions with a query id showed (numbered), their evidence, and for each the index of
    the latest impression that showed it."""
    keep = np.array([i for i, q in enumerate(queries) if q is not None], dtype=np.int64)
    shown = [log.impressions[i].shown for i in keep]
    lengths = np.array([len(s) for s in shown], dtype=np.int64)
    doc_ids: dict[str, int] = {}
    doc_codes = np.fromiter((doc_ids.setdefault(d, len(doc_ids)) for s in shown for d in s), np.int64,
                            int(lengths.sum()))
    query_ids: dict[str, int] = {}
    query_codes = np.fromiter((query_ids.setdefault(str(queries[i]), len(query_ids)) for i in keep), np.int64,
                              len(keep))
    starts = np.cumsum(lengths) - lengths
    keys, slot_pairs = np.unique(np.repeat(query_codes, lengths) * max(len(doc_ids), 1) + doc_codes,
                                 return_inverse=True)
    slot_positions = np.arange(int(lengths.sum())) - np.repeat(starts, lengths) + 1
    row = np.full(len(log.impressions), -1, dtype=np.int64)
    row[keep] = np.arange(len(keep))
    judged = row[log.click_impression] >= 0
    click_slots = starts[row[log.click_impression[judged]]] + log.click_position[judged] - 1
    evidence = pair_evidence(slot_pairs, slot_positions, slot_pairs[click_slots], ctr, len(keys))
    latest = np.zeros(len(keys), dtype=np.int64)
    np.maximum.at(latest, slot_pairs, np.repeat(keep, lengths))
    queries_by_code, docs_by_code = list(query_ids), list(doc_ids)
    n_docs = max(len(doc_ids), 1)
    pairs = [(queries_by_code[k // n_docs], docs_by_code[k % n_docs]) for k in keys.tolist()]
    return pairs, evidence, latest


@dataclass(frozen=True)
class _Changes:
    judgments: tuple[Judgment, ...]
    added: int
    changed: int
    retracted: int


def _changes(chosen: Collection[ImplicitPair], existing: Sequence[Judgment]) -> _Changes:
    """The judgments that bring the judge's standing implicit labels to ``chosen``: new and changed grades,
    and retractions of the pairs no longer judged."""
    mine = {pair: j.grade for (pair, judge), j in standing(existing).items()
            if judge == IMPLICIT_JUDGE and j.kind is Kind.IMPLICIT}
    when = now()
    out: list[Judgment] = []
    added = changed = 0
    for p in chosen:
        before = mine.pop(p.pair, None)
        if before == p.grade:
            continue
        added += before is None
        changed += before is not None
        out.append(Judgment(p.query_id, p.doc_id, p.grade, IMPLICIT_JUDGE, Kind.IMPLICIT, when, p.note(), p.trace_id))
    out += [Judgment(q, d, None, IMPLICIT_JUDGE, Kind.IMPLICIT, when, "no longer judged from clicks")
            for q, d in sorted(mine)]
    return _Changes(tuple(out), added, changed, len(mine))

