"""``searchtrace compare`` without labels: when either run has none, or ``--no-labels``.

The metric comparison stays in :mod:`searchtrace.evals.cli`, which hands over
to :func:`compare_command` here; ``gate`` asks :func:`unlabelled` the same question.
"""

from __future__ import annotations

import argparse
import json
import textwrap

from searchtrace.errors import ExitCode, ValidationError
from searchtrace.evals.runs.runfolder import RunFolder
from searchtrace.evals.verdicts.comparability import NO_LABELS, labelled
from searchtrace.evals.verdicts.overlap.compare import compare_overlap
from searchtrace.evals.verdicts.overlap.text import to_lines, to_markdown
from searchtrace.evals.verdicts.query_texts import query_texts
from searchtrace.home import Home
from searchtrace.terminal import width

__all__ = ["compare_command", "label_free_note", "unlabelled"]


def unlabelled(folders: tuple[RunFolder, RunFolder]) -> list[str]:
    """Which of base and candidate has no labels."""
    return [side for side, folder in zip(("base", "candidate"), folders) if not labelled(folder.summary())]


def label_free_note(sides: list[str]) -> str:
    """One line saying why the runs are compared without labels (``sides``: those that have none)."""
    return f"note: no labels in the {' and the '.join(sides)}: rankings compared ({NO_LABELS})"


def compare_command(args: argparse.Namespace, folders: tuple[RunFolder, RunFolder], note: str | None) -> int:
    """``compare`` without labels: the comparison as JSON, Markdown or text fitted to the width (``note``: why
    without labels, when not asked for).

    Raises:
        ValidationError: ``--metrics`` (which needs labels), a negative ``--top``, runs that cannot be compared.
    """
    if args.metrics:
        why = "a run has none" if note else f"{NO_LABELS} compares the rankings alone"
        raise ValidationError(f"--metrics needs labels, and {why}", field="metrics")
    if args.top < 0:
        raise ValidationError(f"--top must be 0 or more, got {args.top}", field="top")
    comparison = compare_overlap(*folders)
    notes = [*([note] if note else []), *(f"note: {n}" for n in comparison.notes)]
    home = str(Home.resolve(None).root)  # where `traces show` looks without --home
    if args.json:
        print(json.dumps({**comparison.to_json(args.top), "label_free": note or NO_LABELS}, indent=2,
                         allow_nan=False))
    elif args.markdown:
        print("".join(f"> {n}\n" for n in notes) + ("\n" if notes else "") + to_markdown(comparison, args.top, home))
    else:
        columns = width()
        lines = [wrapped for n in notes for wrapped in textwrap.wrap(n, columns, subsequent_indent="  ")]
        print("\n".join([*lines, *to_lines(comparison, args.top, columns, home, query_texts(folders))]))
    return ExitCode.OK
