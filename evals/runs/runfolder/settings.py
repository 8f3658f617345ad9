"""``settings.json``: what defines an eval run, written first; a resumed run must match it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.runfolder._fields import FORMAT_VERSION, Fields, check_version
from searchtrace.evals.scoring.metrics.metric import DEFAULT_METRICS
from searchtrace.evals.scoring.metrics.rules import QueryRules
from searchtrace.names import Mode
from searchtrace.retriever import DEFAULT_CANDIDATES, MAX_CANDIDATES

__all__ = ["EvalSettings"]


@dataclass(frozen=True)
class EvalSettings:
    """What defines a run; a resumed run must have the same settings.

    Attributes:
        dataset: dataset folder.
        split: qrels split (default: the loader's choice).
        mode: fast or graph (default: the retriever's).
        depth: how deep each query's ranking is scored and written to ``run.trec`` (the depth scored; a
            search's ``top_k`` is the results shown). ``top_k`` in ``settings.json``, as in every run
            written so far; at most a search's candidates, ``MAX_CANDIDATES``.
        metrics: metric keys.
        corrective: re-run weak queries with their retry hints.
        batch_size: queries embedded (and journaled) together.
        attribution_k: rank within which a gold document counts as found.
        results_per_query: ranked results kept per query for calibration.
        retriever: fingerprint of the retriever's search settings (filled by
            ``run_eval``), so a run never resumes under other settings.
        unjudged: how unjudged documents count: ``nonrelevant``, or ``condensed`` (removed before ranking,
            trec_eval ``-J``). Written only when not the default, so older runs' settings read the same.
        top_grade: the top grade of the scale the dataset's labels were judged on (``judging.toml``), the
            greatest an unjudged document could be given in nDCG's bounds; None: the qrels' highest grade.
            Written only when set.
    """

    dataset: str
    split: str | None = None
    mode: str | None = None
    depth: int = DEFAULT_CANDIDATES  # as deep as a search keeps candidates by default
    metrics: tuple[str, ...] = tuple(str(m) for m in DEFAULT_METRICS)
    corrective: bool = False
    batch_size: int = 32
    attribution_k: int = 10
    results_per_query: int = 20
    retriever: str = ""
    unjudged: str = "nonrelevant"
    top_grade: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.depth <= MAX_CANDIDATES:
            raise ValidationError(f"depth must be between 1 and {MAX_CANDIDATES}, got {self.depth}", field="depth")
        if self.mode not in (None, *(m.value for m in Mode)):
            raise ValidationError(f"mode must be fast or graph, got {self.mode!r}", field="mode")
        if self.batch_size < 1:
            raise ValidationError(f"batch_size must be >= 1, got {self.batch_size}", field="batch_size")
        if self.unjudged not in ("nonrelevant", "condensed"):
            raise ValidationError(f"unjudged must be nonrelevant or condensed, got {self.unjudged!r}", field="unjudged")
        if self.top_grade is not None and self.top_grade < 1:
            raise ValidationError(f"top_grade must be >= 1, got {self.top_grade}", field="top_grade")

    @property
    def rules(self) -> QueryRules:
        """The query rules the run is scored under."""
        return QueryRules(judged_only=self.unjudged == "condensed", top_grade=self.top_grade)

    def key(self) -> str:
        """A short hash of the settings (the last part of a default run id)."""
        return hashlib.sha256(json.dumps(self._fields(), sort_keys=True).encode()).hexdigest()[:10]

    def differences(self, other: EvalSettings) -> tuple[tuple[str, str, str], ...]:
        """``(name, this value, other's value)`` of each setting that differs, under its ``settings.json`` name,
        values as JSON (``retriever``: the search settings' fingerprint)."""
        mine, theirs = self.to_json(), other.to_json()
        return tuple((name, _shown(mine.get(name)), _shown(theirs.get(name)))
                     for name in dict.fromkeys([*mine, *theirs]) if mine.get(name) != theirs.get(name))

    def _fields(self) -> dict[str, Any]:
        """The settings under their names in ``settings.json`` (``depth`` is ``top_k`` there)."""
        fields = asdict(self)
        if self.unjudged == "nonrelevant":
            del fields["unjudged"]
        if self.top_grade is None:
            del fields["top_grade"]
        return {("top_k" if k == "depth" else k): v for k, v in fields.items()}

    def to_json(self) -> dict[str, Any]:
        """The settings as written to ``settings.json`` (and ``run.json``)."""
        return {"format": FORMAT_VERSION, **json.loads(json.dumps(self._fields()))}

    @classmethod
    def from_json(cls, data: object, path: str) -> EvalSettings:
        """Read ``settings.json`` (or ``run.json``'s ``settings``).

        Raises:
            DataError: a malformed file or a newer format, naming the file.
            ValidationError: settings no run could have had.
        """
        f = Fields(data, path)
        check_version(f.data, path)
        return cls(dataset=f.text("dataset"), split=f.opt_text("split"), mode=f.opt_text("mode"), depth=f.integer("top_k"),
                   metrics=f.strings("metrics"), corrective=f.flag("corrective"), batch_size=f.integer("batch_size"),
                   attribution_k=f.integer("attribution_k"), results_per_query=f.integer("results_per_query"),
                   retriever=f.text("retriever", ""), unjudged=f.text("unjudged", "nonrelevant"),
                   top_grade=f.integer("top_grade") if f.has("top_grade") else None)


def _shown(value: object) -> str:
    """A setting's value as ``settings.json`` writes it (``null``, ``"test"``, ``["ndcg@10"]``)."""
    return json.dumps(value, ensure_ascii=False)
