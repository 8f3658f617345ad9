"""``searchtrace judge import | export | status``: registered on the main parser by the evals commands."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from searchtrace.errors import ExitCode
from searchtrace.terminal import fit, width

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``judge`` and its subcommands to ``sub`` (the main parser's subparsers)."""
    p = sub.add_parser("judge", help="gold labels for a dataset: the judgments store, its qrels and its status",
                       description="Judgments of (query, doc) pairs, kept in DATASET/judgments.jsonl.")
    commands = p.add_subparsers(dest="judge_command", required=True, metavar="COMMAND")

    c = commands.add_parser("import", help="add a qrels file's labels as imported judgments")
    c.add_argument("dataset", help="dataset folder (its queries.jsonl and corpus.jsonl name the ids allowed)")
    c.add_argument("qrels", help="TREC qrels (qid 0 docid grade) or BEIR TSV (query-id, corpus-id, score)")
    c.add_argument("--judge", help="the judge the labels are recorded under (default: the qrels file's name)")
    c.set_defaults(func=cmd_import)

    c = commands.add_parser("export", help="write the human judgments as qrels/SPLIT.tsv, one grade per pair")
    c.add_argument("dataset", help="dataset folder")
    c.add_argument("--split", required=True, help="the split to write: DATASET/qrels/SPLIT.tsv")
    c.add_argument("--judge", help="export this judge's labels only (default: every judge's, by majority, a tie "
                   "to the lower grade)")
    c.add_argument("--force", action="store_true", help="replace an existing qrels file (default: refuse)")
    c.set_defaults(func=cmd_export)

    c = commands.add_parser("status", help="judged pairs, relevant pairs and judges per query, and totals")
    c.add_argument("dataset", help="dataset folder")
    c.add_argument("--json", action="store_true", help="print JSON instead of a table")
    c.set_defaults(func=cmd_status)


def cmd_import(args: argparse.Namespace) -> int:
    from searchtrace.evals.judgments.folder import JudgingFolder
    from searchtrace.evals.judgments.qrels_import import import_qrels

    folder = JudgingFolder.at(args.dataset)
    added = import_qrels(folder, Path(args.qrels), args.judge)
    judge = added[0].judge if added else args.judge
    print(f"{fit(f'imported {len(added)} judgments by {judge!r}', width())}\nappended to {folder.judgments}")
    return ExitCode.OK


def cmd_export(args: argparse.Namespace) -> int:
    from searchtrace.evals.judgments.folder import JudgingFolder
    from searchtrace.evals.judgments.qrels_export import export_qrels
    from searchtrace.evals.judgments.text import export_lines

    export = export_qrels(JudgingFolder.at(args.dataset), args.split, args.judge, args.force)
    print("\n".join(export_lines(export, width())))
    return ExitCode.OK


def cmd_status(args: argparse.Namespace) -> int:
    from searchtrace.evals.judgments.folder import JudgingFolder
    from searchtrace.evals.judgments.status import judging_status
    from searchtrace.evals.judgments.text import status_lines

    folder = JudgingFolder.at(args.dataset)
    report = judging_status(str(folder.judgments), folder.store().read(), folder.scale())
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(status_lines(report, width())))
    return ExitCode.OK
