"""Each line through the model once: blocks of consecutive lines, pooled into the overlapping windows.

The searchable windows stay BM25's (``build_windows``: 4 lines every 2, so a passage is never cut at a window
edge), but embedding them one by one ran every line through the model twice. Here the lines of a section are
packed into blocks of at most ``MAX_TOKENS`` tokens, each block is run once, and a window's vector is the mean of
the hidden states of its lines' tokens (the model's own mean pooling, over the window's tokens; "late chunking").
A token sees the block around it instead of only its window, and a window that straddles two blocks pools
tokens from both.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from tasks.corpus.embed import MAX_TOKENS
from tasks.corpus.windows import section_of_lines


def block_spans(token_counts: list[int], sections: list, max_lines: int, budget: int = MAX_TOKENS - 2
                ) -> list[tuple[int, int]]:
    """[a, b) line-index spans: up to ``max_lines`` consecutive lines of one section and at most ``budget`` tokens
    ([CLS]/[SEP] aside) unless a single line is longer (the model then truncates it)."""
    spans: list[tuple[int, int]] = []
    start, used = 0, 0
    for i, n in enumerate(token_counts):
        if i > start and (sections[i] != sections[start] or used + n > budget or i - start >= max_lines):
            spans.append((start, i))
            start, used = i, 0
        used += n
    if token_counts:
        spans.append((start, len(token_counts)))
    return spans


def line_blocks(tokenizer, lines: pl.DataFrame, toc: pl.DataFrame, block_lines: int = 4
                ) -> tuple[list[tuple[int, int]], list[str]]:
    """The blocks of one document: [a, b) spans over its lines sorted by line number, and their texts."""
    lines = lines.sort("line_no")
    texts = lines["text"].to_list()
    sections = section_of_lines(lines["line_no"].to_list(), toc)
    counts = [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
    spans = block_spans(counts, sections, block_lines)
    return spans, ["\n".join(texts[a:b]) for a, b in spans]


def window_vectors(embedder, lines: pl.DataFrame, toc: pl.DataFrame, windows: pl.DataFrame,
                   block_lines: int = 4) -> tuple[np.ndarray, int]:
    """Unit vectors for ``windows`` (rows of ``build_windows`` over the same lines) from one forward pass per
    block; returns them and the number of blocks run. ``embedder`` has ``tokenizer`` and ``token_states``."""
    out = np.zeros((windows.height, embedder.dim), dtype=np.float32)
    if windows.height == 0:
        return out, 0
    lines = lines.sort("line_no")
    texts = lines["text"].to_list()
    line_nos = lines["line_no"].to_list()
    spans, blocks = line_blocks(embedder.tokenizer, lines, toc, block_lines)
    encodings = embedder.tokenizer.encode_batch(blocks)
    states = embedder.token_states(blocks, encodings=encodings)
    sums = np.zeros((len(texts), embedder.dim), dtype=np.float64)
    ntok = np.zeros(len(texts), dtype=np.int64)
    for (a, b), enc, st in zip(spans, encodings, states):
        # each token's line: the last line start at or before its first character (a loop per token held the
        # GIL for ~370k tokens a 600-page ingest, while the other ingest thread waited to run its Python)
        starts = np.cumsum([0] + [len(t) + 1 for t in texts[a:b - 1]])
        keep = ~np.asarray(enc.special_tokens_mask, dtype=bool)
        first = np.asarray([c0 for c0, _ in enc.offsets], dtype=np.int64)[keep]
        line = a + np.searchsorted(starts, first, side="right") - 1
        np.add.at(sums, line, st[keep].astype(np.float64))
        np.add.at(ntok, line, 1)
    index = {ln: i for i, ln in enumerate(line_nos)}
    csum = np.vstack([np.zeros((1, embedder.dim)), np.cumsum(sums, axis=0)])
    cnt = np.concatenate([[0], np.cumsum(ntok)])
    for w, (s, e) in enumerate(zip(windows["line_start"].to_list(), windows["line_end"].to_list())):
        i, j = index[s], index[e] + 1
        n = cnt[j] - cnt[i]
        if n == 0:  # every token of the window truncated away (lines far past the cap): embed it by itself
            out[w] = embedder.embed([windows["text"][w]])[0]
            continue
        v = (csum[j] - csum[i]) / n
        out[w] = v / max(float(np.linalg.norm(v)), 1e-12)
    return out, len(blocks)
