"""``searchtrace eval``: run a dataset split through the retriever and write the run folder.

Warnings (qrels rows left out, a target answering fewer results than asked) go to this module's
logger; the command line prints them as ``warning:`` lines.
"""

from __future__ import annotations

import gc
import logging
import subprocess
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from searchtrace.evals.runs import analysis
from searchtrace.evals.runs.client import ClientPolicy
from searchtrace.evals.runs.execution.loop import (
    RESULTS_SHOWN,
    TARGET_PREFIX,
    RunContext,
    Searcher,
    execute,
    load_for_run,
    run_folder,
)
from searchtrace.evals.runs.naming import RunLabel, default_run_name
from searchtrace.evals.runs.runfolder import (
    DatasetInfo,
    EvalSettings,
    FailedQuery,
    Fingerprints,
    QueryOutcome,
    RetrieverInfo,
    RunFolder,
    completed,
    installed_versions,
    per_query_table,
    results_table,
)
from searchtrace.evals.runs.runfolder.outside import list_written
from searchtrace.evals.scoring.fingerprints import (
    corpus_fingerprint,
    qrels_fingerprint,
    queries_fingerprint,
    query_set_fingerprint,
)
from searchtrace.evals.scoring.latency import StageTimer
from searchtrace.retriever import (
    FEATURES,
    RetrieverConfig,
    config_json,
    dataset_fingerprint,
    open_retriever,
    search_fingerprint,
)
from searchtrace.traces import vocabulary

__all__ = ["PACKAGES", "EvalInterrupted", "finalize", "fingerprints_of", "git_commit", "package_versions", "run_eval", "scored_depth",
           "warn_dropped_qrels"]

log = logging.getLogger(__name__)

PACKAGES = ("searchtrace", "qdrant-edge-py", "qdrant-client", "neo4j", "sentence-transformers", "torch",
            "opentelemetry-sdk", "numpy")


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages that matter to a run's results."""
    return installed_versions(PACKAGES)


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
             trace_settings: Any = None, progress: bool = True, target: str | None = None,
             label: RunLabel | None = None, client: ClientPolicy | None = None,
             sleep: Callable[[float], object] = time.sleep) -> RunFolder:
    """Run (or resume) an eval; returns the run folder with all its files written.

    ``target``: search this service URL or ``module:function`` instead of the
    local retriever (see :mod:`searchtrace.evals.runs.target`), asked as ``client`` says
    (concurrency, timeout, retries: :mod:`searchtrace.evals.runs.client`; ``sleep`` waits
    between retries). The run records the target masked. ``label`` names the run
    (default: :func:`~searchtrace.evals.runs.naming.default_run_name`).
    """
    from searchtrace.traces import TraceSettings, make_tracer_provider

    search_fn = None
    client = client or ClientPolicy()
    if target is not None:
        from searchtrace.evals.runs.masking import mask_target
        from searchtrace.evals.runs.target import resolve_target

        search_fn = resolve_target(target, client.timeout_s)  # a bad target fails before any folder is made
        settings = replace(settings, retriever=f"{TARGET_PREFIX}{mask_target(target)}")
    if not settings.retriever:
        settings = replace(settings, retriever=search_fingerprint(config))
    folder, resuming = run_folder(settings, config, out, label)
    dataset, queries = load_for_run(settings)
    warn_dropped_qrels(dataset.report.messages())
    existed = folder.path.exists()
    if resuming:
        folder.journal.truncate_torn_tail()
    else:
        folder.create(settings)
    trace_settings = (trace_settings or TraceSettings.resolve()).for_home(config.home)
    provider, handles = make_tracer_provider(config.home, trace_settings)
    timer = StageTimer()
    provider.add_span_processor(timer)
    retriever: Searcher
    if search_fn is not None and target is not None:
        from searchtrace.evals.runs.client import RetryingSearch
        from searchtrace.evals.runs.target import TargetRetriever, depth_to_ask

        depth, warning = depth_to_ask(search_fn, settings.depth)
        _warn(warning)
        retriever = TargetRetriever(RetryingSearch(search_fn, client, sleep=sleep), target,
                                    provider.get_tracer("searchtrace.eval"), config, depth=depth,
                                    shown=RESULTS_SHOWN, concurrency=client.concurrency)
    else:
        try:  # the index may be built here: minutes a person may cut short
            retriever = open_retriever(settings.dataset, config, embedder=embedder, progress=progress,
                                       tracer=provider.get_tracer("searchtrace.eval"), capture=trace_settings.capture,
                                       deferred=handles.deferred, source=vocabulary.Source.EVAL)
        except KeyboardInterrupt:
            handles.close(trace_settings.exit_timeout_s)
            raise _interrupted(folder, len(queries)) from None
        except Exception:
            handles.close(trace_settings.exit_timeout_s)
            if not resuming:
                _unmake(folder, existed)
            raise
    ctx = RunContext(retriever, timer, handles, folder.run_id, dataset, settings, folder)
    # The open index (ids, graph, dataset) is hundreds of thousands of long-lived objects: keep
    # them out of the collector's full passes, which otherwise walk them every few hundred searches.
    gc.freeze()
    started = time.perf_counter()
    try:
        execute(ctx, queries, progress)
        if settings.corrective:
            from searchtrace.evals.runs.execution.corrective import run_corrective
            run_corrective(ctx, progress)
    except KeyboardInterrupt:
        raise _interrupted(folder, len(queries)) from None
    finally:
        handles.close(trace_settings.exit_timeout_s)
        retriever.close()
    folder = finalize(ctx, time.perf_counter() - started, resuming, label)
    list_written(config.home, folder.path)  # a run written with --out anywhere is in the home's run index
    return folder


