"""Passage parts (title + sentences) and the dense score that blends the passage's cosine with its best part's."""

from dataclasses import replace

import numpy as np
import pytest

from searchtrace.errors import ValidationError
from searchtrace.retriever.config.model import DenseConfig
from searchtrace.retriever.index.parts import passage_parts, sentences
from searchtrace.retriever.stages.dense import blend
from searchtrace.traces import vocabulary as v


def test_sentences_split_after_terminal_punctuation_before_a_capital_digit_or_bracket():
    text = ("Mitochondria divide by fission in most cells. 42 patients were enrolled in the trial! "
            "(Results were mixed across all sites.) Was it significant? yes, it was not split here.")
    assert sentences(text) == ["Mitochondria divide by fission in most cells.",
                               "42 patients were enrolled in the trial!",
                               "(Results were mixed across all sites.) Was it significant? yes, it was not split here."]
    # a break needs the punctuation right before the space: ".)" does not end a sentence here


def test_short_fragments_and_abbreviations_are_not_parts():
    assert sentences("Methods. We measured e.g. the flow rate in 3 rivers. Done.") == [
        "We measured e.g. the flow rate in 3 rivers."]


def test_passage_parts_put_the_title_first_and_cap_the_count():
    text = "First sentence is long enough. Second sentence is long enough. Third one is long enough."
    assert passage_parts("Rivers", text, 64) == ["Rivers", "First sentence is long enough.",
                                                 "Second sentence is long enough.", "Third one is long enough."]
    assert passage_parts("  ", text, 2) == ["First sentence is long enough.", "Second sentence is long enough."]
    assert passage_parts("Rivers", "", 64) == ["Rivers"]


def test_blend_weights_the_two_cosines_and_keeps_the_best_limit_ties_by_point_id():
    # binary fractions, so that the tie between points 3 and 9 is exact
    points, whole, best = np.array([9, 5, 3, 1]), np.array([0.25, 0.25, 0.5, 0.125]), np.array([0.75, 0.5, 0.5, 0.125])
    ids, scores = blend(points, whole, best, 0.5, 3)
    assert ids.tolist() == [3, 9, 5] and scores.tolist() == [0.5, 0.5, 0.375]
    ids, scores = blend(points, whole, best, 0.0, 10)
    assert ids.tolist() == [3, 5, 9, 1] and scores.tolist() == [0.5, 0.25, 0.25, 0.125]


@pytest.mark.parametrize("bad", [{"parts_weight": -0.1}, {"parts_weight": 1.5}, {"parts_weight": float("nan")},
                                 {"max_parts": 0}, {"max_parts": True}, {"parts": "yes"}])
def test_dense_config_rejects_bad_values(bad):
    with pytest.raises(ValidationError, match="dense"):
        DenseConfig(**bad)


QUERY = "Which ship did Meribel Osk command?"


@pytest.mark.slow
def test_dense_scores_average_the_passage_cosine_and_the_best_part_cosine(traced, model):
    retriever, exporter = traced()
    retriever.search({"query": QUERY, "mode": "fast", "top_k": 5})
    by = {s.name: s for s in exporter.get_finished_spans()}
    assert by["dense"].attributes[v.DENSE_PARTS_WEIGHT] == 0.5
    assert retriever.index.manifest.parts > retriever.index.manifest.n_docs  # titles and sentences
    assert retriever.index.vectors.shape == (retriever.index.manifest.n_docs, 384)
    q = model.encode_query(QUERY)
    ids, scores = by["dense"].attributes[v.CANDIDATE_IDS][:5], by["dense"].attributes[v.CANDIDATE_SCORES][:5]
    rows = retriever.index.store.retrieve([retriever.index.point_of[i] for i in ids], with_vectors=True)
    for (_, payload, vec), score in zip(rows, scores):
        parts = model.encode_documents(passage_parts(payload["title"], payload["text"], 64))
        assert score == pytest.approx(0.5 * float(vec @ q) + 0.5 * float((parts @ q).max()), abs=1e-4)


@pytest.mark.slow
def test_parts_weight_zero_searches_by_the_passage_vector_alone(traced, sample_config, model):
    retriever, exporter = traced(config=replace(sample_config, dense=DenseConfig(parts_weight=0.0)))
    retriever.search({"query": QUERY, "mode": "fast", "top_k": 5})
    span = {s.name: s for s in exporter.get_finished_spans()}["dense"]
    assert span.attributes[v.DENSE_PARTS_WEIGHT] == 0.0
    q = model.encode_query(QUERY)
    ids, scores = span.attributes[v.CANDIDATE_IDS][:5], span.attributes[v.CANDIDATE_SCORES][:5]
    rows = retriever.index.store.retrieve([retriever.index.point_of[i] for i in ids], with_vectors=True)
    assert list(scores) == pytest.approx([float(vec @ q) for _, _, vec in rows], abs=1e-4)
    assert list(scores) == sorted(scores, reverse=True)
