"""``searchtrace eval | compare | gate | calibrate | judge | queries | runs``: registered on the main parser."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchtrace.database.url import add_store_argument
from searchtrace.errors import ExitCode
from searchtrace.evals.labels.cli import register as register_judge
from searchtrace.evals.labels.querysets.cli import register as register_queries
from searchtrace.evals.runs.runindex.cli import register as register_runs
from searchtrace.evals.runs.targets import cli as targets_cli
from searchtrace.evals.runs.targets.cli import add_target_arguments, spec_from_arguments
from searchtrace.home import add_home_argument
from searchtrace.names import Band
from searchtrace.retriever import (
    DEFAULT_CANDIDATES,
    MAX_CANDIDATES,
    add_retriever_arguments,
    config_from_arguments,
    show_progress,
)
from searchtrace.terminal import command_lines, fit, width

if TYPE_CHECKING:
    from searchtrace.evals.runs.execution import EvalInterrupted
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.evals.scoring.metrics import Evaluation
    from searchtrace.evals.verdicts.comparability import Comparability
    from searchtrace.evals.verdicts.gate import GateConfig, GateResult

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the eval subcommands to ``sub`` (the main parser's subparsers)."""
    p = sub.add_parser("eval", help="score a dataset split (or an external TREC run) against gold labels")
    p.add_argument("dataset", nargs="?", help="BEIR-layout dataset folder")
    p.add_argument("--split", help="qrels split (default: test, else the first qrels/*.tsv)")
    p.add_argument("--mode", choices=["fast", "graph"], help="search mode (default: graph when the dataset has triples)")
    p.add_argument("--depth", "--top-k", type=int, dest="depth", default=DEFAULT_CANDIDATES,
                   help=f"ranking depth scored and written, 1-{MAX_CANDIDATES} (default: {DEFAULT_CANDIDATES})")
    p.add_argument("--metrics", nargs="+", help="metric keys, e.g. ndcg@10 recall@100 (default: the standard set)")
    p.add_argument("--out", help="run folder (default: <home>/runs/<run id>); an interrupted run there resumes")
    p.add_argument("--corrective", action="store_true", help="re-run weak queries with their retry hints")
    p.add_argument("--batch-size", type=int, default=32, help="queries embedded and journaled together (default: 32)")
    p.add_argument("--run", help="score this TREC run file instead of running the retriever")
    p.add_argument("--qrels", help="qrels (TREC or BEIR TSV) for --run")
    p.add_argument("--from-traces", action="store_true",
                   help="score what another retriever returned in its traces (DATASET made by `queries from-traces "
                        "--service`): each query's latest search, written to DATASET/traces.run, against "
                        "DATASET/qrels/SPLIT.tsv")
    add_target_arguments(p)
    c = p.add_argument_group("a target as a client (README: Evaluate your own retriever)")
    c.add_argument("--concurrency", type=int, metavar="N",
                   help="target searches in flight at once, 1-64 (default: 1)")
    c.add_argument("--target-timeout", type=float, metavar="S",
                   help="seconds each target request may take (default: 60)")
    c.add_argument("--retries", type=int, metavar="N",
                   help="times a query is asked again when the target is overloaded (429, 503: after its "
                        "Retry-After), timed out or unreachable, with backoff, 0-10 (default: 3)")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")
    t = p.add_argument_group("trec_eval's rules (README: query rules)")
    t.add_argument("--trec-eval", action="store_true",
                   help="score as trec_eval: judged queries without a relevant document count as 0, queries "
                        "missing from the run are left out (-c: count as 0), fields after the 6th are ignored")
    t.add_argument("-c", dest="complete", action="store_true",
                   help="with --trec-eval: queries missing from the run count as 0 (the default without it)")
    t.add_argument("-M", "--max-docs", type=int, metavar="N", help="score only each query's first N results")
    t.add_argument("-l", "--relevance-level", type=int, metavar="N", default=1,
                   help="the lowest relevant grade (default 1)")
    t.add_argument("--unjudged", choices=["nonrelevant", "condensed"], default="nonrelevant",
                   help="unjudged documents count as not relevant (default), or are removed before ranking: "
                        "condensed lists, nDCG' and AP' (trec_eval -J)")
    p.add_argument("--name", help="what to call the run in the dashboard (default: dataset, mode and the "
                   "settings that differ from the defaults, e.g. 'sample · graph · fusion=rrf')")
    p.add_argument("--tag", action="append", default=[], help="a tag for filtering runs (repeatable; default none)")
    p.add_argument("--note", help="a free-text note kept with the run")
    add_retriever_arguments(p)
    add_store_argument(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("compare", help="compare two runs per metric, with paired significance tests; or, "
                       "without labels, by their rankings (rank-biased overlap)")
    p.add_argument("base", help=f"baseline run: a run folder, or a run id, name or latest:tag=NAME{_FROM}")
    p.add_argument("candidate", help=f"candidate run: a folder, id, name or latest:tag=NAME{_FROM}")
    p.add_argument("--metrics", nargs="+", help="metric keys to compare (default: those both runs have)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table instead")
    _label_change_argument(p)
    _no_labels_argument(p)
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="without labels: how many of the most changed queries to list (default: 10)")
    _run_source_arguments(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("gate", help="fail (exit 1) when the candidate run regresses from the baseline")
    p.add_argument("--baseline", required=True,
                   help=f"baseline run: a run folder, or a run id, name or latest:tag=NAME{_FROM}")
    p.add_argument("--candidate", required=True, help=f"candidate run: a folder, id, name or latest:tag=NAME{_FROM}")
    _label_change_argument(p)
    _no_labels_argument(p)
    p.add_argument("--allow-failed", type=int, default=0, metavar="N",
                   help="pass a candidate with at most N failed queries (default: 0, refused with exit 2)")
    p.add_argument("--config", help="gate rules (TOML); default: ndcg@10, recall@100, mrr@10 may not drop > 0.01; "
                   "runs without labels need its [overlap] table")
    p.add_argument("--junit", help="write JUnit XML here")
    p.add_argument("--markdown", nargs="?", const="-", metavar="FILE",
                   help="write the Markdown summary (for a pull request comment) to FILE; without FILE, or with "
                        "'-', print it instead of the text summary (default: text only, fitted to the width)")
    _run_source_arguments(p)
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("calibrate", help="fit the relevance model on a run's labels")
    p.add_argument("run", help="run folder to fit on")
    p.add_argument("--out", required=True, help="calibration file to write (JSON)")
    p.add_argument("--method", choices=["logistic", "isotonic"], default="logistic",
                   help="relevance model to fit (default: logistic)")
    p.add_argument("--eval-run", help="run on another split to report before/after on (default: the fitted run)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_calibrate)

    register_judge(sub)
    register_queries(sub)
    register_runs(sub)
    targets_cli.register(sub)


_FROM = " (from the store when given, else the home's runs)"


def _run_source_arguments(p: argparse.ArgumentParser) -> None:
    add_store_argument(p)
    add_home_argument(p)


def _resolved(args: argparse.Namespace, *names: str) -> argparse.Namespace:
    """``args`` with each run argument in ``names`` as the path of the run folder it names (a store's: cached)."""
    from searchtrace.database import resolve_store_url
    from searchtrace.evals.runs.runindex import resolve_run
    from searchtrace.home import Home

    store, home = resolve_store_url(args.store), Home.resolve(args.home)
    return argparse.Namespace(**{**vars(args), **{n: str(resolve_run(getattr(args, n), store, home).path)
                                                   for n in names}})


def _label_change_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-label-change", action="store_true",
                   help="compare runs scored on different qrels (a deliberate relabelling; the report says so); "
                        "default: refuse with exit 2")


def _no_labels_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-labels", action="store_true",
                   help="compare the rankings alone: rank-biased overlap, Jaccard@10, new documents, bands, "
                        "latency (default: so when either run has no labels)")


