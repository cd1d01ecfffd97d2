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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from schemas.settings import Settings
from tasks.detect.keyword_index import DocCorpus, TitleEntry, title_entries, toc_source
from tasks.terms import Vocabulary, vocabulary
from warehouse import corpus, keyword_postings
from warehouse.db import Warehouse

# rank_bm25's BM25Okapi defaults, as KeywordIndex builds it
K1, B, EPSILON = 1.5, 0.75, 0.25


@dataclass(frozen=True)
class DocSummary:
    """What a corpus-wide question reads of every document: its titles, outline source and vocabulary."""

    doc_id: str
    toc_source: str
    titles: list[TitleEntry]
    vocab: Vocabulary

    @classmethod
    def of(cls, doc: DocCorpus) -> "DocSummary":
        return cls(doc_id=doc.doc_id, toc_source=doc.toc_source, titles=doc.titles, vocab=doc.vocabulary())

    @classmethod
    def read(cls, wh: Warehouse, doc_id: str) -> "DocSummary":
        """The same summary as :meth:`of` the document's view, from its line texts and sections alone: a first
        corpus-wide question reads every document, and building every view for it left ~0.9 GB of freed frames
        in the process at 50k generated pages."""
        texts, toc = corpus.line_texts(wh, doc_id), corpus.load_toc(wh, [doc_id])
        titles = toc["title"].to_list() if toc.height else []
        return cls(doc_id=doc_id, toc_source=toc_source(toc), titles=title_entries(toc),
                   vocab=vocabulary([*texts, *titles]))


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
                keyword_postings.add_document(wh, d, load(d).window_tokens, window_lines, window_stride)
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

    def query(self, query: Sequence[str]) -> tuple[np.ndarray, dict[int, frozenset[str]]]:
        """(every window's BM25 score, {window: the query words it holds} for the windows holding one)."""
        scores = np.zeros(self.n)
        if not self.n or not query:
            return scores, {}
        found = keyword_postings.postings(self.wh, query)
        position = np.array([self._offset[d] for d in found["doc_id"].to_list()], dtype=np.int64) \
            + found["win"].to_numpy().astype(np.int64)
        terms = found["term"].to_numpy()
        tf, length = found["tf"].to_numpy().astype(np.int64), found["len"].to_numpy().astype(np.int64)
        rows = {t: np.flatnonzero(terms == t) for t in dict.fromkeys(query)}
        for q in query:  # in the query's order, repeated words again: rank_bm25 sums them so
            at = rows[q]
            if not at.size:
                continue
            q_freq = tf[at]
            # rank_bm25's expression, operation for operation, over the windows that hold the word (elsewhere it
            # adds 0.0, which changes no sum)
            scores[position[at]] += (self.idf(int(at.size)) or 0) * (
                q_freq * (K1 + 1) / (q_freq + K1 * (1 - B + B * length[at] / self.avgdl)))
        sets: dict[int, set[str]] = {}
        for p, t in zip(position.tolist(), terms.tolist()):
            sets.setdefault(p, set()).add(t)
        return scores, {p: frozenset(s) for p, s in sets.items()}

    def window(self, i: int) -> tuple[DocCorpus, tuple[int, int, int, int | None]]:
        """(document, (page, line_start, line_end, section_id)) of window ``i``."""
        d = bisect.bisect_right(self.offsets, i) - 1
        doc = self.load(self.doc_ids[d])
        return doc, doc.window_meta[i - self.offsets[d]]
