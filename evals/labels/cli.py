"""``searchtrace judge import | export | pool | grade | status | implicit``: registered on the main parser by the evals
commands."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.database.url import add_store_argument
from searchtrace.errors import BackendUnavailable, ExitCode
from searchtrace.home import add_home_argument
from searchtrace.terminal import fit, width

if TYPE_CHECKING:
    from searchtrace.database import StoreUrl
    from searchtrace.evals.labels.judgments.folder import JudgingFolder

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``judge`` and its subcommands to ``sub`` (the main parser's subparsers)."""
    p = sub.add_parser("judge", help="gold labels for a dataset: the judgments store, its qrels and its status",
                       description="Judgments of (query, doc) pairs, kept in DATASET/judgments.jsonl, or with "
                                   "--store (or $SEARCHTRACE_STORE) in the store a team shares, under the "
                                   "dataset folder's name.")
    commands = p.add_subparsers(dest="judge_command", required=True, metavar="COMMAND")

    c = commands.add_parser("import", help="add a qrels file's labels as imported judgments")
    c.add_argument("dataset", help="dataset folder (its queries.jsonl and corpus.jsonl name the ids allowed)")
    c.add_argument("qrels", help="TREC qrels (qid 0 docid grade) or BEIR TSV (query-id, corpus-id, score)")
    c.add_argument("--judge", help="the judge the labels are recorded under (default: the qrels file's name)")
    add_store_argument(c)
    c.set_defaults(func=cmd_import)

    c = commands.add_parser("export", help="write the human judgments as qrels/SPLIT.tsv, one grade per pair")
    c.add_argument("dataset", help="dataset folder")
    c.add_argument("--split", required=True, help="the split to write: DATASET/qrels/SPLIT.tsv")
    c.add_argument("--judge", help="export this judge's labels only (default: every judge's, by majority, a tie "
                   "to the lower grade)")
    c.add_argument("--force", action="store_true", help="replace an existing qrels file (default: refuse)")
    c.add_argument("--kind", choices=KINDS, default="human",
                   help="the judgments written: human (default), implicit (judge implicit's, from agents' "
                        "fetches) or imported")
    add_store_argument(c)
    c.set_defaults(func=cmd_export)

    c = commands.add_parser("pool", help="add the pairs to judge: each run's top K per query, less what is judged",
                            description="Add the runs' pairs to DATASET's pool.jsonl: every pair already pooled "
                                        "is kept (one the runs rank again gets them added to its sources); "
                                        "--replace starts the pool again.")
    c.add_argument("dataset", help="dataset folder (the runs must have scored it)")
    c.add_argument("--runs", nargs="+", default=[], metavar="RUN",
                   help="run folders to pool (default: none; --from-traces, or both)")
    c.add_argument("--from-traces", action="store_true",
                   help="pool what another retriever returned in its traces for each query (DATASET made by "
                        "`queries from-traces --service`), read from the trace store")
    c.add_argument("--depth", type=int, default=10, help="ranks pooled from each source (default: 10)")
    c.add_argument("--stages", action="store_true",
                   help="also pool the dense, keyword, graph and fused lists of each run's traces")
    c.add_argument("--deeper", type=int, default=0, metavar="N",
                   help="add N random documents per query from below the depth (default: 0)")
    c.add_argument("--seed", type=int, default=0, help="the shuffle's and the deeper sample's seed (default: 0)")
    c.add_argument("--replace", action="store_true",
                   help="discard the pool there is and pool these runs alone (default: add to it)")
    c.add_argument("--home", help="home whose trace store --stages and --from-traces read (default: "
                   "$SEARCHTRACE_HOME, else the "
                   "default home)")
    add_store_argument(c)
    c.set_defaults(func=cmd_pool)

    _register_implicit(commands)

    c = commands.add_parser("grade", help="record one judgment of a (query, doc) pair, or take it back (--undo)",
                            description="One judgment from the terminal, through the judging session the "
                                        "dashboard's Judge page uses: the grade checked against the dataset's "
                                        "scale (judging.toml), the query and document against its queries.jsonl "
                                        "and corpus.jsonl.")
    c.add_argument("dataset", help="dataset folder")
    c.add_argument("query_id", metavar="QUERY_ID", help="a query id of DATASET/queries.jsonl")
    c.add_argument("doc_id", metavar="DOC_ID", help="a document id of DATASET/corpus.jsonl")
    c.add_argument("grade", metavar="GRADE", nargs="?", help="a grade on the scale (default 0, 1, 2); not with --undo")
    c.add_argument("--undo", action="store_true", help="take back the judge's standing judgment of the pair")
    c.add_argument("--judge", help="who judges (default: your login name)")
    add_store_argument(c)
    c.set_defaults(func=cmd_grade)

    c = commands.add_parser("status", help="judged pairs, relevant pairs and judges per query, and totals")
    c.add_argument("dataset", help="dataset folder")
    c.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_store_argument(c)
    c.set_defaults(func=cmd_status)


