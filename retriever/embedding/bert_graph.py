"""A BERT sentence encoder as an ONNX graph, built from its weights with numpy and ``onnx.helper`` (no torch).

The graph is the post-LayerNorm BERT encoder (Devlin et al. 2019): word +
position (+ token type 0) embeddings and a LayerNorm; per layer multi-head
self-attention with an additive padding mask, a residual LayerNorm, an erf-GELU
feed-forward block and a second residual LayerNorm; then sentence-transformers'
mean pooling over the attention mask and an L2 normalisation (Reimers and
Gurevych 2019), so one session run returns the sentence vectors.

Inputs ``input_ids`` and ``attention_mask`` (int64, batch x tokens); output
``sentence_embedding`` (float32, batch x hidden). Token type ids are always 0
for one sentence, so that embedding row is folded into the position table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnx

__all__ = ["BertShape", "INPUTS", "OUTPUT", "build_bert_graph"]

INPUTS = ("input_ids", "attention_mask")
"""The graph's inputs, both int64 (batch x tokens)."""

OUTPUT = "sentence_embedding"
"""The graph's output: unit-norm float32 (batch x hidden)."""

OPSET = 17  # LayerNormalization is a standard op from 17
CONTRIB = "com.microsoft"  # onnxruntime's contrib ops (Attention, SkipLayerNormalization, BiasGelu)


@dataclass(frozen=True)
class BertShape:
    """The hyperparameters the graph needs (from the model's ``config.json``).

    Attributes:
        layers: encoder layers.
        heads: attention heads per layer.
        hidden: hidden size (a multiple of ``heads``).
        eps: LayerNorm epsilon.
    """

    layers: int
    heads: int
    hidden: int
    eps: float

    @classmethod
    def of(cls, config: Mapping[str, object]) -> BertShape:
        """From a Hugging Face BERT ``config.json`` (absolute positions, erf GELU only)."""
        if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only BERT with absolute positions and erf GELU is supported")
        def number(key: str) -> float:
            value = config.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"config.json: {key} must be a number, got {value!r}")
            return value

        return cls(int(number("num_hidden_layers")), int(number("num_attention_heads")), int(number("hidden_size")),
                   float(number("layer_norm_eps")))


class _Graph:
    """Nodes and initializers under generated names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, *inputs: str, domain: str = "", **attrs: Any) -> str:
        from onnx import helper

        self._n += 1
        out = f"{kind.lower()}_{self._n}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], name=out, domain=domain or None, **attrs))
        return out


def _linear(g: _Graph, x: str, weights: Mapping[str, np.ndarray], prefix: str) -> str:
    """``x @ W.T + b`` (torch's Linear stores W as out x in)."""
    w = g.const(f"{prefix}.weight_t", weights[f"{prefix}.weight"].T.astype(np.float32))
    b = g.const(f"{prefix}.bias", weights[f"{prefix}.bias"].astype(np.float32))
    return g.op("Add", g.op("MatMul", x, w), b)


def _layer_norm(g: _Graph, x: str, weights: Mapping[str, np.ndarray], prefix: str, eps: float) -> str:
    gamma = g.const(f"{prefix}.weight", weights[f"{prefix}.weight"].astype(np.float32))
    beta = g.const(f"{prefix}.bias", weights[f"{prefix}.bias"].astype(np.float32))
    return g.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=eps)


def _attention(g: _Graph, x: str, mask_add: str, weights: Mapping[str, np.ndarray], prefix: str,
               shape: BertShape, heads_shape: str, merged_shape: str) -> str:
    """Scaled dot-product attention over all heads (Vaswani et al. 2017), padding masked additively."""
    q, k, v = (g.op("Transpose", g.op("Reshape", _linear(g, x, weights, f"{prefix}.self.{n}"), heads_shape),
                    perm=perm)
               for n, perm in (("query", [0, 2, 1, 3]), ("key", [0, 2, 3, 1]), ("value", [0, 2, 1, 3])))
    scale = g.const(f"{prefix}.scale", np.array(1.0 / np.sqrt(shape.hidden // shape.heads), dtype=np.float32))
    scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), mask_add)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
    merged = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merged_shape)
    return _linear(g, merged, weights, f"{prefix}.output.dense")


