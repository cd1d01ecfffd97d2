"""The corpus-wide keyword index read from the warehouse's postings (tasks.detect.corpus_wide) scores exactly as the
in-memory BM25 over every window does, follows documents added, re-ingested and dropped, and is built for a
warehouse that predates it; the corpus cache keeps a bounded number of document views."""

from __future__ import annotations

import random

import numpy as np
import polars as pl

from schemas.settings import Settings
from tasks.detect.cache import CorpusCache
from tasks.detect.corpus_wide import PostingsIndex, index_corpus, sync_postings
from tasks.detect.keyword_index import KeywordIndex
from warehouse import keyword_postings
from warehouse.corpus import LINE_COLUMNS, TOC_COLUMNS, mark_missing, replace_document

WORDS = ["revenue", "cost", "margin", "segment", "growth", "cash", "debt", "equity", "asset", "lease", "tax",
         "income", "expense", "north", "south", "unit", "product", "service", "region", "quarter"]


def texts(seed: int, n: int) -> list[str]:
    """Lines of drawn words and numbers; every line holds 'report' so that one word is in every window (its idf
    is negative and rank_bm25 floors it at a share of the average idf)."""
    rng = random.Random(seed)
    return [" ".join(["report"] + rng.choices(WORDS, k=rng.randint(1, 7)) + [str(rng.randint(1, 40))])
            for _ in range(n)]


