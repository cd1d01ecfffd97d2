"""warehouse.corpus.lines_text serves a document's lines from memory: the same rows as the table, and a new parse of
the document (replace_document) or its removal is seen at once."""

from __future__ import annotations

import polars as pl

from warehouse.corpus import LINE_COLUMNS, TOC_COLUMNS, lines_text, record_failed_document, replace_document

DOC = "d" * 64


def lines(texts: list[str], doc_id: str = DOC) -> pl.DataFrame:
    n = len(texts)
    return pl.DataFrame({"doc_id": [doc_id] * n, "page": [i // 3 for i in range(n)], "line_no": list(range(n)),
                         "text": texts, "bbox": [[0.0, 0.0, 1.0, 1.0]] * n, "font_size": [10.0] * n,
                         "bold": [False] * n, "block_no": [0] * n}).select(LINE_COLUMNS)


def ingest(wh, texts: list[str], path: str = "/docs/a.pdf", doc_id: str = DOC) -> None:
    toc = pl.DataFrame(schema={c: pl.Int64 for c in TOC_COLUMNS} | {"doc_id": pl.String, "title": pl.String,
                                                                      "source": pl.String})
    replace_document(wh, "run-1", path=path, doc_id=doc_id, n_bytes=1, pages=3, has_outline=False, toc_source="none",
                     lines=lines(texts, doc_id), toc=toc, parser_version="test")


def from_table(wh, doc_id, start, end):
    return wh.query("SELECT page, line_no, text FROM lines WHERE doc_id = ? AND line_no BETWEEN ? AND ? "
                    "ORDER BY line_no", [doc_id, start, end])


def test_ranges_match_the_table(wh):
    ingest(wh, [f"line {i}" for i in range(9)])
    for start, end in [(0, 8), (2, 4), (5, 5), (7, 20), (-3, 1), (4, 3), (30, 40)]:
        assert lines_text(wh, DOC, start, end) == from_table(wh, DOC, start, end)
    assert lines_text(wh, "e" * 64, 0, 5) == []  # a document never ingested


def test_a_new_parse_and_a_dropped_document_are_seen_at_once(wh):
    ingest(wh, ["old 0", "old 1", "old 2"])
    assert [r["text"] for r in lines_text(wh, DOC, 0, 2)] == ["old 0", "old 1", "old 2"]
    ingest(wh, ["new 0", "new 1"])  # same bytes' hash, parsed again (a new parser version)
    assert [r["text"] for r in lines_text(wh, DOC, 0, 2)] == ["new 0", "new 1"]
    record_failed_document(wh, "run-2", path="/docs/a.pdf", doc_id=DOC, n_bytes=1, status="failed", error="bad",
                           parser_version="test")  # its rows are dropped with the failed re-ingest
    assert lines_text(wh, DOC, 0, 2) == [] == from_table(wh, DOC, 0, 2)
