"""The three detectors: TOC title match, BM25 + keyword co-occurrence over line windows, embeddings.

Each returns ``DetectorHit``s ranked 1..k on its own score scale (never normalised across detectors); each hit is
anchored to one page and a line range on that page, so that a candidate's page is the page of its anchor lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from schemas.contracts import DetectorHit
from tasks.detect.corpus_wide import PostingsIndex
from tasks.detect.keyword_index import (
    DocCorpus,
    KeywordIndex,
    QueryTerms,
    TitleEntry,
    tokenize,
)
from tasks.detect.pages import PageViews
from tasks.detect.plan import caption_label, figure_references, page_references

TOC_ANCHOR_LINES = 5  # a TOC hit points at the heading line and the first lines under it
EMBEDDING_OVERFETCH = 3  # nearest windows fetched per hit kept, since overlapping neighbours are skipped
PAGE_REFERENCE_SCORE = 9.0  # a page the question names: nearly as strong as an exact title (10)
RERANK_DEPTH = 300  # BM25 windows re-scored with the co-occurrence signal
PREFETCH_CHUNK = 100  # corpus-wide hits whose pages are read in one statement (a detector keeps 60 of ~300)

_WORDS = {"primary": 1.0, "secondary": 0.5}


def _contains_run(seq: Sequence[str], sub: Sequence[str]) -> bool:
    n = len(sub)
    return any(tuple(seq[i:i + n]) == tuple(sub) for i in range(len(seq) - n + 1))


def title_score(terms: QueryTerms, question_tokens: set[str], title: TitleEntry) -> float:
    """Score of one section title against the question (0 = no match).

    Per keyword (primary weighs 1, secondary 0.5): exact title = 10, keyword phrase inside the title = 4, else
    2 x the share of the keyword's words in the title, plus half the share found only in the parent titles.
    A title quoted whole by the question (two words or more) adds 6; the title's own dotted number ('3.2') named in
    the question adds 8.
    """
    toks = title.tokens
    if not toks:
        return 0.0
    tset = title.token_set
    score = 0.0
    for weight, group in ((_WORDS["primary"], terms.primary_sets), (_WORDS["secondary"], terms.secondary_sets)):
        for kw, kset in group:
            # a keyword's tokens are distinct (query_terms), so its shares are set intersections; the phrase test
            # (a run of the title's tokens) can only pass when every token is in the title
            if kset == tset:
                score += 10 * weight
            elif kset <= tset and _contains_run(toks, kw):
                score += 4 * weight
            else:
                share = len(kset & tset) / len(kw)
                parent_share = len(kset & title.parent_tokens) / len(kw)
                score += weight * (2 * share + 0.5 * max(parent_share - share, 0.0))
    if len(tset) >= 2 and tset <= question_tokens:
        score += 6
    if title.number and "." in title.number and title.number in question_tokens:
        score += 8
    return score


def named_pages(question_text: str, docs: Sequence[DocCorpus]) -> list[tuple[DocCorpus, TitleEntry]]:
    """Pages named by the question, as page units: physical page n (1-based; -1 = last), then pages whose printed
    label is n."""
    refs = page_references(question_text)
    out: list[tuple[DocCorpus, TitleEntry]] = []
    if not refs:  # before any document's lines are read: corpus-wide, each would be loaded
        return out
    for doc in docs:
        if not doc.line_pages:
            continue
        last_page = doc.line_pages[-1]
        for n in refs:
            pages = [last_page if n == -1 else n - 1]
            pages += doc.page_labels().get(str(n), []) if n > 0 else []
            for page in dict.fromkeys(pages):
                first, last = doc.page_span(page)
                if first > last:
                    continue
                unit = TitleEntry(section_id=doc.line_sections[first] if doc.line_sections[first] is not None else -1,
                                  level=0, page_start=page, line_start=doc.line_nos[first],
                                  line_end=doc.line_nos[last], number=None, tokens=(), parent_tokens=frozenset(),
                                  path_tokens=frozenset())
                if all(u.page_start != page for d, u in out if d is doc):
                    out.append((doc, unit))
    return out


def named_captions(question_text: str, docs: Sequence[DocCorpus]) -> list[tuple[DocCorpus, TitleEntry]]:
    """The captions of the figures and tables the question names ('In Figure 9, ...' -> the line 'Figure 9: ...'), as
    units that start at the caption line: a figure's page is where its caption is, whatever the text around it."""
    refs = set(figure_references(question_text))
    out: list[tuple[DocCorpus, TitleEntry]] = []
    if not refs:
        return out
    for doc in docs:
        for i, text in enumerate(doc.line_texts):
            if caption_label(text) not in refs:
                continue
            _, last = doc.page_span(doc.line_pages[i])
            out.append((doc, TitleEntry(
                section_id=doc.line_sections[i] if doc.line_sections[i] is not None else -1, level=0,
                page_start=doc.line_pages[i], line_start=doc.line_nos[i], line_end=doc.line_nos[last], number=None,
                tokens=(), parent_tokens=frozenset(), path_tokens=frozenset())))
    return out


