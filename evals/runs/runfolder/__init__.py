"""The run folder: one module owns its format, and everyone reads it through these records.

:class:`RunFolder` reads and writes the files; :class:`EvalSettings`
(``settings.json``), :class:`QueryOutcome` and :class:`CorrectiveOutcome`
(``journal.jsonl``) and :class:`RunSummary` (``run.json``) are frozen records
with ``to_json`` / ``from_json`` and a format version (:data:`FORMAT_VERSION`);
:mod:`~searchtrace.evals.runs.runfolder.tables` builds the parquet tables. A file of
a newer or unknown format is a :class:`~searchtrace.errors.DataError` naming it.
"""

from searchtrace.evals.runs.runfolder._fields import FORMAT_VERSION
from searchtrace.evals.runs.runfolder.failures import FailedQuery
from searchtrace.evals.runs.runfolder.folder import RunFolder
from searchtrace.evals.runs.runfolder.journal import Journal
from searchtrace.evals.runs.runfolder.outside import OutsideRuns, outside_runs
from searchtrace.evals.runs.runfolder.records import (
    CorrectiveOutcome,
    JournalRecord,
    QueryOutcome,
    RankedResult,
    RetryAttempt,
    record_from_json,
)
from searchtrace.evals.runs.runfolder.sections import (
    Abstention,
    Attribution,
    BandPrecision,
    ConfidenceReport,
    CorrectiveReport,
    DatasetInfo,
    ExternalRun,
    Fingerprints,
    Percentiles,
    RetrieverInfo,
    Timings,
)
from searchtrace.evals.runs.runfolder.settings import EvalSettings
from searchtrace.evals.runs.runfolder.summary import RunSummary, completed, installed_versions
from searchtrace.evals.runs.runfolder.tables import (
    BANDS,
    BEST_SCORE,
    NO_CONFIDENT,
    RESULT_COLUMNS,
    TRACE_ID,
    best_bands,
    feature_column,
    latency_column,
    latency_stage,
    per_query_table,
    results_table,
)

__all__ = [
    "BANDS",
    "BEST_SCORE",
    "NO_CONFIDENT",
    "FORMAT_VERSION",
    "RESULT_COLUMNS",
    "TRACE_ID",
    "Abstention",
    "Attribution",
    "FailedQuery",
    "BandPrecision",
    "ConfidenceReport",
    "CorrectiveOutcome",
    "CorrectiveReport",
    "DatasetInfo",
    "EvalSettings",
    "ExternalRun",
    "Fingerprints",
    "Journal",
    "JournalRecord",
    "OutsideRuns",
    "Percentiles",
    "QueryOutcome",
    "RankedResult",
    "RetrieverInfo",
    "RetryAttempt",
    "RunFolder",
    "RunSummary",
    "Timings",
    "best_bands",
    "completed",
    "feature_column",
    "installed_versions",
    "latency_column",
    "latency_stage",
    "outside_runs",
    "per_query_table",
    "results_table",
    "record_from_json",
]
