"""``searchtrace index | search | datasets``: the retriever's commands, registered on the main parser."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.database import add_store_argument
from searchtrace.errors import ExitCode
from searchtrace.retriever.config.flags import add_retriever_arguments, config_from_arguments, show_progress
from searchtrace.retriever.request import DEFAULT_CANDIDATES, DEFAULT_TOP_K, MAX_CANDIDATES, MAX_TOP_K
from searchtrace.terminal import fit, width

if TYPE_CHECKING:
    from searchtrace.errors import SearchtraceError
    from searchtrace.retriever.data.beir import Dataset
    from searchtrace.retriever.response import SearchResponse

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``index``, ``search`` and ``datasets`` to the main parser's subcommands."""
    p = sub.add_parser("index", help="index a BEIR-layout dataset folder (reused while unchanged)")
    p.add_argument("dataset", help="BEIR-layout dataset folder (only corpus.jsonl is needed; triples.jsonl optional)")
    p.add_argument("--force", action="store_true", help="rebuild even if an identical index exists")
    p.add_argument("--verify", action="store_true",
                   help="hash every file of the index against its manifest; rebuild it if any is damaged")
    p.add_argument("--json", action="store_true", help="print the index manifest as JSON")
    add_retriever_arguments(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search a dataset (indexes it first if needed)",
                       usage="searchtrace search [options] DATASET QUERY")
    p.add_argument("first", nargs="?", metavar="DATASET",
                   help="BEIR-layout dataset folder (indexed first if needed), as every command takes it")
    p.add_argument("query", nargs="?", metavar="QUERY", help="the question or keywords")
    p.add_argument("--dataset", dest="dataset_option", metavar="DATASET",
                   help="the dataset folder, given as an option instead (then QUERY is the only argument)")
    p.add_argument("--mode", choices=["fast", "graph"],
                   help="graph adds the knowledge graph (default: graph when the dataset has triples)")
    p.add_argument("--top-k", type=int, default=DEFAULT_TOP_K,
                   help=f"results returned, 1-{MAX_TOP_K} (default: {DEFAULT_TOP_K})")
    p.add_argument("--candidates", type=int,
                   help=f"per-stage candidate depth, top-k to {MAX_CANDIDATES} (default: {DEFAULT_CANDIDATES})")
    p.add_argument("--depth", type=int, help="graph hops, 0-3 (default: 2 in graph mode)")
    p.add_argument("--min-relevance", type=float, help="drop results below this relevance, 0-1 (default: none)")
    p.add_argument("--gap-cutoff", type=float,
                   help="cut the list at the first relevance drop larger than this, 0-1 (default: none)")
    p.add_argument("--collection", help="only documents of this collection (default: any)")
    p.add_argument("--tags-any", nargs="+", metavar="TAG", help="only documents with any of these tags")
    p.add_argument("--tags-all", nargs="+", metavar="TAG", help="only documents with all of these tags")
    p.add_argument("--doc-ids", nargs="+", metavar="ID", help="only these documents")
    p.add_argument("--created-after", metavar="WHEN",
                   help="only documents from this instant on: ISO 8601 date or date-time with a zone")
    p.add_argument("--created-before", metavar="WHEN", help="only documents before this instant (exclusive)")
    p.add_argument("--debug", action="store_true", help="include score components and stage ranks")
    p.add_argument("--json", action="store_true", help="print the response as JSON (in fused order)")
    add_retriever_arguments(p)
    add_store_argument(p)  # where its trace goes
    p.set_defaults(func=cmd_search)

    from searchtrace.retriever.serve.run import add_serve_parser

    add_serve_parser(sub)

    ds = sub.add_parser("datasets", help="dataset tools").add_subparsers(dest="datasets_command", required=True)
    p = ds.add_parser("synth", help="write a seeded synthetic dataset (BEIR layout + triples)")
    p.add_argument("out", help="folder to write")
    p.add_argument("--docs", type=int, required=True, help="documents to write")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--queries", type=int, help="queries to write (default: 1,000, or one per document when fewer)")
    p.set_defaults(func=cmd_synth)
    p = ds.add_parser("check", help="load a dataset and report problems")
    p.add_argument("dataset", help="BEIR-layout dataset folder")
    p.add_argument("--split", help="qrels split to check (default: test, else the first qrels/*.tsv)")
    p.set_defaults(func=cmd_check)


