"""``judge pool``: the union of several runs' top K (and their stages' lists) less what is judged, shown blind; and
a simulated judge: pooling three configurations at depth 10 and judging the pool recovers their nDCG@10 order
(issue 25, part 2)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.evals.labels.judgments.folder import JudgingFolder
from searchtrace.evals.labels.judgments.pool import build_pool, pairs_of, read_pool
from searchtrace.evals.runs.trec import read_run

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
CONFIGS = {"hybrid": {}, "keyword": {"dense": 0.0}, "dense": {"keyword": 0.0}}


@pytest.fixture(scope="module")
def pooled(tmp_path_factory, sample_config, sample_index_path, model):
    """The sample without its labels, and three runs of it (traces stored in a home of their own)."""
    from searchtrace.evals import EvalSettings
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.home import Home
    from searchtrace.names import Stage
    from searchtrace.retriever.config.model import FusionConfig
    from searchtrace.traces import TraceSettings

    root = tmp_path_factory.mktemp("pool")
    home = Home(root / "home")
    config = replace(sample_config, home=home)
    shutil.copytree(sample_config.home.root / "cache", home.root / "cache")
    runs = {}
    for name, weights in CONFIGS.items():
        fusion = FusionConfig(weights={**FusionConfig().weights, **{Stage(k): w for k, w in weights.items()}})
        runs[name] = run_eval(EvalSettings(dataset=str(SAMPLE), mode="fast"), replace(config, fusion=fusion),
                              out=root / "runs" / name, embedder=model, progress=False,
                              trace_settings=replace(TraceSettings.resolve(environ={}), store=True)).path
    hidden = root / "own"
    shutil.copytree(SAMPLE, hidden, ignore=shutil.ignore_patterns("qrels"))
    return hidden, runs, home


def _top(run: Path, k: int) -> set[tuple[str, str]]:
    from searchtrace.evals import RunFolder

    ranked = read_run(RunFolder(run).run_file).to_dict()
    return {(q, d) for q, docs in ranked.items() for d in list(docs)[:k]}


def test_the_pool_is_the_union_of_top_k_less_what_is_judged_shown_blind(pooled, capsys):
    dataset, runs, home = pooled
    folder = JudgingFolder.at(dataset)
    union = _top(runs["hybrid"], 5) | _top(runs["keyword"], 5)
    assert main(["judge", "pool", str(dataset), "--runs", str(runs["hybrid"]), str(runs["keyword"]),
                 "--depth", "5"]) == 0
    out = capsys.readouterr().out
    assert f"pooled {len(union)} new pairs" in out
    assert all(len(line.replace(str(dataset), "DATASET")) <= 80 for line in out.splitlines())  # a path is never cut
    pool = read_pool(folder)
    assert set(pairs_of(pool)) == union and len(pool) == len(union)
    for pair in pool:
        assert pair.sources and all(c.rank <= 5 for c in pair.sources)
    shown = json.loads(folder.pool.read_text().splitlines()[0])
    assert set(shown) == {"query_id", "doc_id", "deep", "sources"}  # no score, band or text to lean on
    again = build_pool(folder, [runs["hybrid"], runs["keyword"]], 5, seed=0)
    other = build_pool(folder, [runs["hybrid"], runs["keyword"]], 5, seed=1)
    assert pairs_of(again.pairs) == pairs_of(pool) and pairs_of(other.pairs) != pairs_of(pool)  # seeded shuffle
    ordered = [p.query_id for p in pool]
    assert ordered == sorted(ordered)  # query by query


def test_judged_pairs_leave_the_pool_and_deeper_samples_below_the_depth(pooled, tmp_path):
    from searchtrace.evals.labels.judgments.session import JudgingSession

    dataset, runs, _ = pooled
    own = tmp_path / "own"
    shutil.copytree(dataset, own)
    folder = JudgingFolder.at(own)
    pool = build_pool(folder, [runs["hybrid"]], 3)
    session = JudgingSession.open(own)
    for query_id, doc_id in pairs_of(pool.pairs)[:7]:
        session.record(query_id, doc_id, 0, "ada")
    after = build_pool(folder, [runs["hybrid"]], 3, deeper=2, seed=4)
    assert after.already_judged == 7
    assert not set(pairs_of(pool.pairs)[:7]) & set(pairs_of(after.pairs))
    deep = [p for p in after.pairs if p.deep]
    assert deep and {p.query_id for p in deep} <= {p.query_id for p in after.pairs}
    assert all((p.query_id, p.doc_id) not in _top(runs["hybrid"], 3) for p in deep)


def test_stages_pool_what_fusion_buried(pooled, capsys):
    dataset, runs, home = pooled
    plain = build_pool(JudgingFolder.at(dataset), [runs["hybrid"]], 3)
    staged = build_pool(JudgingFolder.at(dataset), [runs["hybrid"]], 3, stages=True, traces=home.traces)
    run_id = runs["hybrid"].name
    assert set(staged.sources) >= {run_id, f"{run_id}:dense", f"{run_id}:keyword", f"{run_id}:fuse"}
    assert set(pairs_of(staged.pairs)) > set(pairs_of(plain.pairs))  # a stage's top 3 the final top 3 lacks
    assert main(["judge", "pool", str(dataset), "--runs", str(runs["hybrid"]), "--stages",
                 "--home", str(home.root / "elsewhere")]) == 2
    assert "has no stored traces" in capsys.readouterr().err


def test_a_pool_over_another_dataset_is_refused(pooled, tmp_path, capsys):
    dataset, runs, _ = pooled
    other = tmp_path / "other"
    shutil.copytree(dataset, other)
    with open(other / "corpus.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"_id": "extra", "title": "Extra", "text": "one more"}) + "\n")
    assert main(["judge", "pool", str(other), "--runs", str(runs["hybrid"])]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "scored another dataset" in line and str(runs["hybrid"]) in line


def test_a_simulated_judge_on_a_depth_10_pool_recovers_the_systems_order(pooled, tmp_path, sample_dataset):
    """The hidden qrels judge the pool of three configurations; the systems' nDCG@10 order on the exported
    labels is their order on the full labels."""
    from searchtrace.evals import RunFolder
    from searchtrace.evals.labels.judgments.session import JudgingSession
    from searchtrace.evals.scoring.metrics import evaluate
    from searchtrace.evals.scoring.rankings import Qrels

    dataset, runs, _ = pooled
    own = tmp_path / "own"
    shutil.copytree(dataset, own)
    folder = JudgingFolder.at(own)
    pool = build_pool(folder, list(runs.values()), 10)
    hidden = sample_dataset.qrels
    session = JudgingSession.open(own)
    for query_id, doc_id in pairs_of(pool.pairs):
        session.record(query_id, doc_id, hidden.get(query_id, {}).get(doc_id, 0), "oracle")
    assert main(["judge", "export", str(own), "--split", "pooled"]) == 0
    pooled_qrels = {}
    for line in (own / "qrels" / "pooled.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        pooled_qrels.setdefault(q, {})[d] = int(g)

    def order(qrels: dict) -> list[str]:
        score = {name: evaluate(Qrels.from_dict(qrels), read_run(RunFolder(path).run_file), ["ndcg@10"]).mean(
            "ndcg@10") for name, path in runs.items()}
        return sorted(score, key=lambda name: score[name], reverse=True)

    full = {q: docs for q, docs in hidden.items() if docs}
    assert order(pooled_qrels) == order(full)
    ours = evaluate(Qrels.from_dict(pooled_qrels), read_run(RunFolder(runs["hybrid"]).run_file), ["judged@10"])
    assert ours.mean("judged@10") == pytest.approx(1.0)  # every pooled top 10 is judged now


def test_labels_judged_here_calibrate_the_bands(pooled, tmp_path, sample_dataset, sample_config, model):
    """Issue 25, part 6: a judged query set of one's own corpus fits the relevance model, so the bands mean what
    they say there (fitted on the first half of the queries, checked on the other half)."""
    from searchtrace.evals import EvalSettings
    from searchtrace.evals.labels.judgments.session import JudgingSession
    from searchtrace.evals.runs.calibration import calibrate
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.retriever.search.confidence import load_calibration
    from searchtrace.traces import TraceSettings

    dataset, runs, _ = pooled
    own = tmp_path / "own"
    shutil.copytree(dataset, own)
    session = JudgingSession.open(own)
    pool = pairs_of(build_pool(JudgingFolder.at(own), list(runs.values()), 10).pairs)
    for query_id, doc_id in pool:
        session.record(query_id, doc_id, sample_dataset.qrels.get(query_id, {}).get(doc_id, 0), "oracle")
    queries = sorted({q for q, _ in pool})
    halves = {"dev": queries[: len(queries) // 2], "heldout": queries[len(queries) // 2:]}
    made = {}
    for split, chosen in halves.items():
        assert main(["judge", "export", str(own), "--split", split]) == 0
        path = own / "qrels" / f"{split}.tsv"
        head, *rows = path.read_text().splitlines()
        path.write_text("\n".join([head, *(r for r in rows if r.split("\t")[0] in chosen)]) + "\n")
        made[split] = run_eval(EvalSettings(dataset=str(own), split=split, mode="fast"), sample_config,
                               out=tmp_path / split, embedder=model, progress=False,
                               trace_settings=TraceSettings.resolve(environ={}, store=False)).path
    report = calibrate(made["dev"], tmp_path / "calibration.json", method="isotonic", eval_run=made["heldout"])
    assert report["held_out"] and load_calibration(tmp_path / "calibration.json").name == "isotonic"
    assert report["after"]["ece"] < report["before"]["ece"]  # the default ramp, tuned elsewhere, is recalibrated


def _sources(folder: JudgingFolder) -> dict[tuple[str, str], set[str]]:
    return {(p.query_id, p.doc_id): {c.source for c in p.sources} for p in read_pool(folder)}


def test_a_second_pooling_adds_to_the_pool_and_replace_says_what_it_discards(pooled, tmp_path, capsys):
    """Issue 36: pooling run B into a pool of run A keeps every pair of A's pool (judged ones too), adds B's new
    pairs less what is judged, and gives a pair both ranked both sources; ``--replace`` discards and says so."""
    from searchtrace.evals.labels.judgments.session import JudgingSession

    dataset, runs, _ = pooled
    own = tmp_path / "own"
    shutil.copytree(dataset, own, ignore=shutil.ignore_patterns("pool.jsonl"))
    folder = JudgingFolder.at(own)
    a, b = runs["hybrid"], runs["dense"]
    top_a, top_b = _top(a, 3), _top(b, 3)
    assert main(["judge", "pool", str(own), "--runs", str(a), "--depth", "3"]) == 0
    capsys.readouterr()
    first = pairs_of(read_pool(folder))
    session = JudgingSession.open(own)
    judged_in_pool = first[:2]
    judged_elsewhere = sorted(top_b - top_a)[:1]  # judged without ever being pooled: it stays out
    for query_id, doc_id in [*judged_in_pool, *judged_elsewhere]:
        session.record(query_id, doc_id, 1, "ada")
    assert main(["judge", "pool", str(own), "--runs", str(b), "--depth", "3"]) == 0
    out = capsys.readouterr().out
    union = top_a | (top_b - set(judged_elsewhere))
    new = len(union) - len(first)
    assert set(pairs_of(read_pool(folder))) == union and len(read_pool(folder)) == len(union)
    assert f"pooled {new} new pairs to judge" in out
    assert f"1 already judged, left out; the pool holds {len(union)} pairs ({len(first)} before)" in out
    assert all(len(line) <= 80 for line in out.splitlines() if not line.startswith("written to"))  # a path wraps
    names = {a.name: top_a, b.name: top_b}
    assert _sources(folder) == {pair: {n for n, top in names.items() if pair in top} for pair in union}
    assert any(len(s) == 2 for s in _sources(folder).values())  # a pair both ranked lists both
    assert main(["judge", "pool", str(own), "--runs", str(b), "--depth", "3"]) == 0  # again: nothing new
    assert "pooled 0 new pairs" in capsys.readouterr().out and set(pairs_of(read_pool(folder))) == union

    assert main(["judge", "pool", str(own), "--runs", str(a), "--depth", "3", "--replace"]) == 0
    out = capsys.readouterr().out
    lost = union - (top_a - set(judged_in_pool))
    assert set(pairs_of(read_pool(folder))) == top_a - set(judged_in_pool)
    assert (f"replaced a pool of {len(union)} pairs: {len(lost)} discarded, {len(lost) - len(judged_in_pool)} of "
            "them unjudged") in out


def test_the_gates_advice_followed_literally_loses_no_pooled_or_judged_pair(pooled, tmp_path, capsys, sample_config,
                                                                            sample_dataset, model):
    """Issue 36: the gate's suggested ``judge pool`` command, parsed from its message and run as printed, adds to
    the pool: every pair pooled before and every judgment is still there. On the way, the eval of labels that
    cover part of the query set counts its judged queries of the whole set."""
    import shlex

    from searchtrace.evals import EvalSettings
    from searchtrace.evals.labels.judgments.session import JudgingSession
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.traces import TraceSettings

    dataset, runs, _ = pooled
    own = tmp_path / "own"
    shutil.copytree(dataset, own, ignore=shutil.ignore_patterns("pool.jsonl"))
    folder = JudgingFolder.at(own)
    assert main(["judge", "pool", str(own), "--runs", str(runs["keyword"]), str(runs["dense"]), "--depth", "2"]) == 0
    before = pairs_of(read_pool(folder))
    session = JudgingSession.open(own)
    for query_id, doc_id in before[: len(before) // 2]:
        session.record(query_id, doc_id, sample_dataset.qrels.get(query_id, {}).get(doc_id, 0), "oracle")
    judged = {j.pair for j in folder.store().read()}
    assert main(["judge", "export", str(own), "--split", "test"]) == 0
    run = run_eval(EvalSettings(dataset=str(own), mode="fast"), sample_config, out=tmp_path / "run",
                   embedder=model, progress=False, trace_settings=TraceSettings.resolve(environ={}, store=False)).path
    capsys.readouterr()
    from searchtrace.evals import RunFolder
    from searchtrace.evals.summary_text import print_summary

    summary = RunFolder(run).summary()
    in_set = len((own / "queries.jsonl").read_text().splitlines())
    assert summary.dataset.queries < in_set  # only the labelled queries were searched
    print_summary(run, summary)
    assert f"{summary.evaluated_queries} judged of {in_set} queries" in capsys.readouterr().out  # of the set
    assert main(["gate", "--baseline", str(run), "--candidate", str(run)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    command = shlex.split(err[err.index("searchtrace judge pool"):])
    assert command[:3] == ["searchtrace", "judge", "pool"]
    assert main(command[1:]) == 0
    after = set(pairs_of(read_pool(folder)))
    assert set(before) <= after  # judged or not, nothing pooled is lost
    assert after > set(before)  # and the candidate's unjudged top 10 is added
    assert {j.pair for j in folder.store().read()} == judged
    assert not (after - set(before)) & judged
