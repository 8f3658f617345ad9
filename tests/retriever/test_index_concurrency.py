"""Many processes on one index: searches never fail on another's open shard, one builder builds, the rest reuse."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from searchtrace.retriever.index import check, ensure_index, locate, read_manifest
from searchtrace.retriever.index.private_shard import READERS, PrivateShard, sparse_copy, sweep

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"

SEARCHER = textwrap.dedent("""
    import json, sys
    from searchtrace.retriever import open_retriever, resolve_config
    config = resolve_config(home=sys.argv[1], environ={})
    retriever = open_retriever(sys.argv[2], config, progress=False)
    try:
        out = [retriever.search({"query": q, "top_k": 5}).results[0].id for q in sys.argv[3:]]
    finally:
        retriever.close()
    print(json.dumps(out))
""")


def _spawn(code: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def _copy_cache(source, target: Path) -> None:
    """Give a fresh home the session's embedding cache and ONNX encoder: building then embeds nothing."""
    (target / "cache").mkdir(parents=True)
    shutil.copy2(source.home.embedding_cache, target / "cache" / "embeddings.sqlite")
    if source.home.models.is_dir():
        shutil.copytree(source.home.models, target / "cache" / "models")


def test_processes_search_one_index_at_once(tmp_path, sample_config, sample_index_path, model):
    home = tmp_path / "home"
    _copy_cache(sample_config, home)
    config = sample_config.__class__(home=sample_config.home.__class__(home))
    index = ensure_index(SAMPLE, config, model, progress=False)  # this process keeps it open throughout
    queries = ["harbour master of Port Vell", "Skerrow lighthouse keepers", "the wreck of the Morwen"]
    try:
        procs = [_spawn(SEARCHER, str(home), str(SAMPLE), *queries) for _ in range(4)]
        outputs = [p.communicate(timeout=300) for p in procs]
    finally:
        index.close()
    for p, (_, err) in zip(procs, outputs):
        assert p.returncode == 0, err
    assert len({out for out, _ in outputs}) == 1  # the same answers from every process
    folder = index.path
    manifest = read_manifest(folder)
    assert check(folder, manifest, deep=True) == []  # the published files are as built
    assert all((folder / name).stat().st_mtime_ns == entry.mtime_ns for name, entry in manifest.files.items())
    assert not any((folder.parent / READERS).iterdir())  # every private mirror removed


def test_two_builders_of_a_new_index_build_it_once(tmp_path, sample_config, sample_index_path):
    home = tmp_path / "home"
    _copy_cache(sample_config, home)
    code = textwrap.dedent("""
        import sys
        from searchtrace.retriever import resolve_config
        from searchtrace.retriever.data.beir import load_dataset
        from searchtrace.retriever.embedding.cache import Embedder
        from searchtrace.retriever.index import build_index
        config = resolve_config(home=sys.argv[1], environ={})
        print(build_index(load_dataset(sys.argv[2]), config, Embedder(config.home), progress=False))
    """)
    procs = [_spawn(code, str(home), str(SAMPLE)) for _ in range(3)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err for _, err in outputs]
    assert len({out for out, _ in outputs}) == 1
    folder = Path(outputs[0][0].strip())
    assert check(folder, read_manifest(folder), deep=True) == []
    built = [json.loads((folder / "manifest.json").read_text())["built_at"]]
    assert len(built) == 1 and not any((folder.parent / ".building").iterdir())


def test_a_killed_builder_leaves_nothing_a_reader_would_take(tmp_path, sample_config, sample_index_path, model):
    home = tmp_path / "home"
    _copy_cache(sample_config, home)
    config = sample_config.__class__(home=sample_config.home.__class__(home))
    where = locate(SAMPLE, config, model.model_id)
    half = where.path.parent / ".building" / f"{where.path.name}-99999"
    half.mkdir(parents=True)
    (half / "doc_ids.json").write_text("[")  # a builder killed mid-write
    index = ensure_index(SAMPLE, config, model, progress=False)
    index.close()
    assert not half.exists() and check(where.path, read_manifest(where.path), deep=True) == []


def test_mirrors_of_dead_processes_are_swept(tmp_path, sample_config, sample_index_path):
    readers = tmp_path / READERS
    shard = sample_index_path / "shard"
    mine = PrivateShard.of(shard, readers, "sample")
    dead = readers / "sample-999999999-0"  # a pid that is not running
    dead.mkdir(parents=True)
    assert sweep(readers) == 1 and not dead.exists() and mine.path.exists()
    mine.close()
    assert not any(readers.iterdir())


def test_sparse_copy_keeps_holes(tmp_path):
    source = tmp_path / "sparse"
    with open(source, "wb") as fh:
        fh.seek(32 << 20)
        fh.write(b"tail")
        fh.seek(4096)
        fh.write(b"head")
    target = tmp_path / "copy"
    sparse_copy(source, target)
    assert target.read_bytes() == source.read_bytes()
    assert target.stat().st_blocks * 512 < 1 << 20  # a 32 MiB file, a few KiB on disk


def test_where_links_cannot_be_made_the_shard_is_copied(tmp_path, monkeypatch, sample_config, sample_index_path,
                                                        model):
    """Another filesystem or a read-only home refuses hard links: a temporary copy is searched instead."""
    import errno

    def refuse(*_args, **_kwargs):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", refuse)
    index = ensure_index(SAMPLE, sample_config, model, progress=False)
    mirror = index.mirror
    try:
        assert mirror is not None and not str(mirror.path).startswith(str(sample_config.home.root))
        assert index.store.count() == index.manifest.n_docs
    finally:
        index.close()
    assert not mirror.path.exists()


def test_a_read_only_home_searches_its_built_index(tmp_path, sample_config, sample_index_path, model):
    """Hard links cannot be made there: the shard is copied into a temporary folder instead."""
    home = tmp_path / "home"
    _copy_cache(sample_config, home)
    config = sample_config.__class__(home=sample_config.home.__class__(home))
    ensure_index(SAMPLE, config, model, progress=False).close()
    os.chmod(home / "indexes", 0o555)
    try:
        if os.access(home / "indexes", os.W_OK):
            pytest.skip("running as a user file modes do not bind (root)")
        index = ensure_index(SAMPLE, config, model, progress=False)
        index.close()
    finally:
        os.chmod(home / "indexes", 0o755)