def cmd_index(args: argparse.Namespace) -> int:
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.index import build_index, check, locate, published_problems, read_manifest

    dataset = load_dataset(Path(args.dataset), need_queries=False)  # an index needs only the corpus
    for line in dataset.report.messages():
        print(f"warning: {line}", file=sys.stderr)
    config = config_from_arguments(args)
    embedder = Embedder(config.home, config.precision)
    where = locate(dataset.root, config, embedder.model_id)
    intact = published_problems(where.path) == []
    force = args.force
    model_problems = embedder.verify() if args.verify else []
    for line in model_problems:  # removed: the model is built again before anything is embedded
        print(f"damaged: {line}; the model is built again", file=sys.stderr)
    if args.verify and intact:
        problems = check(where.path, read_manifest(where.path), deep=True)
        for problem in problems:
            print(f"damaged: {where.path / problem.file}: {problem.what}", file=sys.stderr)
        force = force or bool(problems)
    started = time.time()
    # An intact index is reused without taking the build lock: a read-only home can say so too.
    path = where.path if intact and not force else build_index(dataset, config, embedder,
                                                                progress=show_progress(args), force=force)
    manifest = read_manifest(path)
    reused = manifest.built_at < started  # built before this command (here, or by another process meanwhile)
    if args.json:
        print(json.dumps({"index": str(path), "reused": reused, **manifest.to_json()}, indent=2))
    else:  # the path on a line of its own: the one thing wider than a terminal may be
        verified = f", {len(manifest.files)} files and the model verified" if args.verify else ""
        print(f"index {path}\n{manifest.n_docs} documents, {manifest.n_triples} triples"
              + (f": up to date, reused{verified}" if reused else
                 f", {manifest.embedded_texts} texts embedded, built in {manifest.build_seconds:.1f} s"))
    return ExitCode.OK


def _search_request(args: argparse.Namespace) -> dict:
    request: dict = {"query": args.query, "top_k": args.top_k}
    optional = {"mode": args.mode, "candidates": args.candidates, "depth": args.depth,
                "min_relevance": args.min_relevance, "collection": args.collection, "tags_any": args.tags_any,
                "tags_all": args.tags_all, "doc_ids": args.doc_ids, "created_after": args.created_after,
                "created_before": args.created_before, "gap_cutoff": args.gap_cutoff}
    request.update({k: v for k, v in optional.items() if v is not None})
    if args.debug:
        request["debug"] = True
    return request


def _dataset_and_query(args: argparse.Namespace) -> tuple[str, str]:
    """``search DATASET QUERY``, or ``search QUERY --dataset DATASET``. Raises ValidationError."""
    from searchtrace.errors import ValidationError

    if args.dataset_option is not None:
        if args.query is not None:
            raise ValidationError("the dataset is given twice: as the first argument and with --dataset",
                                  field="dataset")
        if args.first is None:
            raise ValidationError("search needs a query: searchtrace search DATASET QUERY", field="query")
        return args.dataset_option, args.first
    if args.first is None or args.query is None:
        raise ValidationError("search needs a dataset folder and a query: searchtrace search DATASET QUERY",
                              field="dataset" if args.first is None else "query")
    return args.first, args.query


def cmd_search(args: argparse.Namespace) -> int:
    from searchtrace.errors import SearchtraceError, ValidationError, error_object
    from searchtrace.retriever.api import open_retriever
    from searchtrace.retriever.request import validate_request

    try:
        args.dataset, args.query = _dataset_and_query(args)
        request = _search_request(args)
        validate_request(request)  # fail fast, before loading the model
    except ValidationError as exc:
        print(json.dumps(error_object(exc)) if args.json else f"error: {exc.message}",
              file=sys.stdout if args.json else sys.stderr)
        return ExitCode.INVALID
    from searchtrace.traces import TraceSettings, make_tracer_provider, vocabulary

    config = config_from_arguments(args)
    trace_settings = TraceSettings.resolve(store_url=args.store).for_home(config.home)
    provider, handles = make_tracer_provider(config.home, trace_settings)
    if warning := handles.check_store():
        print(warning, file=sys.stderr)
    retriever = open_retriever(args.dataset, config, progress=show_progress(args),
                               tracer=provider.get_tracer("searchtrace"), capture=trace_settings.capture,
                               deferred=handles.deferred, source=vocabulary.Source.CLI)
    try:
        response = retriever.search(request)
    except SearchtraceError as exc:
        _print_error(exc, args.json)
        return exc.exit_code
    finally:
        retriever.index.close()
        handles.close(trace_settings.exit_timeout_s)  # the store in full; a collector for a bounded time
    if args.json:
        print(json.dumps(response.to_json(), indent=2, ensure_ascii=False))
    else:
        _print_response(response)
    return ExitCode.OK


