"""SQL for the corpus brick: ``documents``, ``lines``, ``toc``.

``documents`` is keyed by path (one current row per file); ``lines``/``toc`` by ``doc_id`` (sha256 of the bytes),
so a changed file gets a new doc_id and its old rows are replaced in the same transaction.
"""

from __future__ import annotations

import bisect
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

import polars as pl

from warehouse.db import Warehouse, utcnow

LINE_COLUMNS = ["doc_id", "page", "line_no", "text", "bbox", "font_size", "bold", "block_no"]
TOC_COLUMNS = ["doc_id", "section_id", "level", "title", "page_start", "page_end", "line_start", "line_end",
               "parent_id", "source"]


def get_document(wh: Warehouse, path: str) -> dict[str, Any] | None:
    rows = wh.query("SELECT * FROM documents WHERE path = ?", [path])
    return rows[0] if rows else None


def list_documents(wh: Warehouse, status: str | None = None) -> list[dict[str, Any]]:
    if status:
        return wh.query("SELECT * FROM documents WHERE status = ? ORDER BY path", [status])
    return wh.query("SELECT * FROM documents ORDER BY path")


def _drop_doc_rows_if_orphan(wh: Warehouse, doc_id: str | None, except_path: str) -> bool:
    """Delete lines/toc of ``doc_id`` unless another current document still uses the same bytes."""
    if not doc_id:
        return False
    others = wh.scalar(
        "SELECT count(*) FROM documents WHERE doc_id = ? AND path <> ? AND status = 'ok'", [doc_id, except_path]
    )
    if others:
        return False
    wh.execute("DELETE FROM lines WHERE doc_id = ?", [doc_id])
    wh.execute("DELETE FROM toc WHERE doc_id = ?", [doc_id])
    forget_lines(wh, doc_id)
    return True


def replace_document(wh: Warehouse, run_id: str, *, path: str, doc_id: str, n_bytes: int, pages: int,
                     has_outline: bool, toc_source: str, lines: pl.DataFrame, toc: pl.DataFrame,
                     parser_version: str, identity: str | None = None) -> str | None:
    """Atomically swap a file's rows for a new parse. Returns the previous doc_id when it was orphaned."""
    with wh.transaction():
        old = get_document(wh, path)
        orphaned = None
        if old and old["doc_id"] and old["doc_id"] != doc_id and _drop_doc_rows_if_orphan(wh, old["doc_id"], path):
            orphaned = old["doc_id"]
        wh.execute("DELETE FROM lines WHERE doc_id = ?", [doc_id])
        wh.execute("DELETE FROM toc WHERE doc_id = ?", [doc_id])
        forget_lines(wh, doc_id)
        wh.insert_df("lines", lines.select(LINE_COLUMNS).with_columns(pl.lit(run_id).alias("run_id")))
        wh.insert_df("toc", toc.select(TOC_COLUMNS).with_columns(pl.lit(run_id).alias("run_id")))
        _upsert(wh, run_id, path, doc_id=doc_id, n_bytes=n_bytes, pages=pages, has_outline=has_outline,
                toc_source=toc_source, n_lines=lines.height, n_sections=toc.height, status="ok", error=None,
                parser_version=parser_version, identity=identity)
    return orphaned


def record_failed_document(wh: Warehouse, run_id: str, *, path: str, doc_id: str | None, n_bytes: int | None,
                           status: str, error: str, parser_version: str) -> str | None:
    """A file that could not be ingested: one documents row with its error; its previous rows are dropped."""
    with wh.transaction():
        old = get_document(wh, path)
        orphaned = None
        if old and old["doc_id"] and _drop_doc_rows_if_orphan(wh, old["doc_id"], path):
            orphaned = old["doc_id"]
        _upsert(wh, run_id, path, doc_id=doc_id, n_bytes=n_bytes, pages=None, has_outline=None, toc_source=None,
                n_lines=0, n_sections=0, status=status, error=error, parser_version=parser_version)
    return orphaned


def mark_missing(wh: Warehouse, run_id: str, paths: list[str]) -> list[str]:
    """Files that were ingested before and are gone now: status 'missing', no longer current."""
    marked = []
    with wh.transaction():
        for path in paths:
            old = get_document(wh, path)
            if not old or old["status"] == "missing":
                continue
            wh.execute(
                "UPDATE documents SET status = 'missing', error = ?, run_id = ?, ingested_at = ? WHERE path = ?",
                [f"file no longer exists at {path}; its rows are kept for past runs but it is not searched",
                 run_id, utcnow(), path],
            )
            marked.append(path)
    return marked


