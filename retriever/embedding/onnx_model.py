"""The ONNX encoder of a model folder: built from its weights once per home, cached by their sha256.

``<home>/cache/models/<sha256[:16]>-<variant>/`` (:meth:`Home.onnx_model`)
holds the graph (``model.onnx``) and its tensors (``weights.bin``, ONNX
external data): ONNX Runtime maps the tensors from that file instead of
parsing 90 MB of them out of the graph, which makes opening a session about
three times cheaper (0.07 s instead of 0.2 s of CPU: ``benchmarks/bench_model_open.py``). The folder is published
whole or not at all: written aside, fsync'd, renamed into place; when two
processes build at once the first rename wins and the other's copy is dropped.
A home that cannot be written still works: the model is then built in memory
on each load.

A folder also holds ``manifest.json``: the sha256, size and a 64-bit sum of
its graph and tensors, and a known answer, the sentence vector the graph gave
for fixed token ids when it was built. Every load sums both files (5 ms
for 86 MiB in the page cache: ``benchmarks/bench_integrity.py``) and runs those ids as its warm-up
(:func:`known_answer_problem`): damaged tensors, even with their size and time
kept, change the sum, and a damaged graph gives another vector, so the folder
is built again before any vector reaches a search or the embedding cache.
``index --verify`` hashes the files whole (:func:`verify_folder`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from searchtrace.durable import fsync_dir, fsync_tree
from searchtrace.home import Home
from searchtrace.retriever.embedding.bert_graph import BertShape, build_bert_graph
from searchtrace.retriever.embedding.encoder import Precision
from searchtrace.retriever.embedding.model_files import ModelFiles

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = ["BUILDER_VERSION", "GRAPH", "KNOWN_IDS", "MANIFEST", "WEIGHTS", "BuiltModel", "Precision", "discard",
           "ensure_onnx", "known_answer_problem", "run_ids", "verify_folder"]

log = logging.getLogger(__name__)

BUILDER_VERSION = 1
"""Version of :mod:`.bert_graph`'s graph; part of the folder name, so a changed builder never reuses an old one."""

GRAPH = "model.onnx"
"""The graph's file in a model folder."""

WEIGHTS = "weights.bin"
"""The tensors' file in a model folder, named by the graph (a path relative to it)."""

MANIFEST = "manifest.json"
"""The folder's hashes and known answer."""

KNOWN_IDS = (101, 7592, 1010, 2088, 999, 102)
"""Token ids of the known answer ("[CLS] hello , world ! [SEP]" in BERT's uncased vocabulary)."""

KNOWN_TOLERANCE = 1e-4
"""The largest difference from the known answer a sound graph gives (thread counts change the sums' order)."""


def run_ids(session: Any, ids: tuple[int, ...] = KNOWN_IDS) -> np.ndarray:
    """The sentence vector an ONNX Runtime session of the encoder gives for one row of token ids."""
    row = np.asarray([ids], dtype=np.int64)
    (vectors,) = session.run(None, {"input_ids": row, "attention_mask": np.ones_like(row)})
    return np.asarray(vectors[0], dtype=np.float32)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sum64(path: Path) -> int:
    """The file's bytes read as little-endian uint64 words (the tail zero-padded), summed modulo 2**64.

    Not a cryptographic hash: a check that damage (random bytes, a torn write) changed the file, cheap
    enough for every load (numpy sums the mapped pages at memory speed).
    """
    size = path.stat().st_size
    if size == 0:
        return 0
    data = np.memmap(path, dtype=np.uint8, mode="r")
    whole = size // 8 * 8
    total = int(data[:whole].view("<u8").sum(dtype=np.uint64)) if whole else 0
    tail = bytes(data[whole:]).ljust(8, b"\0") if whole < size else b"\0" * 8
    return (total + int.from_bytes(tail, "little")) % (1 << 64)


