"""``searchtrace eval | compare | gate | calibrate``: registered on the main parser."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from retriever.cli import EXIT_FAIL, EXIT_INVALID, EXIT_OK  # noqa: E402  one set of exit codes


def register(sub, add_backend_args, config_of) -> None:
    """Add the eval subcommands to ``sub`` (the main parser's subparsers)."""
    p = sub.add_parser("eval", help="score a dataset split (or an external TREC run) against gold labels")
    p.add_argument("dataset", nargs="?", help="BEIR-layout dataset folder")
    p.add_argument("--split")
    p.add_argument("--mode", choices=["fast", "graph"])
    p.add_argument("--top-k", type=int, default=100, help="ranking depth scored and written (1-500)")
    p.add_argument("--metrics", nargs="+", help="metric keys, e.g. ndcg@10 recall@100 (default: the standard set)")
    p.add_argument("--out", help="run folder (default: <home>/runs/<run id>); an interrupted run there resumes")
    p.add_argument("--corrective", action="store_true", help="re-run weak queries with their retry hints")
    p.add_argument("--batch-size", type=int, default=32, help="queries embedded and journaled together")
    p.add_argument("--run", help="score this TREC run file instead of running the retriever")
    p.add_argument("--qrels", help="qrels (TREC or BEIR TSV) for --run")
    p.add_argument("--json", action="store_true")
    add_backend_args(p)
    p.set_defaults(func=lambda a: cmd_eval(a, config_of(a)))

    p = sub.add_parser("compare", help="compare two runs per metric, with paired significance tests")
    p.add_argument("base", help="baseline run folder")
    p.add_argument("candidate", help="candidate run folder")
    p.add_argument("--metrics", nargs="+")
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", action="store_true")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("gate", help="fail (exit 1) when the candidate run regresses from the baseline")
    p.add_argument("--baseline", required=True)
    p.add_argument("--candidate", required=True)
    p.add_argument("--config", help="gate rules (TOML); default: ndcg@10, recall@100, mrr@10 may not drop > 0.01")
    p.add_argument("--junit", help="write JUnit XML here")
    p.add_argument("--markdown", help="write a Markdown summary here (for a pull request comment)")
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("calibrate", help="fit the relevance model on a run's labels")
    p.add_argument("run", help="run folder to fit on")
    p.add_argument("--out", required=True, help="calibration file to write (JSON)")
    p.add_argument("--method", choices=["logistic", "isotonic"], default="logistic")
    p.add_argument("--eval-run", help="run on another split to report before/after on (default: the fitted run)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_calibrate)


def _metrics(args) -> tuple[str, ...]:
    from evals.runner import DEFAULT_METRICS

    return tuple(args.metrics) if args.metrics else DEFAULT_METRICS


def cmd_eval(args: argparse.Namespace, config) -> int:
    if args.run:
        return _score_external(args)
    if not args.dataset:
        print("error: give a DATASET folder, or --run FILE --qrels FILE", file=sys.stderr)
        return EXIT_INVALID
    from evals.metrics import parse_metrics
    from evals.run_eval import run_eval
    from evals.runner import EvalSettings

    parse_metrics(_metrics(args))  # fail fast on an unknown metric
    settings = EvalSettings(dataset=str(Path(args.dataset)), split=args.split, mode=args.mode, top_k=args.top_k,
                            metrics=_metrics(args), corrective=args.corrective,
                            batch_size=args.batch_size)
    folder = run_eval(settings, config, out=Path(args.out) if args.out else None,
                      progress=not args.no_progress and sys.stderr.isatty())
    summary = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    if args.json:
        print(json.dumps({"run": str(folder), **summary}, indent=2))
    else:
        print_summary(folder, summary)
    return EXIT_OK if not summary["errors"] else EXIT_FAIL


def _score_external(args: argparse.Namespace) -> int:
    from evals.metrics import evaluate
    from evals.trec import read_qrels, read_run

    if not args.qrels:
        print("error: --run needs --qrels", file=sys.stderr)
        return EXIT_INVALID
    ev = evaluate(read_qrels(args.qrels), read_run(args.run), list(_metrics(args)))
    means = {str(m): round(float(v), 6) for m, v in ev.means.items()}
    if args.json:
        print(json.dumps({"run": args.run, "queries": int(len(ev.query_ids)), "metrics": means}, indent=2))
    else:
        _metric_table(f"{args.run} ({len(ev.query_ids)} queries)", means)
    return EXIT_OK


def _metric_table(title: str, means: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in means.items():
        table.add_row(name, "n/a" if value is None else f"{value:.4f}")
    Console().print(table)


def print_summary(folder: Path, summary: dict) -> None:
    from rich.console import Console

    console = Console()
    _metric_table(f"{summary['run_id']}: {summary['dataset']['name']} / {summary['dataset']['split']} "
                  f"({summary['evaluated_queries']} judged of {summary['dataset']['queries']} queries)",
                  summary["metrics"])
    att = summary["attribution"]
    console.print("candidate recall: " + ", ".join(f"{k} {v:.3f}" for k, v in att["candidate_recall"].items()))
    console.print("gold documents lost at: " + ", ".join(f"{k} {v}" for k, v in att["lost_at"].items()))
    conf = summary["confidence"]
    bp = conf["band_precision"]
    console.print("band precision: " + ", ".join(
        f"{b} {bp[b]['precision']:.2f} (n={bp[b]['count']})" if bp[b]["precision"] is not None else f"{b} -"
        for b in ("high", "medium", "low")) + ("" if bp["ordered"] else "  [red]not ordered[/red]"))
    if conf.get("ece") is not None:
        console.print(f"ECE {conf['ece']:.3f}  Brier {conf['brier']:.3f}  AUROC {conf['auroc']:.3f}")
    if summary.get("abstention"):
        a = summary["abstention"]
        console.print(f"abstention on {a['unanswerable']} unanswerable: precision "
                      f"{a['precision'] if a['precision'] is None else round(a['precision'], 3)} recall {a['recall']:.3f}")
    if summary.get("corrective"):
        c = summary["corrective"]
        console.print(f"corrective: {c['weak_queries']} weak, {c['changed_answers']} changed, gain "
                      + ", ".join(f"{k} {v:+.4f}" for k, v in c["gain"].items())
                      + f", +{c['added_latency_ms']['per_query']:.1f} ms/query")
    total = summary["latency_ms"].get("total") or summary["latency_ms"].get("search")
    if total:
        console.print(f"latency p50 {total['p50']:.1f} ms, p95 {total['p95']:.1f} ms, p99 {total['p99']:.1f} ms")
    console.print(f"run folder: {folder}")


def cmd_compare(args: argparse.Namespace) -> int:
    from evals.compare import compare, to_json, to_markdown, to_table
    from evals.run_files import evaluation

    comparison = compare(evaluation(args.base), evaluation(args.candidate), args.metrics)
    if args.json:
        print(json.dumps(to_json(comparison), indent=2))
    elif args.markdown:
        print(to_markdown(comparison))
    else:
        from rich.console import Console

        Console().print(to_table(comparison))
    return EXIT_OK


def cmd_gate(args: argparse.Namespace) -> int:
    """Exit 0 pass, 1 regression, 2 invalid input: a missing or broken run is invalid input, never a regression."""
    from retriever.errors import SearchtraceError

    try:
        return _gate(args)
    except (SearchtraceError, OSError) as exc:
        print(f"error: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return EXIT_INVALID


def _gate(args: argparse.Namespace) -> int:
    from evals.compare import compare
    from evals.gate import load_config
    from evals.gate.check import gate
    from evals.gate.report import to_markdown, write_junit
    from evals.run_files import evaluation

    config = load_config(args.config)
    metrics = [str(r.metric) for r in config.rules]
    result = gate(compare(evaluation(args.baseline), evaluation(args.candidate), metrics), config)
    markdown = to_markdown(result)
    if args.junit:
        write_junit(result, args.junit)
    if args.markdown:
        Path(args.markdown).write_text(markdown, encoding="utf-8")
    print(markdown)
    return int(result.exit_code)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from evals.calibrate import calibrate

    report = calibrate(Path(args.run), Path(args.out), method=args.method,
                       eval_run=Path(args.eval_run) if args.eval_run else None)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        from rich.console import Console

        console = Console()
        console.print(f"wrote {args.out} ({args.method}, fitted on {report['fitted_on']['results']} results)")
        for when in ("before", "after"):
            r = report[when]
            bp = r["band_precision"]
            console.print(f"{when:>6} on {report['evaluated_on']}: ECE {r['ece']:.3f}  Brier {r['brier']:.3f}  "
                          + "  ".join(f"{b} {bp[b]['precision']:.2f} (n={bp[b]['count']})" if bp[b]["precision"]
                                      is not None else f"{b} -" for b in ("high", "medium", "low")))
    return EXIT_OK