def _upsert(wh: Warehouse, run_id: str, path: str, **cols: Any) -> None:
    wh.execute("DELETE FROM documents WHERE path = ?", [path])
    wh.insert_rows("documents", [{"path": path, "run_id": run_id, "ingested_at": utcnow(), **cols}])


def identities_to_read(wh: Warehouse, paths: list[str]) -> list[dict[str, Any]]:
    """Ingested documents among ``paths`` with their stored identity (path, doc_id, identity JSON or None), for the
    ingest to read the identity of those that have none (or an older one) from their stored lines."""
    if not paths:
        return []
    return wh.query("SELECT path, doc_id, identity FROM documents WHERE status = 'ok' AND list_contains(?, path) "
                    "ORDER BY path", [paths])


def set_identity(wh: Warehouse, path: str, identity: str) -> None:
    """Store a document's identity (JSON) on its current row, nothing else changed."""
    wh.execute("UPDATE documents SET identity = ? WHERE path = ?", [identity, path])


def first_lines(wh: Warehouse, doc_id: str, pages: int) -> pl.DataFrame:
    """The stored lines of a document's first ``pages`` pages (page, line_no, text, font_size)."""
    return wh.query_df("SELECT page, line_no, text, font_size FROM lines WHERE doc_id = ? AND page < ? "
                       "ORDER BY line_no", [doc_id, pages])


def load_identities(wh: Warehouse, doc_ids: list[str] | None = None) -> dict[str, str | None]:
    """doc_id -> stored identity JSON (None when not read yet) of the current documents (``doc_ids``: only those)."""
    rows = wh.execute("SELECT doc_id, any_value(identity) FROM documents WHERE status = 'ok' GROUP BY doc_id")
    wanted = None if doc_ids is None else set(doc_ids)
    return {d: (str(i) if i is not None else None) for d, i in rows if wanted is None or d in wanted}


def document_identity(wh: Warehouse, doc_id: str) -> str | None:
    """The stored identity JSON of one current document (None when not read yet or the document is unknown)."""
    row = wh.execute("SELECT any_value(identity) FROM documents WHERE doc_id = ? AND status = 'ok'", [doc_id])
    value = row[0][0] if row else None
    return str(value) if value is not None else None


def documents_under(wh: Warehouse, root: Path) -> list[str]:
    prefix = str(root.resolve()).rstrip("/") + "/"
    return [r[0] for r in wh.execute("SELECT path FROM documents WHERE starts_with(path, ?)", [prefix])]


def doc_ids_for_paths(wh: Warehouse, paths: list[str]) -> dict[str, str | None]:
    """path -> current doc_id (None when the file is not ingested or failed)."""
    if not paths:
        return {}
    rows = wh.execute(
        "SELECT path, doc_id FROM documents WHERE status = 'ok' AND list_contains(?, path)", [paths]
    )
    found = dict(rows)
    return {p: found.get(p) for p in paths}


def current_doc_ids(wh: Warehouse) -> list[str]:
    return [r[0] for r in wh.execute("SELECT DISTINCT doc_id FROM documents WHERE status = 'ok' ORDER BY 1")]


def current_pages(wh: Warehouse) -> int:
    """Pages of every current document."""
    return int(wh.scalar("SELECT coalesce(sum(pages), 0) FROM (SELECT DISTINCT doc_id, pages FROM documents "
                         "WHERE status = 'ok')") or 0)


def _where_docs(doc_ids: list[str]) -> tuple[str, list]:
    """The filter on ``doc_id``: one document as an equality, which DuckDB answers from the row groups whose
    doc_id range holds it (a document's rows are written together); ``list_contains`` read every row group
    (generated 10k pages: 8 -> 3.5 ms a document, which a corpus-wide question pays per document its hits reach)."""
    if len(doc_ids) == 1:
        return "doc_id = ?", [doc_ids[0]]
    return "list_contains(?, doc_id)", [doc_ids]


def load_lines(wh: Warehouse, doc_ids: list[str]) -> pl.DataFrame:
    where, params = _where_docs(doc_ids)
    return wh.query_df(f"SELECT {', '.join(LINE_COLUMNS)} FROM lines WHERE {where} ORDER BY doc_id, line_no", params)


def line_texts(wh: Warehouse, doc_id: str) -> list[tuple[int, str]]:
    """The document's (line_no, text) in line order, and nothing else (no frame)."""
    return wh.execute("SELECT line_no, text FROM lines WHERE doc_id = ? ORDER BY line_no", [doc_id])


