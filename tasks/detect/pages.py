"""A corpus-wide question's documents as the pages its hits fall on (issue #29).

Anchoring a hit on one page, listing the keywords its lines hold, its section and its snippet read only the lines of
the pages the hit falls on. A corpus-wide question's hits fall in ~70-120 documents, and loading each of them whole
(lines, windows, sections) cost ~12 ms a document at 50k generated pages, most of the question's detection time;
:class:`PageViews` reads the pages of a batch of hits in one statement instead, and a :class:`PageView` answers
what :class:`tasks.detect.keyword_index.DocCorpus` answers for those lines (positions count the lines it holds). A
range a view cannot cover from whole pages (a line the pages do not hold) falls back to the document loaded whole,
so that every hit is anchored exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from tasks.corpus.windows import section_of_spans
from tasks.detect.corpus_wide import DocSummary
from tasks.detect.keyword_index import DocCorpus, LineTokens, page_spans
from warehouse import corpus
from warehouse.db import Warehouse

Range = tuple[str, int, int, int]  # (doc_id, the page of its first line, line_start, line_end)
# pages read past a range's first page, when its last line is not on that page (a window runs on to the next page;
# past these the document is loaded whole)
NEXT_PAGES = 2


class PageView:
    """The lines of some whole pages of one document, read as anchoring, snippets and aggregation read a
    :class:`DocCorpus`; the document's titles, sections, vocabulary and last line come from its summary."""

    def __init__(self, summary: DocSummary):
        self.doc_id, self.toc_source, self.titles = summary.doc_id, summary.toc_source, summary.titles
        self.section_paths, self.last_line = summary.section_paths, summary.last_line
        self._summary = summary
        self.requested: set[int] = set()  # pages read (a page with no line is read too, and holds none)
        self._rows: dict[int, tuple[int, str]] = {}  # line_no -> (page, text)
        self._build()

    def _build(self) -> None:
        nos = sorted(self._rows)
        self.line_nos = nos
        self.line_pages = [self._rows[n][0] for n in nos]
        self.line_texts = [self._rows[n][1] for n in nos]
        self.line_tokens = LineTokens(self.line_texts)
        self.line_sections = section_of_spans(nos, self._summary.spans)
        self._positions = {n: i for i, n in enumerate(nos)}
        self._page_spans = page_spans(self.line_pages)

    def add(self, pages: Iterable[int], rows: Iterable[tuple[int, int, str]]) -> None:
        """The lines ``rows`` ((page, line_no, text)) of ``pages``, read."""
        self.requested.update(pages)
        for page, line_no, text in rows:
            self._rows[line_no] = (page, text)
        self._build()

    def covers(self, line_start: int, line_end: int) -> bool:
        """Whether the view holds every line of ``line_start..line_end``: both ends, and every page between them
        read (a document's lines run page after page)."""
        a, b = self._positions.get(line_start), self._positions.get(line_end)
        if a is None or b is None:
            return False
        return all(p in self.requested for p in range(self.line_pages[a], self.line_pages[b] + 1))

    def position(self, line_no: int) -> int:
        return self._positions[line_no]

    def page_span(self, page: int) -> tuple[int, int]:
        """(first, last) positions of the page's lines; first > last when the page has no line (or is not read)."""
        return self._page_spans.get(page, (1, 0))

    def vocabulary(self):
        return self._summary.vocab


class PageViews(Mapping):
    """doc_id -> one question's view of each document of its scope: a :class:`PageView` of the pages its hits fall
    on, or the document whole where pages could not cover a hit. Built per question: it holds only what the
    question read."""

    def __init__(self, wh: Warehouse, scope: Iterable[str], summary: Callable[[str], DocSummary],
                 whole: Callable[[str], DocCorpus]):
        self.wh, self.scope, self._summary, self._whole = wh, set(scope), summary, whole
        self._views: dict[str, PageView | DocCorpus] = {}

    def __getitem__(self, doc_id: str) -> PageView | DocCorpus:
        if doc_id not in self.scope:
            raise KeyError(doc_id)
        view = self._views.get(doc_id)
        if view is None:
            view = self._views[doc_id] = PageView(self._summary(doc_id))
        return view

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.scope

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.scope))

    def __len__(self) -> int:
        return len(self.scope)

    def prefetch(self, ranges: Iterable[Range]) -> None:
        """Read the pages of ``ranges`` (in scope) that no view holds yet, in one statement (and one more for the
        ranges that run on past their first page); a range still not covered gets its document whole."""
        todo = [r for r in ranges if r[0] in self.scope]
        todo = [r for r in todo if isinstance(self[r[0]], PageView) and not self[r[0]].covers(r[2], r[3])]
        self._read({(d, page) for d, page, _, _ in todo})
        todo = [r for r in todo if isinstance(self[r[0]], PageView) and not self[r[0]].covers(r[2], r[3])]
        self._read({(d, page + n) for d, page, _, _ in todo for n in range(1, NEXT_PAGES + 1)})
        for d, _, a, b in todo:
            view = self[d]
            if isinstance(view, PageView) and not view.covers(a, b):
                self._views[d] = self._whole(d)

    def _read(self, pages: set[tuple[str, int]]) -> None:
        pages = {(d, p) for d, p in pages if isinstance(self[d], PageView) and p not in self[d].requested}
        if not pages:
            return
        ordered = sorted(pages)
        rows: dict[str, list[tuple[int, int, str]]] = {}
        for d, page, line_no, text in corpus.page_lines(self.wh, [d for d, _ in ordered], [p for _, p in ordered]):
            rows.setdefault(d, []).append((page, line_no, text))
        by_doc: dict[str, list[int]] = {}
        for d, p in ordered:
            by_doc.setdefault(d, []).append(p)
        for d, ps in by_doc.items():
            self[d].add(ps, rows.get(d, []))
