"""``judge export``: the human judgments as ``qrels/<split>.tsv``, one grade per pair.

The file is BEIR TSV with its header (``query-id corpus-id score``), as the
dataset loader reads it: every pair a judge labels, graded by the majority of
its judges' standing labels (a tie to the lower grade), sorted by query and
doc. Only ``human`` judgments count; ``judge`` keeps one judge's labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from searchtrace.durable import write_atomic
from searchtrace.errors import ValidationError
from searchtrace.evals.judgments.agreement import Agreement, measure_agreement
from searchtrace.evals.judgments.folder import JudgingFolder
from searchtrace.evals.judgments.labels import PairLabels, pair_labels
from searchtrace.evals.judgments.records import Kind
from searchtrace.retriever import QRELS_HEADER

__all__ = ["Export", "export_qrels"]


@dataclass(frozen=True)
class Export:
    """What ``judge export`` wrote.

    Attributes:
        path: the qrels file.
        labels: each pair written, with its judges' grades.
        agreement: the judges' agreement (None for one judge's labels).
    """

    path: Path
    labels: tuple[PairLabels, ...]
    agreement: Agreement | None

    @property
    def queries(self) -> int:
        return len({p.pair[0] for p in self.labels})


def export_qrels(folder: JudgingFolder, split: str, judge: str | None = None, force: bool = False) -> Export:
    """Write ``folder``'s human labels to ``qrels/<split>.tsv``.

    Raises:
        ValidationError: the file exists and not ``force``, a bad split name, or no
            human label to write (naming the judges there are, for ``judge``).
    """
    path = folder.qrels(split)
    if path.exists() and not force:
        raise ValidationError(f"{path} exists; give --force to replace it", field="split")
    judgments = folder.store().read()
    labels = pair_labels(judgments, (Kind.HUMAN,), judge)
    if not labels:
        raise ValidationError(_nothing(folder, judge, pair_labels(judgments, (Kind.HUMAN,))), field="judge")
    text = "\t".join(QRELS_HEADER) + "\n" + "".join(f"{q}\t{d}\t{p.grade}\n" for p in labels for q, d in [p.pair])
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return Export(path, labels, None if judge else measure_agreement(labels))


def _nothing(folder: JudgingFolder, judge: str | None, labels: tuple[PairLabels, ...]) -> str:
    if judge is None or not labels:
        return f"no human judgment to export in {folder.judgments}"
    judges = sorted({who for p in labels for who in p.judges})
    return f"no human judgment by {judge!r} in {folder.judgments}; judges: {', '.join(judges)}"
