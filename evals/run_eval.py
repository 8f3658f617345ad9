"""``searchtrace eval``: run a dataset split through the retriever and write the run folder."""

from __future__ import annotations

import gc
import json
import platform
import subprocess
import time
from dataclasses import asdict, replace
from importlib import metadata
from pathlib import Path

from evals import report
from evals.journal import Journal
from evals.latency import StageTimer
from evals.runner import EvalSettings, RunContext, execute, load_for_run, run_folder
from evals.trec import write_run
from retriever.config import RetrieverConfig
from retriever.data.beir import fingerprint
from retriever.settings import search_fingerprint, to_json

PACKAGES = ("searchtrace", "qdrant-edge-py", "qdrant-client", "neo4j", "sentence-transformers", "torch",
            "opentelemetry-sdk", "numpy")


def package_versions() -> dict[str, str | None]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_commit(cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _config_json(config: RetrieverConfig) -> dict:
    data = to_json(config)
    if data.get("neo4j"):
        data["neo4j"]["password"] = "***"
    data.pop("qdrant_api_key", None)
    return data


def run_eval(settings: EvalSettings, config: RetrieverConfig, *, out: Path | None = None, embedder=None,
             trace_settings=None, progress: bool = True) -> Path:
    """Run (or resume) an eval; returns the run folder with all its files written."""
    from retriever.api import open_retriever
    from traces.setup import TraceSettings, make_tracer_provider

    if not settings.retriever:
        settings = replace(settings, retriever=search_fingerprint(config))
    folder, resuming = run_folder(settings, config, out)
    dataset, queries = load_for_run(settings)
    folder.mkdir(parents=True, exist_ok=True)
    journal = Journal(folder / "journal.jsonl")
    if resuming:
        journal.truncate_torn_tail()
    else:
        (folder / "settings.json").write_text(json.dumps(asdict(settings), indent=2), encoding="utf-8")
    trace_settings = trace_settings or TraceSettings.resolve()
    provider, handles = make_tracer_provider(config.home, trace_settings)
    timer = StageTimer()
    provider.add_span_processor(timer)
    retriever = open_retriever(settings.dataset, config, embedder=embedder, progress=progress,
                               tracer=provider.get_tracer("searchtrace.eval"), capture=trace_settings.capture,
                               deferred=handles.deferred)
    ctx = RunContext(retriever, timer, handles.force_flush, folder.name, dataset, settings, folder)
    # The open index (ids, graph, dataset) is hundreds of thousands of long-lived objects: keep
    # them out of the collector's full passes, which otherwise walk them every few hundred searches.
    gc.freeze()
    started = time.perf_counter()
    try:
        execute(ctx, queries, journal, progress)
        if settings.corrective:
            from evals.corrective import run_corrective
            run_corrective(ctx, journal, progress)
    finally:
        handles.shutdown()
        retriever.index.close()
    return finalize(ctx, journal, time.perf_counter() - started, resuming)


def finalize(ctx: RunContext, journal: Journal, wall_s: float, resumed: bool) -> Path:
    """Score the journal and write run.trec, per_query.parquet, results.parquet and run.json (last)."""
    settings, folder, dataset = ctx.settings, ctx.out, ctx.dataset
    records = [r for r in journal.read() if not r.get("corrective_of")]
    ev = report.evaluation(records, dataset.qrels, settings.metrics)
    write_run(folder / "run.trec", report.run_of(records), tag=folder.name)
    report.per_query_table(records, ev).to_parquet(folder / "per_query.parquet", index=False)
    report.results_table(records).to_parquet(folder / "results.parquet", index=False)
    summary = {
        "run_id": folder.name,
        "dataset": {"name": dataset.name, "path": str(Path(settings.dataset).resolve()), "split": dataset.split,
                    "fingerprint": fingerprint(dataset.root), "queries": len(records)},
        "settings": json.loads(json.dumps(asdict(settings))),
        "retriever": _config_json(ctx.retriever.config) | {"mode": settings.mode or ctx.retriever.default_mode().value,
                                                           "index": ctx.retriever.index.manifest.key},
        "packages": package_versions(),
        "python": platform.python_version(),
        "git_commit": git_commit(Path(__file__).resolve().parent),
        "timings": {"wall_s": round(wall_s, 3), "resumed": resumed,
                    "queries_per_s": round(len(records) / wall_s, 2) if wall_s > 0 else None},
        "metrics": {str(m): (None if v != v else round(float(v), 6)) for m, v in ev.means.items()},
        "evaluated_queries": int(len(ev.query_ids)),
        "attribution": report.attribution_section(records),
        "confidence": report.confidence_section(records, ev),
        "abstention": report.abstention_section(records, dataset.qrels),
        "latency_ms": report.latency_section(records),
        "errors": sum(1 for r in records if r.get("error")),
    }
    if settings.corrective:
        from evals.corrective import corrective_section
        summary["corrective"] = corrective_section(journal.read(), dataset.qrels, settings.metrics, ev)
    (folder / "run.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return folder
