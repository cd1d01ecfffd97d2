"""A corpus-wide question anchors its hits on the pages they fall on (tasks.detect.pages), not on their documents
loaded whole, and gets the very same hits, sections and snippets; a range its pages cannot cover (a page with no
line between two that have some) falls back to the document whole."""

from __future__ import annotations

import random

import polars as pl

from schemas.settings import Settings
from tasks.detect.aggregate import snippet
from tasks.detect.cache import CorpusCache
from tasks.detect.detectors import anchor_on_page, lines_tokens
from tasks.detect.keyword_index import DocCorpus, QueryTerms
from tasks.detect.pages import PageView, PageViews
from tasks.detect.run import run_detection
from tasks.questions.parser import parse_question
from warehouse.corpus import LINE_COLUMNS, TOC_COLUMNS, replace_document

WORDS = ["revenue", "cost", "margin", "segment", "growth", "cash", "debt", "lease", "tax", "north", "unit"]


def document(wh, doc_id: str, seed: int, n: int = 90) -> None:
    """``n`` lines over pages of 6-14 lines, page 4 with no line (an image page), and nested sections."""
    rng = random.Random(seed)
    pages, page, left = [], 0, rng.randint(6, 14)
    for _ in range(n):
        if left == 0:
            page += 2 if page == 3 else 1
            left = rng.randint(6, 14)
        pages.append(page)
        left -= 1
    texts = [" ".join(rng.choices(WORDS, k=rng.randint(2, 8)) + [str(rng.randint(1, 99))]) for _ in range(n)]
    lines = pl.DataFrame({"doc_id": [doc_id] * n, "page": pages, "line_no": list(range(n)), "text": texts,
                          "bbox": [[0.0, 0.0, 1.0, 1.0]] * n, "font_size": [10.0] * n, "bold": [False] * n,
                          "block_no": [0] * n}).select(LINE_COLUMNS)
    toc = pl.DataFrame({"doc_id": [doc_id] * 3, "section_id": [0, 1, 2], "level": [1, 2, 1],
                        "title": ["1 Segment revenue", "1.1 North unit cash", "2 Lease and tax"],
                        "page_start": [0, pages[20], pages[50]], "page_end": [pages[49], pages[49], pages[-1]],
                        "line_start": [0, 20, 50], "line_end": [49, 49, n - 1], "parent_id": [None, 0, None],
                        "source": ["headings"] * 3}).select(TOC_COLUMNS)
    replace_document(wh, "run-1", path=f"/docs/{doc_id[:4]}.pdf", doc_id=doc_id, n_bytes=1, pages=pages[-1] + 1,
                     has_outline=False, toc_source="headings", lines=lines, toc=toc, parser_version="test")


def test_a_page_view_anchors_as_the_whole_document_does(wh):
    wh.migrate()
    doc_id = "c" * 64
    document(wh, doc_id, 3)
    cache = CorpusCache(wh, Settings())
    whole: DocCorpus = cache.doc(doc_id)
    terms = QueryTerms(primary=(("revenue", ("revenue",)),), secondary=(("cash", ("cash",)),),
                       bm25_query=("revenue", "cash"))
    rng = random.Random(0)
    ranges = [(a, min(a + rng.randint(0, 12), whole.last_line)) for a in rng.sample(range(whole.last_line), 40)]
    fell_back = 0
    for a, b in ranges:
        views = PageViews(wh, [doc_id], cache.summary, cache.doc)
        views.prefetch([(doc_id, whole.line_pages[whole.position(a)], a, b)])
        view = views[doc_id]
        fell_back += not isinstance(view, PageView)
        assert anchor_on_page(view, a, b, terms) == anchor_on_page(whole, a, b, terms)
        assert lines_tokens(view, a, b) == lines_tokens(whole, a, b)
        page, start, end = anchor_on_page(whole, a, b, terms)
        assert snippet(view, page, start, end, ["revenue"], start) == snippet(whole, page, start, end, ["revenue"],
                                                                             start)
        assert view.line_sections[view.position(start)] == whole.line_sections[whole.position(start)]
        assert view.section_paths == whole.section_paths and view.last_line == whole.last_line
    assert fell_back < len(ranges)  # most ranges are served by their pages


def test_a_range_across_a_page_with_no_line_gets_the_whole_document(wh):
    wh.migrate()
    doc_id = "d" * 64
    document(wh, doc_id, 5)
    cache = CorpusCache(wh, Settings())
    whole = cache.doc(doc_id)
    last_on_3 = max(n for n, p in zip(whole.line_nos, whole.line_pages) if p == 3)
    views = PageViews(wh, [doc_id], cache.summary, cache.doc)
    views.prefetch([(doc_id, 3, last_on_3 - 1, last_on_3 + 1)])  # page 3 runs on to page 5: page 4 has no line
    view = views[doc_id]
    assert isinstance(view, PageView) and view.covers(last_on_3 - 1, last_on_3 + 1)  # pages 3, 4, 5 read
    views.prefetch([(doc_id, 0, 0, whole.last_line)])  # the whole document: more pages than a range reads
    assert views[doc_id] is whole
    assert views.get("e" * 64) is None and "e" * 64 not in views  # out of scope: no view


def test_corpus_wide_detection_is_the_same_on_pages_as_on_whole_documents(wh, monkeypatch):
    wh.migrate()
    for i, d in enumerate("abcdef"):
        document(wh, d * 64, i, n=60 + 15 * i)
    settings = Settings(detect={"cached_pages": 8})  # a corpus past the view cache: its pages are read
    questions = ["What was the north unit revenue growth?", "How much lease and tax cash?",
                 "What is the segment revenue margin?", "What does page 3 say about debt?"]

    def detect(on_pages: bool) -> list:
        cache = CorpusCache(wh, settings)
        if not on_pages:
            monkeypatch.setattr(cache, "page_views", lambda scope: None)
        out = []
        for i, q in enumerate(questions):
            d = run_detection(parse_question(f"q{i}", q), None, cache, None, None, settings)
            out.append(([h.model_dump() for h in d.hits], [(c.brief.model_dump(), c.rrf_rank, c.in_pool)
                                                            for c in d.candidates], d.absent_terms))
        return out

    scope = CorpusCache(wh, settings).doc_ids(None)
    assert isinstance(CorpusCache(wh, settings).page_views(scope), PageViews)
    assert CorpusCache(wh, Settings()).page_views(scope) is None  # the corpus fits the cache: documents whole
    on_pages, whole = detect(True), detect(False)
    assert all(hits for hits, _, _ in whole)
    assert on_pages == whole