def _register_implicit(commands: argparse._SubParsersAction) -> None:
    from searchtrace.evals.labels.implicit.click_grades import ClickThresholds

    t = ClickThresholds()
    c = commands.add_parser(
        "implicit", help="graded judgments from the documents agents fetched after their searches",
        description="Judge DATASET's (query, doc) pairs from its served traffic in the trace store: a fetch "
                    "(get_docs, get_chunks, /v1/docs, /v1/chunks) of a document a search showed is a click at its "
                    "shown position, linked by the traceId the fetch names, else to the latest search of its MCP "
                    "session that showed it. Clicks are corrected for position bias (clicks over expected "
                    f"clicks, COEC) and graded: COEC >= {t.top:g} the top grade, >= {t.relevant:g} relevant, "
                    f"else not relevant when an average result would have drawn {t.min_expected:g} clicks or more "
                    "where it was shown (else no judgment). They are written as implicit judgments of the judge implicit:coec, apart from "
                    "human labels (judge export --kind implicit writes them); a rerun appends only changed "
                    "grades and retracts pairs no longer judged. Prints the agreement with the human and imported "
                    "labels, or with --qrels.")
    c.add_argument("dataset", help="dataset folder (its folder name is the dataset its traces record)")
    c.add_argument("--since", type=_when, help="only traces that started from then: an ISO date/time (local unless "
                   "it has an offset) or an age: 30m, 2h, 7d")
    c.add_argument("--until", type=_when, help="as --since; exclusive")
    c.add_argument("--min-impressions", type=int, default=t.min_impressions, metavar="N",
                   help=f"judge a pair shown at least N times (default: {t.min_impressions})")
    c.add_argument("--qrels", action="append", metavar="FILE",
                   help="compare with this qrels file (repeatable; a document a listed query's qrels do not name "
                        "is not relevant) instead of the human and imported labels")
    c.add_argument("--dry-run", action="store_true", help="compute and print; write nothing")
    c.add_argument("--json", action="store_true", help="print JSON (every pair's evidence) instead of a summary")
    c.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_home_argument(c)
    add_store_argument(c)
    c.set_defaults(func=cmd_implicit)


KINDS = ("human", "implicit", "imported")
"""The kinds ``judge export --kind`` takes (``records.Kind``'s values; kept here so ``--help`` loads nothing)."""


