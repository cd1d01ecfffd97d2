"""Features of the learned arbiter: one numeric row per candidate, computed from the question and the whole pool.

What the brief already says about a candidate (each detector's rank and raw score, the methods, RRF) plus what
its text says about the question (keyword and term coverage of the snippet and the section title, a value of the
asked answer shape, the question's distinctive terms, layout), each also relative to the rest of the pool: an
arbiter reads all candidates at once, and "the best keyword coverage of this pool" means more than a coverage.
Deterministic, pure (no model, no I/O), a few milliseconds for a pool of 30. No feature names a question, a
document or a page identity: a model trained on some documents must transfer to others.

Snippet sentences addressed to the model (``evidence.strip_instructions``) are blanked before reading, as the rules
arbiter does, so a planted instruction is no evidence.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

import numpy as np

from schemas.contracts import (
    DETECTORS,
    AnswerShape,
    CandidateBrief,
    Decomposition,
    ParsedQuestion,
)
from tasks.arbiter import evidence as ev

MISSING_RANK = 100.0  # a detector that did not see the candidate; its pool ranks stop at top_k (20 by default)
MISSING_SCORE = -1.0  # raw scores are >= 0 on every detector's own scale (BM25, TOC match, cosine of hits kept)
SHAPES: tuple[str, ...] = get_args(AnswerShape)
DECOMPOSITIONS: tuple[str, ...] = get_args(Decomposition)

FEATURE_NAMES: tuple[str, ...] = (
    *(f"{d}_{k}" for d in DETECTORS for k in ("seen", "rank", "inv_rank", "score", "score_rel")),
    "n_methods", "rrf_score", "rrf_rank", "rrf_rel",
    "kw_primary_share", "kw_primary_partial", "kw_secondary_share", "matched_kw_share",
    "term_share", "term_weighted", "term_rel", "term_rank", "window_share", "window_rel",
    "title_term_share", "title_match", "toc_title_match",
    "distinct_share", "has_distinct", "pool_distinct_missing", "pool_best_term",
    "shape_value", "n_values", "value_in_window", "table_row",
    *(f"shape_{s}" for s in SHAPES), *(f"decomp_{d}" for d in DECOMPOSITIONS),
    "snippet_chars", "snippet_lines", "line_span", "page_log", "first_page",
    "same_page", "page_rrf_share", "page_methods", "page_term_union", "page_union_rel", "page_best_window",
    "pool_size",
)
INDEX = {name: i for i, name in enumerate(FEATURE_NAMES)}


@dataclass
class PoolFeatures:
    """The feature matrix of one pool (rows in the candidates' order) and a few facts reasons quote."""

    matrix: np.ndarray  # (n_candidates, len(FEATURE_NAMES)), float64
    candidates: list[CandidateBrief]
    n_primary_keywords: int

    def value(self, row: int, name: str) -> float:
        return float(self.matrix[row, INDEX[name]])

    def describe(self, row: int) -> str:
        """The evidence of one row in words, for a verdict's reason: 'bm25 rank 1, toc match, 3/4 keywords'."""
        bits = [f"{label} rank {int(self.value(row, f'{det}_rank'))}" for det, label in
                (("keywords", "bm25"), ("embeddings", "embedding"), ("toc", "toc")) if self.value(row, f"{det}_seen")]
        if self.value(row, "toc_title_match"):
            bits.append("toc match")
        if self.n_primary_keywords:
            found = round(self.value(row, "kw_primary_share") * self.n_primary_keywords)
            bits.append(f"{found}/{self.n_primary_keywords} keywords")
        if self.value(row, "value_in_window"):
            bits.append("a value of the asked shape near them")
        return ", ".join(bits) or "no detector evidence"


def as_question(question: ParsedQuestion | Mapping[str, Any]) -> ParsedQuestion:
    return question if isinstance(question, ParsedQuestion) else ParsedQuestion.model_validate(question)


def as_candidate(candidate: CandidateBrief | Mapping[str, Any]) -> CandidateBrief:
    return candidate if isinstance(candidate, CandidateBrief) else CandidateBrief.model_validate(candidate)


@functools.lru_cache(maxsize=65536)
def _tokens(text: str) -> tuple[str, ...]:
    """``evidence.tokens`` of one line, cached: neighbouring candidates share lines, section paths repeat."""
    return tuple(ev.tokens(text))


@dataclass
class _Query:
    primary: list[ev.Keyword]
    secondary: list[ev.Keyword]
    terms: list[str]
    distinct: list[str]
    q_tokens: frozenset[str]
    shape: str


def _query(q: ParsedQuestion) -> _Query:
    primary = ev.parse_keywords(q.keywords_primary) or ev.parse_keywords(ev.content_tokens(q.text))
    terms = list(dict.fromkeys(t for k in primary for t in k.toks if len(t) > 1 or t.isdigit()))
    prim_set = set(terms)
    secondary = [k for k in ev.parse_keywords(q.keywords_secondary) if not set(k.toks) <= prim_set]
    return _Query(primary=primary, secondary=secondary, terms=terms,
                  distinct=ev.question_terms(q), q_tokens=frozenset(ev.tokens(q.text)),
                  shape=q.answer_shape)


def _share(items: Sequence[float]) -> float:
    return sum(items) / len(items) if items else 0.0


def _rank_desc(values: list[float]) -> list[float]:
    """1 for the largest value of the pool (ties share the better rank)."""
    return [1.0 + sum(1 for w in values if w > v) for v in values]


def _rel(values: list[float | None]) -> list[float]:
    """Min-max within the pool among present values (1 = best of the pool); 0 when absent."""
    present = [v for v in values if v is not None]
    if not present:
        return [0.0] * len(values)
    lo, hi = min(present), max(present)
    return [0.0 if v is None else (1.0 if hi == lo else (v - lo) / (hi - lo)) for v in values]


def _of_best(values: list[float]) -> list[float]:
    """Each value as a share of the pool's best (1 = the best; all 0 when the best is 0)."""
    best = max(values)
    return [v / best if best else 0.0 for v in values]


def pool_features(question: ParsedQuestion | Mapping[str, Any],
                  candidates: Sequence[CandidateBrief | Mapping[str, Any]]) -> PoolFeatures:
    """The feature rows of a pool, in the order given (payload dicts or models)."""
    q = as_question(question)
    cands = [as_candidate(c) for c in candidates]
    query = _query(q)
    n = len(cands)
    m = np.zeros((n, len(FEATURE_NAMES)), dtype=np.float64)
    if n == 0:
        return PoolFeatures(matrix=m, candidates=cands, n_primary_keywords=len(query.primary))

    lines = [[ln for ln in ev.strip_instructions(c.snippet.splitlines())[0] if ln.strip()] for c in cands]
    line_toks = [[_tokens(ln) for ln in ls] for ls in lines]
    tok_lists = [[t for lt in lts for t in lt] for lts in line_toks]
    tok_sets = [set(t) for t in tok_lists]
    weights = ev.rarity(query.terms, tok_sets)  # as the rules arbiter weighs the question's terms

    def col(name: str, values: Sequence[float]) -> None:
        m[:, INDEX[name]] = values

    # detectors ---------------------------------------------------------------------------------------------------
    for d in DETECTORS:
        ranks = [c.ranks.get(d) for c in cands]
        scores = [c.raw_scores.get(d) for c in cands]
        col(f"{d}_seen", [1.0 if r is not None else 0.0 for r in ranks])
        col(f"{d}_rank", [float(r) if r is not None else MISSING_RANK for r in ranks])
        col(f"{d}_inv_rank", [1.0 / r if r else 0.0 for r in ranks])
        col(f"{d}_score", [float(s) if s is not None else MISSING_SCORE for s in scores])
        col(f"{d}_score_rel", _rel([None if s is None else float(s) for s in scores]))
    col("n_methods", [len(set(c.methods)) for c in cands])
    rrf = [c.rrf_score for c in cands]
    col("rrf_score", rrf)
    col("rrf_rank", _rank_desc(rrf))
    top_rrf = max(rrf) or 1.0
    col("rrf_rel", [r / top_rrf for r in rrf])

    # keywords and terms ------------------------------------------------------------------------------------------
    n_prim = len(query.primary)
    kw_full, kw_part, kw_sec, matched, term, weighted, window, values, in_window, table = ([] for _ in range(10))
    title_terms, title_match, distinct = [], [], []
    for c, ls, lts, toks, tset in zip(cands, lines, line_toks, tok_lists, tok_sets):
        scores = [ev.keyword_score(list(k.toks), toks, tset) for k in query.primary]
        kw_full.append(_share([1.0 if s == 1.0 else 0.0 for s in scores]))
        kw_part.append(_share(scores))
        kw_sec.append(_share([1.0 if ev.keyword_score(list(k.toks), toks, tset) >= 0.8 else 0.0
                              for k in query.secondary]))
        matched.append(min(1.0, len(c.matched_keywords) / n_prim) if n_prim else 0.0)
        term.append(_share([1.0 if t in tset else 0.0 for t in query.terms]))
        weighted.append(ev.weighted_share(query.terms, weights, tset))
        best_i, best = 0, 0.0
        for i in range(max(1, len(ls))):
            share = ev.weighted_share(query.terms, weights, {t for lt in lts[i: i + ev.WINDOW] for t in lt})
            if share > best:
                best_i, best = i, share
        window.append(best)
        found = ev.values_of_shape("\n".join(ls), query.shape, query.q_tokens)
        values.append(float(len(found)))
        near = "\n".join(ls[max(0, best_i - 1): best_i + ev.WINDOW + 1])
        in_window.append(1.0 if best > 0 and ev.values_of_shape(near, query.shape, query.q_tokens) else 0.0)
        table.append(1.0 if any(ev.is_table_row(ln) for ln in ls) else 0.0)
        title = c.section.split(" > ")[-1] if c.section else ""
        title_set = set(_tokens(c.section))
        title_terms.append(_share([1.0 if t in title_set else 0.0 for t in query.terms]))
        words = [t for t in _tokens(title) if t not in ev.SCAFFOLD and not t.isdigit()]
        hits = [t for t in words if t in weights]
        title_match.append(len(hits) / len(words) if words else 0.0)
        if query.distinct:
            carried = tset | title_set
            distinct.append(_share([1.0 if ev.carries(t, carried) else 0.0 for t in query.distinct]))
        else:
            distinct.append(1.0)
    col("kw_primary_share", kw_full)
    col("kw_primary_partial", kw_part)
    col("kw_secondary_share", kw_sec)
    col("matched_kw_share", matched)
    col("term_share", term)
    col("term_weighted", weighted)
    col("term_rel", _of_best(weighted))
    col("term_rank", _rank_desc(weighted))
    col("window_share", window)
    col("window_rel", _of_best(window))
    col("title_term_share", title_terms)
    col("title_match", title_match)
    col("toc_title_match", [1.0 if t >= 0.5 and "toc" in c.methods else 0.0 for t, c in zip(title_match, cands)])
    col("distinct_share", distinct)
    col("has_distinct", [1.0 if query.distinct else 0.0] * n)
    pool_vocab = set().union(*tok_sets, *(set(_tokens(c.section)) for c in cands))
    missing = any(not ev.carries(t, pool_vocab) for t in query.distinct)
    col("pool_distinct_missing", [1.0 if missing else 0.0] * n)
    col("pool_best_term", [max(weighted)] * n)
    col("shape_value", [1.0 if v else 0.0 for v in values])
    col("n_values", [min(v, 10.0) for v in values])
    col("value_in_window", in_window)
    col("table_row", table)
    for s in SHAPES:
        col(f"shape_{s}", [1.0 if q.answer_shape == s else 0.0] * n)
    for d in DECOMPOSITIONS:
        col(f"decomp_{d}", [1.0 if q.decomposition == d else 0.0] * n)

    # layout and pool shape ---------------------------------------------------------------------------------------
    col("snippet_chars", [math.log1p(len(c.snippet)) for c in cands])
    col("snippet_lines", [float(len(ls)) for ls in lines])
    col("line_span", [math.log1p(max(0, c.line_end - c.line_start) + 1) for c in cands])
    col("page_log", [math.log1p(c.page) for c in cands])
    col("first_page", [1.0 if c.page == 0 else 0.0 for c in cands])
    pages: dict[tuple[str, int], list[int]] = {}
    for i, c in enumerate(cands):
        pages.setdefault((c.doc_id, c.page), []).append(i)
    # the page is what gold marks: evidence of all the pool's candidates on the same page, together
    total_rrf = sum(rrf) or 1.0
    same, share, methods, union, best_window = ([0.0] * n for _ in range(5))
    for idx in pages.values():
        page_rrf = sum(rrf[i] for i in idx) / total_rrf
        page_methods = float(len({d for i in idx for d in cands[i].methods}))
        page_union = ev.weighted_share(query.terms, weights, set().union(*(tok_sets[i] for i in idx)))
        page_window = max(window[i] for i in idx)
        for i in idx:
            same[i], share[i], methods[i], union[i], best_window[i] = (float(len(idx)), page_rrf, page_methods,
                                                                       page_union, page_window)
    col("same_page", same)
    col("page_rrf_share", share)
    col("page_methods", methods)
    col("page_term_union", union)
    col("page_union_rel", _of_best(union))
    col("page_best_window", best_window)
    col("pool_size", [float(n)] * n)
    return PoolFeatures(matrix=m, candidates=cands, n_primary_keywords=n_prim)
