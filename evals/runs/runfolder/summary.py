"""``run.json``: a completed run's summary, written last (its presence marks the run complete).

Each section is a frozen record (:mod:`.sections`); :meth:`RunSummary.to_json`
writes the file's keys in a fixed order and :meth:`RunSummary.from_json` reads
any supported format. :func:`completed` builds the record of a run just
scored, whatever made it (an eval, an external run file): the figures every run
states, rounded one way, and when it finished.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from searchtrace.errors import DataError
from searchtrace.evals.runs.runfolder._fields import FORMAT_VERSION, Fields, check_version
from searchtrace.evals.runs.runfolder.failures import FailedQuery
from searchtrace.evals.runs.runfolder.sections import (
    Abstention,
    Attribution,
    ConfidenceReport,
    CorrectiveReport,
    DatasetInfo,
    ExternalRun,
    Percentiles,
    RetrieverInfo,
    Timings,
)
from searchtrace.evals.runs.runfolder.settings import EvalSettings
from searchtrace.retriever import FORMER_MAX_TOP_K

if TYPE_CHECKING:
    from searchtrace.evals.scoring.metrics import Evaluation

__all__ = ["FileDigest", "RunSummary", "completed", "installed_versions", "summary_sha256"]

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class FileDigest:
    """What ``run.json`` records of one file of its folder when the run is written: its sha256 and size."""

    sha256: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "size": self.size}

    @classmethod
    def from_json(cls, f: Fields) -> FileDigest:
        digest = f.text("sha256")
        if not _SHA256.match(digest):
            raise f.error("sha256", f"expected 64 lowercase hex digits, got {digest!r:.80}")
        size = f.integer("size")
        if size < 0:
            raise f.error("size", f"expected a size >= 0, got {size}")
        return cls(digest, size)


def summary_sha256(data: Mapping[str, Any]) -> str:
    """The sha256 of ``run.json``'s keys but ``summary_sha256`` itself, as canonical JSON (sorted keys, no spaces)."""
    rest = {k: v for k, v in data.items() if k != "summary_sha256"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                                     allow_nan=True).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RunSummary:
    """Everything ``run.json`` says about a completed run.

    Attributes:
        run_id: the run folder's name.
        dataset: the dataset scored.
        settings: the run's settings.
        retriever: the retriever's mode, index and configuration.
        packages: versions of the packages that matter to the results.
        python: the Python version.
        git_commit: the repository's commit, when run from a checkout.
        timings: wall time and throughput.
        metrics: each metric's mean over the judged queries (None when undefined).
        evaluated_queries: judged queries scored.
        attribution, confidence, abstention, latency_ms: the analysis sections.
        errors: queries whose search failed (left out of the metrics: they are over the queries that answered).
        failed: each failed query with its error's code and message. An optional key, written when a
            query failed: runs written before it read as none listed (their ``errors`` still count them).
        untraced: queries whose trace could not be stored in full (the store was locked
            for too long, or damaged); their results count as usual.
        corrective: the corrective loop's report (``--corrective`` only).
        created_at: when the run finished (None for format-1 runs; see ``RunFolder.created_at``).
        external: where an external run's rankings came from (None: this project's
            retriever; always None before format 3).
        name, tags, note: what the user calls the run (``eval --name/--tag/--note``; the name
            defaults to ``searchtrace.evals.default_run_name``). Optional keys: format-2 readers
            ignore them, and runs written before them read as unnamed.
        scored_depth: how deep the rankings scored go: the depth asked (``settings.depth``), or less
            when no query got that many results (a target that answers fewer). An optional key: a
            run written before it reads as its depth asked, a target run's capped at the
            ``FORMER_MAX_TOP_K`` results a target was then asked for. Read it as :attr:`depth`.
        files: each file of the folder but ``run.json`` (by name): its sha256 and size when the run was
            written (``RunFolder.write_summary`` records them), which every reader verifies; with them
            ``run.json`` holds ``summary_sha256``, the hash of its own other keys, so an edited field is
            refused too. Optional keys: runs written before them read as before, unverified, and a
            reader that does not know them ignores them.
    """

    run_id: str
    dataset: DatasetInfo
    settings: EvalSettings
    retriever: RetrieverInfo
    packages: Mapping[str, str | None]
    python: str
    git_commit: str | None
    timings: Timings
    metrics: Mapping[str, float | None]
    evaluated_queries: int
    attribution: Attribution
    confidence: ConfidenceReport
    abstention: Abstention | None
    latency_ms: Mapping[str, Percentiles]
    errors: int
    corrective: CorrectiveReport | None = None
    created_at: datetime | None = None
    untraced: int = 0
    external: ExternalRun | None = None
    name: str | None = None
    tags: tuple[str, ...] = ()
    note: str | None = None
    scored_depth: int | None = None
    files: Mapping[str, FileDigest] | None = None
    failed: tuple[FailedQuery, ...] = ()

    @property
    def depth(self) -> int:
        """The depth the metrics were scored to (``scored_depth``, else the depth asked)."""
        return self.settings.depth if self.scored_depth is None else self.scored_depth

    def to_json(self) -> dict[str, Any]:
        settings = {k: v for k, v in self.settings.to_json().items() if k != "format"}
        out: dict[str, Any] = {
            "format": FORMAT_VERSION, "run_id": self.run_id,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "dataset": self.dataset.to_json(), "settings": settings, "retriever": self.retriever.to_json(),
            "packages": dict(self.packages), "python": self.python, "git_commit": self.git_commit,
            "timings": self.timings.to_json(), "metrics": dict(self.metrics),
            "evaluated_queries": self.evaluated_queries, "attribution": self.attribution.to_json(),
            "confidence": self.confidence.to_json(),
            "abstention": self.abstention.to_json() if self.abstention else None,
            "latency_ms": {stage: p.to_json() for stage, p in self.latency_ms.items()}, "errors": self.errors,
            "untraced": self.untraced,
            "external": self.external.to_json() if self.external else None,
            "name": self.name, "tags": list(self.tags), "note": self.note, "scored_depth": self.depth,
        }
        if self.failed:
            out["failed"] = [q.to_json() for q in self.failed]
        if self.corrective is not None:
            out["corrective"] = self.corrective.to_json()
        if self.files is not None:
            out["files"] = {name: self.files[name].to_json() for name in sorted(self.files)}
            out["summary_sha256"] = summary_sha256(out)
        return out

    @classmethod
    def from_json(cls, data: object, path: str) -> RunSummary:
        """Read ``run.json`` (any supported format).

        Raises:
            DataError: a malformed file or a newer format, naming the file and the key.
        """
        f = Fields(data, path)
        check_version(f.data, path)
        if f.has("summary_sha256") and f.text("summary_sha256") != summary_sha256(f.data):
            raise DataError(path, None, "does not match its summary_sha256: run.json was edited or damaged "
                                        "after the run was written")
        listed = f.opt_obj("files")
        if f.has("summary_sha256") != (listed is not None):
            raise DataError(path, None, "files and summary_sha256 come together: one is missing")
        packages = f.get("packages", lambda v: isinstance(v, dict), "an object", {})
        latency = f.obj("latency_ms", {})
        abstention = f.opt_obj("abstention")
        corrective = f.opt_obj("corrective")
        external = f.opt_obj("external")
        created = f.opt_text("created_at")
        try:
            created_at = datetime.fromisoformat(created) if created else None
        except ValueError:
            raise f.error("created_at", f"expected an ISO 8601 time, got {created!r}") from None
        settings = EvalSettings.from_json(f.obj("settings").data, path)
        ext = ExternalRun.from_json(external) if external else None
        return cls(
            run_id=f.text("run_id"), dataset=DatasetInfo.from_json(f.obj("dataset")),
            settings=settings,
            retriever=RetrieverInfo.from_json(f.obj("retriever")),
            packages={str(k): v if isinstance(v, str) else None for k, v in packages.items()},
            python=f.text("python", ""), git_commit=f.opt_text("git_commit"),
            timings=Timings.from_json(f.obj("timings")), metrics=f.numbers("metrics"),
            evaluated_queries=f.integer("evaluated_queries"), attribution=Attribution.from_json(f.obj("attribution")),
            confidence=ConfidenceReport.from_json(f.obj("confidence")),
            abstention=Abstention.from_json(abstention) if abstention else None,
            latency_ms={stage: Percentiles.from_json(latency.obj(stage)) for stage in latency.data},
            errors=f.integer("errors"), untraced=f.integer("untraced", 0),
            corrective=CorrectiveReport.from_json(corrective) if corrective else None,
            created_at=created_at, external=ext,
            name=f.opt_text("name"), tags=f.strings("tags", []), note=f.opt_text("note"),
            scored_depth=f.integer("scored_depth", _former_depth(settings, ext)),
            files=None if listed is None else {str(name): FileDigest.from_json(listed.obj(name))
                                               for name in listed.data},
            failed=tuple(FailedQuery.from_json(Fields(q, path, None, "failed[].")) for q in f.array("failed", [])),
        )