def _gelu(g: _Graph, x: str) -> str:
    """GELU with erf, as BERT's ``hidden_act = gelu``: x/2 (1 + erf(x / sqrt 2))."""
    half = g.const(f"{x}.half", np.array(0.5, dtype=np.float32))
    one = g.const(f"{x}.one", np.array(1.0, dtype=np.float32))
    root2 = g.const(f"{x}.sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    return g.op("Mul", g.op("Mul", x, half), g.op("Add", g.op("Erf", g.op("Div", x, root2)), one))


def _fused_layer(g: _Graph, x: str, mask: str, weights: Mapping[str, np.ndarray], prefix: str,
                 shape: BertShape) -> str:
    """One layer in onnxruntime's contrib ops: Attention, SkipLayerNormalization, BiasGelu (the same maths)."""
    qkv = [f"{prefix}.attention.self.{n}" for n in ("query", "key", "value")]
    w = g.const(f"{prefix}.qkv.weight", np.concatenate([weights[f"{n}.weight"].T for n in qkv], axis=1)
                .astype(np.float32))
    b = g.const(f"{prefix}.qkv.bias", np.concatenate([weights[f"{n}.bias"] for n in qkv]).astype(np.float32))
    attended = g.op("Attention", x, w, b, mask, domain=CONTRIB, num_heads=shape.heads)
    x = _skip_norm(g, attended, x, weights, f"{prefix}.attention.output", shape.eps)
    bias = g.const(f"{prefix}.intermediate.dense.bias", weights[f"{prefix}.intermediate.dense.bias"].astype(np.float32))
    inner = g.op("BiasGelu", g.op("MatMul", x, _weight_t(g, weights, f"{prefix}.intermediate.dense")), bias,
                 domain=CONTRIB)
    return _skip_norm(g, inner, x, weights, f"{prefix}.output", shape.eps)


def _weight_t(g: _Graph, weights: Mapping[str, np.ndarray], prefix: str) -> str:
    return g.const(f"{prefix}.weight_t", weights[f"{prefix}.weight"].T.astype(np.float32))


def _skip_norm(g: _Graph, inner: str, skip: str, weights: Mapping[str, np.ndarray], prefix: str, eps: float) -> str:
    """LayerNorm(inner @ W.T + b + skip), W and b of ``prefix.dense``, the norm of ``prefix.LayerNorm``."""
    params = [g.const(f"{prefix}.LayerNorm.{p}", weights[f"{prefix}.LayerNorm.{p}"].astype(np.float32))
              for p in ("weight", "bias")]
    bias = g.const(f"{prefix}.dense.bias", weights[f"{prefix}.dense.bias"].astype(np.float32))
    return g.op("SkipLayerNormalization", g.op("MatMul", inner, _weight_t(g, weights, f"{prefix}.dense")), skip,
                *params, bias, domain=CONTRIB, epsilon=eps)


def _embeddings(g: _Graph, weights: Mapping[str, np.ndarray], shape: BertShape) -> str:
    words = g.const("word_embeddings", weights["embeddings.word_embeddings.weight"].astype(np.float32))
    positions = (weights["embeddings.position_embeddings.weight"]
                 + weights["embeddings.token_type_embeddings.weight"][0]).astype(np.float32)
    table = g.const("position_embeddings", positions)
    length = g.op("Shape", INPUTS[0], start=1, end=2)
    zero, axis = g.const("zero", np.array([0], dtype=np.int64)), g.const("axis0", np.array([0], dtype=np.int64))
    sliced = g.op("Slice", table, zero, length, axis)
    summed = g.op("Add", g.op("Gather", words, INPUTS[0], axis=0), sliced)
    return _layer_norm(g, summed, weights, "embeddings.LayerNorm", shape.eps)


def _pool(g: _Graph, hidden: str, mask: str) -> str:
    """Mean over unmasked tokens, then x / max(|x|, 1e-12) (sentence-transformers' Pooling, Normalize)."""
    axis1 = g.const("axis1", np.array([1], dtype=np.int64))
    summed = g.op("ReduceSum", g.op("Mul", hidden, g.op("Unsqueeze", mask, g.const("axis_last", np.array([-1], dtype=np.int64)))),
                  axis1, keepdims=0)
    counts = g.op("Max", g.op("ReduceSum", mask, axis1, keepdims=1), g.const("min_count", np.array(1e-9, np.float32)))
    mean = g.op("Div", summed, counts)
    norm = g.op("Max", g.op("ReduceL2", mean, axes=[1], keepdims=1), g.const("min_norm", np.array(1e-12, np.float32)))
    return g.op("Div", mean, norm)


def _plain_layers(g: _Graph, x: str, mask: str, weights: Mapping[str, np.ndarray], shape: BertShape) -> str:
    """The encoder layers in standard ONNX ops."""
    heads_shape = g.const("heads_shape", np.array([0, 0, shape.heads, shape.hidden // shape.heads], dtype=np.int64))
    merged_shape = g.const("merged_shape", np.array([0, 0, shape.hidden], dtype=np.int64))
    # 0 where attended, the float minimum where padded (as transformers' BERT): exp() of it is exactly 0
    floor = g.const("mask_floor", np.array(np.finfo(np.float32).min, dtype=np.float32))
    one = g.const("one", np.array(1.0, dtype=np.float32))
    mask_add = g.op("Unsqueeze", g.op("Mul", g.op("Sub", one, mask), floor),
                    g.const("axes12", np.array([1, 2], dtype=np.int64)))
    for i in range(shape.layers):
        prefix = f"encoder.layer.{i}"
        attended = _attention(g, x, mask_add, weights, f"{prefix}.attention", shape, heads_shape, merged_shape)
        x = _layer_norm(g, g.op("Add", attended, x), weights, f"{prefix}.attention.output.LayerNorm", shape.eps)
        inner = _gelu(g, _linear(g, x, weights, f"{prefix}.intermediate.dense"))
        x = _layer_norm(g, g.op("Add", _linear(g, inner, weights, f"{prefix}.output.dense"), x), weights,
                        f"{prefix}.output.LayerNorm", shape.eps)
    return x


def build_bert_graph(weights: Mapping[str, np.ndarray], shape: BertShape, fused: bool = False) -> onnx.ModelProto:
    """The ONNX model of a BERT sentence encoder with mean pooling and L2 norm.

    Args:
        weights: the tensors of a Hugging Face ``BertModel`` by name (``embeddings.*``, ``encoder.layer.N.*``).
        shape: its hyperparameters.
        fused: each layer as onnxruntime's contrib ops (one Attention node, SkipLayerNormalization,
            BiasGelu) rather than standard ONNX ops; runs on onnxruntime only.
    """
    from onnx import TensorProto, helper

    g = _Graph()
    mask = g.op("Cast", INPUTS[1], to=TensorProto.FLOAT)
    x = _embeddings(g, weights, shape)
    if fused:
        mask_index = g.op("Cast", INPUTS[1], to=TensorProto.INT32)
        for i in range(shape.layers):
            x = _fused_layer(g, x, mask_index, weights, f"encoder.layer.{i}", shape)
    else:
        x = _plain_layers(g, x, mask, weights, shape)
    pooled = _pool(g, x, mask)
    g.nodes.append(helper.make_node("Identity", [pooled], [OUTPUT], name=OUTPUT))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"]) for n in INPUTS]
    output = helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", shape.hidden])
    graph = helper.make_graph(g.nodes, "bert_sentence_encoder", inputs, [output], g.inits)
    opsets = [helper.make_opsetid("", OPSET)] + ([helper.make_opsetid(CONTRIB, 1)] if fused else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="searchtrace")
    model.ir_version = 8  # understood by every onnxruntime since 1.10
    return model