def _metrics(args: argparse.Namespace) -> tuple[str, ...]:
    from searchtrace.evals.scoring.metrics import DEFAULT_METRICS

    return tuple(args.metrics) if args.metrics else tuple(str(m) for m in DEFAULT_METRICS)


@contextmanager
def _warnings_printed() -> Iterator[None]:
    """While a command runs, what the evals library logs as a warning is printed as a ``warning:`` line on stderr
    (the library prints nothing itself)."""
    import logging

    logger = logging.getLogger("searchtrace.evals")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("warning: %(message)s"))
    handler.setLevel(logging.WARNING)
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def cmd_eval(args: argparse.Namespace) -> int:
    if args.target_profile == ["list"]:
        return targets_cli.cmd_list(args)
    args.target = spec_from_arguments(args)  # one string: the run's target label and resume key
    if args.run and args.target:
        print("error: give --run (a run file) or --target (a service to search), not both", file=sys.stderr)
        return ExitCode.INVALID
    client_flags = [f for f, v in (("--concurrency", args.concurrency), ("--target-timeout", args.target_timeout),
                                   ("--retries", args.retries)) if v is not None]
    if client_flags and not args.target:
        print(f"error: {', '.join(client_flags)} ask a --target; the local retriever takes none of them",
              file=sys.stderr)
        return ExitCode.INVALID
    if args.from_traces:
        if args.run or args.target or not args.dataset:
            print("error: --from-traces scores a DATASET's traces: give the DATASET, and neither --run nor "
                  "--target", file=sys.stderr)
            return ExitCode.INVALID
        args.run, args.qrels = _traces_run(args)
        code = _score_external(args)
        _print_stages(args)
        return code
    if args.run:
        return _score_external(args)
    if not args.dataset:
        print("error: give a DATASET folder, or --run FILE --qrels FILE", file=sys.stderr)
        return ExitCode.INVALID
    from searchtrace.database import resolve_store_url
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.evals.runs.naming import RunLabel
    from searchtrace.evals.runs.runfolder import EvalSettings
    from searchtrace.evals.scoring.metrics import parse_metrics

    parse_metrics(_metrics(args))  # fail fast on an unknown metric
    resolve_store_url(args.store)  # and on a store URL that is none
    label = RunLabel(name=args.name, tags=tuple(args.tag), note=args.note)
    from searchtrace.evals.labels.judgments.folder import top_grade

    root = Path(args.dataset)
    settings = EvalSettings(dataset=str(root), split=args.split, mode=args.mode, depth=args.depth,
                            metrics=_metrics(args), corrective=args.corrective,
                            batch_size=args.batch_size, unjudged=args.unjudged,
                            top_grade=top_grade(root) if root.is_dir() else None)  # nDCG's bounds span the scale
    from searchtrace.traces import TraceSettings

    traces = TraceSettings.resolve(store_url=args.store)  # its traces go where its run is published
    from searchtrace.evals.runs.client import ClientPolicy
    from searchtrace.evals.runs.execution import EvalInterrupted

    given = {"concurrency": args.concurrency, "timeout_s": args.target_timeout, "retries": args.retries}
    client = ClientPolicy(**{k: v for k, v in given.items() if v is not None})
    try:
        with _warnings_printed():
            folder = run_eval(settings, config_from_arguments(args), out=Path(args.out) if args.out else None,
                              progress=show_progress(args), target=args.target, label=label, trace_settings=traces,
                              client=client)
    except EvalInterrupted as stopped:
        print("\n".join(interrupted_lines(stopped, getattr(args, "argv", None), width(stream=sys.stderr))),
              file=sys.stderr)
        return ExitCode.INTERRUPTED
    summary = folder.summary()
    if args.json:
        print(json.dumps({"run": str(folder.path), **summary.to_json()}, indent=2))
    else:
        from searchtrace.evals.summary_text import print_summary

        print_summary(folder.path, summary)
    from searchtrace.evals.verdicts.failed import failed_lines

    for line in failed_lines(summary, width(stream=sys.stderr)):
        print(line, file=sys.stderr)
    published = _publish(args, folder)
    return ExitCode.OK if not summary.errors and published else ExitCode.FAILURE


