"""The sections of ``run.json``: what was scored, with what, and how it went.

Each is a frozen record with ``to_json`` and ``from_json`` (see :mod:`.summary`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from searchtrace.evals.runs.runfolder._fields import Fields
from searchtrace.names import Band

__all__ = ["Abstention", "Attribution", "BandPrecision", "ConfidenceReport", "CorrectiveReport", "DatasetInfo",
           "ExternalRun", "Fingerprints", "Percentiles", "RetrieverInfo", "Timings"]


@dataclass(frozen=True)
class Fingerprints:
    """Separate content hashes of what a run scored (format 3; see :mod:`searchtrace.evals.scoring.fingerprints`).

    Attributes:
        corpus: ``corpus.jsonl``'s bytes.
        queries: every query's id and text.
        qrels: the judgments of the split scored.
        scored: the set of query ids scored.
    """

    corpus: str
    queries: str
    qrels: str
    scored: str

    def to_json(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "queries": self.queries, "qrels": self.qrels, "scored": self.scored}

    @classmethod
    def from_json(cls, f: Fields) -> Fingerprints:
        return cls(f.text("corpus"), f.text("queries"), f.text("qrels"), f.text("scored"))


@dataclass(frozen=True)
class DatasetInfo:
    """The dataset scored: name, folder, split, content fingerprint and queries searched.

    ``fingerprint`` hashes the index inputs (corpus and triples); ``fingerprints``
    holds the separate hashes a comparison checks (None in runs before format 3).
    ``queries`` counts the queries searched (the split's); ``query_set`` the
    dataset's whole query set (None in runs that did not record it).
    """

    name: str
    path: str
    split: str | None
    fingerprint: str
    queries: int
    fingerprints: Fingerprints | None = None
    query_set: int | None = None

    @property
    def of(self) -> int:
        """The queries a "judged of" count is of: the query set when known, else those searched."""
        return self.queries if self.query_set is None else self.query_set

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "path": self.path, "split": self.split,
                               "fingerprint": self.fingerprint, "queries": self.queries}
        if self.fingerprints is not None:
            out["fingerprints"] = self.fingerprints.to_json()
        if self.query_set is not None:
            out["query_set"] = self.query_set
        return out

    @classmethod
    def from_json(cls, f: Fields) -> DatasetInfo:
        prints = f.opt_obj("fingerprints")
        query_set = f.integer("query_set") if f.has("query_set") else None
        return cls(f.text("name"), f.text("path", ""), f.opt_text("split"), f.text("fingerprint", ""),
                   f.integer("queries"), Fingerprints.from_json(prints) if prints else None, query_set)


@dataclass(frozen=True)
class RetrieverInfo:
    """The retriever that ran: its mode, its index key and its resolved configuration (JSON)."""

    mode: str
    index: str
    config: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {**self.config, "mode": self.mode, "index": self.index}

    @classmethod
    def from_json(cls, f: Fields) -> RetrieverInfo:
        config = {k: v for k, v in f.data.items() if k not in ("mode", "index")}
        return cls(f.text("mode"), f.text("index", ""), config)

    def setting(self, *path: str) -> Any:
        """One value of the configuration, e.g. ``setting("fusion", "method")`` (None when absent)."""
        value: Any = self.config
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        return value


@dataclass(frozen=True)
class Timings:
    """Wall time of the run, whether it resumed an interrupted one, and its throughput."""

    wall_s: float
    resumed: bool
    queries_per_s: float | None

    def to_json(self) -> dict[str, Any]:
        return {"wall_s": self.wall_s, "resumed": self.resumed, "queries_per_s": self.queries_per_s}

    @classmethod
    def from_json(cls, f: Fields) -> Timings:
        return cls(f.number("wall_s"), f.flag("resumed"), f.opt_number("queries_per_s"))


@dataclass(frozen=True)
class Attribution:
    """Where gold documents were found and lost (see :mod:`searchtrace.evals.scoring.attribution`).

    Attributes:
        gold_documents: relevant (query, document) pairs.
        candidate_recall: share of them each retrieval stage had among its candidates (and ``any``).
        lost_at: how many were found, ranked out, filtered or never retrieved.
    """

    gold_documents: int
    candidate_recall: Mapping[str, float]
    lost_at: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"gold_documents": self.gold_documents, "candidate_recall": dict(self.candidate_recall),
                "lost_at": dict(self.lost_at)}

    @classmethod
    def from_json(cls, f: Fields) -> Attribution:
        lost = f.get("lost_at", lambda v: isinstance(v, dict) and all(
            isinstance(x, int) and not isinstance(x, bool) for x in v.values()), "an object of counts")
        recall = f.finite("candidate_recall")
        return cls(f.integer("gold_documents"), recall, dict(lost))


@dataclass(frozen=True)
class BandPrecision:
    """Share of a band's results that are relevant (None when the band is empty), and how many."""

    precision: float | None
    count: int


@dataclass(frozen=True)
class ConfidenceReport:
    """Whether relevance, bands and bestScore mean what they say.

    Attributes:
        results: results judged (the top 10 of each query).
        band_precision: each band's precision.
        ordered: precision falls from high to medium to low.
        ece, brier, auroc: calibration of relevance against the labels.
        best_score_auroc_no_relevant: AUROC of a low bestScore for spotting queries with no relevant result.
        best_score_kendall_tau_ndcg10: Kendall's tau between bestScore and nDCG@10.
    """

    results: int
    band_precision: Mapping[Band, BandPrecision]
    ordered: bool
    ece: float | None
    brier: float | None
    auroc: float | None
    best_score_auroc_no_relevant: float | None
    best_score_kendall_tau_ndcg10: float | None

    def to_json(self) -> dict[str, Any]:
        bands: dict[str, Any] = {b.value: {"precision": p.precision, "count": p.count}
                                 for b, p in self.band_precision.items()}
        return {"results": self.results, "band_precision": {**bands, "ordered": self.ordered}, "ece": self.ece,
                "brier": self.brier, "auroc": self.auroc,
                "best_score_auroc_no_relevant": self.best_score_auroc_no_relevant,
                "best_score_kendall_tau_ndcg10": self.best_score_kendall_tau_ndcg10}

    @classmethod
    def from_json(cls, f: Fields) -> ConfidenceReport:
        bp = f.obj("band_precision")
        bands = {}
        for band in Band:
            one = bp.obj(band.value)
            bands[band] = BandPrecision(one.opt_number("precision"), one.integer("count"))
        return cls(f.integer("results"), bands, bp.flag("ordered"), f.opt_number("ece"), f.opt_number("brier"),
                   f.opt_number("auroc"), f.opt_number("best_score_auroc_no_relevant"),
                   f.opt_number("best_score_kendall_tau_ndcg10"))


@dataclass(frozen=True)
class Abstention:
    """How well ``noConfidentResults`` spots unanswerable queries."""

    unanswerable: int
    flagged: int
    precision: float | None
    recall: float

    def to_json(self) -> dict[str, Any]:
        return {"unanswerable": self.unanswerable, "flagged": self.flagged, "precision": self.precision,
                "recall": self.recall}

    @classmethod
    def from_json(cls, f: Fields) -> Abstention:
        return cls(f.integer("unanswerable"), f.integer("flagged"), f.opt_number("precision"), f.number("recall"))


@dataclass(frozen=True)
class Percentiles:
    """Latency percentiles (ms) of one stage over a run's queries."""

    p50: float
    p95: float
    p99: float
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"p50": self.p50, "p95": self.p95, "p99": self.p99, "n": self.n}

    @classmethod
    def from_json(cls, f: Fields) -> Percentiles:
        return cls(f.number("p50"), f.number("p95"), f.number("p99"), f.integer("n"))


