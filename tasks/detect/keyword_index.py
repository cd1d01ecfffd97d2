"""Tokeniser, question terms, per-document corpus views and BM25 indexes over line windows, cached per process.

Every detector and the aggregation tokenise with :func:`tokenize`, so "a keyword matches a passage" means one thing
everywhere: all of the keyword's (stemmed, stopword-free) tokens occur in the passage.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import polars as pl
from rank_bm25_rs import BM25Okapi

from schemas.contracts import ParsedQuestion
from tasks.corpus.windows import build_windows, section_of_lines
from tasks.terms import vocabulary
from tasks.words import stem, tokenize  # noqa: F401 (stem, tokenize: the detectors' names for them)


@dataclass(frozen=True)
class QueryTerms:
    """A question's keywords as token tuples (primary first; a keyword's tokens distinct), and the BM25 query built
    from them and the text."""

    primary: tuple[tuple[str, tuple[str, ...]], ...]
    secondary: tuple[tuple[str, tuple[str, ...]], ...]
    bm25_query: tuple[str, ...]

    @property
    def keywords(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return self.primary + self.secondary

    @cached_property
    def primary_sets(self) -> tuple[tuple[tuple[str, ...], frozenset[str]], ...]:
        """(tokens, their set) of each primary keyword."""
        return tuple((toks, frozenset(toks)) for _, toks in self.primary)

    @cached_property
    def secondary_sets(self) -> tuple[tuple[tuple[str, ...], frozenset[str]], ...]:
        return tuple((toks, frozenset(toks)) for _, toks in self.secondary)

    @cached_property
    def _sets(self) -> tuple[list[tuple[str, frozenset[str]]], list[frozenset[str]], list[frozenset[str]]]:
        primary, secondary = [s for _, s in self.primary_sets], [s for _, s in self.secondary_sets]
        return [(kw, s) for (kw, _), s in zip(self.keywords, primary + secondary)], primary, secondary

    @cached_property
    def words(self) -> frozenset[str]:
        """Every keyword's tokens."""
        return frozenset().union(*self._sets[1], *self._sets[2])

    def matched(self, token_set: frozenset[str] | set[str]) -> list[str]:
        """Question keywords whose tokens all occur in ``token_set`` (primary first, question order)."""
        return [kw for kw, words in self._sets[0] if words <= token_set]

    def cooccurrence(self, token_set: frozenset[str] | set[str]) -> tuple[int, int]:
        """(distinct primary keywords matched, distinct secondary keywords matched)."""
        _, primary, secondary = self._sets
        return sum(w <= token_set for w in primary), sum(w <= token_set for w in secondary)


