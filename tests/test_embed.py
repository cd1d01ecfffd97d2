"""The MiniLM embedder's two backends give the same vectors, so vectors stored by either stay searchable."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.embed import MiniLMEmbedder, _onnx_available

pytestmark = pytest.mark.skipif(not _onnx_available(), reason="onnxruntime/onnx not installed (pip install -e .)")

TEXTS = [
    "3.5 Positional Encoding\nSince our model contains no recurrence and no convolution, we must inject",
    "Net sales increased 8% or $2.9 billion during the third quarter of 2023 compared to 2022.",
    "   leading and trailing spaces are stripped as sentence-transformers does   ",
    "",
    "word " * 300,  # longer than the 128-token cap: truncated the same way
    "Table 2: BLEU 28.4 EN-DE, 41.8 EN-FR; training cost 3.3e18 FLOPs",
]


def test_onnx_backend_matches_sentence_transformers(tmp_path):
    onnx = MiniLMEmbedder(backend="onnx", cache_dir=tmp_path, batch_size=4)  # exports into tmp_path
    exported = list(tmp_path.glob("all-MiniLM-L6-v2-*.onnx"))
    assert len(exported) == 1 and not list(tmp_path.glob("*.tmp"))
    torch = MiniLMEmbedder(backend="torch", batch_size=4)
    a, b = onnx.embed(TEXTS), torch.embed(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384) and a.dtype == np.float32
    assert np.abs(a - b).max() < 1e-5
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    # order-independent: each text's vector does not depend on its batch neighbours (length-sorted batches)
    assert np.abs(onnx.embed(TEXTS[::-1])[::-1] - a).max() < 1e-5
    # a second embedder reuses the cached export
    again = MiniLMEmbedder(backend="onnx", cache_dir=tmp_path)
    assert list(tmp_path.glob("all-MiniLM-L6-v2-*.onnx")) == exported
    assert np.abs(again.embed(TEXTS[:2]) - a[:2]).max() < 1e-6


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        MiniLMEmbedder(backend="tensorrt")
