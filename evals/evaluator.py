"""``searchtrace eval``: run a dataset split through the retriever and write the run folder."""

from __future__ import annotations

import gc
import platform
import subprocess
import time
from dataclasses import replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from searchtrace.evals import report
from searchtrace.evals.latency import StageTimer
from searchtrace.evals.runfolder import (
    DatasetInfo,
    EvalSettings,
    RetrieverInfo,
    RunFolder,
    RunSummary,
    Timings,
    per_query_table,
    results_table,
)
from searchtrace.evals.runner import RunContext, execute, load_for_run, run_folder
from searchtrace.retriever import (
    FEATURES,
    RetrieverConfig,
    config_json,
    dataset_fingerprint,
    open_retriever,
    search_fingerprint,
)
from searchtrace.traces import vocabulary

__all__ = ["PACKAGES", "finalize", "git_commit", "package_versions", "run_eval"]

PACKAGES = ("searchtrace", "qdrant-edge-py", "qdrant-client", "neo4j", "sentence-transformers", "torch",
            "opentelemetry-sdk", "numpy")


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages that matter to a run's results."""
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_commit(cwd: Path) -> str | None:
    """The commit checked out at ``cwd``, when it is a git checkout."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _config_json(config: RetrieverConfig) -> dict[str, Any]:
    data: dict[str, Any] = config_json(config)
    data["home"] = str(config.home.root)
    if data.get("neo4j"):
        data["neo4j"]["password"] = "***"
    data.pop("qdrant_api_key", None)
    return data


def run_eval(settings: EvalSettings, config: RetrieverConfig, *, out: Path | None = None, embedder: Any = None,
             trace_settings: Any = None, progress: bool = True) -> RunFolder:
    """Run (or resume) an eval; returns the run folder with all its files written."""
    from searchtrace.traces import TraceSettings, make_tracer_provider

    if not settings.retriever:
        settings = replace(settings, retriever=search_fingerprint(config))
    folder, resuming = run_folder(settings, config, out)
    dataset, queries = load_for_run(settings)
    if resuming:
        folder.journal.truncate_torn_tail()
    else:
        folder.create(settings)
    trace_settings = trace_settings or TraceSettings.resolve()
    provider, handles = make_tracer_provider(config.home, trace_settings)
    timer = StageTimer()
    provider.add_span_processor(timer)
    retriever = open_retriever(settings.dataset, config, embedder=embedder, progress=progress,
                               tracer=provider.get_tracer("searchtrace.eval"), capture=trace_settings.capture,
                               deferred=handles.deferred, source=vocabulary.Source.EVAL)
    ctx = RunContext(retriever, timer, handles, folder.run_id, dataset, settings, folder)
    # The open index (ids, graph, dataset) is hundreds of thousands of long-lived objects: keep
    # them out of the collector's full passes, which otherwise walk them every few hundred searches.
    gc.freeze()
    started = time.perf_counter()
    try:
        execute(ctx, queries, progress)
        if settings.corrective:
            from searchtrace.evals.corrective import run_corrective
            run_corrective(ctx, progress)
    finally:
        handles.close(trace_settings.exit_timeout_s)
        retriever.close()
    return finalize(ctx, time.perf_counter() - started, resuming)


def finalize(ctx: RunContext, wall_s: float, resumed: bool) -> RunFolder:
    """Score the journal and write run.trec, per_query.parquet, results.parquet and run.json (last)."""
    settings, folder, dataset = ctx.settings, ctx.folder, ctx.dataset
    records = folder.records()
    order = {q.id: i for i, q in enumerate(dataset.queries)}
    outcomes = sorted(folder.outcomes(), key=lambda o: order.get(o.query_id, len(order)))
    ev = report.evaluation(outcomes, dataset.qrels, settings.metrics)
    folder.write_run_file(report.run_of(outcomes), tag=folder.run_id)
    folder.write_tables(per_query_table(outcomes, ev), results_table(outcomes, FEATURES))
    corrective = None
    if settings.corrective:
        from searchtrace.evals.corrective import corrective_section
        corrective = corrective_section(records, dataset.qrels, settings.metrics, ev)
    summary = RunSummary(
        run_id=folder.run_id,
        dataset=DatasetInfo(name=dataset.name, path=str(Path(settings.dataset).resolve()), split=dataset.split,
                            fingerprint=dataset_fingerprint(dataset.root), queries=len(outcomes)),
        settings=settings,
        retriever=RetrieverInfo(mode=settings.mode or ctx.retriever.default_mode().value,
                                index=ctx.retriever.index_key, config=_config_json(ctx.retriever.config)),
        packages=package_versions(),
        python=platform.python_version(),
        git_commit=git_commit(Path(__file__).resolve().parent),
        timings=Timings(wall_s=round(wall_s, 3), resumed=resumed,
                        queries_per_s=round(len(outcomes) / wall_s, 2) if wall_s > 0 else None),
        metrics={str(m): (None if v != v else round(float(v), 6)) for m, v in ev.means.items()},
        evaluated_queries=int(len(ev.query_ids)),
        attribution=report.attribution_section(outcomes),
        confidence=report.confidence_section(outcomes, ev),
        abstention=report.abstention_section(outcomes, dataset.qrels),
        latency_ms=report.latency_section(outcomes),
        errors=sum(1 for o in outcomes if o.error),
        untraced=sum(1 for o in outcomes if not o.traced),
        corrective=corrective,
        created_at=datetime.now(UTC).replace(microsecond=0),
    )
    folder.write_summary(summary)
    return folder