def interrupted_lines(stopped: EvalInterrupted, argv: list[str] | None, columns: int) -> list[str]:
    """Where an eval stopped, and the command that resumes it: the one typed, with ``--out`` its folder."""
    lines = [fit(f"interrupted: {stopped.done:,} of {stopped.total:,} queries done; they are kept in the run "
                 "folder:", columns), f"  {stopped.folder}", "resume it with:"]
    if argv is None:
        return [*lines, f"  searchtrace eval DATASET --out {stopped.folder} (with the same options)"]
    given = any(a == "--out" or a.startswith("--out=") for a in argv)
    return [*lines, *command_lines(["searchtrace", *argv, *([] if given else ["--out", str(stopped.folder)])],
                                   columns)]


def _publish(args: argparse.Namespace, folder: RunFolder) -> bool:
    """Publish the run to the store when one is given; False when it could not be (the lines say how to later)."""
    from searchtrace.database import resolve_store_url

    url = resolve_store_url(args.store)
    if url is None:
        return True
    from searchtrace.evals.runs.runindex import publish_folder

    published, lines = publish_folder(folder, url, width(stream=sys.stderr))
    for line in lines:
        print(line, file=sys.stderr)
    return published


def _rules(args: argparse.Namespace) -> Any:
    """The query rules the switches ask for (a ValidationError for a bad value)."""
    from searchtrace.errors import ValidationError
    from searchtrace.evals.scoring.metrics import QueryRules

    if args.complete and not args.trec_eval:
        raise ValidationError("-c goes with --trec-eval (without it, queries missing from the run already "
                              "count as 0)", field="c")
    condensed = args.unjudged == "condensed"
    if args.trec_eval:
        return QueryRules.trec_eval(complete=args.complete, max_docs=args.max_docs,
                                    relevance_level=args.relevance_level, judged_only=condensed)
    return QueryRules(max_docs=args.max_docs, relevance_level=args.relevance_level, judged_only=condensed)


