"""Documents' corpus views and keyword indexes for detection, loaded lazily and shared by a run's threads.

Memory is bounded by the work in flight, not by the corpus (issue #29): document views sit in a least-recently-used
cache (``detect.cached_pages``), doc-scoped BM25 indexes in another (``detect.keyword_indexes``), and a
corpus-wide question reads the warehouse's keyword postings (``tasks.detect.corpus_wide``) instead of one BM25 over
every window, holding only each document's small summary (titles, vocabulary) and the views of the documents its
hits fall in.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import polars as pl

from schemas.contracts import DocumentIdentity
from schemas.settings import Settings
from tasks.detect.corpus_wide import DocSummary, LazyDoc, PostingsIndex, sync_postings
from tasks.detect.corpus_words import CorpusWords
from tasks.detect.keyword_index import DocCorpus, KeywordIndex
from tasks.detect.pages import PageViews
from tasks.detect.scope import Identities
from warehouse import corpus
from warehouse.db import Warehouse


class CorpusCache:
    """Documents' corpus views and keyword indexes, loaded lazily once per run and shared by threads.

    With a warehouse, documents are loaded from ``lines``/``toc`` on first use (and again after the cache dropped
    them) and ``None`` scope means every current document; without one, frames are handed in with :meth:`add`
    (tests, benchmarks) and kept, since nothing could load them again. Built for one run: documents re-ingested
    meanwhile are not reloaded.
    """

    def __init__(self, wh: Warehouse | None = None, settings: Settings | None = None, *,
                 window_lines: int | None = None, window_stride: int | None = None, max_indexes: int | None = None,
                 max_pages: int | None = None):
        settings = settings or Settings()
        self.wh = wh
        self.window_lines = window_lines or settings.ingest.window_lines
        self.window_stride = window_stride or settings.ingest.window_stride
        self._docs: OrderedDict[str, DocCorpus] = OrderedDict()
        self._max_pages = max_pages or settings.detect.cached_pages
        self._pages: dict[str, int] = {}  # pages of each cached document
        self._cached_pages = 0
        self._corpus_pages: int | None = None  # pages of every current document, read on first need
        self._summaries: dict[str, DocSummary] = {}
        self._indexes: OrderedDict[tuple[str, ...], KeywordIndex] = OrderedDict()
        self._max_indexes = max_indexes or settings.detect.keyword_indexes
        self._lock = threading.RLock()
        self._doc_locks: dict[str, threading.Lock] = {}
        self._vector_docs: dict[str, bool] = {}
        self._postings: PostingsIndex | None | bool = None  # False: the warehouse's postings cannot serve this run
        self._postings_lock = threading.Lock()
        self._words: tuple[tuple[str, ...], CorpusWords] | None = None
        self.identities = Identities(wh)  # what each document says it is, for scoping corpus-wide questions

    def add(self, doc_id: str, lines: pl.DataFrame, toc: pl.DataFrame,
            identity: DocumentIdentity | None = None) -> DocCorpus:
        doc = DocCorpus.build(doc_id, lines, toc, self.window_lines, self.window_stride)
        if self.wh is None:
            self.identities.set(doc_id, identity)
        with self._lock:
            self._keep(doc_id, doc)
            self._summaries.pop(doc_id, None)
            for key in [k for k in self._indexes if doc_id in k]:
                del self._indexes[key]
        return doc

    def _keep(self, doc_id: str, doc: DocCorpus) -> None:
        self._cached_pages -= self._pages.pop(doc_id, 0)
        self._docs[doc_id] = doc
        self._docs.move_to_end(doc_id)
        self._pages[doc_id] = len(set(doc.line_pages))
        self._cached_pages += self._pages[doc_id]
        if self.wh is not None:  # handed-in documents cannot be loaded again: only loaded ones are dropped
            while self._cached_pages > self._max_pages and len(self._docs) > 1:
                gone, _ = self._docs.popitem(last=False)
                self._cached_pages -= self._pages.pop(gone)

    def doc(self, doc_id: str) -> DocCorpus:
        with self._lock:
            if doc_id in self._docs:
                self._docs.move_to_end(doc_id)
                return self._docs[doc_id]
            doc_lock = self._doc_locks.setdefault(doc_id, threading.Lock())
        with doc_lock:  # one thread loads a document; the others wait for it instead of loading it again
            with self._lock:
                if doc_id in self._docs:
                    return self._docs[doc_id]
            if self.wh is None:
                raise KeyError(f"document {doc_id} is not in the corpus cache and the cache has no warehouse")
            lines, toc = corpus.load_lines(self.wh, [doc_id]), corpus.load_toc(self.wh, [doc_id])
            if lines.height == 0:
                raise KeyError(f"document {doc_id} has no lines in the warehouse: ingest it first (`arbiter ingest`)")
            doc = DocCorpus.build(doc_id, lines, toc, self.window_lines, self.window_stride)
            with self._lock:
                self._keep(doc_id, doc)
            return doc

    def doc_ids(self, doc_ids: Sequence[str] | None) -> list[str]:
        """The scope as a sorted list: the given documents, or every known document when ``doc_ids`` is None."""
        if doc_ids is not None:
            return sorted(dict.fromkeys(doc_ids))
        if self.wh is not None:
            return sorted(corpus.current_doc_ids(self.wh))
        with self._lock:
            return sorted(self._docs)

    def docs(self, doc_ids: Sequence[str] | None) -> list[DocCorpus]:
        return [self.doc(d) for d in self.doc_ids(doc_ids)]

    def summary(self, doc_id: str) -> DocSummary:
        """The document's titles, outline source and vocabulary, kept for the run whatever the cache drops (a
        corpus-wide question scores every document's titles and reads every vocabulary)."""
        with self._lock:
            found = self._summaries.get(doc_id)
            held = self._docs.get(doc_id)
        if found is None:
            found = DocSummary.of(held or self.doc(doc_id)) if held is not None or self.wh is None \
                else DocSummary.read(self.wh, doc_id)
            with self._lock:
                self._summaries[doc_id] = found
        return found

    def _doc_and_summary(self, doc_id: str) -> DocCorpus:
        """The document's view, its summary kept on the way (indexing a document loads it: not twice)."""
        doc = self.doc(doc_id)
        with self._lock:
            if doc_id not in self._summaries:
                self._summaries[doc_id] = DocSummary.of(doc)
        return doc

    def views(self, doc_ids: Sequence[str]) -> list[LazyDoc]:
        """The documents as one question sees them over a large scope: their summaries, with their full views
        loaded only when the question reads more (a hit's lines)."""
        return [LazyDoc(self.summary(d), self.doc) for d in doc_ids]

    def page_views(self, scope: Sequence[str]) -> PageViews | None:
        """One question's views of the corpus's documents, by the pages its hits fall on; None when the documents
        are read whole: without a warehouse (handed in whole), or when the whole corpus fits the view cache, which
        then keeps every document a question loads for the next ones (reading pages for each question made the
        corpus-wide pipeline of the 20 Docugami 10-Qs 30-40% slower than their cached views)."""
        if self.wh is None:
            return None
        with self._lock:
            if self._corpus_pages is None:
                self._corpus_pages = corpus.current_pages(self.wh)
            fits = self._corpus_pages <= self._max_pages
        return None if fits else PageViews(self.wh, scope, self.summary, self.doc)

    def corpus_words(self, scope: Sequence[str]) -> CorpusWords:
        """Every scoped document's words and titles indexed (``scope``: every current document), built once a run."""
        key = tuple(scope)
        self.corpus_index(scope)  # a first corpus-wide question indexes what lags, keeping the summaries it reads
        with self._postings_lock:
            if self._words is None or self._words[0] != key:
                self._words = (key, CorpusWords([self.summary(d) for d in key]))
            return self._words[1]

    def index(self, doc_ids: Sequence[str] | None) -> KeywordIndex:
        """BM25 index over the scope's windows (one per document, or one over a multi-document scope so that idf is
        the scope's), built once and kept in a small LRU."""
        key = tuple(self.doc_ids(doc_ids))
        with self._lock:
            if key in self._indexes:
                self._indexes.move_to_end(key)
                return self._indexes[key]
        index = KeywordIndex.build(self.docs(list(key)))
        with self._lock:
            self._indexes[key] = index
            while len(self._indexes) > self._max_indexes:
                self._indexes.popitem(last=False)
        return index

    def corpus_index(self, scope: Sequence[str]) -> PostingsIndex | KeywordIndex:
        """The keyword index of the whole corpus (``scope``: every current document): the warehouse's postings,
        brought up to date first (documents ingested or dropped since), with the same scores as a
        :class:`KeywordIndex` over every window; that one when the postings cannot serve (no warehouse, or a
        read-only one whose postings lag)."""
        with self._postings_lock:
            if self._postings is None:
                self._postings = False
                if self.wh is not None and sync_postings(self.wh, self._doc_and_summary, self.window_lines,
                                                         self.window_stride) is not None:
                    self._postings = PostingsIndex.read(self.wh, self.doc)
            postings = self._postings
        if postings and postings.doc_ids == tuple(scope):
            return postings
        return self.index(scope)

    def has_vectors(self, vectors, doc_ids: Sequence[str]) -> list[str]:
        """The scoped documents that have line-window vectors (asked once per document per run)."""
        out = []
        for d in doc_ids:
            with self._lock:
                known = self._vector_docs.get(d)
            if known is None:
                known = vectors.count(d) > 0
                with self._lock:
                    self._vector_docs[d] = known
            if known:
                out.append(d)
        return out