KG_SHOWN = 8
"""Knowledge-graph triples the terminal view lists (``--json`` has them all)."""


def _print_error(exc: SearchtraceError, as_json: bool) -> None:
    """A search's error: its object with ``--json``, else one line (both on stdout, as a response would be)."""
    from rich.console import Console

    from searchtrace.errors import error_object

    if as_json:
        print(json.dumps(error_object(exc), indent=2, ensure_ascii=False))
    else:
        Console(width=width()).print(f"[red]{exc.code.value}[/red]: {exc.message}", highlight=False)


def _print_response(response: SearchResponse) -> None:
    """The response for a terminal, in its own order (relevance never increases down it): passages and the
    graph's facts in one table, then how many triples are shown."""
    from rich.console import Console
    from rich.table import Table

    from searchtrace.retriever.response import RelationHit
    from searchtrace.retriever.serve.render import snippet

    console = Console(width=width())
    console.print(f"mode {response.mode.value}, bestScore {response.best_score}"
                  f"{', no confident results' if response.no_confident_results else ''}; "
                  f"{len(response.chunks)} passages, {len(response.relations)} facts", highlight=False)
    table = Table()
    for col in ("#", "id", "score", "band", "content"):
        table.add_column(col, no_wrap=col in ("#", "id", "score", "band"), overflow="fold" if col == "id" else "ellipsis")
    for i, r in enumerate(response.results, 1):
        text = (f"{r.subject} —{r.relation}→ {r.object}" if isinstance(r, RelationHit)
                else snippet(r.content.replace("\n", " — "), 90))
        table.add_row(str(i), r.id, f"{r.score:.3f}", r.band.value, text)
    console.print(table)
    kg = response.kg
    if kg:
        shown = kg[:KG_SHOWN]
        console.print(f"kg ({len(shown)} of {len(kg)} triples{'' if len(shown) == len(kg) else '; --json: all'}): "
                      + "; ".join(f"({t.subject}, {t.relation}, {t.object})" for t in shown),
                      highlight=False)
    if response.rewrite_terms:
        console.print("rewrite terms: " + ", ".join(response.rewrite_terms), highlight=False)
    if response.retry_hints is not None:
        console.print("retry hints: " + json.dumps(response.retry_hints.to_json(), ensure_ascii=False), highlight=False)
    if response.degraded:
        console.print(f"[yellow]degraded: {', '.join(response.degraded)}[/yellow]")
    console.print(f"trace {response.trace_id}", highlight=False)


def cmd_synth(args: argparse.Namespace) -> int:
    from searchtrace.retriever.data.synth import synthesize

    synthesize(Path(args.out), n_docs=args.docs, seed=args.seed, n_queries=args.queries)
    print(f"wrote {args.docs} documents to {args.out}")
    return ExitCode.OK


def cmd_check(args: argparse.Namespace) -> int:
    from searchtrace.retriever.data.beir import load_dataset

    dataset = load_dataset(Path(args.dataset), split=args.split)
    columns = width()
    print(fit(f"{dataset.name}: {len(dataset.docs):,} documents, {len(dataset.queries):,} queries, "
              f"{len(dataset.triples):,} triples", columns))
    print(fit(_labels_line(dataset), columns))
    for line in dataset.report.messages():
        print(f"warning: {line}")
    return ExitCode.OK


def _labels_line(dataset: Dataset) -> str:
    """What the dataset's chosen qrels split holds, or that it has none."""
    if dataset.split is None:
        return "labels: none (no qrels/*.tsv; judge pairs with `searchtrace judge`, then `judge export`)"
    pairs = sum(len(v) for v in dataset.qrels.values())
    return (f"labels: {pairs:,} judged {'pair' if pairs == 1 else 'pairs'} of {len(dataset.qrels):,} "
            f"{'query' if len(dataset.qrels) == 1 else 'queries'}, in qrels/{dataset.split}.tsv")
