from evals.journal import Journal
from evals.latency import percentiles


def test_torn_last_line_is_ignored_and_cut(tmp_path):
    j = Journal(tmp_path / "journal.jsonl")
    j.append([{"query_id": "a"}, {"query_id": "b"}])
    with open(j.path, "ab") as fh:
        fh.write(b'{"query_id": "c", "rank')  # killed mid-write
    assert [r["query_id"] for r in j.read()] == ["a", "b"]
    j.truncate_torn_tail()
    j.append([{"query_id": "c"}])
    assert [r["query_id"] for r in j.read()] == ["a", "b", "c"]


def test_percentiles_per_stage():
    rows = [{"dense": float(i), "total": 10.0 * i} for i in range(1, 101)]
    out = percentiles(rows)
    assert out["dense"]["p50"] == 50.5 and out["dense"]["n"] == 100
    assert out["total"]["p99"] == round(10 * (1 + 0.99 * 99), 3)