@dataclass(frozen=True)
class CorrectiveReport:
    """What re-querying weak searches with their retry hints gained, and what it cost.

    Attributes:
        weak_queries: queries retried.
        changed_answers: queries whose answer a retry replaced.
        chosen: how often each answer was kept (original, narrower, broader, related).
        metrics: the corrected run's metric means.
        gain: corrected minus plain, per metric.
        added_latency_ms: total, per weak query and per query.
    """

    weak_queries: int
    changed_answers: int
    chosen: Mapping[str, int]
    metrics: Mapping[str, float]
    gain: Mapping[str, float]
    added_latency_ms: Mapping[str, float]

    def to_json(self) -> dict[str, Any]:
        return {"weak_queries": self.weak_queries, "changed_answers": self.changed_answers,
                "chosen": dict(self.chosen), "metrics": dict(self.metrics), "gain": dict(self.gain),
                "added_latency_ms": dict(self.added_latency_ms)}

    @classmethod
    def from_json(cls, f: Fields) -> CorrectiveReport:
        chosen = f.get("chosen", lambda v: isinstance(v, dict), "an object of counts")

        return cls(f.integer("weak_queries"), f.integer("changed_answers"), dict(chosen), f.finite("metrics"),
                   f.finite("gain"), f.finite("added_latency_ms"))


@dataclass(frozen=True)
class ExternalRun:
    """A run whose rankings came from outside this project's retriever.

    Attributes:
        kind: ``run_file`` (a TREC run scored with ``eval --run``) or ``target``
            (a service or callable searched with ``eval --target``).
        source: the run file's path, the target's URL or ``module:function``.
        qrels: the qrels file scored against (None: the dataset's).
        rules: the query rules of the scores (see ``evals.metrics.QueryRules``).
    """

    kind: str
    source: str
    qrels: str | None = None
    rules: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "source": self.source, "qrels": self.qrels,
                "rules": dict(self.rules) if self.rules is not None else None}

    @classmethod
    def from_json(cls, f: Fields) -> ExternalRun:
        rules = f.get("rules", lambda v: v is None or isinstance(v, dict), "an object or null", None)
        return cls(f.text("kind"), f.text("source"), f.opt_text("qrels"), rules)
