"""Two builds of the same data give the same BM25 statistics, byte for byte, and the same keyword rankings.

Qdrant's own sparse scores depend on how its optimizer laid out the points (float32 sums in a
build-dependent order): before the keyword stage rescored its candidates, two builds of the sample
ranked the keyword candidates of most of its queries differently (issue 23, problem 6).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from searchtrace.retriever.vectorstore.base import Sparse
from searchtrace.retriever.vectorstore.term_stats import TermStats


def _keyword_rankings(index, queries):
    from searchtrace.retriever.stages.keyword import keyword

    out = {}
    for qid, text in queries.items():
        found = keyword(index.store, index.bm25, index.term_stats, text, 100, index.doc_ids)
        out[qid] = (found.candidates.ids.tolist(), found.candidates.scores.tolist())
    return out


def test_two_builds_give_identical_statistics_and_rankings(tmp_path, model, sample_dataset, sample_config):
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.index import build_index, open_index
    from searchtrace.retriever.index.build import TERM_STATS

    config = resolve_config(home=tmp_path / "home", environ={})
    if sample_config.home.embedding_cache.exists():  # the session's cached vectors: the builds embed nothing
        config.home.embedding_cache.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample_config.home.embedding_cache, config.home.embedding_cache)
    queries = {q.id: q.text for q in sample_dataset.queries}
    files, rankings = [], []
    for _ in range(2):
        path = build_index(sample_dataset, config, model, progress=False, force=True)
        files.append((path / TERM_STATS).read_bytes())
        index = open_index(path, config)
        try:
            rankings.append(_keyword_rankings(index, queries))
        finally:
            index.close()
    assert files[0] == files[1]
    differing = [q for q in queries if rankings[0][q] != rankings[1][q]]
    assert differing == []
    assert sum(len(ids) for ids, _ in rankings[0].values()) > 10 * len(queries)  # real rankings were compared


def test_rescored_scores_agree_with_the_engine_and_ties_go_by_point_id(sample_index_path, sample_config,
                                                                       sample_dataset):
    from searchtrace.retriever.index import open_index

    index = open_index(sample_index_path, sample_config)
    try:
        for q in list(sample_dataset.queries)[:40]:
            sparse = index.bm25.encode_query(q.text)
            if not sparse.indices:
                continue
            hits = index.store.search_sparse([sparse], 50)[0]
            engine = {h.id: h.score for h in hits}
            points = np.array(list(engine), dtype=np.int64)
            exact = index.term_stats.score(sparse, points)
            np.testing.assert_allclose(exact, [engine[p] for p in points.tolist()], rtol=2e-5)
    finally:
        index.close()


def test_score_is_the_formula_and_rank_breaks_ties_by_point_id(tmp_path):
    rows = [Sparse((5, 9), (1.5, 0.5)), Sparse((9,), (2.0,)), Sparse((5, 9), (1.5, 0.5)), Sparse((), ())]
    stats = TermStats.of_documents(rows)
    assert stats.df == {5: 2, 9: 3}
    query = Sparse((9, 5, 7), (1.0, 1.0, 1.0))
    scores = stats.score(query, np.array([0, 1, 2, 3]))
    expected = [1.5 * stats.idf(5) + 0.5 * stats.idf(9), 2.0 * stats.idf(9), 1.5 * stats.idf(5) + 0.5 * stats.idf(9),
                0.0]
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
    points, ranked = stats.rank(query, np.array([2, 1, 0]), limit=2)
    assert points.tolist() == [0, 2] and ranked[0] == ranked[1]  # tied: the smaller point id first
    stats.save(tmp_path / "a.npz")
    again = TermStats.load(tmp_path / "a.npz")
    np.testing.assert_array_equal(again.score(query, np.arange(4)), scores)
    again.save(tmp_path / "b.npz")
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


def test_statistics_that_do_not_fit_are_refused(tmp_path):
    import zipfile

    stats = TermStats.of_documents([Sparse((1,), (1.0,)), Sparse((2,), (1.0,))])
    stats.save(tmp_path / "s.npz")
    with zipfile.ZipFile(tmp_path / "s.npz") as src, zipfile.ZipFile(tmp_path / "bad.npz", "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "n_docs.npy":
                with dst.open(item.filename, "w") as fh:
                    np.lib.format.write_array(fh, np.asanyarray(np.int64(3)))
                continue
            dst.writestr(item, data)
    with pytest.raises(ValueError, match="do not fit 3 documents"):
        TermStats.load(tmp_path / "bad.npz")
