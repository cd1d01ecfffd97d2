"""SQL for the corpus-wide keyword index (``kw_docs``, ``kw_windows``, ``kw_postings``; migration m011).

A document's windows are written once, when it is first indexed, and deleted with it; a query reads only the
postings of its terms. The postings are rewritten in term order when the rows appended since the last rewrite
are a large share (:func:`compact`): DuckDB skips a row group whose term range misses the query's terms, so a
query's cost follows its terms' postings rather than the corpus.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from warehouse.db import Warehouse

# rewrite the postings in term order once the rows appended unsorted since the last rewrite reach this share
UNSORTED_SHARE = 0.2
# where the postings are cut for their rewrite in term order (tokens are lower case: digits, then letters)
TERM_RANGES = ["", "1", "2", "4", "6", "8", "a", "c", "d", "e", "g", "i", "l", "m", "o", "p", "r", "s", "t", "u", "w"]
META_COLUMNS = ("page", "line_start", "line_end", "section_id")  # a window's place in its document (m012)
INDEX_MEMORY = "512MB"  # DuckDB's memory while the postings are written or rewritten (see memory_bound)
# DuckDB's memory while the statistics are read: grouping every posting by term (~20M at 50k generated pages) left
# +402 MB of RSS in the answering process under DuckDB's own limit (80% of the machine)
STATS_MEMORY = "256MB"


@dataclass(frozen=True)
class IndexStats:
    """What BM25 needs of the whole index: the documents (sorted) with their window counts, the number of windows,
    the summed window lengths, and the idf of every term summed (rank_bm25 floors a negative idf at a share of the
    average idf over all terms)."""

    doc_ids: tuple[str, ...]
    windows: tuple[int, ...]
    n_windows: int
    total_len: int
    n_terms: int
    idf_sum: float


@contextmanager
def memory_bound(wh: Warehouse, limit: str = INDEX_MEMORY) -> Iterator[None]:
    """DuckDB's memory held to ``limit`` for the block, then set back: writing the postings of a whole corpus kept
    every written block in DuckDB's buffer pool (its own limit is 80% of the machine), 4.7 GB of RSS while
    indexing the generated 50k pages; past the limit it writes them out and spills its sorts to disk."""
    before = wh.scalar("SELECT current_setting('memory_limit')")
    wh.execute(f"SET memory_limit = '{limit}'")
    try:
        yield
    finally:
        wh.execute(f"SET memory_limit = '{before}'")


def indexed(wh: Warehouse) -> dict[str, tuple[int, int]]:
    """doc_id -> (window_lines, window_stride) of every indexed document."""
    return {d: (a, b) for d, a, b in wh.execute("SELECT doc_id, window_lines, window_stride FROM kw_docs")}


def add_document(wh: Warehouse, doc_id: str, window_tokens: Sequence[Sequence[str]], window_lines: int,
                 window_stride: int, window_meta: Sequence[tuple[int, int, int, int | None]]) -> None:
    """Index one document's windows (``window_tokens``: each window's tokens, in window order; ``window_meta``: each
    window's (page, line_start, line_end, section_id)), replacing any earlier index of it."""
    if len(window_meta) != len(window_tokens):
        raise ValueError(f"{doc_id}: {len(window_tokens)} windows' tokens but {len(window_meta)} windows' places")
    lens = [len(toks) for toks in window_tokens]
    terms, windows, tfs, ranks = [], [], [], []
    for w, toks in enumerate(window_tokens):
        counts: dict[str, int] = {}
        for t in toks:
            counts[t] = counts.get(t, 0) + 1
        for rank, (t, n) in enumerate(counts.items()):  # in the order the terms first occur in the window
            terms.append(t)
            windows.append(w)
            tfs.append(n)
            ranks.append(rank)
    postings = pa.table({"term": pa.array(terms, pa.string()), "doc_id": pa.array([doc_id] * len(terms), pa.string()),
                         "win": pa.array(windows, pa.int32()), "tf": pa.array(tfs, pa.int32()),
                         "len": pa.array([lens[w] for w in windows], pa.int32()), "pos": pa.array(ranks, pa.int32())})
    sizes = pa.table({"doc_id": pa.array([doc_id] * len(lens), pa.string()),
                      "win": pa.array(range(len(lens)), pa.int32()), "len": pa.array(lens, pa.int32()),
                      **{name: pa.array([m[i] for m in window_meta], pa.int32())
                         for i, name in enumerate(META_COLUMNS)}})
    with wh.transaction():
        if wh.scalar("SELECT count(*) FROM kw_docs WHERE doc_id = ?", [doc_id]):
            delete_documents(wh, [doc_id])  # a scan of the postings: only for a document indexed before
        with wh.registered("_kw_postings", postings), wh.registered("_kw_windows", sizes):
            wh.execute("INSERT INTO kw_postings SELECT term, doc_id, win, tf, len, pos FROM _kw_postings")
            wh.execute(f"INSERT INTO kw_windows (doc_id, win, len, {', '.join(META_COLUMNS)}) "
                       f"SELECT doc_id, win, len, {', '.join(META_COLUMNS)} FROM _kw_windows")
        wh.execute("INSERT INTO kw_docs VALUES (?, ?, ?, ?)", [doc_id, window_lines, window_stride, len(lens)])