def query_terms(question: ParsedQuestion) -> QueryTerms:
    """Keywords -> token tuples (duplicates and token-less keywords dropped); when the parser found no keyword, the
    question's content words stand in as primary keywords so that no question goes undetected."""

    def tok(keywords: Iterable[str], seen: set[tuple[str, ...]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        out = []
        for kw in keywords:
            toks = tuple(dict.fromkeys(tokenize(kw)))
            if toks and toks not in seen:
                seen.add(toks)
                out.append((kw, toks))
        return tuple(out)

    seen: set[tuple[str, ...]] = set()
    primary = tok(question.keywords_primary, seen)
    secondary = tok(question.keywords_secondary, seen)
    text_tokens = list(dict.fromkeys(tokenize(question.text)))
    if not primary and not secondary:
        primary = tuple((t, (t,)) for t in text_tokens)
    # Every content word of the question once, and the primary keywords' words once more (they weigh double).
    query = text_tokens + [t for _, toks in primary for t in toks]
    query += [t for _, toks in primary + secondary for t in toks if t not in text_tokens]
    return QueryTerms(primary=primary, secondary=secondary, bm25_query=tuple(query))


# Leading numbering of a title ("3.2", "IV.", "A.", "Item 7A", "Chapter 2:"), kept apart from the title's words.
_NUMBERING = re.compile(
    r"^\s*(?:(?:chapter|section|part|article|appendix|item|annex|schedule)\s+)?"
    r"((?:\d+[a-z]?|[ivxlc]+|[a-z])(?:\.\d+)*)[.:)]?\s+(?=\S)",
    re.IGNORECASE,
)


def split_numbering(title: str) -> tuple[str | None, str]:
    """('3.2', 'Attention') from '3.2 Attention'; (None, title) when the title has no leading number."""
    m = _NUMBERING.match(title)
    if not m:
        return None, title.strip()
    return m.group(1).lower(), title[m.end():].strip()


_PAGE_LABEL = re.compile(r"(?:page\s*)?[(\[\-–—]?\s*(\d{1,4})\s*[)\]\-–—]?(?:\s*(?:of|/)\s*\d{1,4})?",
                         re.IGNORECASE)


@dataclass(frozen=True)
class TitleEntry:
    """A section title prepared for matching: numbering apart, words tokenised, parents' words alongside."""

    section_id: int
    level: int
    page_start: int
    line_start: int
    line_end: int
    number: str | None
    tokens: tuple[str, ...]
    parent_tokens: frozenset[str]
    path_tokens: frozenset[str]
    token_set: frozenset[str] = field(init=False, repr=False, compare=False)  # set(tokens), built once

    def __post_init__(self) -> None:  # every question scores every title: its set is made here, not per score
        object.__setattr__(self, "token_set", frozenset(self.tokens))


def title_entries(toc: pl.DataFrame) -> list[TitleEntry]:
    """Every section except 'pages' units (their titles, 'Page 3', carry no meaning)."""
    if toc.height == 0:
        return []
    rows = {r["section_id"]: r for r in toc.iter_rows(named=True)}
    words = {sid: tuple(tokenize(split_numbering(r["title"])[1])) for sid, r in rows.items()}
    out = []
    for sid, row in rows.items():
        if row["source"] == "pages":
            continue
        parents, cur, guard = set(), row["parent_id"], 0
        while cur is not None and cur in rows and guard < 32:
            parents.update(words[cur])
            cur, guard = rows[cur]["parent_id"], guard + 1
        out.append(TitleEntry(
            section_id=sid, level=row["level"], page_start=row["page_start"], line_start=row["line_start"],
            line_end=row["line_end"], number=split_numbering(row["title"])[0], tokens=words[sid],
            parent_tokens=frozenset(parents), path_tokens=frozenset(parents | set(words[sid])),
        ))
    return out


class LineTokens(Sequence):
    """Each line's tokens, tokenised on first read and kept: a corpus-wide question reads a few lines of each
    document its hits fall in, and tokenising every line was half of loading a document (issue #29)."""

    def __init__(self, texts: list[str]):
        self._texts = texts
        self._tokens: list[list[str] | None] = [None] * len(texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        found = self._tokens[i]
        if found is None:
            found = self._tokens[i] = tokenize(self._texts[i])
        return found


class WindowTokens(Sequence):
    """Each window's tokens (its lines' tokens in order), built when read: only BM25 indexes read them all."""

    def __init__(self, line_tokens: LineTokens, spans: list[tuple[int, int]]):
        self._lines, self._spans = line_tokens, spans  # (first, last) line position of each window

    def __len__(self) -> int:
        return len(self._spans)

    def __getitem__(self, w):
        if isinstance(w, slice):
            return [self[j] for j in range(*w.indices(len(self)))]
        a, b = self._spans[w]
        return [t for i in range(a, b + 1) for t in self._lines[i]]


@dataclass
class DocCorpus:
    """One document's lines, sections and windows, with tokens made on first read (built once, read by every
    question)."""

    doc_id: str
    lines: pl.DataFrame
    toc: pl.DataFrame
    windows: pl.DataFrame
    line_nos: list[int]
    line_pages: list[int]
    line_texts: list[str]
    line_tokens: Sequence[list[str]]
    line_sections: list[int | None]
    window_tokens: Sequence[list[str]]
    window_meta: list[tuple[int, int, int, int | None]]  # (page, line_start, line_end, section_id) per window
    toc_source: str
    section_paths: dict[int, str] = field(default_factory=dict)
    titles: list[TitleEntry] = field(default_factory=list)

    @classmethod
    def build(cls, doc_id: str, lines: pl.DataFrame, toc: pl.DataFrame, size: int, stride: int) -> "DocCorpus":
        lines = lines.sort("line_no")
        windows = build_windows(lines, toc, size, stride)
        line_nos = lines["line_no"].to_list()
        texts = lines["text"].to_list()
        line_tokens = LineTokens(texts)
        pos = {ln: i for i, ln in enumerate(line_nos)}
        window_tokens = WindowTokens(line_tokens, [(pos[a], pos[b]) for a, b in
                                                   zip(windows["line_start"].to_list(), windows["line_end"].to_list())])
        return cls(
            doc_id=doc_id, lines=lines, toc=toc, windows=windows, line_nos=line_nos,
            line_pages=lines["page"].to_list(), line_texts=texts, line_tokens=line_tokens,
            line_sections=section_of_lines(line_nos, toc), window_tokens=window_tokens,
            window_meta=list(windows.select("page", "line_start", "line_end", "section_id").iter_rows()),
            toc_source=toc_source(toc),
            section_paths=section_paths(toc), titles=title_entries(toc),
        )

    def vocabulary(self) -> frozenset[str]:
        """Every token of the document's lines and section titles, as the arbiter's evidence reads them
        (:func:`tasks.terms.vocabulary`); built on first use and kept (``absent_terms`` of detection)."""
        vocab = self.__dict__.get("_vocabulary")
        if vocab is None:
            titles = self.toc["title"].to_list() if self.toc.height and "title" in self.toc.columns else []
            vocab = self.__dict__["_vocabulary"] = vocabulary([*self.line_texts, *titles])
        return vocab

    @property
    def last_line(self) -> int:
        return self.line_nos[-1]

    def page_span(self, page: int) -> tuple[int, int]:
        """(first, last) positions of the page's lines; first > last when the page has no line."""
        spans = self.__dict__.get("_page_spans")
        if spans is None:
            spans = self.__dict__["_page_spans"] = page_spans(self.line_pages)
        return spans.get(page, (1, 0))

    def page_labels(self) -> dict[str, list[int]]:
        """Printed page numbers ('3', '(1)', 'Page 3', '- 3 -', '3 of 20'): a line of its own among the first or
        last three lines of a page -> the pages carrying it."""
        labels = self.__dict__.get("_page_labels")
        if labels is None:
            labels = {}
            for page in sorted(set(self.line_pages)):
                first, last = self.page_span(page)
                edge = sorted(set(range(first, min(first + 3, last + 1))) | set(range(max(first, last - 2), last + 1)))
                for i in edge:
                    m = _PAGE_LABEL.fullmatch(self.line_texts[i].strip())
                    if m:
                        pages = labels.setdefault(m.group(1).lower(), [])
                        if page not in pages:
                            pages.append(page)
            self.__dict__["_page_labels"] = labels
        return labels

    def position(self, line_no: int) -> int:
        """Index of ``line_no`` in the sorted line lists (line numbers are dense from 0 in practice)."""
        if 0 <= line_no < len(self.line_nos) and self.line_nos[line_no] == line_no:
            return line_no
        return self.line_nos.index(line_no)


def page_spans(line_pages: Sequence[int]) -> dict[int, tuple[int, int]]:
    """page -> (first, last) positions of its lines in ``line_pages`` (each line's page, in line order)."""
    spans: dict[int, tuple[int, int]] = {}
    for i, p in enumerate(line_pages):
        first, _ = spans.get(p, (i, i))
        spans[p] = (first, i)
    return spans


def toc_source(toc: pl.DataFrame) -> str:
    """Where a document's sections come from: its outline, its headings, or its pages alone."""
    sources = set(toc["source"].to_list()) if toc.height else set()
    return "outline" if "outline" in sources else "headings" if "headings" in sources else "pages"


def section_paths(toc: pl.DataFrame) -> dict[int, str]:
    """section_id -> 'Parent > Child' title path."""
    if toc.height == 0:
        return {}
    rows = {r["section_id"]: r for r in toc.select("section_id", "title", "parent_id").iter_rows(named=True)}
    out: dict[int, str] = {}
    for sid in rows:
        parts, cur, guard = [], sid, 0
        while cur is not None and cur in rows and guard < 32:
            parts.append(rows[cur]["title"].strip())
            cur, guard = rows[cur]["parent_id"], guard + 1
        out[sid] = " > ".join(reversed(parts))
    return out


@dataclass
class KeywordIndex:
    """BM25 (rank_bm25_rs) over the windows of one or more documents, with each window's token set for matching."""

    docs: tuple[DocCorpus, ...]
    refs: list[tuple[int, int]]  # (doc position in docs, window row)
    token_sets: list[frozenset[str]]
    bm25: BM25Okapi | None

    @classmethod
    def build(cls, docs: Sequence[DocCorpus]) -> "KeywordIndex":
        refs, corpus = [], []
        for d, doc in enumerate(docs):
            for w, toks in enumerate(doc.window_tokens):
                refs.append((d, w))
                corpus.append(toks)
        bm25 = BM25Okapi(corpus) if any(corpus) else None  # rank_bm25 divides by zero on a wordless corpus
        return cls(docs=tuple(docs), refs=refs, token_sets=[frozenset(t) for t in corpus], bm25=bm25)

    def scores(self, query: Sequence[str]) -> np.ndarray:
        if self.bm25 is None or not query:
            return np.zeros(len(self.refs))
        return self.bm25.get_scores(list(query))

    def query(self, query: Sequence[str]) -> tuple[np.ndarray, list[frozenset[str]]]:
        """(every window's BM25 score, every window's token set): what the keyword detector reads (the
        corpus-wide :class:`tasks.detect.corpus_wide.PostingsIndex` answers the same)."""
        return self.scores(query), self.token_sets

    def window(self, i: int) -> tuple[DocCorpus, tuple[int, int, int, int | None]]:
        """(document, (page, line_start, line_end, section_id)) of window ``i``."""
        d, w = self.refs[i]
        return self.docs[d], self.docs[d].window_meta[w]
