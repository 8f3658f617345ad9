"""``judge export``: the human judgments as ``qrels/<split>.tsv``, one grade per pair.

The file is BEIR TSV with its header (``query-id corpus-id score``), as the
dataset loader reads it: every pair a judge labels, graded by the majority of
its judges' standing labels (a tie to the lower grade), sorted by query and
doc. Only judgments of one kind count: ``human`` unless another is asked for
(``implicit`` labels are kept apart from people's, and are exported only on
request); ``judge`` keeps one judge's labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from searchtrace.durable import write_atomic
from searchtrace.errors import ValidationError
from searchtrace.evals.labels.judgments.agreement import Agreement, measure_agreement
from searchtrace.evals.labels.judgments.folder import JudgingFolder
from searchtrace.evals.labels.judgments.labels import PairLabels, pair_labels
from searchtrace.evals.labels.judgments.records import Kind
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


def export_qrels(folder: JudgingFolder, split: str, judge: str | None = None, force: bool = False,
                 kind: Kind = Kind.HUMAN) -> Export:
    """Write ``folder``'s labels of ``kind`` (human by default) to ``qrels/<split>.tsv``.

    Raises:
        ValidationError: the file exists and not ``force``, a bad split name, or no
            label of that kind to write (naming the judges there are, for ``judge``).
    """
    path = folder.qrels(split)
    if path.exists() and not force:
        raise ValidationError(f"{path} exists; give --force to replace it", field="split")
    judgments = folder.store().read()
    labels = pair_labels(judgments, (kind,), judge)
    if not labels:
        raise ValidationError(_nothing(folder, judge, pair_labels(judgments, (kind,)), kind), field="judge")
    text = "\t".join(QRELS_HEADER) + "\n" + "".join(f"{q}\t{d}\t{p.grade}\n" for p in labels for q, d in [p.pair])
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return Export(path, labels, None if judge else measure_agreement(labels))


def _nothing(folder: JudgingFolder, judge: str | None, labels: tuple[PairLabels, ...], kind: Kind) -> str:
    if judge is None or not labels:
        return f"no {kind.value} judgment to export in {folder.location}"
    judges = sorted({who for p in labels for who in p.judges})
    return f"no {kind.value} judgment by {judge!r} in {folder.location}; judges: {', '.join(judges)}"
