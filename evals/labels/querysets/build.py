"""``queries from-traces``: a query set of the queries a dataset's traffic asked, read from the trace store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from searchtrace.database import StoreUrl
from searchtrace.errors import NotFoundError, ValidationError
from searchtrace.evals.labels.querysets.folder import LINKED, QuerySetInfo, write_folder
from searchtrace.evals.labels.querysets.options import TRAFFIC_SOURCES, Sampling
from searchtrace.evals.labels.querysets.sampling import sample
from searchtrace.evals.labels.querysets.services import ServiceFilter, gather_searches, read_searches
from searchtrace.evals.labels.querysets.traffic import Traffic, TrafficQuery, gather
from searchtrace.home import Home
from searchtrace.names import Band, Mode
from searchtrace.progress import progress
from searchtrace.retriever import dataset_name
from searchtrace.traces import TraceFilter, reading, to_ns, vocabulary

__all__ = ["QuerySet", "TrafficFilter", "queries_from_service", "queries_from_traces"]


@dataclass(frozen=True)
class TrafficFilter:
    """Which stored searches of the dataset give the queries; every field set must match.

    Attributes:
        sources: the surfaces searched through (default: every traffic source).
        since, until: the search's start, from (inclusive) and to (exclusive); naive = local time.
        mode: the search mode.
        best_band: the band of the search's best result.
        no_confident: the search's ``noConfidentResults`` flag.
    """

    sources: tuple[vocabulary.Source, ...] = TRAFFIC_SOURCES
    since: datetime | None = None
    until: datetime | None = None
    mode: Mode | None = None
    best_band: Band | None = None
    no_confident: bool | None = None

    def trace_filter(self, dataset: str) -> TraceFilter:
        """The store's filter for these searches of the dataset named ``dataset``, every one of them."""
        return TraceFilter(since=self.since, until=self.until, mode=self.mode.value if self.mode else None,
                           best_band=self.best_band.value if self.best_band else None,
                           no_confident=self.no_confident, sources=tuple(s.value for s in self.sources),
                           dataset=dataset, limit=None)

    def to_json(self) -> dict[str, Any]:
        """The filters set, by option name (``queryset.json``; the line that says nothing matched)."""
        values = {"source": [s.value for s in self.sources], "since": _iso(self.since), "until": _iso(self.until),
                  "mode": self.mode.value if self.mode else None,
                  "band": self.best_band.value if self.best_band else None, "no_confident": self.no_confident}
        return {k: v for k, v in values.items() if v is not None}

    def problems(self) -> list[str]:
        """What is wrong with the filter, each said as the option it came from."""
        out = [f"--source {s.value}: not traffic (give {', '.join(t.value for t in TRAFFIC_SOURCES)})"
               for s in self.sources if s not in TRAFFIC_SOURCES]
        if not self.sources:
            out.append("--source: give at least one")
        if self.since and self.until and to_ns(self.since) >= to_ns(self.until):
            out.append(f"--since {_iso(self.since)} is not before --until {_iso(self.until)}")
        return out


@dataclass(frozen=True)
class QuerySet:
    """A query set written: its folder and how it was made."""

    path: Path
    info: QuerySetInfo


def queries_from_traces(out: str | Path, dataset: str | Path, *, home: str | Path | None = None,
                        traffic: TrafficFilter = TrafficFilter(), sampling: Sampling = Sampling.ALL,
                        n: int | None = None, seed: int = 0, force: bool = False, bars: bool = False,
                        store: StoreUrl | None = None) -> QuerySet:
    """Write to ``out`` a BEIR dataset of the queries the stored traffic asked of ``dataset``.

    Queries are de-duplicated by their normalized text (``querysets.traffic``); ``sampling`` picks ``n`` of
    them, seeded by ``seed`` (``querysets.sampling``). ``out`` links to the dataset's corpus (and triples).
    ``store``: the shared store to read the traffic from (None: the home's).

    Raises:
        ValidationError: a bad option, a dataset without ``corpus.jsonl``, ``out`` not empty without ``force``.
        NotFoundError: no stored search matches (nothing is written).
        SearchtraceError: the trace store is damaged.
    """
    out, dataset = Path(out), Path(dataset)
    problems = [*_sampling_problems(sampling, n, seed), *traffic.problems(), *_folder_problems(out, dataset, force)]
    if problems:
        raise ValidationError("; ".join(problems))
    name = dataset_name(dataset)
    store_path = Home.resolve(home).traces
    flt = traffic.trace_filter(name)
    found = _read(store_path, store, flt, bars)
    if not found.queries:
        raise NotFoundError(_nothing_matched(found, name, traffic, store.masked() if store else store_path),
                            field="traces")
    picked = sample(sampling, np.array([q.count for q in found.queries]), n, seed)
    chosen = _by_count([(found.queries[i], float(p)) for i, p in zip(picked.chosen, picked.probability)])
    info = QuerySetInfo(str(dataset.resolve()), name, traffic.to_json(), sampling.value,
                        None if sampling is Sampling.ALL else n, seed, found.searches, found.uncaptured,
                        len(found.queries), len(chosen), datetime.now(UTC).isoformat(timespec="seconds"))
    write_folder(out, dataset, chosen, info)
    return QuerySet(out, info)


