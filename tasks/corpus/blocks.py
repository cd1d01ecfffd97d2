"""Each line through the model once: blocks of consecutive lines, pooled into the overlapping windows.

The searchable windows stay BM25's (``build_windows``: 4 lines every 2, so a passage is never cut at a window
edge), but embedding them one by one ran every line through the model twice. Here the lines of a section are
packed into blocks of at most ``MAX_TOKENS`` tokens, each block is run once, and a window's vector is the mean of
the hidden states of its lines' tokens (the model's own mean pooling, over the window's tokens; "late chunking").
A token sees the block around it instead of only its window, and a window that straddles two blocks pools
tokens from both.

Each block runs in a pass of its own. The int8 model quantizes its activations per pass, so a block batched with
others got states that moved with its batch-mates (cosine ~0.99); alone, a block's states depend on its text only,
so a block seen before (the boilerplate a company's quarterly filings repeat: a fifth of the Docugami 10-Qs' block
tokens) is taken from :class:`BlockCache` and gives the very vectors a pass would. One block per pass was no slower
than batches of 32 here (``benchmarks/embedder.py --kinds minilm --batches 1,8,32 --threads 1``): the blocks are
short and batching them bought nothing but padding.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

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


class BlockCache:
    """A block's pooled states per line (float16 means and token counts), by embedder and block text; least
    recently used out past ``max_bytes``, shared by the threads of one process. 0 bytes keeps nothing."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self._items: OrderedDict[tuple[str, bytes], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(embedder_name: str, text: str) -> tuple[str, bytes]:
        return embedder_name, hashlib.blake2b(text.encode(), digest_size=16).digest()

    def get(self, key: tuple[str, bytes]) -> tuple[np.ndarray, np.ndarray] | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                self.hits += 1
            return hit

    def put(self, key: tuple[str, bytes], means: np.ndarray, counts: np.ndarray) -> None:
        size = means.nbytes + counts.nbytes
        if size > self.max_bytes:
            return
        with self._lock:
            if key in self._items:
                return
            self._items[key] = (means, counts)
            self.bytes += size
            while self.bytes > self.max_bytes:
                old_means, old_counts = self._items.popitem(last=False)[1]
                self.bytes -= old_means.nbytes + old_counts.nbytes

    def __len__(self) -> int:
        return len(self._items)


_caches: dict[int, BlockCache] = {}
_caches_lock = threading.Lock()


def block_cache(megabytes: int) -> BlockCache:
    """The process's cache of that size (``ingest.embed_block_cache_mb``): one per process, shared by its ingest
    threads, so a block one thread ran is not run again by the other."""
    with _caches_lock:
        if megabytes not in _caches:
            _caches[megabytes] = BlockCache(megabytes << 20)
        return _caches[megabytes]


def line_states(embedder, enc, states: np.ndarray, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """One block's states pooled per line: float16 means (lines, dim) and token counts (lines,) of ``texts``, its
    lines, from its encoding and hidden states. Float16 because they are cached; a fresh block is rounded the same
    way, so a cached block and a recomputed one give the same vectors."""
    # each token's line: the last line start at or before its first character (a loop per token held the GIL for
    # ~370k tokens a 600-page ingest, while the other ingest thread waited to run its Python)
    starts = np.cumsum([0] + [len(t) + 1 for t in texts[:-1]])
    keep = ~np.asarray(enc.special_tokens_mask, dtype=bool)
    first = np.asarray([c0 for c0, _ in enc.offsets], dtype=np.int64)[keep]
    line = np.searchsorted(starts, first, side="right") - 1
    sums = np.zeros((len(texts), embedder.dim), dtype=np.float64)
    np.add.at(sums, line, states[keep].astype(np.float64))
    counts = np.bincount(line, minlength=len(texts)).astype(np.int32)
    return (sums / np.maximum(counts, 1)[:, None]).astype(np.float16), counts


def window_vectors(embedder, lines: pl.DataFrame, toc: pl.DataFrame, windows: pl.DataFrame,
                   block_lines: int = 4, cache: BlockCache | None = None) -> tuple[np.ndarray, int]:
    """Unit vectors for ``windows`` (rows of ``build_windows`` over the same lines) from one forward pass per
    block not in ``cache``; returns them and the number of blocks run. ``embedder`` has ``tokenizer`` and
    ``token_states``."""
    out = np.zeros((windows.height, embedder.dim), dtype=np.float32)
    if windows.height == 0:
        return out, 0
    cache = cache if cache is not None else BlockCache(0)
    lines = lines.sort("line_no")
    texts = lines["text"].to_list()
    line_nos = lines["line_no"].to_list()
    spans, blocks = line_blocks(embedder.tokenizer, lines, toc, block_lines)
    keys = [cache.key(embedder.name, b) for b in blocks]
    pooled = [cache.get(k) for k in keys]
    todo = sorted({k: i for i, (k, p) in reversed(list(enumerate(zip(keys, pooled)))) if p is None}.values())
    encodings = embedder.tokenizer.encode_batch([blocks[i] for i in todo])
    states = embedder.token_states([blocks[i] for i in todo], encodings=encodings, batch_size=1)
    fresh = {}
    for i, enc, st in zip(todo, encodings, states):
        a, b = spans[i]
        fresh[keys[i]] = line_states(embedder, enc, st, texts[a:b])
        cache.put(keys[i], *fresh[keys[i]])
    sums = np.zeros((len(texts), embedder.dim), dtype=np.float64)
    ntok = np.zeros(len(texts), dtype=np.int64)
    for (a, b), key, hit in zip(spans, keys, pooled):
        means, counts = hit if hit is not None else fresh[key]
        sums[a:b] = means.astype(np.float64) * counts[:, None]
        ntok[a:b] = counts
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
    return out, len(todo)