def _unreadable(path: Path) -> str | None:
    """Why ``path`` cannot be read as a file (None when it can be opened)."""
    if path.is_dir():
        return "a folder, not a file"
    try:
        with path.open("rb"):
            return None
    except OSError as exc:
        return f"cannot read file: {exc.strerror or exc}"


def _score_external(args: argparse.Namespace) -> int:
    import time

    from searchtrace.evals.runs.external import score_run_file, write_run_folder

    if not args.qrels:
        print("error: --run needs --qrels", file=sys.stderr)
        return ExitCode.INVALID
    unreadable = [f"{path}: {why}" for path in (args.run, args.qrels) if (why := _unreadable(Path(path)))]
    if unreadable:
        print(f"error: {'; '.join(unreadable)}", file=sys.stderr)
        return ExitCode.INVALID
    started = time.perf_counter()
    rules = _rules(args)
    scored = score_run_file(args.run, args.qrels, _metrics(args), rules, extra_fields=args.trec_eval)
    for warning in scored.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    ev = scored.evaluation
    folder = write_run_folder(args.out, scored, args.run, args.qrels, rules, time.perf_counter() - started) \
        if args.out else None
    if folder is not None:
        from searchtrace.evals.runs.runfolder.outside import list_written
        from searchtrace.home import Home

        with _warnings_printed():
            list_written(Home.resolve(args.home), folder.path)
    means = {str(m): None if v != v else round(float(v), 6) for m, v in ev.means.items()}
    if args.json:
        out = {"run": args.run, "queries": int(len(ev.query_ids)), "metrics": means, "rules": rules.to_json(),
               "folder": str(folder.path) if folder else None}
        print(json.dumps(out, indent=2, allow_nan=False))
    else:
        from searchtrace.evals.summary_text import plain_table

        print(plain_table(f"run file {args.run}\n{len(ev.query_ids)} queries", means))
        if folder:
            print(f"run folder: {folder.path}")
    published = _publish(args, folder) if folder else True
    return ExitCode.OK if published else ExitCode.FAILURE


