"""TREC run and qrels files: parsing, errors with file and line, round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchtrace.errors import DataError, ValidationError
from searchtrace.evals.runs.trec import columns, files, read_qrels, read_run, write_run
from searchtrace.evals.scoring import interning
from searchtrace.evals.scoring.metrics.ranking import lookup
from searchtrace.evals.scoring.rankings import Qrels, Run


@pytest.fixture(autouse=True)
def columnar_reader_for_small_files(monkeypatch):
    """Small files normally skip the columnar reader; here they take it unless a test disables it."""
    monkeypatch.setattr(files, "COLUMN_READER_BYTES", 0)

RUN = """\
q1 Q0 d1 1 3.0 sys
q1 Q0 d2 2 2.0 sys
q1 Q0 d3 3 2.0 sys
q2 Q0 d1 1 0.5 sys
"""


def write(tmp_path, text: str | bytes, name: str = "file.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.fixture(params=["columnar", "line"])
def reader(request, monkeypatch):
    """Run the test with each reader: the columnar one first (as the library does), and the line reader alone."""
    if request.param == "line":
        monkeypatch.setattr(columns, "ENABLED", False)
    return request.param


def test_read_run_ranks_by_score_then_doc_id_descending(tmp_path):
    run = read_run(write(tmp_path, RUN))
    assert run.to_dict() == {"q1": {"d1": 3.0, "d3": 2.0, "d2": 2.0}, "q2": {"d1": 0.5}}
    assert list(run.to_dict()["q1"]) == ["d1", "d3", "d2"]
    assert run.queries.tolist() == ["q1", "q2"]
    assert run.scores.dtype == np.float64 and run.query_index.dtype == np.int32


def test_fast_and_exact_paths_agree(tmp_path, monkeypatch):
    text = RUN + "q3 Q0 d9 1 -1e3 sys\n"
    fast = read_run(write(tmp_path, text))
    monkeypatch.setattr(columns, "ENABLED", False)
    exact = read_run(write(tmp_path, text))
    assert fast.to_dict() == exact.to_dict()
    assert list(fast.to_dict()["q1"]) == list(exact.to_dict()["q1"])


def test_tabs_extra_spaces_crlf_and_blank_lines(tmp_path, reader):
    text = "q1\tQ0\td1\t1\t3.0\tsys\r\n\n  q1  Q0 d2 2 2.0 sys  \r\n"
    assert read_run(write(tmp_path, text)).to_dict() == {"q1": {"d1": 3.0, "d2": 2.0}}


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2 2.0\n", 2, "expected 6 whitespace-separated fields"),
        ("q1 Q0 d1 1 3.0 sys\n\nq1 Q0 d2 2 high sys\n", 3, "score must be a number"),
        ("q1 Q0 d1 1 nan sys\n", 1, "score must be a number (not NaN)"),
        (
            "q1 Q0 d1 1 3.0 sys\nq2 Q0 d1 1 1.0 sys\nq1 Q0 d1 2 2.0 sys\n",
            3,
            "duplicate (qid, docid) ('q1', 'd1'), first on line 1",
        ),
        # both readers reject the same lines (the columnar one gives them to the line reader)
        ("q1 Q0 d1 1 3.0 t\nq1  Q0 d2 1.0 t\n", 2, "expected 6 whitespace-separated fields (qid Q0 docid rank score tag), got 5"),
        ("q1 Q0 d1 1 3.0 t\nq1 Q0 d\x002 2 1.0 t\n", 2, "doc id 'd\\x002' contains a control character (U+0000)"),
        ("q\x01 Q0 d1 1 3.0 t\n", 1, "query id 'q\\x01' contains a control character (U+0001)"),
        ("q1 Q0 d1 1 3.0 t\nq1 Q0 d\x7f 2 1.0 t\n", 2, "contains a control character (U+007F)"),
        ("q1 Q0 d1 1 3.0 t extra\n", 1, "expected 6 whitespace-separated fields"),
    ],
)
def test_malformed_run_names_file_and_line(tmp_path, reader, text, line, what):
    path = write(tmp_path, text)
    with pytest.raises(DataError) as info:
        read_run(path)
    assert info.value.path == str(path) and info.value.line == line
    assert what in str(info.value) and str(info.value).startswith(f"{path}:{line}: ")


def test_byte_order_mark_is_skipped(tmp_path):
    assert read_run(write(tmp_path, b"\xef\xbb\xbfq1 Q0 d1 1 1.0 s\n")).queries.tolist() == ["q1"]
    assert read_qrels(write(tmp_path, b"\xef\xbb\xbfquery-id\tcorpus-id\tscore\nq1\td1\t1\n")).to_dict() == {"q1": {"d1": 1}}


def test_not_utf8_and_empty_and_missing(tmp_path):
    with pytest.raises(DataError, match="not UTF-8") as info:
        read_run(write(tmp_path, b"q1 Q0 d1 1 1.0 s\nq\xff Q0 d1 1 1.0 s\n"))
    assert info.value.line == 2
    with pytest.raises(DataError, match="empty file"):
        read_run(write(tmp_path, "\n\n"))
    with pytest.raises(DataError, match="cannot read file"):
        read_run(tmp_path / "missing.trec")


def test_trec_qrels(tmp_path):
    qrels = read_qrels(write(tmp_path, "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 -1\n"))
    assert qrels.to_dict() == {"q1": {"d1": 2, "d2": 0}, "q2": {"d1": -1}}
    assert qrels.grades.dtype == np.int64


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("q1 0 d1 2\nq1 0 d2\n", 2, "expected 4 whitespace-separated fields (qid 0 docid grade), got 3"),
        ("q1 0 d1 2\nq1 0 d2 1.5\n", 2, "grade must be an integer, got '1.5'"),
        ("q1 0 d1 2\nq1 0 d1 1\n", 2, "duplicate (qid, docid)"),
    ],
)
def test_malformed_trec_qrels(tmp_path, reader, text, line, what):
    with pytest.raises(DataError) as info:
        read_qrels(write(tmp_path, text))
    assert info.value.line == line and what in str(info.value)


@pytest.mark.parametrize("header", ["query-id\tcorpus-id\tscore\n", ""])
def test_beir_tsv_qrels(tmp_path, header):
    qrels = read_qrels(write(tmp_path, header + "q1\td1\t1\nq1\td2\t2\nq2\td3\t0\n", "test.tsv"))
    assert qrels.to_dict() == {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 0}}


def test_beir_tsv_strips_fields_and_reports_lines(tmp_path):
    assert read_qrels(write(tmp_path, "q1\t d1 \t1\r\n")).to_dict() == {"q1": {"d1": 1}}
    with pytest.raises(DataError) as info:
        read_qrels(write(tmp_path, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\tx\n"))
    assert info.value.line == 3


def test_unrecognised_qrels(tmp_path):
    with pytest.raises(DataError, match="not a qrels file"):
        read_qrels(write(tmp_path, "q1 d1\n"))


def test_write_run_round_trips_scores_exactly(tmp_path):
    run = Run.from_dict({"q1": {"a": 0.1 + 0.2, "b": 1 / 3, "c": 1 / 3}, "q2": {"a": -2.5e-300}})
    path = tmp_path / "out.trec"
    write_run(path, run, "mine")
    assert path.read_text().splitlines() == [
        f"q1 Q0 c 1 {1 / 3!r} mine",
        f"q1 Q0 b 2 {1 / 3!r} mine",
        f"q1 Q0 a 3 {0.1 + 0.2!r} mine",
        "q2 Q0 a 1 -2.5e-300 mine",
    ]
    back = read_run(path)
    assert back.to_dict() == run.to_dict()
    np.testing.assert_array_equal(back.scores, run.scores)


@pytest.mark.parametrize("tag", ["", "two words"])
def test_write_run_rejects_bad_tag(tmp_path, tag):
    with pytest.raises(ValidationError):
        write_run(tmp_path / "x", Run.from_dict({"q": {"d": 1.0}}), tag)


def test_write_run_rejects_ids_with_spaces(tmp_path):
    with pytest.raises(ValidationError, match="doc id"):
        write_run(tmp_path / "x", Run.from_dict({"q": {"d 1": 1.0}}), "t")


def test_containers_validate_dict_input():
    with pytest.raises(ValidationError, match="grades must be integers"):
        Qrels.from_dict({"q": {"d": 1.5}})
    with pytest.raises(ValidationError, match="NaN"):
        Run.from_dict({"q": {"d": float("nan")}})
    with pytest.raises(ValidationError, match="non-empty strings"):
        Run.from_dict({"": {"d": 1.0}})
    with pytest.raises(ValidationError, match="duplicate"):
        Run.from_arrays(["q", "q"], ["d", "d"], [1.0, 2.0])


def test_containers_are_read_only():
    run = Run.from_dict({"q": {"d": 1.0}})
    with pytest.raises(ValueError):
        run.scores[0] = 2.0
    with pytest.raises(AttributeError):
        run.scores = np.zeros(1)  # type: ignore[misc]


def test_large_run_parses_exactly(tmp_path):
    """10,000 queries x 100 docs, unsorted, 1M distinct doc ids: the fast path reads every row (speed is
    measured by benchmarks/bench_metrics.py, not asserted here)."""
    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(10_000), 100)
    d = rng.integers(0, 200_000, len(q))
    s = np.round(rng.random(len(q)), 3)
    rows = enumerate(zip(q.tolist(), d.tolist(), s.tolist()))
    lines = [f"q{a} Q0 d{b}_{i % 100} {i % 100 + 1} {c} t\n" for i, (a, b, c) in rows]
    path = write(tmp_path, "".join(lines), "big.trec")
    run = read_run(path)
    assert len(run) == 1_000_000 and len(run.queries) == 10_000
    first = run.query_index == 0
    assert sorted(run.scores[first].tolist(), reverse=True) == run.scores[first].tolist()


def test_columnar_reader_refuses_what_it_cannot_vouch_for():
    assert columns.parse_columns(b"q1 Q0 d1 1 3.0 t\nq1  Q0 d2 1.0 t\n", 6, (0, 2), 4, "float") is None
    assert columns.parse_columns(b"q1 Q0 d\x001 1 3.0 t\n", 6, (0, 2), 4, "float") is None
    assert columns.parse_columns(b"# c\nq1 Q0 d1 1 3.0 t\n", 6, (0, 2), 4, "float") is None
    assert columns.parse_columns(b"q1 Q0 d#1 1 3.0 t\n", 6, (0, 2), 4, "float") is not None


def test_comment_lines_are_skipped_and_hash_inside_ids_kept(tmp_path, reader):
    run = read_run(write(tmp_path, "# a comment\nq1 Q0 d#1 1 3.0 t\n  # indented comment\nq1 Q0 d2 2 2.0 t\n"))
    assert run.to_dict() == {"q1": {"d#1": 3.0, "d2": 2.0}}
    qrels = read_qrels(write(tmp_path, "# comment here\nq1 0 CR#9 1\n# and here\nq1 0 d2 0\n", "q.txt"))
    assert qrels.to_dict() == {"q1": {"CR#9": 1, "d2": 0}}


def test_extra_fields_only_when_asked(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 3.0 t more junk\nq1 Q0 d2 2 2.0 t\n")
    assert read_run(path, extra_fields=True).to_dict() == {"q1": {"d1": 3.0, "d2": 2.0}}
    with pytest.raises(DataError, match=":1: expected 6"):
        read_run(path)
    with pytest.raises(DataError, match="expected at least 6 .* got 5"):
        read_run(write(tmp_path, "q1 Q0 d1 1 3.0\n"), extra_fields=True)


def test_control_characters_in_ids_given_as_dicts_are_refused():
    with pytest.raises(ValidationError, match="control character"):
        Run.from_dict({"q1": {"d\x00": 1.0}})
    with pytest.raises(ValidationError, match="control character"):
        Qrels.from_dict({"q\n": {"d": 1}})


def test_beir_tsv_rejects_control_characters_with_the_line(tmp_path):
    with pytest.raises(DataError) as info:
        read_qrels(write(tmp_path, "query-id\tcorpus-id\tscore\nq1\td\x001\t1\n", "t.tsv"))
    assert info.value.line == 2 and "control character" in str(info.value)


@pytest.mark.parametrize("extra", [[], ["é", "long-id-" * 5 + "x", "long-id-" * 5 + "y"]])
def test_byte_key_lookup_matches_a_dict_lookup(extra):
    vocab = np.array([f"d{i}" for i in range(3000)] + extra, dtype=object)
    values = np.array([f"d{i}" for i in range(0, 6000, 3)] + extra[::-1] + ["long-id-" * 5, "zz"], dtype=object)
    index = {v: i for i, v in enumerate(vocab.tolist())}
    assert interning.index_in(values, vocab).tolist() == [index.get(v, -1) for v in values.tolist()]
    assert lookup(values, vocab).tolist() == [index.get(v, -1) for v in values.tolist()]
    assert interning.index_in(values, np.array(["d1", "d1"], dtype=object)) is None  # not a vocabulary


def test_byte_keys_survive_a_hash_collision(monkeypatch):
    """Ids longer than 8 bytes are hashed; a collision (forced here) is found and the stable sort takes over."""
    monkeypatch.setattr(interning, "_MIX", np.uint64(0))
    keys = np.array([2**63 + 5, 3, 2**63 + 5, 7, 3, 3], dtype=np.uint64)  # too wide to sort unhashed
    first, codes = interning._dense(keys)
    assert first.tolist() == [0, 1, 3] and codes.tolist() == [0, 1, 0, 2, 1, 1]


def _random_run(rng: np.random.Generator, lines: int) -> str:
    """Run lines in many spellings: ids of 1-30 bytes (some not ASCII), scores in every form ``float`` reads."""
    scores = ["0.997", "-0.5", "+2", "1e3", "-1E-3", ".5", "5.", "007.250", "1_000.5", "inf", "-0",
              "0.1234567890123456789", "123456789012345678", "9007199254740993", "1.7976931348623157e308",
              "4.9e-324", "0.30000000000000004", "12345678.9"]
    ids = [f"d{i}" for i in range(40)] + ["é", "文書-7", "x" * 30, "x" * 29 + "y", "12345678", "123456789"]
    rows = []
    for q in range(lines // 10):
        for doc in rng.choice(len(ids), 10, replace=False).tolist():
            score = scores[rng.integers(len(scores))] if rng.random() < 0.5 else f"{rng.random():.{rng.integers(1, 18)}f}"
            rows.append(f"q{q % 7}{'é' * (q % 2)}-{q} Q0 {ids[doc]} 1 {score} t")
    return "\n".join(rows)


@pytest.mark.parametrize("seed", range(4))
def test_columnar_and_line_readers_agree_on_random_runs(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    text = _random_run(rng, 400)
    if seed % 2:  # uneven spacing, tabs, CRLF and blank lines: evened before the columns are read
        text = text.replace(" Q0 ", "\tQ0  ").replace("\n", "\r\n\n  ", 5)
    path = write(tmp_path, text + ("\n" if seed < 2 else ""))
    assert columns.parse_columns(path.read_bytes(), 6, (0, 2), 4, "float") is not None  # no fallback
    fast = read_run(path)
    monkeypatch.setattr(columns, "ENABLED", False)
    exact = read_run(path)
    for name in ("queries", "docs", "query_index", "doc_index", "scores"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(exact, name), err_msg=name)


def test_columnar_reader_reads_grades_as_int_does(tmp_path):
    grades = ["-3", "+2", "0", "12", "007", "1_0", "-0", "\u0664\u0662"]
    text = "".join(f"q{i} 0 d{i % 9} {grades[i % len(grades)]}\n" for i in range(60))
    cols = columns.parse_columns(text.encode(), 4, (0, 2), 3, "int")
    assert cols is not None and cols.values.tolist() == [int(grades[i % len(grades)]) for i in range(60)]
    assert read_qrels(write(tmp_path, text)).to_dict() == {f"q{i}": {f"d{i % 9}": int(grades[i % len(grades)])}
                                                           for i in range(60)}
    for bad in ("1.0", "x", "-", "99999999999999999999"):
        assert columns.parse_columns(f"q 0 d {bad}\n".encode(), 4, (0, 2), 3, "int") is None, bad



def test_columnar_reader_reads_scores_as_float_does():
    fields = ["0.997", "-0.0", "+2", "1e3", ".5", "5.", "007.250", "1_000.5", "inf", "9007199254740993",
              "0.1234567890123456789", "123456789012345678", "4.9e-324", "0.30000000000000004", "\u0661.\u0665"]
    data = "".join(f"q Q0 d{i} 1 {f} t\n" for i, f in enumerate(fields)).encode()
    cols = columns.parse_columns(data, 6, (0, 2), 4, "float")
    assert cols is not None
    assert [v.hex() for v in cols.values.tolist()] == [float(f).hex() for f in fields]
    for bad in ("nan", "-", "1.2.3", "1e", "0x10", "--1"):
        assert columns.parse_columns(f"q Q0 d 1 {bad} t\n".encode(), 6, (0, 2), 4, "float") is None, bad


def test_long_ids_sharing_a_hash_go_to_the_line_reader(tmp_path, monkeypatch):
    monkeypatch.setattr(interning, "_MIX", np.uint64(0))  # every id over 8 bytes hashes alike
    text = "q1 Q0 a-long-document-id 1 2.0 t\nq1 Q0 another-long-id 2 1.0 t\n"
    assert columns.parse_columns(text.encode(), 6, (0, 2), 4, "float") is None
    assert read_run(write(tmp_path, text)).to_dict() == {"q1": {"a-long-document-id": 2.0, "another-long-id": 1.0}}


def test_byte_key_grouping_on_random_keys():
    """Keys that fit beside their row number are sorted as they are, wider ones by hash: either way
    equal keys end up together, in row order, and distinct keys apart."""
    rng = np.random.default_rng(1)
    for trial in range(300):
        keys = rng.integers(0, 2 ** int(rng.integers(1, 64)), int(rng.integers(1, 60)), dtype=np.uint64)
        keys = keys[rng.integers(0, len(keys), len(keys))] if trial % 2 else keys << np.uint64(trial % 9)
        order, new = interning._sorted(keys)
        assert sorted(order.tolist()) == list(range(len(keys)))
        bounds = [*np.flatnonzero(new).tolist(), len(keys)]
        groups = [order[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        assert all((np.diff(g) > 0).all() and (keys[g] == keys[g[0]]).all() for g in groups)
        assert len({int(keys[g[0]]) for g in groups}) == len(groups)


def test_one_very_long_id_keeps_the_columnar_reader(tmp_path, monkeypatch):
    """A 300-byte id widens the hashed keys, not the memory held for every row."""
    lines = [f"q{i // 100} Q0 {'L' * 300 if i == 5 else f'doc-{i}'} {i % 100 + 1} {1 - i % 100 / 100:.3f} t\n"
             for i in range(2000)]
    path = write(tmp_path, "".join(lines))
    assert columns.parse_columns(path.read_bytes(), 6, (0, 2), 4, "float") is not None
    fast = read_run(path)
    monkeypatch.setattr(columns, "ENABLED", False)
    exact = read_run(path)
    assert fast.docs.tolist() == exact.docs.tolist() and fast.to_dict() == exact.to_dict()


@given(rows=st.dictionaries(st.sampled_from(["q1", "q2", "é"]),
                            st.dictionaries(st.text(st.characters(codec="utf-8", categories=["L", "N", "P"]),
                                                    min_size=1, max_size=5),
                                            st.floats(allow_nan=False) | st.integers(-3, 3).map(float),
                                            max_size=5),
                            max_size=3))
def test_write_run_writes_each_line_as_its_format_says(tmp_path_factory, rows):
    run = Run.from_dict(rows)
    path = tmp_path_factory.mktemp("w") / "run.trec"
    write_run(path, run, "tag")
    want, start = [], None
    for i, (q, d, s) in enumerate(zip(run.queries[run.query_index], run.docs[run.doc_index], run.scores.tolist())):
        start = i if i == 0 or run.query_index[i] != run.query_index[i - 1] else start
        want.append(f"{q} Q0 {d} {i - start + 1} {s!r} tag\n")
    assert path.read_bytes() == "".join(want).encode("utf-8")
