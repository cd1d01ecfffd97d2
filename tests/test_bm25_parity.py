"""rank_bm25_rs (the index the keywords detector uses) scores exactly like the reference rank_bm25.BM25Okapi."""

from __future__ import annotations

import random

import numpy as np
import pytest
import rank_bm25

from schemas.settings import Settings
from tasks.corpus.parse import parse_pdf
from tasks.detect.cache import CorpusCache
from tasks.detect.keyword_index import KeywordIndex, tokenize


def generated_windows(n: int = 400, seed: int = 7) -> list[list[str]]:
    """Zipf-like word draws, so that some words sit in most windows (Okapi's idf floor) and many in few."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(300)] + ["12.5%", "2023", "3.2"]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    return [rng.choices(vocab, weights, k=rng.randint(0, 30)) for _ in range(n)]


@pytest.fixture(scope="module")
def real_index(shared_data) -> KeywordIndex:
    doc = parse_pdf(shared_data / "attention" / "1706.03762v5.pdf")
    cache = CorpusCache(settings=Settings())
    cache.add(doc.doc_id, doc.lines, doc.toc)
    return cache.index([doc.doc_id])


QUERIES = [
    "What BLEU score does the big Transformer reach on English-to-German translation?",
    "How does the model use positional encoding with sine and cosine functions?",
    "attention attention attention heads",  # repeated terms count once per occurrence in both
    "label smoothing 0.1 dropout rate",
    "a word nobody wrote zzzzzz",  # unknown terms score 0
]


def assert_parity(corpus: list[list[str]], queries: list[list[str]]) -> None:
    from rank_bm25_rs import BM25Okapi

    ours, ref = BM25Okapi(corpus), rank_bm25.BM25Okapi(corpus)
    assert ours.corpus_size == ref.corpus_size and ours.avgdl == pytest.approx(ref.avgdl, abs=1e-12)
    for query in queries:
        np.testing.assert_allclose(ours.get_scores(query), ref.get_scores(query), rtol=0, atol=1e-9)


def test_parity_on_real_line_windows(real_index):
    corpus = [list(real_index.docs[d].window_tokens[w]) for d, w in real_index.refs]
    assert len(corpus) > 200
    assert_parity(corpus, [tokenize(q) for q in QUERIES])


def test_keyword_index_scores_are_the_reference_scores(real_index):
    corpus = [list(real_index.docs[d].window_tokens[w]) for d, w in real_index.refs]
    ref = rank_bm25.BM25Okapi(corpus)
    for q in QUERIES:
        np.testing.assert_allclose(real_index.scores(tokenize(q)), ref.get_scores(tokenize(q)), rtol=0, atol=1e-9)


def test_parity_on_generated_text_with_empty_windows():
    corpus = generated_windows()
    assert any(not w for w in corpus)
    rng = random.Random(3)
    queries = [rng.sample(sorted({t for w in corpus for t in w}), k=rng.randint(1, 6)) for _ in range(25)]
    assert_parity(corpus, queries + [["w0", "w0", "w1"], ["absent"], []])
