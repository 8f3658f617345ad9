"""What an embedder is: the protocols the retriever and the index build use, and the model's name and size.

Kept apart from any implementation so the ONNX Runtime embedder (the default),
the sentence-transformers one (tests and benchmarks) and the embedding cache
all import it without importing one another.
"""

from __future__ import annotations

import enum
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from searchtrace.errors import ValidationError

__all__ = ["DIM", "MODEL_ID", "DocumentEncoder", "Encoder", "Loadable", "Precision", "cache_identity", "check_texts"]

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
"""The embedding model; an index is keyed by the embedder's ``model_id`` (its vector space)."""

DIM = 384
"""Its vector size."""


class Precision(str, enum.Enum):
    """The encoder's weights: float32 (the default, equal to sentence-transformers within cosine 1e-5)
    or dynamically quantized int8 (faster, vectors moved: its own index and cache entries)."""

    FP32 = "fp32"
    INT8 = "int8"


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, each checked to be a str.

    Raises:
        ValidationError: one str given for a sequence, or a non-str item (named by index).
    """
    if isinstance(texts, str):
        raise ValidationError("expected a sequence of texts, got one str", field="texts")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise ValidationError(f"texts[{i}] must be str, got {type(t).__name__}", field="texts")
    return out


class DocumentEncoder(Protocol):
    """What builds embeddings for the cache: passages (and queries) in batches."""

    @property
    def model_id(self) -> str: ...

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> np.ndarray: ...


class Encoder(DocumentEncoder, Protocol):
    """What the retriever embeds with: batches, and one query at a time."""

    @property
    def dim(self) -> int: ...

    def encode_query(self, text: str) -> np.ndarray: ...


@runtime_checkable
class Loadable(Protocol):
    """An embedder that loads its model in an explicit call (so it can be warmed outside any search)."""

    def load(self) -> object: ...


def cache_identity(encoder: DocumentEncoder) -> str:
    """The key the embedding cache files an encoder's vectors under.

    An embedder that has an ``identity`` (model weights hash, runtime, precision)
    is keyed by it, so two runtimes or precisions never share cached vectors;
    one without falls back to its ``model_id``.
    """
    identity = getattr(encoder, "identity", None)
    return identity if isinstance(identity, str) and identity else encoder.model_id
