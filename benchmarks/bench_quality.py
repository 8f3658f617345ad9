"""Quality on real benchmarks: one command for the table in BENCHMARKS.md.

Usage:
    python benchmarks/bench_quality.py [--shared ../shared/datasets] [--home DIR] [--out DIR] [--sweep]

Runs the eval runner (``evals.run_eval``, the code behind ``searchtrace eval``)
with settings a user can set (``--weights``, ``--fusion``, ``--feedback-docs``,
``[graph]`` in a settings file):

  * SciFact test (300 queries): keyword only, dense only (passage vector; passage
    + best part), plain RRF (the first default), DBSF without passage parts (the
    previous default), the default hybrid (DBSF, parts), the default with dense
    feedback, graph mode (SciFact has no triples, so graph mode searches like fast);
    ``ndcg@10`` and ``recall@100``;
  * MuSiQue dev (50 queries, triples given): the same in fast and graph mode;
    ``recall@2``, ``recall@5``, ``ndcg@10``;
  * cross-dataset calibration: fit on one dataset's default run, report ECE
    and band precision before/after on the other's;
  * warm search p50 of every run (query vectors come from the embedding cache,
    so this is the search alone, embedding excluded, traced as an eval is);
  * warm search p50 / p95 as a user sees it (query embedding included,
    untraced), the previous default (no parts) against the default, rounds alternating.

``--sweep`` adds the other settings tried (fusion methods, k0, weights,
feedback, graph method and parameters). The first run on a fresh home indexes
both datasets (about 4 minutes of embedding for SciFact); later runs take a few
seconds per configuration. Prints Markdown tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCIFACT_METRICS = ("ndcg@10", "recall@100")
MUSIQUE_METRICS = ("recall@2", "recall@5", "ndcg@10")


@dataclass(frozen=True)
class Row:
    """One eval: a label, the dataset, the mode and the search settings (sections as in the TOML file)."""

    label: str
    dataset: str
    mode: str
    search: dict = field(default_factory=dict)


NO_PARTS = {"dense": {"parts": False}}


def main_rows() -> list[Row]:
    rows = []
    for ds in ("scifact", "musique"):
        modes = ("fast",) if ds == "scifact" else ("fast", "graph")
        rows += [Row("keyword only (BM25)", ds, "fast", {"fusion": {"weights": {"dense": 0}}}),
                 Row("dense only, passage vector (MiniLM)", ds, "fast",
                     {"fusion": {"weights": {"keyword": 0}}} | NO_PARTS),
                 Row("dense only, passage + best part", ds, "fast", {"fusion": {"weights": {"keyword": 0}}})]
        for mode in modes:
            graph = mode == "graph"
            before = ({"fusion": {"method": "rrf", "k0": 60}} | ({"graph": {"method": "expand"}} if graph else {})
                      | NO_PARTS)
            no_seed_docs = {"graph": {"seed_docs": 0}} if graph else {}
            rows += [Row(f"{mode}: first default (plain RRF k0=60{', expand' if graph else ''})", ds, mode, before),
                     Row(f"{mode}: session 1 default (DBSF{', PPR' if graph else ''}, no parts)", ds, mode,
                         NO_PARTS | no_seed_docs)]
            if graph:
                rows.append(Row("graph: session 2 default (DBSF, PPR, parts; query entities only)", ds, mode,
                                no_seed_docs))
            rows += [Row(f"{mode}: default (DBSF{', PPR seeded by the best first-pass passage too' if graph else ''}"
                         ", parts)", ds, mode),
                     Row(f"{mode}: default + dense feedback (3 docs)", ds, mode, {"feedback": {"docs": 3}})]
        if ds == "scifact":
            rows.append(Row("graph: default (no triples: searches like fast)", ds, "graph"))
    return rows


def sweep_rows() -> list[Row]:
    rows = []
    for ds in ("scifact", "musique"):
        mode = "fast"
        for k0 in (10, 30):
            rows.append(Row(f"{mode}: RRF k0={k0}", ds, mode, {"fusion": {"method": "rrf", "k0": k0}}))
        rows.append(Row(f"{mode}: RRF, keyword weight 1.5", ds, mode,
                        {"fusion": {"method": "rrf", "weights": {"keyword": 1.5}}}))
        for method in ("weighted", "zscore"):
            rows.append(Row(f"{mode}: {method}", ds, mode, {"fusion": {"method": method}}))
        rows.append(Row(f"{mode}: DBSF dense 0.4 / keyword 0.6", ds, mode,
                        {"fusion": {"weights": {"dense": 0.4, "keyword": 0.6}}}))
        for docs, weight in ((1, 0.5), (5, 0.5), (3, 1.0)):
            rows.append(Row(f"{mode}: feedback {docs} docs, weight {weight}", ds, mode,
                            {"feedback": {"docs": docs, "weight": weight}}))
    graph: list[tuple[str, dict]] = [("method expand (hop-decayed triples)", {"graph": {"method": "expand"}}),
             ("PPR with RRF fusion", {"fusion": {"method": "rrf"}}),
             ("depth 3", {"graph": {"depth": 3}}),
             ("damping 0.3", {"graph": {"damping": 0.3}}), ("damping 0.7", {"graph": {"damping": 0.7}}),
             ("unnamed seed weight 1 (no name test)", {"graph": {"unnamed_seed_weight": 1.0}}),
             ("unnamed seed weight 0", {"graph": {"unnamed_seed_weight": 0.0}}),
             ("graph weight 0.5", {"fusion": {"weights": {"graph": 0.5}}}),
             ("graph weight 2", {"fusion": {"weights": {"graph": 2.0}}}),
             ("seed passages 2", {"graph": {"seed_docs": 2}}),
             ("seed passage weight 0.25", {"graph": {"seed_docs_weight": 0.25}}),
             ("seed passage weight 1", {"graph": {"seed_docs_weight": 1.0}})]
    rows += [Row(f"graph: {label}", "musique", "graph", search) for label, search in graph]
    for ds in ("scifact", "musique"):
        for mode in ("fast", "graph") if ds == "musique" else ("fast",):
            rows += [Row(f"{mode}: parts weight {w}", ds, mode, {"dense": {"parts_weight": w}}) for w in (0.3, 0.7)]
    return rows


def run(row: Row, shared: Path, home: Path, out: Path) -> dict:
    from searchtrace.evals import EvalSettings, RunFolder, run_eval
    from searchtrace.retriever.config.resolve import resolve_config

    metrics = SCIFACT_METRICS if row.dataset == "scifact" else MUSIQUE_METRICS
    config = resolve_config(home=home, search=row.search, environ={})
    key = hashlib.sha256(json.dumps([row.label, row.mode, row.search], sort_keys=True).encode()).hexdigest()[:10]
    folder = out / f"{row.dataset}-{row.mode}-{key}"
    if not RunFolder(folder).is_complete:
        settings = EvalSettings(dataset=str(shared / row.dataset), mode=row.mode, metrics=metrics, depth=100)
        run_eval(settings, config, out=folder, progress=False)
    summary = RunFolder(folder).summary()
    return {"row": row, "folder": folder, "metrics": dict(summary.metrics), "p50": summary.latency_ms["total"].p50}


def table(results: list[dict], dataset: str) -> str:
    metrics = SCIFACT_METRICS if dataset == "scifact" else MUSIQUE_METRICS
    lines = ["| configuration | " + " | ".join(metrics) + " | search p50 ms |",
             "| --- |" + " ---: |" * (len(metrics) + 1)]
    for r in results:
        if r["row"].dataset == dataset:
            values = " | ".join(f"{r['metrics'][m]:.3f}" for m in metrics)
            lines.append(f"| {r['row'].label} | {values} | {r['p50']:.1f} |")
    return "\n".join(lines)


def calibration(fit: Path, other: Path, out: Path) -> dict:
    from searchtrace.evals.runs.calibration import calibrate

    return calibrate(fit, out / f"calibration-{fit.name}.json", eval_run=other)


def calibration_table(reports: list[tuple[str, str, dict]]) -> str:
    lines = ["| fitted on | reported on | ECE before | ECE after | high before | high after | "
             "medium after | low after |", "| --- | --- |" + " ---: |" * 6]

    def band(r: dict, name: str) -> str:
        b = r["band_precision"][name]
        return "-" if b["precision"] is None else f"{b['precision']:.2f} (n={b['count']})"

    for fitted, other, rep in reports:
        lines.append(f"| {fitted} | {other} | {rep['before']['ece']:.3f} | {rep['after']['ece']:.3f} | "
                     f"{band(rep['before'], 'high')} | {band(rep['after'], 'high')} | "
                     f"{band(rep['after'], 'medium')} | {band(rep['after'], 'low')} |")
    return "\n".join(lines)


def latency(shared: Path, home: Path, rounds: int = 3) -> str:
    """Warm search p50 / p95 (ms, embedding included) of the former default and the default, per mode."""
    import numpy as np

    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.index import ensure_index
    from searchtrace.retriever.search.pipeline import Retriever

    model = Embedder(resolve_config(home=home, environ={}).home)
    model.load()
    lines = ["| dataset, mode | previous default (no parts) p50 / p95 | default p50 / p95 |", "| --- | ---: | ---: |"]
    for name, modes, n in (("scifact", ("fast",), 200), ("musique", ("fast", "graph"), 50)):
        configs = {label: resolve_config(home=home, search=search, environ={})
                   for label, search in (("former", NO_PARTS), ("default", None))}
        indexes = {label: ensure_index(shared / name, c, model, progress=False) for label, c in configs.items()}
        retrievers = {label: Retriever(indexes[label], model, c) for label, c in configs.items()}
        queries = [q.text for q in load_dataset(shared / name).queries_for_split()][:n]
        for mode in modes:
            times: dict[str, list[float]] = {label: [] for label in retrievers}
            for r in retrievers.values():  # warm up
                for q in queries[:10]:
                    r.search({"query": q, "mode": mode, "top_k": 10})
            for _ in range(rounds):
                for label, r in retrievers.items():
                    for q in queries:
                        start = time.perf_counter()
                        r.search({"query": q, "mode": mode, "top_k": 10})
                        times[label].append((time.perf_counter() - start) * 1000)
            cell = {label: f"{np.percentile(t, 50):.1f} / {np.percentile(t, 95):.1f}" for label, t in times.items()}
            lines.append(f"| {name}, {mode} | {cell['former']} | {cell['default']} |")
        for index in indexes.values():
            index.close()
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "datasets"))
    parser.add_argument("--home", help="index/embedding cache home (default: $SEARCHTRACE_HOME or ~/.searchtrace)")
    parser.add_argument("--out", help="run folders (default: a new temporary folder)")
    parser.add_argument("--sweep", action="store_true", help="also run the other settings tried")
    parser.add_argument("--no-latency", action="store_true", help="skip the end-to-end latency comparison")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    shared = Path(args.shared)
    from searchtrace.home import Home

    home = Home.resolve(args.home).root
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="searchtrace-quality-"))
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows = main_rows() + (sweep_rows() if args.sweep else [])
    results = [run(row, shared, home, out) for row in rows]
    default = {(r["row"].dataset, r["row"].mode): r["folder"] for r in results if r["row"].label.endswith(", parts)")}
    reports = [("SciFact test, fast", "MuSiQue dev, graph",
                calibration(default["scifact", "fast"], default["musique", "graph"], out)),
               ("MuSiQue dev, graph", "SciFact test, fast",
                calibration(default["musique", "graph"], default["scifact", "fast"], out))]
    print(f"# Quality on real benchmarks ({platform.python_version()}, load average "
          f"{os.getloadavg()[0]:.1f}, {time.perf_counter() - started:.0f} s, runs in {out})\n")
    print("SciFact test (300 queries)\n\n" + table(results, "scifact") + "\n")
    print("MuSiQue dev (50 queries, triples given)\n\n" + table(results, "musique") + "\n")
    print("Cross-dataset calibration (logistic over the relevance features; top-20 results of each query)\n\n"
          + calibration_table(reports) + "\n")
    if not args.no_latency:
        print("Warm search, query embedding included, untraced (ms)\n\n" + latency(shared, home))


if __name__ == "__main__":
    main()
