"""Runs made outside this project's retriever: a TREC run file scored against qrels.

:func:`score_run_file` reads both files, refuses inputs that cannot give a
meaningful score (no relevant judgment at all, no query in common) and warns
when the run misses most judged queries; :func:`write_run_folder` writes the
scores as a complete run folder, marked external, that ``compare``, ``gate``
and the dashboard read like any other. Nothing here imports pandas.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.runfolder.arrow_columns import falses, floats, strings
from searchtrace.evals.scoring.metrics import Evaluation, QueryRules, coverage_metrics, evaluate
from searchtrace.evals.scoring.rankings import Qrels, Run
from searchtrace.retriever import MAX_CANDIDATES

if TYPE_CHECKING:
    from searchtrace.evals.runs.runfolder import RunFolder

__all__ = ["Scored", "check_inputs", "score_run_file", "write_run_folder"]

_SHOWN = 3  # ids quoted in a message


@dataclass(frozen=True, eq=False)
class Scored:
    """A run file scored against qrels, and the warnings it raised."""

    run: Run
    qrels: Qrels
    evaluation: Evaluation
    warnings: tuple[str, ...]


def _examples(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in list(ids)[:_SHOWN])
    return shown + (", ..." if len(ids) > _SHOWN else "")


def check_inputs(qrels: Qrels, run: Run, rules: QueryRules, qrels_name: str, run_name: str) -> list[str]:
    """Refuse inputs no score means anything for; return the warnings for doubtful ones.

    Raises:
        ValidationError: the qrels judge no document relevant, or the run and the
            qrels share no query id.
    """
    relevant = qrels.grades >= rules.relevance_level
    if not relevant.any():
        raise ValidationError(f"{qrels_name}: no relevant judgment (grade >= {rules.relevance_level}) in "
                              f"{len(qrels)} judgments: every score would be undefined", field="qrels")
    has_relevant = np.bincount(qrels.query_index[relevant], minlength=len(qrels.queries)) > 0
    judged = set(qrels.queries[has_relevant].tolist())
    in_run = set(run.queries.tolist())
    if not in_run & set(qrels.queries.tolist()):
        raise ValidationError(f"{run_name} and {qrels_name} share no query id (run: {_examples(run.queries.tolist())}; "
                              f"qrels: {_examples(qrels.queries.tolist())})", field="run")
    answered = len(judged & in_run)
    if answered * 2 < len(judged):
        fate = "score 0" if rules.unretrieved else "are left out"
        return [f"{run_name} has results for {answered} of the {len(judged)} queries {qrels_name} judges; "
                f"the other {len(judged) - answered} {fate}"]
    return []


def score_run_file(run_path: str | Path, qrels_path: str | Path, metrics: Sequence[str],
                   rules: QueryRules | None = None, *, extra_fields: bool = False) -> Scored:
    """Read and score a TREC run file against qrels under ``rules``.

    ``extra_fields``: ignore fields after the sixth of a run line, as trec_eval does.

    Raises:
        DataError: a malformed file (naming it and the line).
        ValidationError: see :func:`check_inputs`.
    """
    from searchtrace.evals.runs.trec import read_qrels, read_run

    rules = rules or QueryRules()
    qrels = read_qrels(qrels_path)
    run = read_run(run_path, extra_fields=extra_fields)
    warnings = check_inputs(qrels, run, rules, str(qrels_path), str(run_path))
    return Scored(run, qrels, evaluate(qrels, run, [*metrics, *coverage_metrics(metrics)], rules), tuple(warnings))


def _fingerprint(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _per_query_table(scored: Scored) -> Any:
    """``per_query.parquet``'s table (see ``runfolder.tables``), built with pyarrow alone."""
    import pyarrow as pa

    ev = scored.evaluation
    judged = ev.query_ids.tolist()
    rest = sorted(set(scored.run.queries.tolist()) - set(judged))
    ids = judged + rest
    nan = np.full(len(rest), np.nan)
    columns: dict[str, Any] = {"query_id": strings(ids), "category": strings([""] * len(ids))}
    for metric in ev.metrics:
        columns[str(metric)] = floats(np.concatenate([ev[metric], nan]))
    columns |= {"bestScore": floats(np.full(len(ids), np.nan)), "bands": strings([""] * len(ids)),
                "noConfidentResults": falses(len(ids)), "error": pa.nulls(len(ids), pa.string())}
    return pa.table(columns)


