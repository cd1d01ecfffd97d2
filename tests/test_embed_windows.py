"""Embedding windows (each line once), the int8 onnxruntime MiniLM, the text-hash cache and the GPU route."""

from __future__ import annotations

import importlib.util

import numpy as np
import polars as pl
import pytest

from tasks.corpus import embed
from tasks.corpus.embed import OnnxMiniLMEmbedder, TorchMiniLMEmbedder, embed_unique, get_embedder
from tasks.corpus.windows import build_embed_windows, build_windows, repeated_lines


def _doc(pages: int = 6) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Pages with a running head, a page number, body sentences and a row of numbers; two sections."""
    rows, n = [], 0
    topics = ["retail", "cloud", "devices", "advertising", "logistics", "services", "media", "health"]
    for page in range(pages):
        topic = topics[page]
        body = [f"Annual report {2020 + page % 2}", f"The board reviewed {topic} revenue and margins",
                f"Net sales of {topic} rose in every region", "12.4 13.1 9.8", f"Page {page + 1}"]
        for text in body:
            rows.append({"doc_id": "d", "page": page, "line_no": n, "text": text})
            n += 1
    lines = pl.DataFrame(rows)
    half = n // 2
    toc = pl.DataFrame({"section_id": [0, 1], "level": [1, 1], "line_start": [0, half],
                        "line_end": [half - 1, n - 1]})
    return lines, toc


def test_embed_windows_cover_each_line_at_most_once_inside_a_section():
    lines, toc = _doc()
    w = build_embed_windows(lines, toc, size=4, min_words=0, skip_repeated=False)
    covered = [ln for s, e in zip(w["line_start"], w["line_end"]) for ln in range(s, e + 1)]
    assert sorted(covered) == lines["line_no"].to_list()  # every line, none twice
    assert not any(s < 15 <= e for s, e in zip(w["line_start"], w["line_end"]))  # no window crosses sections
    assert w["window_id"].to_list() == list(range(w.height))
    overlapping = build_windows(lines, toc, 4, 2)
    assert overlapping.height > w.height  # BM25's windows are unchanged: 4 lines every 2


def test_running_heads_and_page_numbers_are_left_out_and_number_rows_skipped():
    lines, toc = _doc()
    heads = repeated_lines(lines)
    texts = dict(zip(lines["line_no"], lines["text"]))
    assert {texts[i] for i in heads} >= {"12.4 13.1 9.8", "Page 1", "Annual report 2020"}
    assert not any("board reviewed" in texts[i] for i in heads)  # digits aside, body lines differ per page
    w = build_embed_windows(lines, toc, size=4)
    joined = "\n".join(w["text"])
    assert "Page 3" not in joined and "Annual report" not in joined and "12.4" not in joined
    assert "Net sales of cloud rose" in joined
    numbers = pl.DataFrame({"doc_id": ["d"] * 2, "page": [0, 0], "line_no": [0, 1], "text": ["12.4 13.1", "$ 9 %"]})
    assert build_embed_windows(numbers, toc.clear(), skip_repeated=False).height == 0  # left to BM25


@pytest.fixture(scope="module")
def onnx() -> OnnxMiniLMEmbedder:
    return get_embedder("minilm", "cpu", 4)


def test_int8_vectors_do_not_depend_on_batch_or_order(onnx):
    texts = ["Revenue grew 12% in fiscal 2023", "a short one", "Item 7. Management's discussion and analysis "
             "of financial condition and results of operations " * 3, "Risk factors", "Net income"]
    together = onnx.embed(texts)
    assert together.shape == (5, 384) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    alone = np.stack([onnx.embed([t])[0] for t in texts])
    assert np.abs(together - alone).max() <= 1e-6
    assert np.abs(onnx.embed(texts, sort=False) - together).max() <= 1e-6
    assert onnx.embed([]).shape == (0, 384)
    sim = together @ together.T
    assert sim[0, 4] > sim[0, 1]  # revenue is nearer to net income than to "a short one"


def test_identical_texts_are_embedded_once(onnx, monkeypatch):
    monkeypatch.setattr(embed, "_cache", type(embed._cache)())
    vecs, n = embed_unique(onnx, ["Legal disclaimer text", "Other words here", "Legal disclaimer text"])
    assert n == 2 and np.array_equal(vecs[0], vecs[2])
    again, n = embed_unique(onnx, ["Other words here", "Legal disclaimer text"])
    assert n == 0 and np.array_equal(again[1], vecs[0])


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed (the 'gpu' extra)")
def test_int8_model_agrees_with_torch(onnx):
    texts = ["The quick brown fox jumps over the lazy dog.", "Revenue grew 12% in fiscal 2023\nto $4.2 billion",
             "Section 3.2 Results on the held-out set"]
    cos = (onnx.embed(texts) * get_embedder("minilm-torch", "cpu").embed(texts)).sum(axis=1)
    assert cos.min() > 0.99


def test_a_gpu_device_takes_the_torch_path(monkeypatch):
    """No GPU here: the route is checked (the torch embedder is built for that device), not CUDA itself."""
    built = []
    monkeypatch.setattr(TorchMiniLMEmbedder, "__init__", lambda self, device, batch_size: built.append(device))
    assert isinstance(get_embedder.__wrapped__("minilm", "cuda"), TorchMiniLMEmbedder)
    assert built == ["cuda"]
    assert isinstance(get_embedder.__wrapped__("minilm", "cpu"), OnnxMiniLMEmbedder)
    with pytest.raises(ValueError, match="unknown embedder"):
        get_embedder.__wrapped__("nope")