def _traces_run(args: argparse.Namespace) -> tuple[str, str]:
    """``DATASET/traces.run`` (each query's latest traced search as a TREC run) and the split's qrels."""
    from searchtrace.database import resolve_store_url
    from searchtrace.errors import NotFoundError
    from searchtrace.evals.labels.querysets.services import traced_rankings
    from searchtrace.home import Home

    root = Path(args.dataset)
    splits = sorted((root / "qrels").glob("*.tsv"))
    qrels = root / "qrels" / f"{args.split}.tsv" if args.split else next(
        (p for p in splits if p.stem == "test"), splits[0] if splits else root / "qrels" / "test.tsv")
    if not qrels.is_file():
        raise NotFoundError(f"{qrels}: no qrels to score the traces against (judge, then `searchtrace judge "
                            f"export {root} --split test`)", field="split")
    service, found = traced_rankings(root, Home.resolve(args.home).traces, resolve_store_url(args.store))
    tag = "traces:" + "_".join(service.split())  # a run tag is one field
    lines = [f"{qid} Q0 {doc} {rank} {len(ranking) - rank + 1} {tag}"
             for qid, lists in sorted(found.items()) for ranking in lists[-1:]
             for rank, doc in enumerate(ranking[:args.depth], 1)]
    if spaced := next((line.split(" Q0 ")[1].rsplit(" ", 3)[0] for line in lines if len(line.split()) != 6), None):
        from searchtrace.errors import ValidationError

        raise ValidationError(f"document id {spaced!r} of service {service!r} holds whitespace, which a TREC run "
                              "cannot: name another metadata key (traces id-key)", field="from-traces")
    run = root / "traces.run"
    run.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(run), str(qrels)


def _print_stages(args: argparse.Namespace) -> None:
    """Where each gold document of the traces' latest searches was kept or lost: by their retriever, by each
    reranker, below the cutoff (to stderr: the table or the JSON on stdout stays as ``eval --run`` prints it)."""
    from searchtrace.database import resolve_store_url
    from searchtrace.evals.labels.querysets.services import traced_stages
    from searchtrace.evals.runs.trec import read_qrels
    from searchtrace.evals.scoring.attribution import fates_summary, follow
    from searchtrace.home import Home

    gold = read_qrels(args.qrels).to_dict()
    k = args.max_docs or 10
    stages = traced_stages(Path(args.dataset), Home.resolve(args.home).traces, resolve_store_url(args.store))
    fates = [f for qid, found in stages.items() for f in follow(qid, gold.get(qid, {}), found, k)]
    counts = fates_summary(fates)
    said = [f"{n} {what.replace('_', ' ')}" if what in ("ranked_out", "not_retrieved") else
            f"{n} found in the top {k}" if what == "found" else f"{n} lost at the {what}"
            for what, n in counts.items()]
    columns = width(stream=sys.stderr)
    for line in [f"gold documents of the traced searches: {len(fates)}", *(f"  {s}" for s in said)]:
        print(fit(line, columns), file=sys.stderr)


def _comparable_pair(base: str, candidate: str, metrics: list[str] | None,
                     allow_label_change: bool) -> tuple[Evaluation, Evaluation, Comparability]:
    """Both runs' evaluations, once they are known to be comparable.

    Raises:
        NotFoundError: a run folder is missing or incomplete (exit 2).
        ValidationError: the runs cannot be compared, naming why (exit 2).
    """
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.evals.verdicts.comparability import check
    from searchtrace.evals.verdicts.failed import answered_by_both

    folders = [RunFolder.completed(base), RunFolder.completed(candidate)]
    summaries = [f.summary() for f in folders]
    b, c = answered_by_both(folders[0].evaluation(metrics), folders[1].evaluation(metrics), *summaries)
    verdict = check(summaries[0], summaries[1], b.query_ids.tolist(), c.query_ids.tolist(),
                    allow_label_change=allow_label_change)
    verdict.require()
    return b, c, verdict


def cmd_compare(args: argparse.Namespace) -> int:
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.evals.verdicts.overlap.cli import compare_command, label_free_note, unlabelled

    args = _resolved(args, "base", "candidate")
    folders = (RunFolder.completed(args.base), RunFolder.completed(args.candidate))
    missing = unlabelled(folders)
    if args.no_labels or missing:
        return compare_command(args, folders, None if args.no_labels else label_free_note(missing))
    return _compare_metrics(args)