def queries_from_service(out: str | Path, service: ServiceFilter, *, dataset: str | Path | None = None,
                         home: str | Path | None = None, sampling: Sampling = Sampling.ALL, n: int | None = None,
                         seed: int = 0, force: bool = False, store: StoreUrl | None = None) -> QuerySet:
    """Write to ``out`` a BEIR dataset of the queries another retriever's stored searches asked (``service``).

    Its corpus: ``dataset``'s, linked, when given; else the documents the searches returned, with their text as
    the spans sent it (``querysets.services``; ``info.corpus`` counts those without text and without an id).

    Raises:
        ValidationError: a bad option, ``out`` not empty without ``force``.
        NotFoundError: no stored search of the service has a query (nothing is written).
    """
    out = Path(out)
    source = Path(dataset) if dataset is not None else None
    problems = [*_sampling_problems(sampling, n, seed), *service.problems(),
                *(_folder_problems(out, source, force) if source else _out_problems(out, force))]
    if problems:
        raise ValidationError("; ".join(problems))
    store_path = Home.resolve(home).traces
    seen = gather_searches(read_searches(store_path, store, service.search_filter()))
    found = seen.traffic
    if not found.queries:
        where = store.masked() if store else store_path
        raise NotFoundError(f"no search of service {service.service!r} with a query text matches "
                            f"({', '.join(_said(k, v) for k, v in service.to_json().items())}; {found.searches} "
                            f"without one) in {where}: nothing written", field="traces")
    picked = sample(sampling, np.array([q.count for q in found.queries]), n, seed)
    chosen = _by_count([(found.queries[i], float(p)) for i, p in zip(picked.chosen, picked.probability)])
    corpus = None if source else {"documents": len(seen.corpus.documents),
                                  "without_content": seen.corpus.without_content,
                                  "unidentified": seen.corpus.unidentified}
    info = QuerySetInfo(str(source.resolve()) if source else "", dataset_name(source) if source else service.service,
                        service.to_json(), sampling.value, None if sampling is Sampling.ALL else n, seed,
                        found.searches, found.uncaptured, len(found.queries), len(chosen),
                        datetime.now(UTC).isoformat(timespec="seconds"), corpus=corpus)
    write_folder(out, source, chosen, info, None if source else seen.corpus.documents)
    return QuerySet(out, info)


def _read(store_path: Path, url: StoreUrl | None, flt: TraceFilter, bars: bool) -> Traffic:
    """The traffic the store holds for ``flt``, oldest first, with progress over the traces."""
    with reading(store_path, url) as store:
        if store is None:
            return Traffic((), 0, 0)
        shown = progress(store.count(flt), "reading traces", "trace", bars=bars)
        try:
            return gather(store.scan(flt), shown.update)
        finally:
            shown.close()


def _by_count(chosen: list[tuple[TrafficQuery, float]]) -> list[tuple[TrafficQuery, float]]:
    """Most asked first; ties in the order first asked (``chosen`` comes in that order)."""
    return sorted(chosen, key=lambda pair: -pair[0].count)


def _nothing_matched(found: Traffic, name: str, traffic: TrafficFilter, store_path: Path | str) -> str:
    filters = ", ".join(_said(k, v) for k, v in traffic.to_json().items())
    if found.searches:
        return (f"{found.searches} searches of dataset {name!r} match ({filters}) but none recorded its query "
                "text (SEARCHTRACE_CAPTURE_QUERY=0): nothing written")
    return f"no searches of dataset {name!r} match ({filters}) in {store_path}: nothing written"


def _said(option: str, value: Any) -> str:
    """A filter as its option says it: ``source http|mcp``, ``no-confident``."""
    if isinstance(value, bool):
        return option.replace("_", "-") if value else option.replace("no_", "")
    return f"{option} {'|'.join(value) if isinstance(value, list) else value}"


def _sampling_problems(sampling: Sampling, n: int | None, seed: int) -> list[str]:
    out = []
    if sampling is Sampling.ALL and n is not None:
        out.append("--n goes with --sample random, frequency or top (--sample all takes every query)")
    elif sampling is not Sampling.ALL and n is None:
        out.append(f"--sample {sampling.value} needs --n N, how many queries to pick")
    if n is not None and n < 1:
        out.append(f"--n must be at least 1, got {n}")
    if seed < 0:
        out.append(f"--seed must be 0 or more, got {seed}")
    return out


def _folder_problems(out: Path, dataset: Path, force: bool) -> list[str]:
    problems = []
    if not (dataset / LINKED[0]).is_file():
        problems.append(f"--dataset {dataset}: no {LINKED[0]} there (give a BEIR dataset folder)")
    elif out.resolve() == dataset.resolve() or out.resolve() in dataset.resolve().parents:
        problems.append(f"{out} holds the dataset {dataset}: write the query set elsewhere")
    return problems + _out_problems(out, force)


def _out_problems(out: Path, force: bool) -> list[str]:
    problems = []
    if out.exists() and not out.is_dir():
        problems.append(f"{out} is a file: name a folder for the query set")
    elif out.is_dir() and any(out.iterdir()) and not force:
        problems.append(f"{out} is not empty: give --force to replace it")
    return problems


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None
