"""The ONNX Runtime embedder: its graph cached per home, batching, cache identity, the load span, no torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchtrace.errors import ValidationError
from searchtrace.home import Home
from searchtrace.retriever.embedding.cache import (
    MODEL_ID,
    EmbeddingCache,
    OnnxEmbedder,
    Precision,
    cache_identity,
    embed_with_cache,
    text_hash,
)
from searchtrace.retriever.embedding.model_files import ModelFiles
from searchtrace.retriever.embedding.onnx_runtime import length_batches

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


@given(st.lists(st.integers(min_value=1, max_value=300), max_size=200), st.integers(min_value=1, max_value=50))
def test_length_batches_take_each_text_once_longest_first(lengths, batch_size):
    batches = list(length_batches(lengths, batch_size))
    flat = np.concatenate(batches) if batches else np.array([], dtype=np.int64)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    assert all(1 <= len(b) <= batch_size for b in batches)
    ordered = [lengths[i] for i in flat]
    assert ordered == sorted(lengths, reverse=True)  # so each batch pads to little more than its own texts


def test_constructor_validates_and_does_no_io(tmp_path):
    OnnxEmbedder(Home(tmp_path / "home"))
    assert not (tmp_path / "home").exists()
    with pytest.raises(ValidationError, match="fp32, int8"):
        OnnxEmbedder(Home(tmp_path), precision="fp16")
    with pytest.raises(ValidationError, match="threads"):
        OnnxEmbedder(Home(tmp_path), threads=0)


def test_max_seq_length_and_pooling_come_from_the_model_folder():
    files = ModelFiles.bundled()
    assert files.max_seq_length() == json.loads((files.root / "sentence_bert_config.json").read_text())[
        "max_seq_length"] == 256
    files.check_pooling()


def test_a_model_with_other_pooling_is_refused(tmp_path):
    bundled = ModelFiles.bundled()
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    (tmp_path / "modules.json").write_text((bundled.root / "modules.json").read_text())
    with pytest.raises(ValidationError, match="pooling_mode_cls_token is not supported"):
        ModelFiles(tmp_path).check_pooling()


def test_weights_hash_is_stamped_in_the_home(tmp_path):
    import hashlib

    files, home = ModelFiles.bundled(), Home(tmp_path)
    sha = files.weights_sha256(home)
    assert sha == hashlib.sha256(files.weights.read_bytes()).hexdigest()
    [stamp] = home.models.glob("weights-*.sha256")
    stamp.write_text("f" * 64)  # the stamp is what later calls read (a stat and a small file)
    assert files.weights_sha256(home) == "f" * 64


def test_identity_names_weights_runtime_and_precision(tmp_path):
    home = Home(tmp_path)
    fp32, int8 = OnnxEmbedder(home), OnnxEmbedder(home, Precision.INT8)
    sha = ModelFiles.bundled().weights_sha256(home)
    assert fp32.identity == f"{MODEL_ID}|sha256:{sha[:16]}|onnxruntime-bert1|fp32"
    assert int8.identity.endswith("|int8") and cache_identity(int8) == int8.identity
    assert fp32.model_id == MODEL_ID and int8.model_id != MODEL_ID  # int8 vectors get their own index
    assert text_hash("x", fp32.identity) != text_hash("x", int8.identity) != text_hash("x", MODEL_ID)


def test_cache_never_serves_one_runtimes_vectors_to_another(tmp_path):
    class Fake:
        def __init__(self, identity, value):
            self.identity, self.value, self.model_id, self.calls = identity, value, MODEL_ID, 0

        def encode_documents(self, texts, batch_size=64, progress=False):
            self.calls += 1
            return np.full((len(texts), 384), self.value, dtype=np.float32)

    torch_like, onnx_like = Fake("m|torch|fp32", 1.0), Fake("m|onnxruntime|fp32", 2.0)
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        assert embed_with_cache(torch_like, cache, ["a"]).embedded == 1
        vectors, embedded = embed_with_cache(onnx_like, cache, ["a"])
    assert embedded == 1 and onnx_like.calls == 1 and (vectors == 2.0).all()


@pytest.mark.slow
def test_graph_is_built_once_per_home_and_written_whole(model, sample_config, tmp_path):
    home = sample_config.home  # the session's model was built here
    [fp32] = home.models.glob("*-fp32/model.onnx")
    folder = fp32.parent
    assert folder.name.startswith(model.identity.split("sha256:")[1][:16])
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "model.onnx", "weights.bin"]
    assert fp32.stat().st_size < 100_000 < 80_000_000 < (folder / "weights.bin").stat().st_size  # tensors apart
    assert not list(home.models.glob(".*.tmp"))  # written aside, then renamed
    before = fp32.stat().st_mtime_ns
    again = OnnxEmbedder(home)
    assert again.load().built is False and fp32.stat().st_mtime_ns == before
    np.testing.assert_array_equal(again.encode_query("harbour dues"), model.encode_query("harbour dues"))
    other = Home(tmp_path)  # another home in this process: a copy of the files, not a rebuild
    assert OnnxEmbedder(other).load().built is False
    for name in ("model.onnx", "weights.bin", "manifest.json"):
        assert (other.models / folder.name / name).read_bytes() == (folder / name).read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated weights", "no weights", "garbled graph", "random bytes in the weights",
                                    "no manifest"])
def test_a_damaged_cached_graph_is_built_again(model, sample_config, tmp_path, caplog, damage):
    """Damage ONNX Runtime refuses, and damage it would run (random bytes with the file's size and time kept):
    the known answer catches the second before any vector is made."""
    home = Home(tmp_path)
    [source] = sample_config.home.models.glob("*-fp32/model.onnx")
    folder = home.models / source.parent.name
    shutil.copytree(source.parent, folder)
    if damage == "truncated weights":
        (folder / "weights.bin").write_bytes((source.parent / "weights.bin").read_bytes()[: 1 << 20])
    elif damage == "no weights":
        (folder / "weights.bin").unlink()
    elif damage == "random bytes in the weights":
        weights = folder / "weights.bin"
        stat = weights.stat()
        with open(weights, "r+b") as fh:
            fh.seek(stat.st_size // 2)
            fh.write(np.random.default_rng(0).bytes(4096))
        os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    elif damage == "no manifest":
        (folder / "manifest.json").unlink()
    else:
        (folder / "model.onnx").write_bytes(b"\x08\x07" + bytes(range(256)) * 4)
    embedder = OnnxEmbedder(home)
    assert embedder.load().built is True
    assert "building it again" in caplog.text
    for name in ("model.onnx", "weights.bin", "manifest.json"):
        assert (folder / name).read_bytes() == (source.parent / name).read_bytes()
    np.testing.assert_allclose(embedder.encode_query("harbour dues"), model.encode_query("harbour dues"), atol=1e-6)


@pytest.mark.slow
def test_verify_hashes_the_model_whole_and_removes_a_damaged_one(sample_config, tmp_path):
    home = Home(tmp_path)
    [source] = sample_config.home.models.glob("*-fp32/model.onnx")
    folder = home.models / source.parent.name
    shutil.copytree(source.parent, folder)
    assert OnnxEmbedder(home).verify() == []
    weights = folder / "weights.bin"
    data = bytearray(weights.read_bytes())
    data[len(data) // 3] ^= 0xFF  # one bit pattern flipped: same size
    weights.write_bytes(bytes(data))
    problems = OnnxEmbedder(home).verify()
    assert len(problems) == 1 and "weights.bin" in problems[0] and "differ" in problems[0]
    assert not folder.exists()  # the next load builds it again


@pytest.mark.slow
def test_a_single_file_graph_of_an_earlier_version_is_replaced(model, sample_config, tmp_path):
    """Earlier versions cached the graph as one file named like the folder: removed once the folder is made."""
    [graph] = sample_config.home.models.glob("*-fp32/model.onnx")
    home = Home(tmp_path)
    home.models.mkdir(parents=True)
    legacy = home.models / f"{graph.parent.name}.onnx"
    legacy.write_bytes(b"an old single-file graph")
    assert OnnxEmbedder(sample_config.home).load().built is False  # this process has read the session's graph
    assert OnnxEmbedder(home).load().built is False  # so it is copied in, not rebuilt
    assert not legacy.exists() and (home.models / graph.parent.name / "model.onnx").is_file()


@pytest.mark.slow
def test_plain_and_fused_graphs_agree():
    """The contrib-op graph (the default) against the same maths in standard ONNX ops."""
    import onnxruntime as ort
    from safetensors.numpy import load_file

    from searchtrace.retriever.embedding.bert_graph import BertShape, build_bert_graph

    files = ModelFiles.bundled()
    weights, shape = load_file(str(files.weights)), BertShape.of(files.config())
    ids = np.array([[101, 7570, 2003, 1996, 4414, 102, 0, 0], [101, 1037, 2146, 2028, 2055, 4049, 3210, 102]])
    feeds = {"input_ids": ids, "attention_mask": (ids > 0).astype(np.int64)}
    out = [ort.InferenceSession(build_bert_graph(weights, shape, fused=f).SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0] for f in (False, True)]
    np.testing.assert_allclose(np.linalg.norm(out[1], axis=1), 1.0, atol=1e-5)
    assert (out[0] * out[1]).sum(axis=1).min() > 0.99999


@pytest.mark.slow
def test_batches_padding_and_truncation_do_not_change_a_vector(model):
    texts = ["tiny", "a somewhat longer sentence about boats and harbours", "word " * 600]
    batch = model.encode_documents(texts, batch_size=3)
    singles = np.stack([model.encode_query(t) for t in texts])
    np.testing.assert_allclose(batch, singles, atol=1e-5)
    # past 256 word pieces nothing counts: 600 words embed as the first 254 do (with [CLS] and [SEP])
    np.testing.assert_allclose(model.encode_query("word " * 254), singles[2], atol=1e-6)


@pytest.mark.slow
def test_int8_is_built_and_cached_apart_and_stays_close(model, sample_config):
    int8 = OnnxEmbedder(sample_config.home, "int8")
    assert int8.load().built is True
    assert len(list(sample_config.home.models.glob("*-int8/model.onnx"))) == 1
    texts = ["The cat sat on the mat.", "Quarterly revenue grew by eight percent.", "harbour master of Port Vell"]
    cos = (int8.encode_documents(texts) * model.encode_documents(texts)).sum(axis=1)
    assert 0.9 < cos.min() and cos.max() < 0.9999  # close, but not the same vectors: never mixed with fp32


@pytest.mark.slow
def test_loading_is_its_own_span_before_the_search(model, sample_config, sample_index_path):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from searchtrace.retriever.api import open_retriever
    from searchtrace.traces import vocabulary as v

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    embedder = OnnxEmbedder(sample_config.home)
    retriever = open_retriever(SAMPLE, sample_config, embedder=embedder, progress=False,
                               tracer=provider.get_tracer("test"))
    try:
        [load] = exporter.get_finished_spans()  # loaded while opening, before any search
        assert load.name == v.EMBEDDER_LOAD_SPAN and load.parent is None
        assert load.attributes[v.EMBEDDER_BUILT] is False
        assert load.attributes[v.EMBEDDER_IDENTITY] == embedder.identity
        retriever.search({"query": "harbour master of Port Vell", "mode": "fast"})
        retriever.search({"query": "harbour master of Port Vell", "mode": "fast"})
    finally:
        retriever.close()
    searches = [s for s in exporter.get_finished_spans() if s.name == v.SEARCH_SPAN]
    assert [s.attributes[v.SEARCH_COLD] for s in searches] == [True, False]  # the first after the load is cold
    spans = exporter.get_finished_spans()[1:]
    assert [s.name for s in spans].count(v.EMBEDDER_LOAD_SPAN) == 0
    embed = next(s for s in spans if s.name == "embed")
    assert embed.context.trace_id != load.context.trace_id and embed.start_time > load.end_time
    exporter.clear()  # the same embedder, loaded: opening another retriever records no load
    open_retriever(SAMPLE, sample_config, embedder=embedder, progress=False, tracer=provider.get_tracer("t")).close()
    assert exporter.get_finished_spans() == ()


def test_an_embedder_without_load_is_not_warmed():
    from searchtrace.retriever.api import warm_up

    class NoLoad:
        model_id = "fake"

    warm_up(NoLoad())  # nothing to call, nothing raised


@pytest.mark.slow
def test_a_search_from_the_command_line_imports_no_torch(model, sample_config, sample_index_path):
    """The default run path: ``searchtrace search`` on an indexed dataset, torch and sentence-transformers unused."""
    code = textwrap.dedent(f"""
        import json, runpy, sys
        sys.argv = ["searchtrace", "search", "harbour master of Port Vell", "--dataset", {str(SAMPLE)!r},
                    "--home", {str(sample_config.home.root)!r}, "--json", "--no-progress"]
        try:
            runpy.run_module("searchtrace", run_name="__main__")
        except SystemExit as exc:
            code = exc.code
        heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
        print(json.dumps({{"code": code, "heavy": heavy}}))
    """)
    env = dict(os.environ, SEARCHTRACE_OTLP="0")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "heavy": []}, proc.stderr
    assert '"results"' in proc.stdout


@pytest.mark.slow
def test_a_home_that_cannot_hold_the_model_still_embeds(model, tmp_path, caplog, monkeypatch):
    """Where the models folder cannot be made the graph is built in memory on each load, never half-written."""
    from searchtrace.retriever.embedding import onnx_model

    home = Home(tmp_path)
    home.cache.mkdir(parents=True)
    home.models.write_text("a file where the models folder should be")
    monkeypatch.setattr(onnx_model, "_BUILT", {})  # no copy from another home of this process: the build itself
    embedder = OnnxEmbedder(home)
    assert embedder.load().built is True
    assert "cannot cache the ONNX encoder" in caplog.text
    assert home.models.read_text() == "a file where the models folder should be"
    np.testing.assert_allclose(embedder.encode_query("harbour dues"), model.encode_query("harbour dues"), atol=1e-6)