def delete_documents(wh: Warehouse, doc_ids: Sequence[str]) -> None:
    if not doc_ids:
        return
    for table in ("kw_postings", "kw_windows", "kw_docs"):
        wh.execute(f"DELETE FROM {table} WHERE list_contains(?, doc_id)", [list(doc_ids)])


def stats(wh: Warehouse) -> IndexStats:
    with memory_bound(wh, STATS_MEMORY):
        return _stats(wh)


def _stats(wh: Warehouse) -> IndexStats:
    docs = wh.execute("SELECT doc_id, windows FROM kw_docs ORDER BY doc_id")
    total = wh.execute("SELECT count(*), coalesce(sum(len), 0) FROM kw_windows")[0]
    n = int(total[0])
    # every term's idf as rank_bm25 computes it, summed in the order rank_bm25 sums them (the terms in the order
    # they first occur, documents sorted), so that the floor of a negative idf is the same float
    dfs = wh.execute("SELECT count(*) FROM kw_postings GROUP BY term "
                     "ORDER BY min(struct_pack(d := doc_id, w := win, p := pos))")
    idf_sum = 0
    for (df,) in dfs:
        idf_sum += math.log(n - df + 0.5) - math.log(df + 0.5)
    return IndexStats(doc_ids=tuple(d for d, _ in docs), windows=tuple(int(w) for _, w in docs), n_windows=n,
                      total_len=int(total[1]), n_terms=len(dfs), idf_sum=float(idf_sum))


def postings(wh: Warehouse, terms: Sequence[str]) -> pl.DataFrame:
    """Every posting of ``terms``: term, doc_id, win (the window's row in its document), tf, len."""
    # IN over the unnested list, not list_contains: DuckDB skips the row groups whose term range misses every term
    # (generated 10k pages, 4M postings in term order, 7 terms: 46 -> 14 ms)
    return wh.query_df("SELECT term, doc_id, win, tf, len FROM kw_postings WHERE term IN (SELECT unnest(?))",
                       [list(dict.fromkeys(terms))])


def has_window_meta(wh: Warehouse) -> bool:
    """Whether the windows carry their places (m012): a read-only warehouse opened before that migration does not."""
    cols = {c for (c,) in wh.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'kw_windows'")}
    return set(META_COLUMNS) <= cols


def window_meta(wh: Warehouse, doc_ids: Sequence[str], wins: Sequence[int]
                ) -> dict[tuple[str, int], tuple[int, int, int, int | None]]:
    """(doc_id, win) -> (page, line_start, line_end, section_id) of the given windows (pairs, in one statement)."""
    if not doc_ids:
        return {}
    # the documents' filter beside the pairs' changes no row and is cheaper to apply first (warehouse.corpus.page_lines)
    rows = wh.execute(
        f"SELECT doc_id, win, {', '.join(META_COLUMNS)} FROM kw_windows "
        "WHERE doc_id IN (SELECT unnest(?)) AND (doc_id, win) IN (SELECT (unnest(?), unnest(?)))",
        [sorted(set(doc_ids)), list(doc_ids), [int(w) for w in wins]])
    return {(d, int(w)): (int(p), int(a), int(b), None if s is None else int(s)) for d, w, p, a, b, s in rows}


def compact(wh: Warehouse, force: bool = False) -> bool:
    """Rewrite the postings in term order when enough rows were appended since the last rewrite (or ``force``);
    True when it did. The appended rows are counted against the rows already sorted in ``kw_sorted``."""
    total = int(wh.scalar("SELECT count(*) FROM kw_postings"))
    sorted_rows = int(wh.scalar("SELECT coalesce(max(rows), 0) FROM kw_sorted"))
    if not force and (total == 0 or total - sorted_rows < UNSORTED_SHARE * total):
        return False
    with wh.transaction(), memory_bound(wh):
        # one range of terms at a time into a new table, which then takes the old one's name: one sort of every
        # posting (~20M rows at 50k generated pages) held 4.3 GB of RSS whatever DuckDB's memory limit
        wh.execute("CREATE TABLE _kw_sorted AS SELECT * FROM kw_postings LIMIT 0")
        for lo, hi in zip(TERM_RANGES, [*TERM_RANGES[1:], None]):
            where, params = ("term >= ? AND term < ?", [lo, hi]) if hi is not None else ("term >= ?", [lo])
            wh.execute(f"INSERT INTO _kw_sorted SELECT * FROM kw_postings WHERE {where} ORDER BY term, doc_id, win",
                       params)
        wh.execute("DROP TABLE kw_postings")
        wh.execute("ALTER TABLE _kw_sorted RENAME TO kw_postings")
        wh.execute("DELETE FROM kw_sorted")
        wh.execute("INSERT INTO kw_sorted VALUES (?)", [total])
    return True
