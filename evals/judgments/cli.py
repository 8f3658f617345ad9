"""``searchtrace judge import | export | pool | status``: registered on the main parser by the evals commands."""

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

    c = commands.add_parser("pool", help="the pairs to judge: each run's top K per query, less what is judged")
    c.add_argument("dataset", help="dataset folder (the runs must have scored it)")
    c.add_argument("--runs", nargs="+", required=True, metavar="RUN", help="run folders to pool")
    c.add_argument("--depth", type=int, default=10, help="ranks pooled from each source (default: 10)")
    c.add_argument("--stages", action="store_true",
                   help="also pool the dense, keyword, graph and fused lists of each run's traces")
    c.add_argument("--deeper", type=int, default=0, metavar="N",
                   help="add N random documents per query from below the depth (default: 0)")
    c.add_argument("--seed", type=int, default=0, help="the shuffle's and the deeper sample's seed (default: 0)")
    c.add_argument("--home", help="home whose trace store --stages reads (default: $SEARCHTRACE_HOME, else the "
                   "default home)")
    c.set_defaults(func=cmd_pool)

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


def cmd_pool(args: argparse.Namespace) -> int:
    from searchtrace.evals.judgments.folder import JudgingFolder
    from searchtrace.evals.judgments.pool import build_pool, write_pool
    from searchtrace.home import Home

    folder = JudgingFolder.at(args.dataset)
    pool = build_pool(folder, [Path(r) for r in args.runs], args.depth, stages=args.stages, deeper=args.deeper,
                      seed=args.seed, traces=Home.resolve(args.home).traces)
    path = write_pool(folder, pool)
    w = width()
    queries = len({p.query_id for p in pool.pairs})
    print(fit(f"pooled {len(pool.pairs)} pairs to judge over {queries} queries (depth {pool.depth}; "
              f"{pool.already_judged} already judged, left out)", w))
    for source, n in pool.per_source().items():
        print(fit(f"  {n:>6}  {source}", w))
    print(f"written to {path}")
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