def detect_toc(question_id: str, question_text: str, terms: QueryTerms, docs: Sequence[DocCorpus],
               k: int, titles: Callable[[set[str]], Iterable[tuple[DocCorpus, TitleEntry]]] | None = None,
               views: PageViews | None = None) -> list[DetectorHit]:
    """Section titles (and their parents) against the question's keywords; 'pages' units are never scored by title.
    Pages the question names ('page 3', 'second page') are proposed too: the physical page and any page printed
    with that number; and so are the captions of the figures and tables it names (:func:`named_captions`).

    Anchor: the section's (page's) first page, lines ``line_start .. min(line_end, line_start + 4)`` (the heading
    and what follows it). ``titles``: the (document, title) pairs of ``docs`` that share a word with the question,
    in document order, when an index finds them (corpus-wide) rather than a scan of every title; ``views``: the
    hits anchored on the pages they fall on (corpus-wide), not on their documents loaded whole.
    """
    question_tokens = set(tokenize(question_text))
    words = terms.words | question_tokens
    scored = []
    pairs = titles(words) if titles is not None else ((doc, title) for doc in docs for title in doc.titles)
    for doc, title in pairs:
        if words.isdisjoint(title.tokens) and words.isdisjoint(title.parent_tokens) and title.number not in words:
            continue  # shares no word with the question: scores 0
        score = title_score(terms, question_tokens, title)
        if score > 0:
            scored.append((score, doc, title))
    scored.extend((PAGE_REFERENCE_SCORE, doc, unit) for doc, unit in named_pages(question_text, docs))
    scored.extend((PAGE_REFERENCE_SCORE, doc, unit) for doc, unit in named_captions(question_text, docs))
    scored.sort(key=lambda x: (-x[0], x[2].level, x[1].doc_id, x[2].line_start))
    hits = []
    if views is not None:
        views.prefetch((doc.doc_id, title.page_start, title.line_start,
                        min(title.line_end, title.line_start + TOC_ANCHOR_LINES - 1)) for _, doc, title in scored[:k])
    for rank, (score, doc, title) in enumerate(scored[:k], start=1):
        doc = views[doc.doc_id] if views is not None else doc
        start = title.line_start
        end = min(title.line_end, start + TOC_ANCHOR_LINES - 1)
        page, start, end = anchor_on_page(doc, start, end, terms, prefer_first=True)
        hits.append(DetectorHit(
            question_id=question_id, detector="toc", rank=rank, raw_score=round(score, 6), doc_id=doc.doc_id,
            page=page, line_start=start, line_end=end, section_id=title.section_id if title.section_id >= 0 else None,
            matched_keywords=terms.matched(title.path_tokens | lines_tokens(doc, start, end)),
        ))
    return hits


def lines_tokens(doc: DocCorpus, line_start: int, line_end: int) -> set[str]:
    a, b = doc.position(line_start), doc.position(line_end)
    return {t for i in range(a, b + 1) for t in doc.line_tokens[i]}


def anchor_on_page(doc: DocCorpus, line_start: int, line_end: int, terms: QueryTerms,
                   prefer_first: bool = False) -> tuple[int, int, int]:
    """(page, start, end) of a line range cut to one page: the page whose lines match most keyword words (ties:
    more lines, then the earlier page; ``prefer_first`` keeps the first page, e.g. a heading's)."""
    a, b = doc.position(line_start), doc.position(line_end)
    pages = doc.line_pages[a:b + 1]
    if len(set(pages)) == 1:
        return pages[0], line_start, line_end
    if prefer_first:
        page = pages[0]
    else:
        words = terms.words
        weight: dict[int, tuple[int, int]] = {}
        for i, p in zip(range(a, b + 1), pages):
            hits, n = weight.get(p, (0, 0))
            weight[p] = (hits + len(words.intersection(doc.line_tokens[i])), n + 1)  # distinct keyword words
        page = max(weight, key=lambda p: (weight[p][0], weight[p][1], -p))
    on_page = [doc.line_nos[i] for i, p in zip(range(a, b + 1), pages) if p == page]
    return page, on_page[0], on_page[-1]


def cooccurrence_boost(primary: int, secondary: int) -> float:
    """Multiplier for a window holding several question keywords at once: each distinct primary keyword beyond the
    first adds 0.5, and secondary keywords next to a primary one add 0.25 each (up to two)."""
    if primary == 0:
        return 1.0 + 0.1 * min(secondary, 2)
    return 1.0 + 0.5 * (primary - 1) + 0.25 * min(secondary, 2)