def _manifest(folder: Path, answer: np.ndarray) -> dict[str, Any]:
    files = {name: {"sha256": _sha256(folder / name), "size": (folder / name).stat().st_size,
                    "sum64": _sum64(folder / name)} for name in (GRAPH, WEIGHTS)}
    return {"format": 1, "files": files, "known_ids": list(KNOWN_IDS), "known_answer": answer.tolist()}


def _read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("known_answer"), list) else None


def known_answer_problem(session: Any, graph: Path) -> str | None:
    """What is wrong with the model folder of ``graph``, or None: its files' sizes and sums are those it was
    built with and its session gives the known answer (a folder without a manifest is unverified: a problem)."""
    manifest = _read_manifest(graph.parent)
    if manifest is None:
        return f"{graph.parent / MANIFEST} is missing or unreadable"
    for name, expected_file in dict(manifest.get("files") or {}).items():
        path = graph.parent / name
        try:
            intact = path.stat().st_size == expected_file.get("size") and _sum64(path) == expected_file.get("sum64")
        except (OSError, ValueError, AttributeError) as exc:
            return f"{path}: {exc}"
        if not intact:
            return f"{path}: its bytes differ from those the model was built with (damaged)"
    try:
        expected = np.asarray(manifest["known_answer"], dtype=np.float32)
        got = run_ids(session, tuple(int(i) for i in manifest["known_ids"]))
    except (KeyError, TypeError, ValueError) as exc:
        return f"{graph.parent / MANIFEST}: {exc}"
    if got.shape != expected.shape or not float(np.max(np.abs(got - expected))) <= KNOWN_TOLERANCE:
        return f"{graph.parent} gives another vector for its known answer than when it was built (damaged)"
    return None


def verify_folder(graph: Path) -> list[str]:
    """Every file of the model folder of ``graph`` hashed whole against its manifest: the problems found."""
    manifest = _read_manifest(graph.parent)
    if manifest is None:
        return [f"{graph.parent / MANIFEST} is missing or unreadable"]
    problems = []
    for name, expected in dict(manifest.get("files") or {}).items():
        path = graph.parent / name
        try:
            size = path.stat().st_size
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")
            continue
        if size != expected.get("size") or _sha256(path) != expected.get("sha256"):
            problems.append(f"{path}: its bytes differ from those the model was built with")
    return problems


@dataclass(frozen=True)
class BuiltModel:
    """An ONNX encoder ready to load.

    Attributes:
        source: the cached graph file (its tensors beside it), or the whole
            serialized model when the home cannot be written.
        weights_sha256: the hash of the weights it was built from.
        built: True when this call built it (the load span records it).
    """

    source: Path | bytes
    weights_sha256: str
    built: bool


def _variant(precision: Precision) -> str:
    return f"bert{BUILDER_VERSION}-fused-{precision.value}"


def _build_fp32(files: ModelFiles) -> ModelProto:
    from safetensors.numpy import load_file

    weights = load_file(str(files.weights))
    weights = {k.removeprefix("bert."): v for k, v in weights.items()}  # a BertModel saved inside a wrapper
    return build_bert_graph(weights, BertShape.of(files.config()), fused=True)


