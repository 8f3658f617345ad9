"""``searchtrace index | search | datasets``: the retriever's commands, registered on the main parser."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from searchtrace.errors import ExitCode
from searchtrace.retriever.arguments import add_retriever_arguments, config_from_arguments, show_progress

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``index``, ``search`` and ``datasets`` to the main parser's subcommands."""
    p = sub.add_parser("index", help="index a BEIR-layout dataset folder (reused while unchanged)")
    p.add_argument("dataset")
    p.add_argument("--force", action="store_true", help="rebuild even if an identical index exists")
    p.add_argument("--verify", action="store_true",
                   help="hash every file of the index against its manifest; rebuild it if any is damaged")
    p.add_argument("--json", action="store_true")
    add_retriever_arguments(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search a dataset (indexes it first if needed)")
    p.add_argument("query")
    p.add_argument("--dataset", required=True)
    p.add_argument("--mode", choices=["fast", "graph"])
    p.add_argument("--top-k", type=int, default=5)
    p.add_argument("--candidates", type=int)
    p.add_argument("--depth", type=int)
    p.add_argument("--min-relevance", type=float)
    p.add_argument("--gap-cutoff", type=float)
    p.add_argument("--collection")
    p.add_argument("--tags-any", nargs="+")
    p.add_argument("--tags-all", nargs="+")
    p.add_argument("--doc-ids", nargs="+")
    p.add_argument("--created-after")
    p.add_argument("--created-before")
    p.add_argument("--debug", action="store_true", help="include score components and stage ranks")
    p.add_argument("--json", action="store_true")
    add_retriever_arguments(p)
    p.set_defaults(func=cmd_search)

    from searchtrace.retriever.serve.run import add_serve_parser

    add_serve_parser(sub)

    ds = sub.add_parser("datasets", help="dataset tools").add_subparsers(dest="datasets_command", required=True)
    p = ds.add_parser("synth", help="write a seeded synthetic dataset (BEIR layout + triples)")
    p.add_argument("out")
    p.add_argument("--docs", type=int, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--queries", type=int)
    p.set_defaults(func=cmd_synth)
    p = ds.add_parser("check", help="load a dataset and report problems")
    p.add_argument("dataset")
    p.add_argument("--split")
    p.set_defaults(func=cmd_check)


def cmd_index(args: argparse.Namespace) -> int:
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.embedding import Embedder
    from searchtrace.retriever.index import build_index, check, locate, published_problems, read_manifest

    dataset = load_dataset(Path(args.dataset))
    for line in dataset.report.messages():
        print(f"warning: {line}", file=sys.stderr)
    config, embedder = config_from_arguments(args), Embedder()
    where = locate(dataset.root, config, embedder.model_id)
    before = read_manifest(where.path).built_at if published_problems(where.path) == [] else None
    force = args.force
    if args.verify and before is not None:
        problems = check(where.path, read_manifest(where.path), deep=True)
        for problem in problems:
            print(f"damaged: {where.path / problem.file}: {problem.what}", file=sys.stderr)
        force = force or bool(problems)
    path = build_index(dataset, config, embedder, progress=show_progress(args), force=force)
    manifest = read_manifest(path)
    if args.json:
        print(json.dumps({"index": str(path), "reused": manifest.built_at == before, **manifest.to_json()}, indent=2))
    elif manifest.built_at == before:
        verified = f", {len(manifest.files)} files verified" if args.verify else ""
        print(f"index {path}: {manifest.n_docs} documents, {manifest.n_triples} triples: up to date, "
              f"reused{verified}")
    else:
        print(f"index {path}: {manifest.n_docs} documents, {manifest.n_triples} triples, "
              f"{manifest.embedded_texts} texts embedded, built in {manifest.build_seconds:.1f} s")
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


def cmd_search(args: argparse.Namespace) -> int:
    from searchtrace.errors import ValidationError
    from searchtrace.retriever.api import open_retriever
    from searchtrace.retriever.request import validate_request

    request = _search_request(args)
    try:
        validate_request(request)  # fail fast, before loading the model
    except ValidationError as exc:
        print(json.dumps(exc.to_dict()) if args.json else f"error: {exc.message}", file=sys.stdout if args.json else sys.stderr)
        return ExitCode.INVALID
    from searchtrace.traces import TraceSettings, make_tracer_provider, vocabulary

    config = config_from_arguments(args)
    trace_settings = TraceSettings.resolve()
    provider, handles = make_tracer_provider(config.home, trace_settings)
    retriever = open_retriever(args.dataset, config, progress=show_progress(args),
                               tracer=provider.get_tracer("searchtrace"), capture=trace_settings.capture,
                               deferred=handles.deferred, source=vocabulary.Source.CLI)
    try:
        response = retriever.search(request)
    finally:
        retriever.index.close()
        handles.close(trace_settings.exit_timeout_s)  # the store in full; a collector for a bounded time
    if args.json:
        print(json.dumps(response, indent=2, ensure_ascii=False))
    else:
        _print_response(response)
    if "error" in response:
        return ExitCode.INVALID if response["error"]["code"] == "VALIDATION_ERROR" else ExitCode.FAILURE
    return ExitCode.OK


def _print_response(response: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if "error" in response:
        console.print(f"[red]{response['error']['code']}[/red]: {response['error']['message']}")
        return
    table = Table(title=f"mode={response['mode']} bestScore={response['bestScore']}"
                  f"{' (no confident results)' if response['noConfidentResults'] else ''}")
    for col in ("#", "id", "score", "band", "type", "content"):
        table.add_column(col)
    for i, r in enumerate(response["results"], 1):
        table.add_row(str(i), r["id"], f"{r['score']:.3f}", r["confidenceBand"], r["component_type"],
                      r["content"].replace("\n", " — ")[:90])
    console.print(table)
    if response["kg"]:
        console.print("kg: " + "; ".join(f"({t['subject']}, {t['relation']}, {t['object']})" for t in response["kg"][:8]))
    if response["rewrite_terms"]:
        console.print("rewrite terms: " + ", ".join(response["rewrite_terms"]))
    if response["retryHints"]:
        console.print("retry hints: " + json.dumps(response["retryHints"], ensure_ascii=False))
    if response["degraded"]:
        console.print(f"[yellow]degraded: {', '.join(response['degraded'])}[/yellow]")
    console.print(f"trace {response['traceId']}")


def cmd_synth(args: argparse.Namespace) -> int:
    from searchtrace.retriever.data.synth import synthesize

    synthesize(Path(args.out), n_docs=args.docs, seed=args.seed, n_queries=args.queries)
    print(f"wrote {args.docs} documents to {args.out}")
    return ExitCode.OK


def cmd_check(args: argparse.Namespace) -> int:
    from searchtrace.retriever.data.beir import load_dataset

    dataset = load_dataset(Path(args.dataset), split=args.split)
    print(f"{dataset.name}: {len(dataset.docs)} documents, {len(dataset.queries)} queries, "
          f"{sum(len(v) for v in dataset.qrels.values())} judgments ({dataset.split}), {len(dataset.triples)} triples")
    for line in dataset.report.messages():
        print(f"warning: {line}")
    return ExitCode.OK