def detect_keywords(question_id: str, terms: QueryTerms, index: KeywordIndex | PostingsIndex, k: int,
                    limit: int | None = None, views: PageViews | None = None) -> list[DetectorHit]:
    """BM25 over the scope's line windows, re-scored by keyword co-occurrence; a window overlapping a better one is
    skipped. ``limit`` (default ``k``): hits returned, the first ``k`` the same whatever the limit.

    raw score = (BM25 + 0.01 x distinct query words in the window) x co-occurrence boost. The small word-count term
    keeps a ranking where Okapi's idf floor gives nothing (a word in half of a tiny document's windows scores 0).
    ``views`` (the corpus-wide postings): the windows' places are read from the index and each window anchored on
    the pages it falls on, a chunk of windows at a time, instead of on its document loaded whole.
    """
    scores, token_sets = index.query(terms.bm25_query)  # token sets: a list, or {window: its query words}
    words = set(terms.bm25_query)
    pool = np.flatnonzero(scores > 0)
    if pool.size < k:  # tiny or uniform documents: every window holding a query word is a proposal
        held = sorted(token_sets.items()) if isinstance(token_sets, Mapping) else enumerate(token_sets)
        pool = np.array([i for i, ts in held if scores[i] > 0 or words & ts], dtype=int)
    if pool.size == 0:
        return []
    depth = min(RERANK_DEPTH, pool.size)
    top = pool[np.argpartition(-scores[pool], depth - 1)[:depth]]
    rescored = []
    for i in top.tolist():
        p, s = terms.cooccurrence(token_sets[i])
        base = max(float(scores[i]), 0.0) + 0.01 * len(words & token_sets[i])
        rescored.append((base * cooccurrence_boost(p, s), i))
    rescored.sort(key=lambda x: (-x[0], x[1]))
    hits: list[DetectorHit] = []
    places: dict[int, tuple[str, tuple[int, int, int, int | None]]] = {}
    for n, (score, i) in enumerate(rescored):
        if views is None:
            doc, (_, win_start, win_end, section_id) = index.window(i)
        else:
            if i not in places:
                chunk = index.places([j for _, j in rescored[n:n + PREFETCH_CHUNK]])
                places.update(chunk)
                views.prefetch((d, m[0], m[1], m[2]) for d, m in chunk.values())
            d, (_, win_start, win_end, section_id) = places[i]
            doc = views[d]
        page, start, end = anchor_on_page(doc, win_start, win_end, terms)
        if overlaps(hits, doc.doc_id, start, end):
            continue
        hits.append(DetectorHit(
            question_id=question_id, detector="keywords", rank=len(hits) + 1, raw_score=score, doc_id=doc.doc_id,
            page=page, line_start=start, line_end=end, section_id=section_id,
            matched_keywords=terms.matched(token_sets[i]),
        ))
        if len(hits) == (limit or k):
            break
    return hits


def _clamped(docs: Mapping, row: dict) -> tuple[str, int, int, int]:
    """(doc_id, page, line_start, line_end) of a vector row as detect_embeddings anchors it: its range cut at its
    document's last line (vectors of an older version of the document may run past it)."""
    doc = docs.get(row["doc_id"])
    last = doc.last_line if doc is not None else row["line_end"]
    return row["doc_id"], row["page"], min(row["line_start"], last), min(row["line_end"], last)


def overlaps(hits: Sequence[DetectorHit], doc_id: str, start: int, end: int) -> bool:
    """True when lines ``start..end`` share a line with a better-ranked hit: overlapping windows (stride < size)
    would only repeat that passage and take ranks from other ones."""
    return any(h.doc_id == doc_id and h.line_start <= end and start <= h.line_end for h in hits)


def detect_embeddings(question_id: str, question_text: str, terms: QueryTerms, vectors, embedder,
                      docs: dict[str, DocCorpus], doc_ids: list[str] | None, k: int, *,
                      vector: np.ndarray | None = None) -> list[DetectorHit]:
    """Nearest line windows to the question (cosine, exact search); raw score = 1 - cosine distance. A window
    overlapping a nearer one is skipped.

    ``docs`` maps doc_id -> corpus view, used to anchor each window on one page and to list the keywords it holds;
    ``vector``: the question's, when already embedded (a scoped question searches several document sets with it).
    """
    if vector is None:
        vector = embedder.embed([question_text])[0]
    found = list(vectors.search(vector, doc_ids, EMBEDDING_OVERFETCH * k).iter_rows(named=True))
    prefetch = getattr(docs, "prefetch", None)  # PageViews: the rows' pages read a chunk at a time
    hits: list[DetectorHit] = []
    for n, row in enumerate(found):
        if prefetch is not None and n % PREFETCH_CHUNK == 0:
            prefetch(_clamped(docs, r) for r in found[n:n + PREFETCH_CHUNK])
        doc = docs.get(row["doc_id"])
        if doc is None:  # vectors of a document the warehouse no longer holds: not a proposal we can anchor
            continue
        _, _, start, end = _clamped(docs, row)
        page, start, end = anchor_on_page(doc, start, end, terms)
        if overlaps(hits, doc.doc_id, start, end):
            continue
        hits.append(DetectorHit(
            question_id=question_id, detector="embeddings", rank=len(hits) + 1,
            raw_score=1.0 - float(row["_distance"]), doc_id=doc.doc_id, page=page, line_start=start,
            line_end=end, section_id=row["section_id"],
            matched_keywords=terms.matched(lines_tokens(doc, start, end)),
        ))
        if len(hits) == k:
            break
    return hits