def _quantize(fp32: ModelProto) -> ModelProto:
    """Dynamic int8 quantization of the MatMul/Attention weights (activations quantized per batch at run time)."""
    import tempfile

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="searchtrace-quant-") as tmp:
        out = Path(tmp) / "int8.onnx"
        # contrib ops have no shape inference in onnx: their outputs are float32, said so
        quantize_dynamic(fp32, out, weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        return onnx.load(str(out))


def _publish(folder: Path, write: Callable[[Path], None]) -> Path:
    """Fill a model folder with ``write(aside)`` and rename it into place as ``folder``; its graph's path."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        write(tmp)
        fsync_tree(tmp)
        try:
            os.rename(tmp, folder)
        except OSError:
            if not (folder / GRAPH).is_file():  # not another process's finished folder: a real failure
                raise
        fsync_dir(folder.parent)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder / GRAPH


def _write_model(model: ModelProto) -> Callable[[Path], None]:
    """A writer of ``model``'s graph, tensors and manifest into a folder (from a copy: ``model`` keeps its tensors).

    The known answer comes from a session of the written files, before the folder is published.
    """
    def write(into: Path) -> None:
        import onnx
        import onnxruntime as ort

        external = onnx.ModelProto()
        external.CopyFrom(model)
        onnx.save_model(external, str(into / GRAPH), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=WEIGHTS, size_threshold=1024)
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(str(into / GRAPH), options, providers=["CPUExecutionProvider"])
        answer = run_ids(session)
        del session
        (into / MANIFEST).write_text(json.dumps(_manifest(into, answer)), encoding="utf-8")
    return write


def _store(folder: Path, model: ModelProto) -> Path | bytes:
    try:
        return _publish(folder, _write_model(model))
    except OSError as exc:
        log.warning("cannot cache the ONNX encoder at %s (%s): it is built again on each load", folder, exc)
        return model.SerializeToString()


_BUILT: dict[tuple[str, str], Path] = {}
"""Graphs this process built or read, by (weights hash, variant): a second home is given a copy, not a rebuild."""


def discard(graph: Path) -> None:
    """Remove the cached model folder of ``graph`` (damaged, or one ONNX Runtime could not load)."""
    for key in [k for k, known in _BUILT.items() if known == graph]:
        del _BUILT[key]  # never copied to another home
    shutil.rmtree(graph.parent, ignore_errors=True)


def _copy(graph: Path, folder: Path) -> Path | bytes:
    """Give ``folder`` a copy of the model folder of ``graph`` (its bytes when ``folder`` cannot be written)."""
    def write(into: Path) -> None:
        for name in (GRAPH, WEIGHTS, MANIFEST):
            shutil.copyfile(graph.parent / name, into / name)
    try:
        return _publish(folder, write)
    except OSError as exc:
        import onnx

        log.warning("cannot cache the ONNX encoder at %s (%s): it is read from %s on each load", folder, exc, graph)
        return onnx.load(str(graph)).SerializeToString()


def ensure_onnx(files: ModelFiles, home: Home, precision: Precision = Precision.FP32) -> BuiltModel:
    """The ONNX encoder of ``files`` at ``precision``, from ``home``'s cache or built now (a few s) and cached."""
    files.check_pooling()
    sha = files.weights_sha256(home)
    variant = _variant(precision)
    folder = home.onnx_model(sha, variant)
    graph = folder / GRAPH
    if graph.is_file():
        _BUILT[sha, variant] = graph
        return BuiltModel(graph, sha, False)
    _legacy(folder)
    known = _BUILT.get((sha, variant))
    if known is not None and known.is_file():
        return BuiltModel(_copy(known, folder), sha, False)
    built = _build(files, home, sha, precision)
    if isinstance(built.source, Path):
        _BUILT[sha, variant] = built.source
    return built


def _legacy(folder: Path) -> None:
    """Remove the single-file graph earlier versions cached under the same name (rebuilt as a folder)."""
    try:
        folder.with_name(f"{folder.name}.onnx").unlink(missing_ok=True)
    except OSError:
        pass


def _build(files: ModelFiles, home: Home, sha: str, precision: Precision) -> BuiltModel:
    folder = home.onnx_model(sha, _variant(precision))
    if precision is Precision.FP32:
        return BuiltModel(_store(folder, _build_fp32(files)), sha, True)
    import onnx

    fp32_graph = home.onnx_model(sha, _variant(Precision.FP32)) / GRAPH
    fp32 = onnx.load(str(fp32_graph)) if fp32_graph.is_file() else _build_fp32(files)
    return BuiltModel(_store(folder, _quantize(fp32)), sha, True)
