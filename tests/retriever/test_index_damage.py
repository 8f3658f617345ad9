"""Every file of an index, damaged every way: the outcome is a rebuild or a named fix, never a traceback
and never a different result."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from searchtrace.notices import is_notice
from searchtrace.retriever.config.resolve import resolve_config
from searchtrace.retriever.index import DamagedIndex, build_index, check, ensure_index, open_index, read_manifest
from searchtrace.retriever.search.pipeline import Retriever

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
QUERIES = ["In which shipyard town was the vessel commanded by Meribel Osk constructed?",
           "What bird appears on the sigil of the fellowship Orsolya Venn entered?"]


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def delete(path: Path) -> None:
    path.unlink()


def garbage(path: Path) -> None:
    """Same size, other bytes: only a hash tells."""
    path.write_bytes(os.urandom(path.stat().st_size))


def reorder(path: Path) -> None:
    ids = json.loads(path.read_text())
    path.write_text(json.dumps([ids[1], ids[0], *ids[2:]]))  # same bytes, two documents swapped


def first(pattern: str) -> Callable[[Path], Path]:
    return lambda folder: next(folder.glob(pattern))


FILES = {
    "manifest.json": first("manifest.json"),
    "doc_ids.json": first("doc_ids.json"),
    "term_stats.npz": first("term_stats.npz"),
    "vectors.npy": first("vectors.npy"),
    "graph.json": first("graph.json"),
    "shard dense vectors": first("shard/segments/*/vector_storage-dense/vectors/chunk_0.mmap"),
    "shard payloads": first("shard/segments/*/payload_storage/page_0.dat"),
    "shard segment.json": first("shard/segments/*/segment.json"),
}
CASES = [(f, d) for f in FILES for d in (truncate, delete, garbage)] + [("doc_ids.json", reorder)]


@pytest.fixture(scope="module")
def home(tmp_path_factory, warm_cache):
    return resolve_config(home=warm_cache(tmp_path_factory.mktemp("damage-home")), environ={})


@pytest.fixture(scope="module")
def expected(home, model) -> list[list[tuple[str, float]]]:
    index = ensure_index(SAMPLE, home, model, progress=False)
    try:
        return _results(index, home, model)
    finally:
        index.close()


def _results(index, config, model) -> list[list[tuple[str, float]]]:
    retriever = Retriever(index, model, config)
    out = []
    for query in QUERIES:
        response = retriever.search({"query": query, "top_k": 10, "mode": "graph"})
        assert not response.degraded
        out.append([(r.id, r.score) for r in response.results])
    return out


@pytest.mark.parametrize(("name", "damage"), CASES, ids=[f"{f}-{d.__name__}" for f, d in CASES])
def test_damage_is_named_then_rebuilt(name, damage, home, model, expected, caplog):
    from searchtrace.retriever.data.beir import load_dataset

    folder = build_index(load_dataset(SAMPLE), home, model, progress=False)  # intact (rebuilt after the last case)
    assert check(folder, read_manifest(folder), deep=True) == []
    damage(FILES[name](folder))

    with pytest.raises(DamagedIndex) as named:  # opened directly: the damage and the fix, named
        open_index(folder, home).close()
    message = named.value.message
    shown = "manifest.json" if name == "manifest.json" else FILES[name](folder).name if name != "manifest.json" \
        and damage is not delete else None
    assert str(folder) in message and "searchtrace index" in message and "--force" in message
    if shown:
        assert shown in message

    index = ensure_index(SAMPLE, home, model, progress=False)  # the usual way: rebuilt, then the same results
    try:
        assert _results(index, home, model) == expected
    finally:
        index.close()
    if name != "manifest.json" or damage is garbage:
        told = [r for r in caplog.records if r.levelno >= logging.WARNING and "damaged" in r.getMessage()]
        assert len(told) == 1 and is_notice(told[0]), told  # one line, as promised: a notice, shown as it is
        assert told[0].getMessage().startswith("warning: ")
        assert told[0].getMessage().endswith("; rebuilding it from the embedding cache")
    assert check(folder, read_manifest(folder), deep=True) == []


def test_index_verify_finds_damage_the_open_does_not_hash(home, model, expected):
    """A shard file altered in place, same size and same time (a disk that flips bits): ``--verify`` finds it."""
    from searchtrace.cli import main

    index = ensure_index(SAMPLE, home, model, progress=False)
    folder = index.path
    index.close()
    target = FILES["shard segment.json"](folder)
    times = target.stat()
    target.write_bytes(target.read_bytes().replace(b'"', b"'", 1))
    os.utime(target, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert check(folder, read_manifest(folder)) == []  # an untouched time is not hashed on open
    assert [p.file for p in check(folder, read_manifest(folder), deep=True)] == [
        target.relative_to(folder).as_posix()]
    assert main(["index", str(SAMPLE), "--home", str(home.home.root), "--verify"]) == 0  # found and rebuilt
    assert check(folder, read_manifest(folder), deep=True) == []


def test_index_verify_checks_the_model_too(home, model, capsys):
    """``--verify`` hashes the model folder whole: damaged tensors are named, then built again."""
    from searchtrace.cli import main

    ensure_index(SAMPLE, home, model, progress=False).close()
    main(["index", str(SAMPLE), "--home", str(home.home.root), "--verify"])  # the model folder of this home
    capsys.readouterr()
    [weights] = home.home.models.glob("*-fp32/weights.bin")
    times = weights.stat()
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit, size and time kept
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert main(["index", str(SAMPLE), "--home", str(home.home.root), "--verify"]) == 0
    out = capsys.readouterr()
    assert f"damaged: {weights}" in out.err and "the model is built again" in out.err
    assert "files and the model verified" in out.out
    assert main(["index", str(SAMPLE), "--home", str(home.home.root), "--verify"]) == 0
    assert "damaged" not in capsys.readouterr().err
