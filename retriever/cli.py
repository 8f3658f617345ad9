"""The ``searchtrace`` command line: subcommands, heavy imports inside each.

Exit codes: 0 success, 1 failure, 2 invalid input (bad arguments, a request
that fails validation, malformed data).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

EXIT_OK, EXIT_FAIL, EXIT_INVALID = 0, 1, 2  # shared by every subcommand package


def _add_backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--home", help="index and trace home (default: $SEARCHTRACE_HOME or ~/.searchtrace)")
    p.add_argument("--qdrant-url", help="Qdrant server URL (default: $QDRANT_URL; unset = embedded Qdrant Edge)")
    p.add_argument("--neo4j-uri", help="Neo4j Bolt URI (default: $NEO4J_URI; unset = embedded graph)")
    p.add_argument("--neo4j-user")
    p.add_argument("--neo4j-password")
    p.add_argument("--neo4j-database")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    g = p.add_argument_group("search settings", "each flag overrides the settings file, which overrides the default")
    g.add_argument("--retriever-config", metavar="FILE",
                   help="search settings (TOML: [dense], [fusion], [feedback], [graph], [confidence]); "
                        "default: $SEARCHTRACE_RETRIEVER_CONFIG")
    g.add_argument("--fusion", metavar="METHOD", help="dbsf (default), rrf, zscore, weighted or keyword_then_dense")
    g.add_argument("--weights", metavar="STAGE=W,...",
                   help="fusion weights, e.g. dense=1,keyword=1,graph=1; 0 skips a stage (dense=0: keyword only)")
    g.add_argument("--k0", type=int, help="RRF rank constant (default 60)")
    g.add_argument("--feedback-docs", type=int, help="dense pseudo-relevance feedback documents (default 0 = off)")
    g.add_argument("--feedback-weight", type=float, help="Rocchio weight of the feedback documents (default 0.5)")
    g.add_argument("--graph-method", metavar="METHOD", help="ppr (default) or expand")
    g.add_argument("--graph-seed-docs", type=int, metavar="N",
                   help="ppr: the entities of the N best first-pass passages seed the walk too (default 1; 0 = off)")
    g.add_argument("--graph-seed-weight", type=float, metavar="W",
                   help="their restart mass beside the query's entities, which weigh 1 (default 0.5)")
    g.add_argument("--parts-weight", type=float, metavar="W",
                   help="dense score = (1-W) cos(passage) + W max cos(title or sentence) (default 0.5; 0 = passage only)")
    g.add_argument("--no-parts", dest="parts", action="store_false", default=None,
                   help="index without the title and sentence vectors (about 1/3 of the embedding work)")


def _search_overrides(args: argparse.Namespace) -> dict:
    """The search-setting flags as settings sections (``None`` = not given)."""
    from retriever.settings import parse_weights

    return {
        "fusion": {"method": args.fusion, "k0": args.k0,
                   "weights": parse_weights(args.weights) if args.weights else None},
        "feedback": {"docs": args.feedback_docs, "weight": args.feedback_weight},
        "graph": {"method": args.graph_method, "seed_docs": args.graph_seed_docs,
                  "seed_docs_weight": args.graph_seed_weight},
        "dense": {"parts": args.parts, "parts_weight": args.parts_weight},
    }


def _config(args: argparse.Namespace):
    from retriever.config import RetrieverConfig

    return RetrieverConfig.resolve(home=args.home, qdrant_url=args.qdrant_url, neo4j_uri=args.neo4j_uri,
                                   neo4j_user=args.neo4j_user, neo4j_password=args.neo4j_password,
                                   neo4j_database=args.neo4j_database, settings_file=args.retriever_config,
                                   search=_search_overrides(args))


def _progress(args: argparse.Namespace) -> bool:
    return not args.no_progress and sys.stderr.isatty()


def cmd_index(args: argparse.Namespace) -> int:
    from retriever.data.beir import load_dataset
    from retriever.embedding import Embedder
    from retriever.index import build_index

    dataset = load_dataset(Path(args.dataset))
    for line in dataset.report.messages():
        print(f"warning: {line}", file=sys.stderr)
    path = build_index(dataset, _config(args), Embedder(), progress=_progress(args), force=args.force)
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    print(json.dumps({"index": str(path), **manifest}, indent=2) if args.json else
          f"index {path}: {manifest['n_docs']} documents, {manifest['n_triples']} triples, "
          f"{manifest['embedded_texts']} embedded, built in {manifest['build_seconds']:.1f}s")
    return EXIT_OK


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
    from retriever.api import open_retriever
    from retriever.request import validate_request
    from retriever.errors import ValidationError

    request = _search_request(args)
    try:
        validate_request(request)  # fail fast, before loading the model
    except ValidationError as exc:
        print(json.dumps(exc.to_dict()) if args.json else f"error: {exc.message}", file=sys.stdout if args.json else sys.stderr)
        return EXIT_INVALID
    from traces.setup import TraceSettings, make_tracer_provider

    config = _config(args)
    trace_settings = TraceSettings.resolve()
    provider, handles = make_tracer_provider(config.home, trace_settings)
    retriever = open_retriever(args.dataset, config, progress=_progress(args),
                               tracer=provider.get_tracer("searchtrace"), capture=trace_settings.capture,
                               deferred=handles.deferred)
    try:
        response = retriever.search(request)
    finally:
        retriever.index.close()
        handles.shutdown()  # flushes the trace to the local store (and OTLP when configured)
    if args.json:
        print(json.dumps(response, indent=2, ensure_ascii=False))
    else:
        _print_response(response)
    if "error" in response:
        return EXIT_INVALID if response["error"]["code"] == "VALIDATION_ERROR" else EXIT_FAIL
    return EXIT_OK


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
    from retriever.data.synth import synthesize

    synthesize(Path(args.out), n_docs=args.docs, seed=args.seed, n_queries=args.queries)
    print(f"wrote {args.docs} documents to {args.out}")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    from retriever.data.beir import load_dataset

    dataset = load_dataset(Path(args.dataset), split=args.split)
    print(f"{dataset.name}: {len(dataset.docs)} documents, {len(dataset.queries)} queries, "
          f"{sum(len(v) for v in dataset.qrels.values())} judgments ({dataset.split}), {len(dataset.triples)} triples")
    for line in dataset.report.messages():
        print(f"warning: {line}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="searchtrace", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="index a BEIR-layout dataset folder (reused while unchanged)")
    p.add_argument("dataset")
    p.add_argument("--force", action="store_true", help="rebuild even if an identical index exists")
    p.add_argument("--json", action="store_true")
    _add_backend_args(p)
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
    _add_backend_args(p)
    p.set_defaults(func=cmd_search)

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

    from evals.cli import register as register_evals
    from traces.cli import register as register_traces

    from dashboard.cli import register as register_dashboard

    register_evals(sub, _add_backend_args, _config)
    register_traces(sub)
    register_dashboard(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from retriever.errors import SearchtraceError

    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except SearchtraceError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return EXIT_INVALID if exc.code.value == "VALIDATION_ERROR" else EXIT_FAIL
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
