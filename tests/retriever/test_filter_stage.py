import numpy as np
import pytest

from searchtrace.retriever.request import validate_request
from searchtrace.retriever.stages.filter import apply_filters, gap_cut, payload_matches

IDS = np.array(["a", "b", "c", "d"], dtype=object)
REL = np.array([0.9, 0.8, 0.3, 0.2])
PAYLOADS = {
    "a": {"id": "a", "collection": "gazetteer", "tags": ["river", "north"], "timestamp": "2021-03-01T00:00:00"},
    "b": {"id": "b", "collection": "chronicles", "tags": ["river"], "timestamp": "2019-01-01"},
    "c": {"id": "c", "collection": "gazetteer", "tags": ["south"], "timestamp": "2023-06-30T12:00:00+00:00"},
    "d": {"id": "d", "collection": "gazetteer", "tags": [], "timestamp": ""},
}


def run(**req):
    calls = []

    def payloads(ids):
        calls.append(list(ids))
        return {i: PAYLOADS[i] for i in ids}

    out = apply_filters(IDS, REL, validate_request({"query": "q", **req}), payloads)
    return [IDS[i] for i in out.keep], out, calls


def test_no_filter_keeps_all_and_fetches_nothing():
    kept, out, calls = run()
    assert kept == ["a", "b", "c", "d"] and out.dropped == () and calls == []


def test_min_relevance():
    kept, out, _ = run(min_relevance=0.5)
    assert kept == ["a", "b"] and out.dropped == ("c", "d") and out.applied == ("min_relevance",)


@pytest.mark.parametrize("req, expected", [
    ({"collection": "gazetteer"}, ["a", "c", "d"]),
    ({"tags_any": ["north", "south"]}, ["a", "c"]),
    ({"tags_all": ["river", "north"]}, ["a"]),
    ({"doc_ids": ["d", "b"]}, ["b", "d"]),
    ({"created_after": "2020-01-01T00:00:00Z"}, ["a", "c"]),
    ({"created_after": "2021-03-01", "created_before": "2023-06-30T12:00:00Z"}, ["a"]),  # [after, before)
    ({"created_before": "2021-03-01T02:00:00+02:00"}, ["b"]),  # a's instant exactly: excluded
    ({"created_before": "2022-01-01T00:00:00Z"}, ["a", "b"]),
])
def test_payload_filters(req, expected):
    assert run(**req)[0] == expected


def test_gap_cutoff():
    assert gap_cut(np.array([0.9, 0.8, 0.3, 0.2]), 0.3) == 2
    assert gap_cut(np.array([0.9, 0.8]), 0.3) == 2
    kept, out, _ = run(gap_cutoff=0.3)
    assert kept == ["a", "b"] and "gap_cutoff" in out.applied


def test_created_before_is_exclusive_and_created_after_inclusive():
    for stamp, kept in (("2021-03-01T00:00:00", False), ("2021-02-28T23:59:59.999999", True)):
        req = validate_request({"query": "q", "created_before": "2021-03-01"})
        assert payload_matches({"timestamp": stamp}, req) is kept
    req = validate_request({"query": "q", "created_after": "2021-03-01T00:00:00Z"})
    assert payload_matches({"timestamp": "2021-03-01"}, req)


def test_payload_matches_missing_timestamp_fails_time_filter():
    req = validate_request({"query": "q", "created_after": "2000-01-01"})
    assert not payload_matches(PAYLOADS["d"], req)


def test_relevance_shown_never_increases_in_either_order():
    """Issue 24: results in fused order carried their own relevance (72% above 100%)."""
    from searchtrace.retriever.types import ShownOrder

    ids = np.array(["a", "b", "c", "d", "e"], dtype=object)
    rel = np.array([0.5, 0.9, 0.4, 0.7, 0.1])
    fused = apply_filters(ids, rel, validate_request({"query": "q"}), lambda i: {})
    assert list(ids[fused.keep]) == ["a", "b", "c", "d", "e"]
    assert fused.shown.tolist() == [0.5, 0.5, 0.4, 0.4, 0.1]  # the running minimum
    by_relevance = apply_filters(ids, rel, validate_request({"query": "q"}), lambda i: {}, ShownOrder.RELEVANCE)
    assert list(ids[by_relevance.keep]) == ["b", "d", "a", "c", "e"] and by_relevance.shown.tolist() == sorted(
        rel.tolist(), reverse=True)
    cut = apply_filters(ids, rel, validate_request({"query": "q", "min_relevance": 0.45}), lambda i: {})
    assert list(ids[cut.keep]) == ["a", "b"]  # min_relevance cuts where the shown relevance first falls below


def test_the_order_is_a_setting_checked_by_name(tmp_path):
    from searchtrace.errors import ValidationError
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.types import ShownOrder

    good = tmp_path / "good.toml"
    good.write_text('[confidence]\norder = "relevance"\n')
    assert resolve_config(home=tmp_path, settings_file=good, environ={}).confidence.order is ShownOrder.RELEVANCE
    bad = tmp_path / "bad.toml"
    bad.write_text('[confidence]\norder = "random"\n')
    with pytest.raises(ValidationError, match="confidence order must be one of fused, relevance"):
        resolve_config(home=tmp_path, settings_file=bad, environ={})


@pytest.mark.parametrize("req, best", [
    ({}, 0.9),
    ({"min_relevance": 0.95}, 0.9),  # below the bar, still found: bestScore says so
    ({"gap_cutoff": 0.05}, 0.9),
    ({"collection": "chronicles"}, 0.8),  # the scope decides: "a" is out of it
    ({"tags_any": ["south"], "min_relevance": 0.5}, 0.3),
    ({"collection": "nowhere"}, 0.0),  # nothing in scope
])
def test_best_is_within_scope_and_before_min_relevance_and_gap(req, best):
    _, out, _ = run(**req)
    assert out.best == best


def test_best_is_what_the_first_result_would_show_in_fused_order():
    """A candidate ranked below a weaker one shows the weaker one's relevance (the running minimum), so the
    best any result can show is the first's, not the list's maximum (issue 39)."""
    rel = np.array([0.4, 0.9, 0.2, 0.1])
    out = apply_filters(IDS, rel, validate_request({"query": "q"}), lambda ids: {i: PAYLOADS[i] for i in ids})
    assert out.best == out.shown[0] == 0.4
