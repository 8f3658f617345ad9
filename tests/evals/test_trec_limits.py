"""The limits of :mod:`searchtrace.limits` on TREC run and qrels files, and the interner's cost with long ids.

A giant id or line is refused naming the file and the line, whichever reader meets
it (the column reader hands it to the line reader, which names it); an id up to the
limit reads and scores as a short one does.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchtrace.errors import DataError
from searchtrace.evals.runs.trec import columns, files, read_qrels, read_run
from searchtrace.evals.scoring import interning
from searchtrace.evals.scoring.metrics import evaluate
from searchtrace.evals.scoring.rankings import Qrels
from searchtrace.limits import MAX_ID_BYTES, MAX_TREC_LINE_BYTES


def _lines(count: int = 3000) -> list[str]:
    """A run of ``count`` short lines, 100 documents a query (large enough for the column reader)."""
    return [f"q{i // 100} Q0 doc{i} {i % 100 + 1} {1000 - i % 100}.5 sys\n" for i in range(count)]


@pytest.fixture(params=["columnar", "line"])
def reader(request, monkeypatch):
    """Each test with the column reader first (as the library reads a large file), and with the line reader alone."""
    monkeypatch.setattr(files, "COLUMN_READER_BYTES", 0)
    if request.param == "line":
        monkeypatch.setattr(columns, "ENABLED", False)
    return request.param


def _refused_at(path, line: int, fragment: str, read=read_run) -> None:
    with pytest.raises(DataError) as info:
        read(path)
    assert (info.value.path, info.value.line) == (str(path), line), str(info.value)
    assert str(info.value).startswith(f"{path}:{line}: ") and fragment in str(info.value), str(info.value)


@pytest.mark.parametrize("size", [MAX_TREC_LINE_BYTES, 1 << 20, 5 << 20])
def test_a_giant_document_id_is_refused_naming_file_and_line(tmp_path, reader, size):
    """A 5 MB id took 69 s to read (the interner padded every id to the longest); it is refused at its line."""
    lines = _lines()
    lines[1500] = f"q15 Q0 {'d' * size} 1 9999.5 sys\n"
    path = tmp_path / "run.trec"
    path.write_text("".join(lines))
    _refused_at(path, 1501, "line longer than")


@pytest.mark.parametrize("column", ["query", "doc"])
def test_an_id_past_the_limit_in_a_short_line_is_refused(tmp_path, reader, column):
    lines = _lines()
    long_id = "é" * (MAX_ID_BYTES // 2) + "x"  # 257 characters, 513 bytes
    lines[42] = f"q0 Q0 {long_id} 43 1.5 sys\n" if column == "doc" else f"{long_id} Q0 doc42 1 1.5 sys\n"
    path = tmp_path / "run.trec"
    path.write_text("".join(lines))
    _refused_at(path, 43, f"{column} id of {MAX_ID_BYTES + 1} bytes, longer than the {MAX_ID_BYTES} bytes allowed")


def test_qrels_lines_and_ids_past_the_limits_are_refused(tmp_path, reader):
    trec = tmp_path / "qrels.trec"
    trec.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(500)) + f"q 0 {'d' * (MAX_ID_BYTES + 1)} 1\n")
    _refused_at(trec, 501, "doc id of 513 bytes", read_qrels)
    beir = tmp_path / "qrels.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(500))
                    + f"q\t{'d' * (2 * MAX_TREC_LINE_BYTES)}\t1\n")
    _refused_at(beir, 502, "line longer than", read_qrels)
    with pytest.raises(DataError, match=r"qrels\.tsv:502: line longer than"):
        list(files.qrels_lines(beir))


def test_uneven_spacing_counts_toward_the_line_limit_in_both_readers(tmp_path, reader):
    """The column reader evens the spacing first; it measures the lines as the file has them, as the line reader does."""
    lines = _lines()
    lines[7] = "q0 Q0 doc7 8" + " " * MAX_TREC_LINE_BYTES + "992.5 sys\n"
    path = tmp_path / "run.trec"
    path.write_text("".join(lines))
    _refused_at(path, 8, "line longer than")
    lines[7] = "q0 Q0 doc7 8" + " " * (MAX_TREC_LINE_BYTES - 30) + "992.5 sys\n"  # within: read
    path.write_text("".join(lines))
    assert read_run(path).to_dict()["q0"]["doc7"] == 992.5


_ID_CHARACTERS = st.characters(exclude_categories=("Cc", "Cs", "Zs", "Zl", "Zp"), max_codepoint=0x2FFF,
                               exclude_characters="#")
ids = st.one_of(
    st.text(_ID_CHARACTERS, min_size=1, max_size=40),
    st.builds(lambda c, n: c * n, _ID_CHARACTERS, st.integers(100, MAX_ID_BYTES)),  # long, many bytes a character
).map(lambda s: s.encode()[:MAX_ID_BYTES].decode("utf-8", "ignore") or "x")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(long_ids=st.lists(ids, min_size=1, max_size=6, unique=True), seed=st.integers(0, 2**16))
def test_ids_up_to_the_limit_read_and_score_as_short_ones(tmp_path, monkeypatch, long_ids, seed):
    """The same run with some documents renamed to long ids (up to the limit) reads and scores identically."""
    monkeypatch.setattr(files, "COLUMN_READER_BYTES", 0)
    rng = np.random.default_rng(seed)
    short = [f"doc{i}" for i in range(60)]
    renamed = dict(zip(short, long_ids))
    lines, judged = [], {}
    for q in range(8):
        for rank, doc in enumerate(rng.choice(60, 12, replace=False).tolist(), start=1):
            lines.append((f"q{q}", short[doc], rank, 100.0 - rank))  # no ties: the order does not hang on the ids
        judged[f"q{q}"] = {short[d]: int(rng.integers(0, 3)) for d in rng.choice(60, 10, replace=False).tolist()}

    def written(name: str, rename: dict[str, str]) -> list:
        path = tmp_path / name
        path.write_text("".join(f"{q} Q0 {rename.get(d, d)} {r} {s!r} sys\n" for q, d, r, s in lines), encoding="utf-8")
        by_columns = read_run(path)
        monkeypatch.setattr(columns, "ENABLED", False)
        by_lines = read_run(path)
        monkeypatch.setattr(columns, "ENABLED", True)
        assert by_columns.to_dict() == by_lines.to_dict()
        qrels = Qrels.from_dict({q: {rename.get(d, d): g for d, g in docs.items()} for q, docs in judged.items()})
        scores = evaluate(qrels, by_columns)
        back = {v: k for k, v in rename.items()}
        ranked = {q: [back.get(d, d) for d in docs] for q, docs in by_columns.to_dict().items()}
        return [ranked, scores.query_ids.tolist(), {str(m): v.tolist() for m, v in scores.per_query.items()}]

    assert written("long.trec", renamed) == written("short.trec", {})


def test_interning_long_ids_costs_their_bytes_not_rows_times_the_longest(monkeypatch):
    """No padding of every id to the longest: with one 64 KB id among 20,000 short ones, the interner reads
    about the bytes given (on main it hashed 20,000 rows of 8,192 words, then gave up past its padded-copy
    bound). Checked by what it copies rather than by time: no padded copy wider than twice the data."""
    ids = [f"doc{i % 7000}" for i in range(20_000)]
    ids[123] = "L" * (64 << 10)
    data = ("\n".join(ids) + "\n").encode()
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    starts = np.r_[0, ends[:-1] + 1]
    widest = []
    real = interning.fixed_width

    def watched(raw_, start, end):
        widest.append(int((end - start).max()) * len(start))
        return real(raw_, start, end)

    monkeypatch.setattr(interning, "fixed_width", watched)
    interned = interning.intern_fields(raw, starts, ends)
    assert interned is not None
    vocab, codes = interned
    assert vocab[codes].tolist() == ids
    assert max(widest, default=0) <= 2 * len(data)
