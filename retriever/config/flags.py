"""Command-line flags of any command that opens a retriever, and the configuration they resolve to.

``searchtrace index``, ``search`` and ``eval`` share them: backends, the home
folder, progress bars, and every search setting (each flag overrides the
settings file, which overrides the default).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from searchtrace.home import add_home_argument

if TYPE_CHECKING:  # the config pulls in numpy: `searchtrace --help` does not need it
    from searchtrace.retriever.config.model import RetrieverConfig

__all__ = ["add_retriever_arguments", "config_from_arguments", "show_progress"]


def add_retriever_arguments(p: argparse.ArgumentParser) -> None:
    """Add the backend, home, progress and search-setting flags to ``p``."""
    add_home_argument(p)
    p.add_argument("--qdrant-url", help="Qdrant server URL (default: $QDRANT_URL; unset = embedded Qdrant Edge)")
    p.add_argument("--neo4j-uri", help="Neo4j Bolt URI (default: $NEO4J_URI; unset = embedded graph)")
    p.add_argument("--neo4j-user", help="Neo4j user (default: $NEO4J_USER, else neo4j)")
    p.add_argument("--neo4j-password", help="Neo4j password (default: $NEO4J_PASSWORD)")
    p.add_argument("--neo4j-database", help="Neo4j database (default: $NEO4J_DATABASE, else the server's default)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.add_argument("--precision", choices=["fp32", "int8"],
                   help="embedder weights (default: $SEARCHTRACE_EMBED_PRECISION or fp32; int8: faster, "
                        "its own index)")
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


def _search_overrides(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The search-setting flags as settings sections (``None`` = not given)."""
    from searchtrace.retriever.config.resolve import parse_weights

    return {
        "fusion": {"method": args.fusion, "k0": args.k0,
                   "weights": parse_weights(args.weights) if args.weights else None},
        "feedback": {"docs": args.feedback_docs, "weight": args.feedback_weight},
        "graph": {"method": args.graph_method, "seed_docs": args.graph_seed_docs,
                  "seed_docs_weight": args.graph_seed_weight},
        "dense": {"parts": args.parts, "parts_weight": args.parts_weight},
    }


def config_from_arguments(args: argparse.Namespace) -> RetrieverConfig:
    """The :class:`RetrieverConfig` the flags of :func:`add_retriever_arguments` name.

    Raises:
        ValidationError: every problem in the flags and settings file at once.
    """
    from searchtrace.retriever.config.resolve import resolve_config

    return resolve_config(home=args.home, qdrant_url=args.qdrant_url, neo4j_uri=args.neo4j_uri,
                          neo4j_user=args.neo4j_user, neo4j_password=args.neo4j_password,
                          neo4j_database=args.neo4j_database, precision=args.precision,
                          settings_file=args.retriever_config,
                          search=_search_overrides(args))


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars unless ``--no-progress`` or stderr is not a terminal."""
    return not args.no_progress and sys.stderr.isatty()