def frames(doc_id: str, lines: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    n = len(lines)
    df = pl.DataFrame({"doc_id": [doc_id] * n, "page": [i // 10 for i in range(n)], "line_no": list(range(n)),
                       "text": lines, "bbox": [[0.0, 0.0, 1.0, 1.0]] * n, "font_size": [10.0] * n,
                       "bold": [False] * n, "block_no": [0] * n}).select(LINE_COLUMNS)
    toc = pl.DataFrame(schema={c: pl.Int64 for c in TOC_COLUMNS} | {"doc_id": pl.String, "title": pl.String,
                                                                      "source": pl.String})
    return df, toc


def ingest(wh, path: str, doc_id: str, lines: list[str]) -> None:
    df, toc = frames(doc_id, lines)
    replace_document(wh, "run-1", path=path, doc_id=doc_id, n_bytes=1, pages=1 + len(lines) // 10,
                     has_outline=False, toc_source="pages", lines=df, toc=toc, parser_version="test")


def in_memory(wh) -> KeywordIndex:
    """Today's corpus-wide index: one BM25 over every current document's windows."""
    cache = CorpusCache(wh, Settings())
    return KeywordIndex.build(cache.docs(None))


QUERIES = [["revenue"], ["revenue", "growth", "revenue"], ["report", "cash", "17"], ["lease", "tax", "nothing"],
           ["report"], []]


def assert_same_scores(wh) -> None:
    cache = CorpusCache(wh, Settings())
    postings = cache.corpus_index(cache.doc_ids(None))
    assert isinstance(postings, PostingsIndex)
    memory = in_memory(wh)
    for query in QUERIES:
        scores, sets = postings.query(query)
        want, want_sets = memory.query(query)
        assert np.array_equal(scores, want), query  # bit for bit
        held = {i for i, ts in enumerate(want_sets) if ts & set(query)}
        assert set(sets) == held
        assert all(sets[i] == want_sets[i] & set(query) for i in held)
    ids = [0, memory.bm25.corpus_size // 2, memory.bm25.corpus_size - 1]
    places = postings.places(ids)  # read from the index, no document loaded
    for i in ids:
        (doc, meta), (want_doc, want_meta) = postings.window(i), memory.window(i)
        assert (doc.doc_id, meta) == (want_doc.doc_id, want_meta)
        assert places[i] == (want_doc.doc_id, want_meta)


def test_postings_score_bit_for_bit_like_the_in_memory_index(wh):
    wh.migrate()
    for d in range(6):
        ingest(wh, f"/docs/{d}.pdf", f"{d:064d}", texts(d, 30 + 17 * d))
    assert index_corpus(wh, Settings()) == {"added": 6, "dropped": 0}
    assert index_corpus(wh, Settings()) == {"added": 0, "dropped": 0}  # nothing new: nothing done
    assert_same_scores(wh)


def test_postings_follow_reingested_and_dropped_documents(wh):
    wh.migrate()
    for d in range(4):
        ingest(wh, f"/docs/{d}.pdf", f"{d:064d}", texts(d, 40))
    index_corpus(wh, Settings())
    ingest(wh, "/docs/1.pdf", "a" * 64, texts(99, 25))  # a changed file: a new doc_id, the old one orphaned
    mark_missing(wh, "run-2", ["/docs/2.pdf"])  # a vanished file
    ingest(wh, "/docs/9.pdf", "9" * 64, texts(9, 12))
    assert index_corpus(wh, Settings()) == {"added": 2, "dropped": 2}
    assert sorted(keyword_postings.indexed(wh)) == sorted(["0" * 64, f"{3:064d}", "a" * 64, "9" * 64])
    assert_same_scores(wh)
    # other windows (settings changed): every document indexed again with them
    other = Settings(ingest={"window_lines": 6, "window_stride": 3})
    assert index_corpus(wh, other) == {"added": 4, "dropped": 4}


def test_an_older_warehouse_is_indexed_on_its_first_corpus_wide_question(wh):
    wh.migrate()
    for d in range(3):
        ingest(wh, f"/docs/{d}.pdf", f"{d:064d}", texts(d, 20))
    assert keyword_postings.indexed(wh) == {}  # as a warehouse ingested before the index existed
    assert_same_scores(wh)  # corpus_index filled it first
    assert len(keyword_postings.indexed(wh)) == 3


def test_a_read_only_warehouse_whose_postings_lag_uses_the_in_memory_index(tmp_path):
    from warehouse.db import Warehouse

    path = tmp_path / "warehouse.duckdb"
    with Warehouse(path) as wh:
        wh.migrate()
        ingest(wh, "/docs/0.pdf", "0" * 64, texts(0, 20))
    with Warehouse(path, read_only=True) as ro:
        cache = CorpusCache(ro, Settings())
        assert sync_postings(ro, cache.doc, 4, 2) is None
        assert isinstance(cache.corpus_index(cache.doc_ids(None)), KeywordIndex)


def test_compaction_keeps_every_posting(wh):
    wh.migrate()
    for d in range(3):
        ingest(wh, f"/docs/{d}.pdf", f"{d:064d}", texts(d, 20))
    index_corpus(wh, Settings())
    before = wh.query_df("SELECT * FROM kw_postings ORDER BY term, doc_id, win")
    assert keyword_postings.compact(wh, force=True)
    assert wh.query_df("SELECT * FROM kw_postings ORDER BY term, doc_id, win").equals(before)
    assert not keyword_postings.compact(wh)  # nothing appended since


def test_the_cache_keeps_at_most_its_bound_of_pages(wh):
    wh.migrate()
    for d in range(5):
        ingest(wh, f"/docs/{d}.pdf", f"{d:064d}", texts(d, 20))
    cache = CorpusCache(wh, Settings(detect={"cached_pages": 6}))  # each document: 20 lines on 2 pages
    first = cache.doc(f"{0:064d}")
    for d in range(5):
        cache.doc(f"{d:064d}")
    assert len(cache._docs) == 3 and cache._cached_pages == 6
    assert cache.doc(f"{0:064d}") is not first  # dropped, then loaded again: the same lines
    assert cache.doc(f"{0:064d}").line_texts == first.line_texts
    views = cache.views(cache.doc_ids(None))  # every summary kept, views still bounded
    assert [v.doc_id for v in views] == [f"{d:064d}" for d in range(5)]
    assert len(cache._docs) == 3 and len(cache._summaries) == 5
    assert views[3].line_texts == cache.doc(f"{3:064d}").line_texts  # a view loads its document when read


def test_a_summary_read_from_the_warehouse_is_the_one_of_the_documents_view(wh):
    """A first corpus-wide question reads every document's summary from its texts and sections alone: the same
    titles, outline source and vocabulary as the document's full view gives."""
    from tasks.detect.corpus_wide import DocSummary

    wh.migrate()
    doc_id = "b" * 64
    df, _ = frames(doc_id, texts(5, 30))
    toc = pl.DataFrame({"doc_id": [doc_id] * 2, "section_id": [0, 1], "level": [1, 2],
                        "title": ["2 Segment revenue", "2.1 North unit"], "page_start": [0, 1], "page_end": [2, 2],
                        "line_start": [0, 12], "line_end": [29, 29], "parent_id": [None, 0],
                        "source": ["headings", "headings"]}).select(TOC_COLUMNS)
    replace_document(wh, "run-1", path="/docs/b.pdf", doc_id=doc_id, n_bytes=1, pages=3, has_outline=False,
                     toc_source="headings", lines=df, toc=toc, parser_version="test")
    read, of = DocSummary.read(wh, doc_id), DocSummary.of(CorpusCache(wh, Settings()).doc(doc_id))
    assert read.toc_source == of.toc_source == "headings"
    assert read.titles == of.titles and len(read.titles) == 2
    assert read.vocab == of.vocab and read.vocab._lines == of.vocab._lines
    assert read.spans == of.spans and read.section_paths == of.section_paths == {0: "2 Segment revenue",
                                                                               1: "2 Segment revenue > 2.1 North unit"}
    assert read.last_line == of.last_line == 29


def test_windows_indexed_before_their_places_were_kept_are_indexed_again(tmp_path):
    """m012 empties an index whose windows carry no place: the next corpus-wide question indexes every document
    again; a read-only warehouse opened before the migration falls back to the in-memory index."""
    from warehouse.db import Warehouse

    path = tmp_path / "warehouse.duckdb"
    with Warehouse(path) as wh:
        for d in range(2):
            ingest(wh, f"/docs/{d}.pdf", f"{d:064d}", texts(d, 20))
        index_corpus(wh, Settings())
        for column in keyword_postings.META_COLUMNS:  # as before m012
            wh.execute(f"ALTER TABLE kw_windows DROP COLUMN {column}")
        wh.execute("DELETE FROM _migrations WHERE name = 'm012_keyword_window_meta'")
    with Warehouse(path, read_only=True) as ro:
        assert not keyword_postings.has_window_meta(ro)
        assert isinstance(CorpusCache(ro, Settings()).corpus_index([f"{d:064d}" for d in range(2)]), KeywordIndex)
    with Warehouse(path) as wh:  # migrated on open
        assert keyword_postings.has_window_meta(wh) and keyword_postings.indexed(wh) == {}
        assert_same_scores(wh)