def _empty_results() -> Any:
    import pyarrow as pa

    from searchtrace.evals.runs.runfolder import RESULT_COLUMNS

    types = {"rank": pa.int64(), "relevance": pa.float64(), "grade": pa.int64(), "label": pa.int64()}
    return pa.table({c: pa.nulls(0, types.get(c, pa.string())) for c in RESULT_COLUMNS})


def write_run_folder(out: str | Path, scored: Scored, run_path: str | Path, qrels_path: str | Path,
                     rules: QueryRules, wall_s: float) -> RunFolder:
    """Write ``scored`` as a complete run folder at ``out``, marked external.

    ``results.parquet`` is empty: a run file has scores, not the retriever's
    relevance and features, so there is nothing to calibrate.

    Raises:
        ValidationError: ``out`` already holds a run.
    """
    import pyarrow.parquet as pq

    from searchtrace.durable import write_atomic
    from searchtrace.evals.runs.runfolder import (
        Attribution,
        BandPrecision,
        ConfidenceReport,
        DatasetInfo,
        EvalSettings,
        ExternalRun,
        RetrieverInfo,
        RunFolder,
        completed,
        installed_versions,
    )
    from searchtrace.names import Band

    folder = RunFolder(out)
    if folder.is_complete or folder.settings_file.exists():
        raise ValidationError(f"{out} already holds a run; choose another --out", field="out")
    run_path, qrels_path = Path(run_path).resolve(), Path(qrels_path).resolve()
    ev, run = scored.evaluation, scored.run
    depth = int(np.bincount(run.query_index).max()) if len(run) else 0  # the longest ranking
    settings = EvalSettings(dataset=str(qrels_path), depth=min(max(depth, 1), MAX_CANDIDATES),
                            metrics=tuple(str(m) for m in ev.metrics))
    folder.create(settings)
    folder.write_run_file(run, tag=folder.run_id)
    per_query, results = _per_query_table(scored), _empty_results()
    write_atomic(folder.per_query_file, lambda tmp: pq.write_table(per_query, tmp))
    write_atomic(folder.results_file, lambda tmp: pq.write_table(results, tmp))
    relevant = scored.qrels.grades >= rules.relevance_level
    summary = completed(
        run_id=folder.run_id,
        dataset=DatasetInfo(name=qrels_path.name, path=str(qrels_path), split=None,
                            fingerprint=_fingerprint(qrels_path), queries=len(run.queries)),
        settings=settings,
        retriever=RetrieverInfo(mode="external", index="", config={}),
        packages=installed_versions(("searchtrace", "numpy")), git_commit=None,
        evaluation=ev, wall_s=wall_s, resumed=False, searched=None,
        attribution=Attribution(gold_documents=int(relevant.sum()), candidate_recall={}, lost_at={}),
        confidence=ConfidenceReport(results=0, band_precision={b: BandPrecision(None, 0) for b in Band},
                                    ordered=False, ece=None, brier=None, auroc=None,
                                    best_score_auroc_no_relevant=None, best_score_kendall_tau_ndcg10=None),
        abstention=None, latency_ms={}, errors=0,
        external=ExternalRun(kind="run_file", source=str(run_path), qrels=str(qrels_path), rules=rules.to_json()),
        scored_depth=min(depth, rules.max_docs or depth),  # can be deeper than a search's MAX_CANDIDATES
    )
    folder.write_summary(summary)
    return folder