def _compare_metrics(args: argparse.Namespace) -> int:
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.evals.scoring.metrics import is_coverage
    from searchtrace.evals.verdicts.comparison import compare, regressed_lines, to_json, to_markdown, to_table
    from searchtrace.evals.verdicts.query_texts import query_texts

    base, candidate, verdict = _comparable_pair(args.base, args.candidate, None, args.allow_label_change)
    shared = [m for m in base.metrics if m in candidate.per_query]
    compared = args.metrics or [m for m in shared if not is_coverage(m)]
    comparison = compare(base, candidate, compared, untested=verdict.depth_bound(compared))
    coverage = {str(m): (base.mean(m), candidate.mean(m)) for m in shared if is_coverage(m)}
    from searchtrace.evals.verdicts.failed import failed_notes

    failed = failed_notes(*(RunFolder.completed(p).summary() for p in (args.base, args.candidate)))
    notes = [*verdict.notes, *filter(None, [verdict.depth_note(compared)]), *failed]
    judged_lines = [f"{m}: base {b:.2f}, candidate {c:.2f}" for m, (b, c) in coverage.items()]
    if args.json:
        print(json.dumps({**to_json(comparison), "notes": notes,
                          "coverage": {m: {"base": b, "candidate": c} for m, (b, c) in coverage.items()}}, indent=2))
    elif args.markdown:
        lines = [*(f"note: {n}" for n in notes), *judged_lines]
        print("".join(f"> {n}\n" for n in lines) + ("\n" if lines else "") + to_markdown(comparison))
    else:
        from rich.console import Console

        console = Console(width=width())
        for line in [*(f"note: {n}" for n in notes), *judged_lines]:
            console.print(line, markup=False, highlight=False)
        console.print(to_table(comparison))
        texts = query_texts((RunFolder.completed(args.base), RunFolder.completed(args.candidate)))
        for line in regressed_lines(comparison, console.width, texts):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    return ExitCode.OK