def _when(text: str) -> datetime:
    from searchtrace.traces import parse_when

    try:
        return parse_when(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _store(args: argparse.Namespace) -> StoreUrl | None:
    from searchtrace.database import resolve_store_url

    return resolve_store_url(args.store)


def _folder(args: argparse.Namespace) -> JudgingFolder:
    """The dataset folder, its judgments beside it or in the store ``--store`` / ``$SEARCHTRACE_STORE`` names."""
    from searchtrace.evals.labels.judgments.folder import JudgingFolder

    return JudgingFolder.at(args.dataset, _store(args))


def cmd_import(args: argparse.Namespace) -> int:
    from searchtrace.evals.labels.judgments.qrels_import import import_qrels

    try:
        folder = _folder(args)
        added = import_qrels(folder, Path(args.qrels), args.judge)
    except OSError as exc:  # the store cut back what it had written: say so beside the file
        exc.add_note("judge import wrote nothing")
        raise
    except BackendUnavailable as exc:  # the shared store's transaction rolled back
        raise BackendUnavailable(f"judge import wrote nothing: {exc.message}",
                                 field=exc.field) from exc
    judge = added[0].judge if added else args.judge
    print(f"{fit(f'imported {len(added)} judgments by {judge!r}', width())}\nappended to {folder.location}")
    return ExitCode.OK


def cmd_export(args: argparse.Namespace) -> int:
    from searchtrace.evals.labels.judgments.qrels_export import export_qrels
    from searchtrace.evals.labels.judgments.records import Kind
    from searchtrace.evals.labels.judgments.text import export_lines

    export = export_qrels(_folder(args), args.split, args.judge, args.force, Kind(args.kind))
    print("\n".join(export_lines(export, width())))
    return ExitCode.OK


def cmd_pool(args: argparse.Namespace) -> int:
    from searchtrace.evals.labels.judgments.pool import build_pool, discarded, pairs_of, read_pool, write_pool
    from searchtrace.home import Home

    if not args.runs and not args.from_traces:
        print("error: judge pool: give --runs RUN ... or --from-traces (or both)", file=sys.stderr)
        return ExitCode.INVALID
    folder = _folder(args)
    traced = None
    if args.from_traces:
        from searchtrace.evals.labels.querysets.services import traced_rankings

        service, found = traced_rankings(folder.root, Home.resolve(args.home).traces, _store(args))
        traced = {f"traces:{service}": found}
    before = read_pool(folder, missing_ok=True)
    pool = build_pool(folder, [Path(r) for r in args.runs], args.depth, stages=args.stages, deeper=args.deeper,
                      seed=args.seed, traces=Home.resolve(args.home).traces, store=_store(args),
                      existing=() if args.replace else before, traced=traced)
    lost = discarded(folder, before, pool) if args.replace else None
    path = write_pool(folder, pool)
    w = width()
    old = set() if args.replace else set(pairs_of(before))
    queries = len({p.query_id for p in pool.pairs if (p.query_id, p.doc_id) not in old})
    lines = [f"pooled {pool.new} new pairs to judge over {queries} queries (depth {pool.depth})"]
    if lost is not None:
        lines.append(f"replaced a pool of {len(before)} pairs: {lost.pairs} discarded, {lost.unjudged} of them "
                     "unjudged")
    lines.append(f"{pool.already_judged} already judged, left out; the pool holds {len(pool.pairs)} pairs "
                 f"({len(before)} before)")
    for line in lines:
        print(fit(line, w))
    for source, n in pool.per_source().items():
        print(fit(f"  {n:>6}  {source}", w))
    print(f"written to {path}")
    return ExitCode.OK


def cmd_grade(args: argparse.Namespace) -> int:
    from searchtrace.errors import ValidationError
    from searchtrace.evals.labels.judgments.grading import grade_pair, parse_grade, undo_grade
    from searchtrace.evals.labels.judgments.session import JudgingSession

    if args.undo == (args.grade is not None):
        raise ValidationError("give a GRADE, or --undo to take back a judgment, not both" if args.undo
                              else "give a GRADE (or --undo to take back a judgment)", field="grade")
    judge = args.judge or _login()
    folder = _folder(args)
    session = JudgingSession.open(folder.root, store=folder.shared)
    if args.undo:
        done = undo_grade(session, args.query_id, args.doc_id, judge)
    else:
        grade = parse_grade(args.grade, session)
        done = grade_pair(session, str(folder.root / "queries.jsonl"), args.query_id, args.doc_id, grade, judge)
    where = "the shared store" if folder.shared else folder.judgments.name
    shown = done.taken_back or done.judgment
    said = f"{shown.grade} ({dict(session.scale.grades).get(shown.grade or 0, 'off the scale now')})"
    pair = f"{args.query_id} / {args.doc_id}"
    print(fit(f"{judge} undid {pair} {said}, in {where}" if done.taken_back
              else f"{judge} graded {pair} {said}, in {where}", width()))
    return ExitCode.OK


def _login() -> str:
    """The login name (``judge grade``'s default judge).

    Raises:
        ValidationError: none can be found (a container's user without a name): --judge is needed.
    """
    import getpass

    from searchtrace.errors import ValidationError

    try:
        return getpass.getuser()
    except (OSError, KeyError):
        raise ValidationError("no login name to record the judgment under: give --judge NAME",
                              field="judge") from None


def cmd_status(args: argparse.Namespace) -> int:
    from searchtrace.evals.labels.judgments.status import judging_status
    from searchtrace.evals.labels.judgments.text import status_lines

    folder = _folder(args)
    report = judging_status(folder.location, folder.store().read(), folder.scale(), texts=_texts(folder),
                            pool=_pool(folder))
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(status_lines(report, width())))
    return ExitCode.OK


def _texts(folder: JudgingFolder) -> dict[str, str]:
    """The dataset's query texts by id (none when it has no ``queries.jsonl``)."""
    from searchtrace.retriever import load_queries

    path = folder.root / "queries.jsonl"
    return {q.id: q.text for q in load_queries(path)} if path.is_file() else {}


def _pool(folder: JudgingFolder) -> list[tuple[str, str]] | None:
    """The pool's pairs (None when the dataset has no ``pool.jsonl``)."""
    from searchtrace.evals.labels.judgments.pool import pairs_of, read_pool

    return pairs_of(read_pool(folder)) if folder.pool.is_file() else None


def cmd_implicit(args: argparse.Namespace) -> int:
    import sys

    from searchtrace.evals.labels.implicit.click_grades import ClickThresholds
    from searchtrace.evals.labels.implicit.judge import implicit_judgments
    from searchtrace.evals.labels.implicit.text import implicit_lines

    columns = width()  # a bad $COLUMNS is said before any work
    report = implicit_judgments(args.dataset, home=args.home, since=args.since, until=args.until,
                                thresholds=ClickThresholds(min_impressions=args.min_impressions),
                                qrels=args.qrels or (), dry_run=args.dry_run, store=_store(args),
                                bars=not args.no_progress and sys.stderr.isatty())
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(implicit_lines(report, columns, args.dry_run)))
    return ExitCode.OK