def page_lines(wh: Warehouse, doc_ids: list[str], pages: list[int]) -> list[tuple[str, int, int, str]]:
    """(doc_id, page, line_no, text) of every line of the given pages (``doc_ids[i]``'s page ``pages[i]``), in
    document then line order: one statement for every page a corpus-wide question's hits fall on (issue #29), where
    loading each of their documents whole cost ~12 ms a document at 50k generated pages."""
    if not doc_ids:
        return []
    # the documents' filter beside the pairs' changes no row, and is cheaper to apply first (216 pages of 72
    # documents at 50k generated pages: 15 ms, against 36 ms by a join on the pairs alone)
    return wh.execute("SELECT doc_id, page, line_no, text FROM lines WHERE doc_id IN (SELECT unnest(?)) "
                      "AND (doc_id, page) IN (SELECT (unnest(?), unnest(?))) ORDER BY doc_id, line_no",
                      [sorted(set(doc_ids)), list(doc_ids), [int(p) for p in pages]])


def load_toc(wh: Warehouse, doc_ids: list[str]) -> pl.DataFrame:
    where, params = _where_docs(doc_ids)
    return wh.query_df(f"SELECT {', '.join(TOC_COLUMNS)} FROM toc WHERE {where} ORDER BY doc_id, section_id", params)


# A document's lines, held in memory per open warehouse for :func:`lines_text`: the answer path reads a passage's
# range two or three times a question (dispatch, generation), and each read was a DuckDB statement (~3 ms of
# CPU, under the warehouse's one lock, which a chunk write of 32 concurrent questions holds too). The writes of
# ``lines`` are all in this module (replace_document, _drop_doc_rows_if_orphan) and drop the document here.
LINES_CACHED_DOCS = 64  # documents kept (least recently used go first): a few MB of text at most


class _LineCache:
    def __init__(self):
        self.lock = threading.Lock()
        self.docs: OrderedDict[str, tuple[list[int], list[int], list[str]]] = OrderedDict()
        self.generation = 0  # bumped by every forget: a load that raced a write is not kept


_LINE_CACHES: weakref.WeakKeyDictionary[Warehouse, _LineCache] = weakref.WeakKeyDictionary()
_LINE_CACHES_LOCK = threading.Lock()


def _line_cache(wh: Warehouse) -> _LineCache:
    with _LINE_CACHES_LOCK:
        cache = _LINE_CACHES.get(wh)
        if cache is None:
            cache = _LINE_CACHES[wh] = _LineCache()
        return cache


def forget_lines(wh: Warehouse, doc_id: str) -> None:
    """Drop ``doc_id`` from the lines held for :func:`lines_text` (its rows in ``lines`` are being replaced)."""
    cache = _line_cache(wh)
    with cache.lock:
        cache.docs.pop(doc_id, None)
        cache.generation += 1


def _doc_lines(wh: Warehouse, doc_id: str) -> tuple[list[int], list[int], list[str]]:
    cache = _line_cache(wh)
    with cache.lock:
        doc = cache.docs.get(doc_id)
        if doc is not None:
            cache.docs.move_to_end(doc_id)
            return doc
        generation = cache.generation
    rows = wh.execute("SELECT line_no, page, text FROM lines WHERE doc_id = ? ORDER BY line_no", [doc_id])
    line_nos, pages, texts = (list(col) for col in zip(*rows)) if rows else ([], [], [])
    doc = (line_nos, pages, texts)
    with cache.lock:
        if cache.generation == generation:
            cache.docs[doc_id] = doc
            while len(cache.docs) > LINES_CACHED_DOCS:
                cache.docs.popitem(last=False)
    return doc


def lines_text(wh: Warehouse, doc_id: str, line_start: int, line_end: int) -> list[dict[str, Any]]:
    """The stored lines ``line_start..line_end`` (inclusive) of a document, in order: page, line_no, text."""
    line_nos, pages, texts = _doc_lines(wh, doc_id)
    lo, hi = bisect.bisect_left(line_nos, line_start), bisect.bisect_right(line_nos, line_end)
    return [{"page": pages[i], "line_no": line_nos[i], "text": texts[i]} for i in range(lo, hi)]


def corpus_summary(wh: Warehouse) -> dict[str, Any]:
    row = wh.query(
        "SELECT count(*) AS documents, count(*) FILTER (status = 'ok') AS ok, "
        "count(*) FILTER (status = 'failed') AS failed, count(*) FILTER (status = 'missing') AS missing, "
        "coalesce(sum(pages) FILTER (status = 'ok'), 0) AS pages FROM documents"
    )[0]
    row["lines"] = wh.scalar("SELECT count(*) FROM lines")
    row["sections"] = wh.scalar("SELECT count(*) FROM toc")
    row["toc_sources"] = dict(wh.execute(
        "SELECT toc_source, count(*) FROM documents WHERE status = 'ok' GROUP BY 1 ORDER BY 1"
    ))
    return row
