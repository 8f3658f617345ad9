"""The eval runner: every query of a split through the retriever, traced, journaled, scored.

A run folder holds ``settings.json`` (written first), ``journal.jsonl`` (one
line per completed query, see :mod:`evals.journal`), and when the run
completes ``run.json``, ``per_query.parquet``, ``results.parquet`` and
``run.trec``. Started again on a folder with a journal and no ``run.json``,
the runner skips the queries already done.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from retriever.config import RetrieverConfig
from retriever.data.beir import Dataset, Query, load_dataset
from retriever.errors import ValidationError
from evals.attribution import attribute
from evals.journal import Journal
from evals.latency import StageTimer

DEFAULT_METRICS = ("ndcg@10", "recall@5", "recall@100", "mrr@10", "map@100", "precision@10", "hit@10")
RESPONSE_TOP_K = 10  # results a caller would see: bands and noConfidentResults are judged on these


@dataclass(frozen=True)
class EvalSettings:
    """What defines a run; a resumed run must have the same settings.

    Attributes:
        dataset: dataset folder.
        split: qrels split (default: the loader's choice).
        mode: fast or graph (default: the retriever's).
        top_k: ranking depth written to the run and scored.
        metrics: metric keys.
        corrective: re-run weak queries with their retry hints.
        batch_size: queries embedded (and journaled) together.
        attribution_k: rank within which a gold document counts as found.
        results_per_query: ranked results kept per query for calibration.
        retriever: fingerprint of the retriever's search settings (filled by
            ``run_eval``), so a run never resumes under other settings.
    """

    dataset: str
    split: str | None = None
    mode: str | None = None
    top_k: int = 100
    metrics: tuple[str, ...] = DEFAULT_METRICS
    corrective: bool = False
    batch_size: int = 32
    attribution_k: int = 10
    results_per_query: int = 20
    retriever: str = ""

    def __post_init__(self) -> None:
        if not 1 <= self.top_k <= 500:
            raise ValidationError(f"top_k must be between 1 and 500, got {self.top_k}", field="top_k")
        if self.mode not in (None, "fast", "graph"):
            raise ValidationError(f"mode must be fast or graph, got {self.mode!r}", field="mode")

    def key(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:10]


@dataclass
class RunContext:
    """The live objects a run uses."""

    retriever: object
    timer: StageTimer
    flush: Callable[[], object]
    run_id: str
    dataset: Dataset
    settings: EvalSettings
    out: Path
    started: float = field(default_factory=time.perf_counter)


def run_folder(settings: EvalSettings, config: RetrieverConfig, out: Path | None) -> tuple[Path, bool]:
    """The folder to write, and whether it resumes an interrupted run.

    With ``out``: resume it if it holds an interrupted run with the same
    settings; refuse a completed run or different settings. Without: resume the
    newest interrupted run with the same settings under ``<home>/runs``, else a new
    timestamped folder.
    """
    if out is not None:
        out = Path(out)
        if (out / "run.json").exists():
            raise ValidationError(f"{out} already holds a completed run; choose another --out", field="out")
        if (out / "settings.json").exists():
            stored = json.loads((out / "settings.json").read_text(encoding="utf-8"))
            if stored != _settings_json(settings):
                raise ValidationError(f"{out} holds an interrupted run with other settings: {stored}", field="out")
            return out, True
        return out, False
    runs = config.home / "runs"
    if runs.exists():
        for folder in sorted(runs.iterdir(), reverse=True):
            if (folder / "settings.json").exists() and not (folder / "run.json").exists():
                if json.loads((folder / "settings.json").read_text(encoding="utf-8")) == _settings_json(settings):
                    return folder, True
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    name = Path(settings.dataset).resolve().name
    return runs / f"{name}-{settings.mode or 'default'}-{stamp}-{settings.key()}", False


def _settings_json(settings: EvalSettings) -> dict:
    return json.loads(json.dumps(asdict(settings)))


def _request(settings: EvalSettings, text: str) -> dict:
    request = {"query": text, "top_k": RESPONSE_TOP_K, "candidates": max(settings.top_k, 100)}
    if settings.mode:
        request["mode"] = settings.mode
    return request


def search_record(ctx: RunContext, query: Query, vector) -> dict:
    """Search one query and build its journal record."""
    settings = ctx.settings
    started = time.perf_counter()
    response, detail = ctx.retriever.search_detailed(_request(settings, query.text), query_vector=vector,
                                                     run_id=ctx.run_id, query_id=query.id)
    total_ms = (time.perf_counter() - started) * 1000
    latency = ctx.timer.pop(response.get("traceId", "")) if "error" not in response else {}
    latency["total"] = round(total_ms, 3)
    record = {"query_id": query.id, "category": query.category, "latency_ms": latency}
    if detail is None:
        return record | {"error": response["error"]["code"], "ranking": [], "results": [], "bestScore": 0.0,
                         "noConfidentResults": True, "bands": [], "attribution": [], "trace_id": ""}
    return record | _outcome(ctx, query, response, detail)


def _outcome(ctx: RunContext, query: Query, response: dict, detail) -> dict:
    settings = ctx.settings
    thresholds = ctx.retriever.config.confidence
    gold = ctx.dataset.qrels.get(query.id, {})
    chunks = [r for r in response["results"] if r["component_type"] == "chunk"]
    n_keep = settings.results_per_query
    results = []
    for i, doc in enumerate(detail.ranking[:n_keep]):
        rel = detail.relevance[i]
        band = chunks[i]["confidenceBand"] if i < len(chunks) else (
            "high" if rel >= thresholds.high else "low" if rel < thresholds.low else "medium")
        results.append({"doc_id": doc, "relevance": round(rel, 6), "band": band, "grade": int(gold.get(doc, 0)),
                        "features": [round(float(f), 6) for f in detail.features[i]]})
    ranking = detail.ranking[: settings.top_k]
    traces = attribute(query.id, gold, detail.stage_ids, detail.fused_ids, detail.dropped_ids, ranking,
                       settings.attribution_k)
    return {
        "ranking": [[d, round(s, 9)] for d, s in zip(ranking, detail.ranking_scores)],
        "results": results,
        "bestScore": response["bestScore"],
        "noConfidentResults": response["noConfidentResults"],
        "bands": [r["confidenceBand"] for r in chunks],
        "weak": response["retryHints"] is not None,
        "retryHints": response["retryHints"],
        "kg": response["kg"],
        "rewrite_terms": response["rewrite_terms"],
        "degraded": response["degraded"],
        "trace_id": response["traceId"],
        "attribution": [asdict(t) | {"lost_at": t.lost_at.value} for t in traces],
    }


def execute(ctx: RunContext, queries: list[Query], journal: Journal, progress: bool) -> None:
    """Search the queries not yet journaled, in embedded batches; journal after each batch's traces flush.

    Query vectors come from the embedding cache (all-MiniLM-L6-v2 embeds queries and
    passages alike), so a repeated eval embeds nothing and never loads the model.
    """
    from tqdm import tqdm

    from retriever.embedding import EmbeddingCache, embed_with_cache

    done = {r["query_id"] for r in journal.read()}
    todo = [q for q in queries if q.id not in done]
    bar = tqdm(total=len(queries), initial=len(done), desc="eval", unit="query", disable=not progress)
    embedder = ctx.retriever.embedder
    with EmbeddingCache(ctx.retriever.config.home / "cache" / "embeddings.sqlite") as cache:
        for start in range(0, len(todo), ctx.settings.batch_size):
            batch = todo[start:start + ctx.settings.batch_size]
            vectors = embed_with_cache(embedder, cache, [q.text for q in batch]).vectors
            records = [search_record(ctx, q, v) for q, v in zip(batch, vectors)]
            ctx.flush()  # traces first, so a journaled query always has its trace
            journal.append(records)
            bar.update(len(batch))
    bar.close()


def load_for_run(settings: EvalSettings) -> tuple[Dataset, list[Query]]:
    dataset = load_dataset(Path(settings.dataset), split=settings.split)
    return dataset, list(dataset.queries_for_split())
