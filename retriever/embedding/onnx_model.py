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
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.durable import fsync_dir, fsync_tree
from searchtrace.home import Home
from searchtrace.retriever.embedding.bert_graph import BertShape, build_bert_graph
from searchtrace.retriever.embedding.encoder import Precision
from searchtrace.retriever.embedding.model_files import ModelFiles

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = ["BUILDER_VERSION", "GRAPH", "WEIGHTS", "BuiltModel", "Precision", "discard", "ensure_onnx"]

log = logging.getLogger(__name__)

BUILDER_VERSION = 1
"""Version of :mod:`.bert_graph`'s graph; part of the folder name, so a changed builder never reuses an old one."""

GRAPH = "model.onnx"
"""The graph's file in a model folder."""

WEIGHTS = "weights.bin"
"""The tensors' file in a model folder, named by the graph (a path relative to it)."""


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
    """A writer of ``model``'s graph and tensors into a folder (from a copy: ``model`` keeps its tensors)."""
    def write(into: Path) -> None:
        import onnx

        external = onnx.ModelProto()
        external.CopyFrom(model)
        onnx.save_model(external, str(into / GRAPH), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=WEIGHTS, size_threshold=1024)
    return write


def _store(folder: Path, model: ModelProto) -> Path | bytes:
    try:
        return _publish(folder, _write_model(model))
    except OSError as exc:
        log.warning("cannot cache the ONNX encoder at %s (%s): it is built again on each load", folder, exc)
        return model.SerializeToString()


def discard(graph: Path) -> None:
    """Remove the cached model folder of ``graph`` (one ONNX Runtime could not load)."""
    shutil.rmtree(graph.parent, ignore_errors=True)


_BUILT: dict[tuple[str, str], Path] = {}
"""Graphs this process built or read, by (weights hash, variant): a second home is given a copy, not a rebuild."""


def _copy(graph: Path, folder: Path) -> Path | bytes:
    """Give ``folder`` a copy of the model folder of ``graph`` (its bytes when ``folder`` cannot be written)."""
    def write(into: Path) -> None:
        for name in (GRAPH, WEIGHTS):
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
