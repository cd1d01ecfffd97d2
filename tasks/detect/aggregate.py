"""Detector hits -> candidates at their structural unit, with snippet, per-detector ranks, RRF and the pool cap.

RRF (k=60) is computed and stored for the audit and used only to cap the pool handed to the arbiter; it never
decides. A candidate is one (document, page, innermost section) unit; without a section, hits on one page merge
when their line ranges overlap or touch.

Merging leaves the pool short: each detector's top 30 hits made 23.5 candidates a question on MMLongBench dev, not
the 30 places the arbiter has. Deeper hits (``fill``) only fill the places left empty, after every candidate of
the top hits, and never merge into those (which would change their ranks, and so the pool of a question whose pool
was full).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import polars as pl

from schemas.contracts import DETECTORS, CandidateBrief, DetectorHit
from tasks.detect.keyword_index import DocCorpus, tokenize
from tasks.terms import is_when_word

MAX_POOL = 200  # the arbiter never sees more than this, whatever the settings say
SNIPPET_LINES = 5
SNIPPET_LINE_CHARS = 240


class AggregatedCandidate(NamedTuple):
    """A candidate with its RRF rank among all candidates and whether it is handed to the arbiter (a plain triple
    for ``warehouse.detection.detection_rows``)."""

    brief: CandidateBrief
    rrf_rank: int
    in_pool: bool


def _doc_toc(toc: pl.DataFrame | None, doc_id: str) -> pl.DataFrame:
    if toc is None or toc.height == 0:
        return pl.DataFrame()
    return toc.filter(pl.col("doc_id") == doc_id)


def rrf_score(ranks: dict[str, int], k: int = 60) -> float:
    """Reciprocal rank fusion over the detectors' best ranks: sum of 1 / (k + rank)."""
    return sum(1.0 / (k + r) for r in ranks.values())


def candidate_id(doc_id: str, page: int, line_start: int, line_end: int) -> str:
    return f"{doc_id[:8]}:{page}:l{line_start}-{line_end}"


def _groups(hits: Sequence[DetectorHit], sections: dict[tuple[str, int], int | None]) -> list[list[DetectorHit]]:
    """Hits grouped by (doc, page, section); section-less hits on a page by overlapping/adjacent line ranges."""
    keyed: dict[tuple, list[DetectorHit]] = {}
    loose: dict[tuple[str, int], list[DetectorHit]] = {}
    for h in hits:
        sid = sections.get((h.doc_id, h.line_start))
        if sid is not None:
            keyed.setdefault((h.doc_id, h.page, sid), []).append(h)
        else:
            loose.setdefault((h.doc_id, h.page), []).append(h)
    groups = list(keyed.values())
    for page_hits in loose.values():
        page_hits = sorted(page_hits, key=lambda h: (h.line_start, h.line_end))
        current, end = [page_hits[0]], page_hits[0].line_end
        for h in page_hits[1:]:
            if h.line_start <= end + 1:
                current.append(h)
                end = max(end, h.line_end)
            else:
                groups.append(current)
                current, end = [h], h.line_end
        groups.append(current)
    return groups


def snippet(doc: DocCorpus, page: int, line_start: int, line_end: int, keywords: Sequence[str], prefer: int) -> str:
    """Up to 5 lines of the candidate's page around the line of its range that matches the most keyword words
    (ties: the line nearest ``prefer``, the best hit's first line), covering as much of the range as possible."""
    first, last = doc.page_span(page)
    if first > last:
        return ""
    nos, tokens, n_page = doc.line_nos, doc.line_tokens, last - first + 1
    words = {t for kw in keywords for t in tokenize(kw)}
    what = {t for t in words if not is_when_word(t)}
    # positions on the page (0 = its first line) of the range's lines: line numbers ascend, so a bisection of
    # the page's slice rather than a scan of every line of the page for every candidate
    inside = range(bisect_left(nos, line_start, first, last + 1) - first,
                   bisect_right(nos, line_end, first, last + 1) - first) or range(1)

    def weight(i: int) -> tuple[int, int, int]:
        line = tokens[first + i]
        return len(what.intersection(line)), len(words.intersection(line)), -abs(nos[first + i] - prefer)

    centre = max(inside, key=weight)
    lo, hi = inside[0], inside[-1]
    starts = [a for a in range(centre - SNIPPET_LINES + 1, centre + 1) if 0 <= a and a + SNIPPET_LINES <= n_page]
    starts = starts or [0]
    a = max(starts, key=lambda a: (min(a + SNIPPET_LINES - 1, hi) - max(a, lo), a >= lo, -abs(a - centre + 2)))
    chosen = doc.line_texts[first + a:first + min(a + SNIPPET_LINES, n_page)]
    return "\n".join(t if len(t) <= SNIPPET_LINE_CHARS else t[:SNIPPET_LINE_CHARS - 1] + "…" for t in chosen)


