"""The sentence model: all-MiniLM-L6-v2 with int8 weights, run by onnxruntime on one thread.

The weights and the tokenizer ship inside this package (minilm/model.onnx, minilm/tokenizer.json;
Apache-2.0, see minilm/LICENSE and scripts/minilm_int8.py for how the weights were made): dynamic int8
(MatMulInteger), so the weights stay int8 in memory (about 70 MB loaded, against 190 MB for a model
whose int8 weights are cast back to float when it loads). Both files are checked against a pinned
SHA-256 before the model is made, so a replaced file is never run; nothing is fetched from the network.

One text per call, no padding: batching int8 makes a text's vector depend on its batch neighbours and
costs several times the peak memory for no speed. Texts are cut at 256 tokens; the vector is the mean of
the token vectors, scaled to unit length, so a dot product is the cosine.

Memory (measured on the 10k bench store, whose texts all reach 256 tokens): onnxruntime keeps a copy of
model bytes handed to it (21 MB more than a session made from the file), so the session is made from the
very file whose bytes were checked. Its arena is on and its memory pattern off: one 256-token text then
peaks 15 MB above the loaded model and keeps 25 MB for the next call, where without the arena each call
peaked 58 MB above it (every activation malloc'd apart) and was a quarter slower.

onnxruntime, tokenizers and numpy are imported here only, and this module is imported only when the
semantic layer is on and something ranks (see layer.py).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MODEL_ID = "all-MiniLM-L6-v2-int8"  # stored with the vectors: another model's vectors are not compared
DIM = 384
MAX_TOKENS = 256
MODEL_SHA256 = "9e80251537633bab7d98c9a4f07070371d83f1d28e6994a1f5d93c53de3c5454"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
FILES = Path(__file__).with_name("minilm")
TOKENIZER = FILES / "tokenizer.json"


class ModelUnavailable(Exception):
    """The model cannot be used: its files are missing or not the pinned ones, or its libraries are not
    installed. The message is a sentence for the user."""


def weights_path() -> Path:
    """The installed model.onnx."""
    return FILES / "model.onnx"


def _unreadable(path: Path, exc: OSError) -> ModelUnavailable:
    return ModelUnavailable(f"the sentence model's file {path.name} cannot be read ({exc.strerror})")


def _not_pinned(path: Path) -> ModelUnavailable:
    return ModelUnavailable(
        f"the sentence model's file {path.name} is not the one kin-memory was built with; reinstall kin-memory"
    )


def _checked(path: Path, sha256: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise _not_pinned(path)
    return data


def _checked_session(path: Path, sha256: str, make: Callable[[str], Any]) -> Any:
    """make(a path to the file) once the file's bytes are checked. On Linux the path names the open file
    itself (/proc/self/fd/N), so what is run is what was checked even if the file is replaced meanwhile."""
    try:
        with path.open("rb") as f:
            digest = hashlib.sha256()
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
            if digest.hexdigest() != sha256:
                raise _not_pinned(path)
            by_fd = Path(f"/proc/self/fd/{f.fileno()}")
            return make(str(by_fd) if by_fd.exists() else str(path))
    except OSError as exc:
        raise _unreadable(path, exc) from None


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
        tok = Tokenizer.from_str(_checked(TOKENIZER, TOKENIZER_SHA256).decode("utf-8"))
        tok.no_padding()
        tok.enable_truncation(MAX_TOKENS)
        self._tok = tok
        opts = onnxruntime.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 3
        # See the module's header: the arena bounds a call's peak; a memory pattern would plan the
        # largest text's activations as one block and keep it.
        opts.enable_cpu_mem_arena = True
        opts.enable_mem_pattern = False
        self._session = _checked_session(
            weights_path(),
            MODEL_SHA256,
            lambda p: onnxruntime.InferenceSession(p, opts, providers=["CPUExecutionProvider"]),
        )
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