def cmd_gate(args: argparse.Namespace) -> int:
    """Exit 0 pass, 1 regression, 2 invalid input: a missing or broken run is invalid input, never a regression."""
    from searchtrace.errors import SearchtraceError

    try:
        return _gate(args)
    except BrokenPipeError:  # the report's reader went away: the root ends quietly
        raise
    except (SearchtraceError, OSError) as exc:
        if getattr(exc, "shown", None):  # the failed queries a refusal names
            print(exc.shown, file=sys.stderr)  # type: ignore[union-attr]
        print(f"error: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return ExitCode.INVALID


def require_coverage(candidate: Path, floor: float) -> None:
    """Refuse a candidate whose top 10 rests on too few judged documents, naming the command that fixes it.

    Only for labels judged here (the dataset folder holds a judgments store): a benchmark's qrels list its
    relevant documents and count every other one as not relevant, so Judged@k says nothing about them.

    Raises:
        ValidationError: Judged@10 below ``floor`` (exit 2).
    """
    from searchtrace.errors import ValidationError
    from searchtrace.evals.labels.judgments.folder import JUDGMENTS_FILE
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.evals.scoring.metrics import COVERAGE_K

    summary = RunFolder.completed(str(candidate)).summary()
    judged = summary.metrics.get(f"judged@{COVERAGE_K}")
    if not (Path(summary.dataset.path) / JUDGMENTS_FILE).is_file():
        return  # benchmark qrels list the relevant documents; every other is non-relevant by their convention
    if judged is not None and judged < floor:
        raise ValidationError(
            f"the candidate's judged@{COVERAGE_K} is {judged:.2f}, below the gate's floor {floor:.2f}: its top "
            f"{COVERAGE_K} holds documents nobody judged, which would score as a regression; judge them first: "
            f"searchtrace judge pool {summary.dataset.path} --runs {candidate} --depth {COVERAGE_K}",
            field="judged_floor")


def _gate(args: argparse.Namespace) -> int:
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.evals.verdicts.failed import require_answered
    from searchtrace.evals.verdicts.gate import load_config
    from searchtrace.evals.verdicts.overlap.cli import label_free_note, unlabelled

    config = load_config(args.config)
    args = _resolved(args, "baseline", "candidate")
    folders = (RunFolder.completed(args.baseline), RunFolder.completed(args.candidate))
    for line in require_answered(folders[0].summary(), folders[1].summary(), args.allow_failed, width()):
        print(line, file=sys.stderr)
    missing = unlabelled(folders)
    if args.no_labels or missing:
        return _gate_overlap(args, config, folders, None if args.no_labels else label_free_note(missing))
    return _gate_metrics(args, config)


def _gate_metrics(args: argparse.Namespace, config: GateConfig) -> int:
    from searchtrace.errors import ValidationError
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.evals.verdicts.comparison import compare, regressed_lines
    from searchtrace.evals.verdicts.gate import gate
    from searchtrace.evals.verdicts.query_texts import query_texts

    if not config.rules:
        raise ValidationError('the runs have labels and the gate config has no [metrics."<metric>"] rule to judge '
                              "them by (its [overlap] table is for runs without labels)", field="config")
    metrics = [str(r.metric) for r in config.rules]
    base, candidate, verdict = _comparable_pair(args.baseline, args.candidate, None, args.allow_label_change)
    verdict.require_depth(metrics)
    require_coverage(Path(args.candidate), config.judged_floor)
    comparison = compare(base, candidate, metrics)
    result = gate(comparison, config)
    failed = [str(r.rule.metric) for r in result.results if not r.passed]
    folders = (RunFolder.completed(args.baseline), RunFolder.completed(args.candidate))
    listed = regressed_lines(comparison, width(), query_texts(folders), failed) if failed else []
    return _report_gate(args, result, (verdict.counts, *(f"note: {n}" for n in verdict.notes)), listed)


def _gate_overlap(args: argparse.Namespace, config: GateConfig, folders: tuple[RunFolder, RunFolder],
                  note: str | None) -> int:
    from searchtrace.errors import ValidationError
    from searchtrace.evals.verdicts.gate import NO_OVERLAP_TABLE, gate_overlap
    from searchtrace.evals.verdicts.overlap import DEFAULT_PS, compare_overlap

    if config.overlap is None:
        raise ValidationError(NO_OVERLAP_TABLE, field="config")
    ps = (config.overlap.p, *(p for p in DEFAULT_PS if p != config.overlap.p))
    comparison = compare_overlap(*folders, ps=ps)
    counts = (f"{comparison.shared} shared queries ({comparison.only_in_base} only in base, "
              f"{comparison.only_in_candidate} only in candidate)")
    notes = (counts, *([note] if note else []), *(f"note: {n}" for n in comparison.notes))
    return _report_gate(args, gate_overlap(comparison, config), notes)


def _report_gate(args: argparse.Namespace, result: GateResult, notes: tuple[str, ...],
                 queries: list[str] | None = None) -> int:
    """The gate's verdict as JUnit, Markdown or text; ``queries``: the text report's last lines (the queries that
    regressed most on a failed rule, each with its text)."""
    from searchtrace.evals.verdicts.gate.report import to_markdown, to_text, write_junit

    if args.junit:
        write_junit(result, args.junit)
    if args.markdown not in (None, "-"):
        Path(args.markdown).write_text(to_markdown(result, notes), encoding="utf-8")
    text = [*to_text(result, notes, width()), *(queries or [])]
    print(to_markdown(result, notes) if args.markdown == "-" else "\n".join(text))
    return int(result.exit_code)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from searchtrace.evals.runs.calibration import calibrate

    report = calibrate(Path(args.run), Path(args.out), method=args.method,
                       eval_run=Path(args.eval_run) if args.eval_run else None)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        from rich.console import Console

        console = Console(width=width())
        console.print(f"wrote {args.out} ({args.method}, fitted on {report['fitted_on']['results']} results)")
        for when in ("before", "after"):
            r = report[when]
            bp = r["band_precision"]
            console.print(f"{when:>6} on {report['evaluated_on']}: ECE {r['ece']:.3f}  Brier {r['brier']:.3f}  "
                          + "  ".join(f"{b} {bp[b]['precision']:.2f} (n={bp[b]['count']})" if bp[b]["precision"]
                                      is not None else f"{b} -" for b in (band.value for band in Band)))
    return ExitCode.OK