def aggregate(question_id: str, hits: Sequence[DetectorHit], lines: pl.DataFrame | None, toc: pl.DataFrame | None,
              pool_size: int = 30, rrf_k: int = 60, docs: Mapping[str, DocCorpus] | None = None,
              fill: Sequence[DetectorHit] = ()) -> list[AggregatedCandidate]:
    """Merge hits into candidates, sorted by RRF (ties: best single rank, then document order); the first
    ``min(pool_size, 200)`` are ``in_pool``. ``fill``: the detectors' deeper hits, merged among themselves into
    candidates that follow every candidate of ``hits`` (RRF order), a hit that falls in a candidate of ``hits``
    (its unit, or lines that overlap or touch it) dropped: they take the pool places ``hits`` left empty.

    ``lines``/``toc`` cover (at least) the hits' documents; ``docs`` (the detectors' prepared corpus views) can be
    given instead, which saves re-reading the frames on the hot path.
    """
    if pool_size < 1:
        raise ValueError(f"pool_size must be at least 1, got {pool_size}")
    if not hits:
        return []
    doc_ids = sorted({h.doc_id for h in [*hits, *fill]})
    if docs is None:
        if lines is None:
            raise ValueError("aggregate needs the hits' lines (and toc) or their prepared corpus views (docs)")
        docs = {d: DocCorpus.build(d, lines.filter(pl.col("doc_id") == d), _doc_toc(toc, d), 4, 2) for d in doc_ids}
    missing = [d for d in doc_ids if d not in docs]
    if missing:
        raise ValueError(f"hits name document(s) {missing} whose lines were not given to aggregate")
    sections = {(h.doc_id, h.line_start): docs[h.doc_id].line_sections[docs[h.doc_id].position(h.line_start)]
                for h in [*hits, *fill]}
    briefs = _briefs(question_id, hits, sections, docs, rrf_k)
    extra = [h for h in fill if not _merges(h, sections[(h.doc_id, h.line_start)], briefs)]
    ids = {b.candidate_id for b in briefs}
    briefs += [b for b in _briefs(question_id, extra, sections, docs, rrf_k) if b.candidate_id not in ids]
    cap = min(pool_size, MAX_POOL)
    return [AggregatedCandidate(brief=b, rrf_rank=i, in_pool=i <= cap) for i, b in enumerate(briefs, start=1)]


def _merges(h: DetectorHit, section_id: int | None, briefs: Sequence[CandidateBrief]) -> bool:
    """Whether hit ``h`` (its line's section ``section_id``) belongs to one of ``briefs``, as :func:`_groups` merges:
    the same page and section, or without a section the same page and lines that overlap or touch."""
    for b in briefs:
        if b.doc_id != h.doc_id or b.page != h.page or b.section_id != section_id:
            continue
        if section_id is not None or (h.line_start <= b.line_end + 1 and b.line_start <= h.line_end + 1):
            return True
    return False


def _briefs(question_id: str, hits: Sequence[DetectorHit], sections: dict[tuple[str, int], int | None],
            docs: Mapping[str, DocCorpus], rrf_k: int) -> list[CandidateBrief]:
    """The candidates of ``hits``, sorted by RRF (ties: best single rank, then document order)."""
    paths = {d: docs[d].section_paths for d in {h.doc_id for h in hits}}
    briefs: list[CandidateBrief] = []
    for group in _groups(hits, sections):
        best: dict[str, DetectorHit] = {}
        for h in group:
            if h.detector not in best or (h.rank, -h.raw_score) < (best[h.detector].rank, -best[h.detector].raw_score):
                best[h.detector] = h
        methods = [d for d in DETECTORS if d in best]
        ranks = {d: best[d].rank for d in methods}
        keywords = list(dict.fromkeys(kw for h in sorted(group, key=lambda h: h.rank) for kw in h.matched_keywords))
        first = min(group, key=lambda h: (h.rank, DETECTORS.index(h.detector)))
        doc_id, page = first.doc_id, first.page
        start, end = min(h.line_start for h in group), max(h.line_end for h in group)
        sid = sections.get((doc_id, first.line_start))
        path = paths[doc_id].get(sid, "") if sid is not None else ""
        briefs.append(CandidateBrief(
            question_id=question_id, candidate_id=candidate_id(doc_id, page, start, end), doc_id=doc_id, page=page,
            line_start=start, line_end=end, section_id=sid, section=path,
            methods=methods, ranks=ranks, raw_scores={d: best[d].raw_score for d in methods},
            matched_keywords=keywords,
            snippet=snippet(docs[doc_id], page, start, end, keywords, first.line_start),
            rrf_score=rrf_score(ranks, rrf_k),
        ))
    briefs.sort(key=lambda b: (-b.rrf_score, min(b.ranks.values()), b.doc_id, b.page, b.line_start))
    return briefs
