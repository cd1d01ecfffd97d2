"""How the rules arbiter reads a pool as a whole: the question's words as the pool spells them, and what it does
when its rules cannot tell two passages apart. Pure functions over the pool, so every change shows in a reason.
"""

from __future__ import annotations

from schemas.contracts import CandidateBrief, CandidateVerdict
from tasks.arbiter import evidence as ev

UNSURE_MARGIN = 0.03  # relevance gap under which the rules cannot tell two primaries apart


def fit_to_pool(query, texts: list[list[str]]) -> None:
    """The question's words as the pool writes them (``query``: tasks.arbiter.rules.Query, changed in place): a term no candidate carries but one spells within a typo
    becomes the pool's word ('Microsfot' -> 'microsoft'), and an acronym no candidate carries is read as the
    spelling-out the pool uses most ('R&D' -> 'research and development', 'SG&A' -> 'selling, general and
    administrative'; its letters' own tokens, 'sg', are dropped)."""
    pool = {t for ts in texts for t in ts}
    terms: list[str] = []
    for t in query.terms:
        near = None if t in pool or t.isdigit() else ev.nearest(t, pool)
        if near:
            query.surface.setdefault(near, query.surface.get(t, t))
        terms.append(near or t)
    for acronym in query.acronyms:
        letters = "".join(c for c in acronym.lower() if c.isalpha())
        if letters in pool or ev.stem(letters) in pool:
            continue
        expansion = ev.expansion(letters, texts)
        if not expansion:
            continue
        own = set(ev.tokens(acronym))
        terms = [t for t in terms if t not in own] + [t for t in expansion if t not in terms]
        query.phrases.append(ev.Keyword(" ".join(expansion), expansion))
        for t in expansion:
            query.surface.setdefault(t, t)
    query.terms = list(dict.fromkeys(terms))


def keep_lexical_best_when_unsure(verdicts: list[CandidateVerdict], candidates: list[CandidateBrief]) -> None:
    """When the rules cannot tell their best primary from the keyword detector's best candidate (relevance within
    UNSURE_MARGIN, another page), the arbiter is unsure and keeps both, the detector's first, and says so: that
    detector reads the same kind of evidence (the question's terms on lines) with statistics of the whole
    document, which the pool's own cannot match, so on a near tie it decides (on the guard set and the dev set,
    benchmarks/guard_dev.py and arbiter_dev.py, deferring on near ties kept the arbiter at or above the keyword
    detector's hit@1, where the rules alone fell below it on the guard set)."""
    primaries = [v for v in verdicts if v.role == "primary"]
    if not primaries:
        return
    best = max(primaries, key=lambda v: v.relevance)
    k = next((i for i, c in enumerate(candidates) if c.ranks.get("keywords") == 1), None)
    if k is None:
        return
    lexical, cand = verdicts[k], candidates[k]
    if cand.preferred_group is None and any(c.preferred_group is not None for c in candidates):
        return  # the documents the question names come first (tasks.arbiter.named): not one it does not name
    by_id = {c.candidate_id: c for c in candidates}
    other = by_id[best.candidate_id]
    if lexical is best or lexical.role not in ("primary", "supporting") \
            or lexical.relevance < best.relevance - UNSURE_MARGIN or (other.doc_id, other.page) == (cand.doc_id, cand.page):
        return
    for v in primaries:  # one primary per page: the detector's best takes its page's
        if v is not lexical and (by_id[v.candidate_id].doc_id, by_id[v.candidate_id].page) == (cand.doc_id, cand.page):
            v.role, v.reason = "supporting", f"{v.reason}; same page as the primary {cand.candidate_id}"
    was = lexical.relevance
    lexical.role = "primary"
    lexical.relevance = min(1.0, round(best.relevance + 0.001, 3))
    lexical.reason = (f"unsure: the rules cannot tell it from {best.candidate_id} (relevance {was:.2f} vs "
                      f"{best.relevance:.2f}), kept first as the keyword detector's best (rank 1); {lexical.reason}")
    best.reason += f"; unsure: as strong as {cand.candidate_id}, the keyword detector's best, which goes first"
