"""Corpus-wide keyword search through the warehouse's postings (``warehouse.keyword_postings``), and the small
per-document summaries a corpus-wide question reads instead of every document's full view (issue #29).

:class:`PostingsIndex` scores a query with rank_bm25's Okapi formula over the postings of the query's terms only,
bit-identical to :class:`tasks.detect.keyword_index.KeywordIndex` over the same windows (the same operations in the
same order, float64), so that corpus-wide detections do not move; the windows are numbered as that index numbers
them (documents in sorted order, each document's windows in order).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from schemas.settings import Settings
from tasks.corpus.windows import section_spans
from tasks.detect.keyword_index import DocCorpus, TitleEntry, section_paths, title_entries, toc_source
from tasks.terms import Vocabulary, vocabulary
from warehouse import corpus, keyword_postings
from warehouse.db import Warehouse

# rank_bm25's BM25Okapi defaults, as KeywordIndex builds it
K1, B, EPSILON = 1.5, 0.75, 0.25


@dataclass(frozen=True)
class DocSummary:
    """What a corpus-wide question reads of every document: its titles, outline source and vocabulary, and what
    anchoring a hit on a few of its pages needs (its sections' spans and paths, its last line)."""

    doc_id: str
    toc_source: str
    titles: list[TitleEntry]
    vocab: Vocabulary
    spans: list[tuple[int, int, int, int]] = field(default_factory=list)  # windows.section_spans
    section_paths: dict[int, str] = field(default_factory=dict)
    last_line: int | None = None

    @classmethod
    def of(cls, doc: DocCorpus) -> "DocSummary":
        return cls(doc_id=doc.doc_id, toc_source=doc.toc_source, titles=doc.titles, vocab=doc.vocabulary(),
                   spans=section_spans(doc.toc), section_paths=doc.section_paths,
                   last_line=doc.line_nos[-1] if doc.line_nos else None)

    @classmethod
    def read(cls, wh: Warehouse, doc_id: str) -> "DocSummary":
        """The same summary as :meth:`of` the document's view, from its line texts and sections alone: a first
        corpus-wide question reads every document, and building every view for it left ~0.9 GB of freed frames
        in the process at 50k generated pages."""
        rows, toc = corpus.line_texts(wh, doc_id), corpus.load_toc(wh, [doc_id])
        titles = toc["title"].to_list() if toc.height else []
        return cls(doc_id=doc_id, toc_source=toc_source(toc), titles=title_entries(toc),
                   vocab=vocabulary([*(t for _, t in rows), *titles]), spans=section_spans(toc),
                   section_paths=section_paths(toc), last_line=rows[-1][0] if rows else None)


class LazyDoc:
    """A document's summary that loads its full view (through ``load``, the cache) on the first read of anything
    else, and keeps it for the question: the detectors and the aggregation read it as a :class:`DocCorpus`."""

    __slots__ = ("doc_id", "toc_source", "titles", "_summary", "_load", "_doc")

    def __init__(self, summary: DocSummary, load: Callable[[str], DocCorpus]):
        self.doc_id, self.toc_source, self.titles = summary.doc_id, summary.toc_source, summary.titles
        self._summary, self._load, self._doc = summary, load, None

    def vocabulary(self) -> Vocabulary:
        return self._summary.vocab

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if self._doc is None:
            self._doc = self._load(self.doc_id)
        return getattr(self._doc, name)


def sync_postings(wh: Warehouse, load: Callable[[str], DocCorpus], window_lines: int,
                  window_stride: int) -> dict[str, int] | None:
    """Bring the postings to the warehouse's current documents (index the new ones, drop the gone ones, and those
    indexed with other windows): {"added": n, "dropped": m}; None when they lag and the warehouse is read-only.
    ``load``: a document's view, whose windows are indexed."""
    if wh.read_only and not keyword_postings.has_window_meta(wh):
        return None  # written before the windows carried their places (m012), and not to be migrated from here
    current = corpus.current_doc_ids(wh)
    indexed = keyword_postings.indexed(wh)
    want, now = (window_lines, window_stride), set(current)
    stale = [d for d, w in indexed.items() if w != want or d not in now]
    missing = [d for d in current if indexed.get(d) != want]
    if (stale or missing) and wh.read_only:
        return None
    if stale or missing:
        with keyword_postings.memory_bound(wh):
            keyword_postings.delete_documents(wh, stale)
            for d in missing:
                doc = load(d)
                keyword_postings.add_document(wh, d, doc.window_tokens, window_lines, window_stride, doc.window_meta)
        keyword_postings.compact(wh)
    return {"added": len(missing), "dropped": len(stale)}


def index_corpus(wh: Warehouse, settings: Settings) -> dict[str, int] | None:
    """The postings brought up to date after an ingest, each new document's windows built from the warehouse."""
    size, stride = settings.ingest.window_lines, settings.ingest.window_stride

    def load(doc_id: str) -> DocCorpus:
        return DocCorpus.build(doc_id, corpus.load_lines(wh, [doc_id]), corpus.load_toc(wh, [doc_id]), size, stride)

    return sync_postings(wh, load, size, stride)


class PostingsIndex:
    """The corpus-wide keyword index read from the warehouse: what :func:`tasks.detect.detectors.detect_keywords`
    reads of a :class:`KeywordIndex` (:meth:`query`, :meth:`window`), the windows' token sets cut to the query's
    words (all that the detector compares them with)."""

    def __init__(self, wh: Warehouse, stats: keyword_postings.IndexStats, load: Callable[[str], DocCorpus]):
        self.wh, self.load = wh, load
        self.doc_ids = stats.doc_ids
        self.offsets = np.concatenate([[0], np.cumsum(stats.windows, dtype=np.int64)]).tolist()
        self._offset = dict(zip(self.doc_ids, self.offsets))
        self.n = stats.n_windows
        self.avgdl = stats.total_len / self.n if self.n else 0.0
        self.eps = EPSILON * (stats.idf_sum / stats.n_terms) if stats.n_terms else 0.0

    @classmethod
    def read(cls, wh: Warehouse, load: Callable[[str], DocCorpus]) -> "PostingsIndex":
        return cls(wh, keyword_postings.stats(wh), load)

    def idf(self, df: int) -> float:
        idf = math.log(self.n - df + 0.5) - math.log(df + 0.5)
        return self.eps if idf < 0 else idf

    def query(self, query: Sequence[str]) -> tuple[np.ndarray, "WindowTerms | dict"]:
        """(every window's BM25 score, {window: the query words it holds} for the windows holding one)."""
        scores = np.zeros(self.n)
        if not self.n or not query:
            return scores, {}
        found = keyword_postings.postings(self.wh, query)
        position = (found["doc_id"].replace_strict(self._offset, return_dtype=pl.Int64).to_numpy()
                    + found["win"].to_numpy().astype(np.int64))
        term = found["term"]
        tf, length = found["tf"].to_numpy().astype(np.int64), found["len"].to_numpy().astype(np.int64)
        rows = {t: np.flatnonzero((term == t).to_numpy()) for t in dict.fromkeys(query)}
        for q in query:  # in the query's order, repeated words again: rank_bm25 sums them so
            at = rows[q]
            if not at.size:
                continue
            q_freq = tf[at]
            # rank_bm25's expression, operation for operation, over the windows that hold the word (elsewhere it
            # adds 0.0, which changes no sum)
            scores[position[at]] += (self.idf(int(at.size)) or 0) * (
                q_freq * (K1 + 1) / (q_freq + K1 * (1 - B + B * length[at] / self.avgdl)))
        return scores, WindowTerms(position, term.to_list())

    def _locate(self, i: int) -> tuple[str, int]:
        """(doc_id, the window's row in its document) of window ``i``."""
        d = bisect.bisect_right(self.offsets, i) - 1
        return self.doc_ids[d], i - self.offsets[d]

    def window(self, i: int) -> tuple[DocCorpus, tuple[int, int, int, int | None]]:
        """(document, (page, line_start, line_end, section_id)) of window ``i``."""
        doc_id, w = self._locate(i)
        doc = self.load(doc_id)
        return doc, doc.window_meta[w]

    def places(self, ids: Sequence[int]) -> dict[int, tuple[str, tuple[int, int, int, int | None]]]:
        """{window: (doc_id, (page, line_start, line_end, section_id))} of windows ``ids``, read at once from the
        index (no document loaded)."""
        keys = [self._locate(i) for i in ids]
        meta = keyword_postings.window_meta(self.wh, [d for d, _ in keys], [w for _, w in keys])
        return {i: (key[0], meta[key]) for i, key in zip(ids, keys)}


class WindowTerms(Mapping):
    """{window: the query words it holds}, built for a window when it is read: the detector reads a few hundred of
    the windows a query's postings reach (hundreds of thousands at 50k generated pages, where building every set
    was a third of the query)."""

    def __init__(self, position: np.ndarray, terms: list[str]):
        self._order = np.argsort(position, kind="stable")
        self._sorted = position[self._order]
        self._terms = terms

    def __getitem__(self, i: int) -> frozenset[str]:
        lo, hi = np.searchsorted(self._sorted, i, "left"), np.searchsorted(self._sorted, i, "right")
        if lo == hi:
            raise KeyError(i)
        return frozenset(self._terms[j] for j in self._order[lo:hi].tolist())

    def __iter__(self) -> Iterator[int]:
        return iter(np.unique(self._sorted).tolist())

    def __len__(self) -> int:
        return int(np.unique(self._sorted).size)