def _former_depth(settings: EvalSettings, external: ExternalRun | None) -> int:
    """The depth a run written before ``scored_depth`` scored: a target's was capped at ``FORMER_MAX_TOP_K``."""
    if external is not None and external.kind == "target":
        return min(settings.depth, FORMER_MAX_TOP_K)
    return settings.depth


def installed_versions(names: Iterable[str]) -> dict[str, str | None]:
    """The installed version of each package (None when it is not installed)."""
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def completed(*, run_id: str, dataset: DatasetInfo, settings: EvalSettings, retriever: RetrieverInfo,
              packages: Mapping[str, str | None], git_commit: str | None, evaluation: Evaluation, wall_s: float,
              resumed: bool, searched: int | None, attribution: Attribution, confidence: ConfidenceReport,
              abstention: Abstention | None, latency_ms: Mapping[str, Percentiles], errors: int, scored_depth: int,
              untraced: int = 0, corrective: CorrectiveReport | None = None,
              external: ExternalRun | None = None) -> RunSummary:
    """The summary of a run scored now: each metric's mean to 6 places (None when undefined), the wall time
    to the millisecond, the throughput over the ``searched`` queries (None: nothing was searched), this
    Python, and the time it finished to the second."""
    return RunSummary(
        run_id=run_id, dataset=dataset, settings=settings, retriever=retriever, packages=packages,
        python=platform.python_version(), git_commit=git_commit,
        timings=Timings(wall_s=round(wall_s, 3), resumed=resumed,
                        queries_per_s=round(searched / wall_s, 2) if searched is not None and wall_s > 0 else None),
        metrics={str(m): (None if v != v else round(float(v), 6)) for m, v in evaluation.means.items()},
        evaluated_queries=int(len(evaluation.query_ids)),
        attribution=attribution, confidence=confidence, abstention=abstention, latency_ms=latency_ms,
        errors=errors, untraced=untraced, corrective=corrective,
        created_at=datetime.now(UTC).replace(microsecond=0), external=external, scored_depth=scored_depth,
    )