def _unmake(folder: RunFolder, existed: bool) -> None:
    """Take back the settings a run that never started wrote (a retriever that could not open, such as a
    calibration file that is missing), so the same ``--out`` with the setting fixed is not refused as
    another run's; the folder goes too when this run made it and it is empty."""
    folder.settings_file.unlink(missing_ok=True)
    if not existed and not any(folder.path.iterdir()):
        folder.path.rmdir()


def _interrupted(folder: RunFolder, total: int) -> EvalInterrupted:
    """Where a run stopped by Ctrl-C stands: its folder, the queries its journal holds, of ``total``."""
    return EvalInterrupted(folder.path, len({o.query_id for o in folder.outcomes()}), total)


class EvalInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped an eval; what its journal holds stays, and the same settings and folder resume it.

    Attributes:
        folder: the run folder.
        done: queries journaled (searched and kept).
        total: queries of the run.
    """

    def __init__(self, folder: Path, done: int, total: int) -> None:
        super().__init__(f"eval interrupted: {done} of {total} queries done, in {folder}")
        self.folder, self.done, self.total = folder, done, total


def _warn(line: str | None) -> None:
    if line:
        log.warning("%s", line)


def scored_depth(outcomes: list[QueryOutcome], depth: int) -> int:
    """The depth a run's metrics reach: ``depth``, or the longest ranking when none is that long."""
    return min(depth, max((len(o.ranking) for o in outcomes), default=0))


def _warn_short(ctx: RunContext, outcomes: list[QueryOutcome]) -> None:
    """One line when a target answered queries with fewer results than asked (the corpus having more)."""
    from searchtrace.evals.runs.target import TargetRetriever, short_answers

    if isinstance(ctx.retriever, TargetRetriever):
        asked = min(ctx.settings.depth, ctx.retriever.depth)
        _warn(short_answers([len(o.ranking) for o in outcomes if not o.error], asked, len(ctx.dataset.docs)))


def warn_dropped_qrels(messages: list[str], shown: int = 5) -> None:
    """One warning per qrels row the scoring leaves out (unknown query or document), the first few."""
    if not messages:
        return
    log.warning("%d qrels rows name a query or document the dataset does not have; they are not scored:",
                len(messages))
    for line in messages[:shown]:
        log.warning("%s", line)
    if len(messages) > shown:
        log.warning("... and %d more (searchtrace datasets check lists them all)", len(messages) - shown)


def fingerprints_of(ctx: RunContext, scored: list[str]) -> Fingerprints:
    """The separate hashes ``compare`` and ``gate`` check: corpus, queries, the split's qrels, the queries scored."""
    dataset = ctx.dataset
    return Fingerprints(corpus=corpus_fingerprint(Path(dataset.root) / "corpus.jsonl"),
                        queries=queries_fingerprint((q.id, q.text) for q in dataset.queries),
                        qrels=qrels_fingerprint(dataset.qrels), scored=query_set_fingerprint(scored))


def finalize(ctx: RunContext, wall_s: float, resumed: bool, label: RunLabel | None = None) -> RunFolder:
    """Score the journal and write run.trec, per_query.parquet, results.parquet and run.json (last)."""
    settings, folder, dataset = ctx.settings, ctx.folder, ctx.dataset
    records = folder.records()
    order = {q.id: i for i, q in enumerate(dataset.queries)}
    outcomes = sorted(folder.outcomes(records), key=lambda o: order.get(o.query_id, len(order)))
    run = analysis.run_of(outcomes)
    ev = analysis.evaluation(outcomes, dataset.qrels, settings.metrics, settings.rules, run)
    folder.write_run_file(run, tag=folder.run_id)
    folder.write_tables(per_query_table(outcomes, ev), results_table(outcomes, FEATURES))
    corrective = None
    if settings.corrective:
        from searchtrace.evals.runs.execution.corrective import corrective_section
        corrective = corrective_section(records, dataset.qrels, settings.metrics, ev)
    external = getattr(ctx.retriever, "external", None)
    if external is not None:
        retriever = RetrieverInfo(mode="target", index="", config={"target": external.source})
    else:
        mode = settings.mode or ctx.retriever.default_mode().value  # type: ignore[attr-defined]
        retriever = RetrieverInfo(mode=mode, index=ctx.retriever.index_key, config=_config_json(ctx.retriever.config))
    summary = completed(
        run_id=folder.run_id,
        dataset=DatasetInfo(name=dataset.name, path=str(Path(settings.dataset).resolve()), split=dataset.split,
                            fingerprint=dataset_fingerprint(dataset.root), queries=len(outcomes),
                            fingerprints=fingerprints_of(ctx, [o.query_id for o in outcomes]),
                            query_set=len(dataset.queries)),
        settings=settings, retriever=retriever, packages=package_versions(),
        git_commit=git_commit(Path(__file__).resolve().parent),
        evaluation=ev, wall_s=wall_s, resumed=resumed, searched=len(outcomes),
        attribution=analysis.attribution_section(outcomes),
        confidence=analysis.confidence_section(outcomes, ev),
        abstention=analysis.abstention_section(outcomes, dataset.qrels),
        latency_ms=analysis.latency_section(outcomes),
        errors=sum(1 for o in outcomes if o.error),
        untraced=sum(1 for o in outcomes if not o.traced),
        corrective=corrective, external=external,
        scored_depth=scored_depth(outcomes, settings.depth),
    )
    _warn_short(ctx, outcomes)
    label = label or RunLabel()
    summary = replace(summary, name=label.name or default_run_name(summary), tags=label.tags, note=label.note,
                      failed=tuple(FailedQuery.of(o.query_id, o.error, o.error_message) for o in outcomes if o.error))
    folder.write_summary(summary)
    return folder
