"""The ONNX encoder of a model folder: built from its weights once per home, cached by their sha256.

``<home>/cache/models/<sha256[:16]>-<variant>.onnx`` (:meth:`Home.onnx_model`)
is written whole or not at all (a temporary file, fsync'd, renamed), so a
reader never sees half a model; two processes building at once both write the
same bytes and the last rename wins. A home that cannot be written still works:
the model is then built in memory on each load.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from searchtrace.home import Home
from searchtrace.retriever.bert_onnx import BertShape, build_bert_graph
from searchtrace.retriever.encoder import Precision
from searchtrace.retriever.model_files import ModelFiles, write_atomic

__all__ = ["BUILDER_VERSION", "BuiltModel", "Precision", "ensure_onnx"]

log = logging.getLogger(__name__)

BUILDER_VERSION = 1
"""Version of :mod:`.bert_onnx`'s graph; part of the file name, so a changed builder never reuses an old file."""


@dataclass(frozen=True)
class BuiltModel:
    """An ONNX encoder ready to load.

    Attributes:
        source: the cached file, or the serialized model when the home cannot be written.
        weights_sha256: the hash of the weights it was built from.
        built: True when this call built it (the load span records it).
    """

    source: Path | bytes
    weights_sha256: str
    built: bool


def _variant(precision: Precision) -> str:
    return f"bert{BUILDER_VERSION}-fused-{precision.value}"


def _build_fp32(files: ModelFiles) -> bytes:
    from safetensors.numpy import load_file

    weights = load_file(str(files.weights))
    weights = {k.removeprefix("bert."): v for k, v in weights.items()}  # a BertModel saved inside a wrapper
    return build_bert_graph(weights, BertShape.of(files.config()), fused=True).SerializeToString()


def _quantize(fp32: bytes) -> bytes:
    """Dynamic int8 quantization of the MatMul/Attention weights (activations quantized per batch at run time)."""
    import tempfile

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="searchtrace-quant-") as tmp:
        out = Path(tmp) / "int8.onnx"
        # contrib ops have no shape inference in onnx: their outputs are float32, said so
        quantize_dynamic(onnx.load_from_string(fp32), out, weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        return out.read_bytes()


def _store(path: Path, data: bytes) -> Path | bytes:
    try:
        write_atomic(path, data)
    except OSError as exc:
        log.warning("cannot cache the ONNX encoder at %s (%s): it is built again on each load", path, exc)
        return data
    return path


_BUILT: dict[tuple[str, str], Path] = {}
"""Files this process built or read, by (weights hash, variant): a second home is given a copy, not a rebuild."""


def ensure_onnx(files: ModelFiles, home: Home, precision: Precision = Precision.FP32) -> BuiltModel:
    """The ONNX encoder of ``files`` at ``precision``, from ``home``'s cache or built now (a few s) and cached."""
    files.check_pooling()
    sha = files.weights_sha256(home)
    variant = _variant(precision)
    path = home.onnx_model(sha, variant)
    if path.is_file():
        _BUILT[sha, variant] = path
        return BuiltModel(path, sha, False)
    known = _BUILT.get((sha, variant))
    if known is not None and known.is_file():
        return BuiltModel(_store(path, known.read_bytes()), sha, False)
    built = _build(files, home, sha, precision)
    if isinstance(built.source, Path):
        _BUILT[sha, variant] = built.source
    return built


def _build(files: ModelFiles, home: Home, sha: str, precision: Precision) -> BuiltModel:
    path = home.onnx_model(sha, _variant(precision))
    fp32_path = home.onnx_model(sha, _variant(Precision.FP32))
    if precision is Precision.FP32:
        return BuiltModel(_store(path, _build_fp32(files)), sha, True)
    fp32 = fp32_path.read_bytes() if fp32_path.is_file() else _build_fp32(files)
    return BuiltModel(_store(path, _quantize(fp32)), sha, True)

