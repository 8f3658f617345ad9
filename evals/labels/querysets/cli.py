"""``searchtrace queries from-traces``: registered on the main parser by ``evals.cli``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from searchtrace.database import add_store_argument, resolve_store_url
from searchtrace.errors import ExitCode
from searchtrace.evals.labels.querysets.options import TRAFFIC_SOURCES, Sampling
from searchtrace.home import add_home_argument
from searchtrace.names import Band, Mode
from searchtrace.terminal import fit, width
from searchtrace.traces import add_search_flags

if TYPE_CHECKING:

    from searchtrace.evals.labels.querysets.build import QuerySet

__all__ = ["register"]

_TRAFFIC = tuple(s.value for s in TRAFFIC_SOURCES)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``queries`` and its subcommand to ``sub`` (the main parser's subparsers)."""
    parser = sub.add_parser("queries", help="make query sets (BEIR datasets) from stored traffic")
    commands = parser.add_subparsers(dest="queries_command", required=True)
    p = commands.add_parser(
        "from-traces", help="write a dataset folder whose queries are those the stored traces asked",
        description="Write OUT, a BEIR dataset folder: the distinct queries (case and whitespace ignored) that "
                    "stored searches of DATASET asked, sampled; links to DATASET's corpus.jsonl and "
                    "triples.jsonl, no qrels. With --service, the searches another retriever sent (`searchtrace "
                    "collect`): its corpus is DATASET's when given, else the documents the searches returned.")
    p.add_argument("out", metavar="OUT", help="the folder to write (refused when it is not empty, unless --force)")
    p.add_argument("--dataset", metavar="DATASET", help="the dataset folder the traces searched (required "
                   "without --service)")
    p.add_argument("--service", metavar="NAME", help="another retriever's searches: those its service.name NAME sent")
    p.add_argument("--project", metavar="NAME", help="with --service: only its project NAME's "
                   "(openinference.project.name)")
    p.add_argument("--source", action="append", choices=_TRAFFIC, metavar="SOURCE",
                   help=f"searches through this surface: {', '.join(_TRAFFIC)} (repeatable; default: all four)")
    add_search_flags(p)
    p.add_argument("--band", choices=[b.value for b in Band], help="only searches whose best result is in this band")
    p.add_argument("--sample", choices=[s.value for s in Sampling], default="all",
                   help="all (default); random: N uniformly; frequency: N weighted by how often each was asked; "
                        "top: the N most asked")
    p.add_argument("--n", type=int, metavar="N", help="how many queries --sample random, frequency or top picks")
    p.add_argument("--seed", type=int, default=0, help="the sampling's seed (default: 0)")
    p.add_argument("--force", action="store_true", help="replace OUT when it is not empty")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_home_argument(p)
    add_store_argument(p)
    p.set_defaults(func=cmd_from_traces)


def cmd_from_traces(args: argparse.Namespace) -> int:
    import sys

    if args.service is not None or args.project is not None:
        return _from_service(args)
    if not args.dataset:
        print("error: queries from-traces: give --dataset DATASET (our own traffic) or --service NAME (another "
              "retriever's)", file=sys.stderr)
        return ExitCode.INVALID

    from searchtrace.evals.labels.querysets.build import TrafficFilter, queries_from_traces
    from searchtrace.traces import vocabulary

    columns = width()  # a bad $COLUMNS is said before any work
    traffic = TrafficFilter(sources=tuple(vocabulary.Source(s) for s in dict.fromkeys(args.source or _TRAFFIC)),
                            since=args.since, until=args.until, mode=Mode(args.mode) if args.mode else None,
                            best_band=Band(args.band) if args.band else None, no_confident=args.no_confident)
    made = queries_from_traces(args.out, args.dataset, home=args.home, traffic=traffic,
                               sampling=Sampling(args.sample), n=args.n, seed=args.seed, force=args.force,
                               bars=not args.no_progress and sys.stderr.isatty(), store=resolve_store_url(args.store))
    for line in summary_lines(made):
        print(fit(line, columns))
    return ExitCode.OK


def _from_service(args: argparse.Namespace) -> int:
    import sys

    from searchtrace.evals.labels.querysets.build import queries_from_service
    from searchtrace.evals.labels.querysets.services import ServiceFilter

    columns = width()
    ours = [flag for flag, value in (("--source", args.source), ("--band", args.band), ("--mode", args.mode),
                                     ("--no-confident/--confident", args.no_confident)) if value is not None]
    if ours or args.service is None:
        said = f"{', '.join(ours)} filter our own searches, not another retriever's" if ours else \
            "--project goes with --service NAME"
        print(f"error: queries from-traces: {said}", file=sys.stderr)
        return ExitCode.INVALID
    made = queries_from_service(args.out, ServiceFilter(args.service, args.project, args.since, args.until),
                                dataset=args.dataset, home=args.home, sampling=Sampling(args.sample), n=args.n,
                                seed=args.seed, force=args.force, store=resolve_store_url(args.store))
    for line in summary_lines(made):
        print(fit(line, columns))
    return ExitCode.OK


def summary_lines(made: QuerySet) -> list[str]:
    """What a written query set says to a person."""
    info = made.info
    picked = "every query" if info.n is None else f"{info.sampling} sample of {info.n:,} (seed {info.seed})"
    if info.n is not None and info.n > info.distinct:
        picked = f"asked for {info.n:,}, all there are"
    lines = [f"wrote {info.queries:,} queries to {made.path}",
             f"  {picked}: {info.distinct:,} distinct queries in {info.searches:,} searches",
             f"  corpus linked, not copied: {info.dataset}" if info.corpus is None else
             f"  corpus from the traces: {info.corpus['documents']:,} documents, "
             f"{info.corpus['without_content']:,} of them without content"]
    if info.corpus and info.corpus.get("unidentified"):
        lines.append(f"{info.corpus['unidentified']:,} documents returned without an id were left out (name the "
                     "metadata key holding it: traces id-key)")
    if info.uncaptured:
        why = "sent no query text" if info.filters.get("service") else "recorded no query text " \
            "(SEARCHTRACE_CAPTURE_QUERY=0)"
        lines.append(f"{info.uncaptured:,} searches {why}: not used")
    return lines


