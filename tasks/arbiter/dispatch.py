"""The verdict dispatcher: deterministic code (no LLM) that turns arbiter verdicts into a RetrievalResult.

Seed 001: the arbiter rates, plain code applies thresholds and checks ("protection against the arbiter's
hallucinations"), including a guard against score inflation (many chunks at 0.95 -> keep only the top-K).
Named profiles hold the thresholds (strict ~ finance 0.9, lenient ~ chat bot 0.5); every result records which
rule fired so that the audit can say why a passage was or was not handed to generation.

Passage text: ``lines_text(doc_id, line_start, line_end)`` when given (the full lines of the candidate's range,
e.g. :func:`warehouse.retrieval.lines_text` bound to a warehouse), else the candidate's snippet. A range longer
than ``MAX_PASSAGE_LINES`` (a whole-section candidate) also falls back to the snippet, which is centred on the
anchor, so generation never receives a whole chapter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from schemas.contracts import (
    ROLES,
    ArbiterOutput,
    CandidateBrief,
    CandidateVerdict,
    Contradiction,
    RetrievalResult,
    RetrievedPassage,
)
from schemas.settings import DISPATCH_PROFILES, DispatchProfile

MAX_PASSAGE_LINES = 60
LinesText = Callable[[str, int, int], str | None]


class DispatchError(ValueError):
    """Verdicts and candidates that do not belong together, or an unknown profile."""


def verdict_order(verdicts: list[tuple[str, str, float | None]]) -> list[str]:
    """The arbiter's order of its whole pool: ``verdicts`` ((candidate_id, role, relevance) in the brief's order)
    by role (primary, supporting, tangential, discarded), then relevance, then the brief's order. The dispatcher
    keeps a head of it; the rest is still the arbiter's ranking, which hit@5 and MRR read."""
    rank = {role: i for i, role in enumerate(ROLES)}
    order = sorted(range(len(verdicts)), key=lambda i: (rank.get(verdicts[i][1], len(ROLES)),
                                                        -(verdicts[i][2] or 0.0), i))
    return [verdicts[i][0] for i in order]


def resolve_profile(profile: str | DispatchProfile,
                    overrides: Mapping[str, Any] | None = None) -> tuple[str, DispatchProfile]:
    """(name, thresholds) for a profile name or object, with ``overrides`` applied on top."""
    if isinstance(profile, DispatchProfile):
        name, base = "custom", profile
    elif profile in DISPATCH_PROFILES:
        name, base = profile, DISPATCH_PROFILES[profile]
    else:
        raise DispatchError(f"unknown dispatch profile {profile!r}; choose one of {', '.join(DISPATCH_PROFILES)}")
    if overrides:
        unknown = sorted(set(overrides) - set(DispatchProfile.model_fields))
        if unknown:
            valid = ", ".join(DispatchProfile.model_fields)
            raise DispatchError(f"unknown dispatch override(s) {unknown}; valid: {valid}")
        base = DispatchProfile.model_validate({**base.model_dump(), **overrides})
        name = f"{name}+overrides"
    return name, base


def dispatch(question_id: str, output: ArbiterOutput, candidates: list[CandidateBrief],
             profile: str | DispatchProfile = "balanced", overrides: Mapping[str, Any] | None = None, *,
             arbiter_provider: str = "unknown", arbiter_model: str = "unknown", arbiter_call_id: str | None = None,
             lines_text: LinesText | None = None) -> RetrievalResult:
    """Primary then supporting passages (relevance, then RRF), thresholds, caps, guard, not-found, contradictions."""
    name, p = resolve_profile(profile, overrides)
    by_id = {c.candidate_id: c for c in candidates}
    unknown = [v.candidate_id for v in output.verdicts if v.candidate_id not in by_id]
    if unknown:
        raise DispatchError(f"question {question_id}: verdicts for ids that are not candidates: {unknown[:10]}; "
                            "validate the arbiter output (tasks.arbiter.validate) before dispatching")
    verdicts = output.verdicts

    def order(v: CandidateVerdict) -> tuple:
        return (-v.relevance, -by_id[v.candidate_id].rrf_score, v.candidate_id)

    primary = sorted((v for v in verdicts if v.role == "primary"), key=order)
    supporting = sorted((v for v in verdicts if v.role == "supporting"), key=order)
    notes: list[str] = []

    high = sum(1 for v in verdicts if v.relevance > p.guard_high)
    guard = len(verdicts) >= p.guard_min_pool and high > p.guard_share * len(verdicts)
    if guard:
        top = {v.candidate_id for v in sorted(primary + supporting, key=order)[: p.guard_top_k]}
        primary = [v for v in primary if v.candidate_id in top]
        supporting = [v for v in supporting if v.candidate_id in top]
        notes.append(f"guard: {high}/{len(verdicts)} above {p.guard_high:g} → top-{p.guard_top_k} kept")

    # the caps keep distinct pages first: a second passage of a page already kept adds less than a new page
    kept_p = _pages_first([v for v in primary if v.relevance >= p.min_relevance], by_id, set())
    # a primary beyond the cap still outweighs every supporting passage: it leads them, as supporting (dropping it
    # kept weaker passages instead: the statement table that a question's figure is in, after three paragraphs of
    # commentary that also carry its words)
    over = kept_p[p.max_primary:]
    if over:
        notes.append(f"primary capped {len(kept_p)}→{p.max_primary}, the rest lead the supporting")
        kept_p = kept_p[: p.max_primary]
    kept_s = _pages_first([*over, *(v for v in supporting if v.relevance >= p.min_supporting_relevance)], by_id,
                          {_page(by_id[v.candidate_id]) for v in kept_p})
    if len(kept_s) > p.max_supporting:
        notes.append(f"supporting capped {len(kept_s)}→{p.max_supporting}")
        kept_s = kept_s[: p.max_supporting]

    if not verdicts:
        status, reason = "not_found", "the detectors proposed no candidate"
        rule = "not_found: no candidates"
    elif output.not_found:
        status, reason = "not_found", output.not_found_reason or "arbiter said not found"
        rule = f"not_found: arbiter said not found ({reason})"
    elif not primary:
        status, reason = "not_found", "no candidate was judged primary"
        rule = "not_found: no primary verdict"
    elif not kept_p:
        best = primary[0].relevance
        status, reason = "not_found", f"no primary reaches min_relevance {p.min_relevance:g} (best {best:.2f})"
        rule = f"not_found: no primary above min_relevance {p.min_relevance:g}"
    else:
        status, reason = "found", None
        rule = f"found: {len(kept_p)} primary ≥ {p.min_relevance:g}"
        if kept_s:
            rule += f", {len(kept_s)} supporting ≥ {p.min_supporting_relevance:g}"
    if notes:
        rule += "; " + "; ".join(notes)
    if status == "not_found":
        kept_p, kept_s = [], []

    demoted = {v.candidate_id for v in over}

    def passage(v: CandidateVerdict) -> RetrievedPassage:
        c = by_id[v.candidate_id]
        role, reason = v.role, v.reason
        if v.candidate_id in demoted:
            role, reason = "supporting", f"{reason} (primary beyond the cap of {p.max_primary} primaries)"
        return RetrievedPassage(
            candidate_id=c.candidate_id, doc_id=c.doc_id, page=c.page, line_start=c.line_start,
            line_end=c.line_end, section=c.section, text=_text(c, lines_text), role=role, decision=v.decision,
            reason=reason, relevance=v.relevance, anchor_found=v.anchor_found, rewrite=v.rewrite,
            rrf_score=c.rrf_score, methods=list(c.methods), matched_keywords=list(c.matched_keywords),
        )

    return RetrievalResult(
        question_id=question_id, status=status, primary=[passage(v) for v in kept_p],
        supporting=[passage(v) for v in kept_s], contradictions=_contradictions(verdicts, by_id), rule=rule,
        not_found_reason=reason, profile=name, guard_fired=guard, arbiter_provider=arbiter_provider,
        arbiter_model=arbiter_model, arbiter_call_id=arbiter_call_id,
    )


def _page(c: CandidateBrief) -> tuple[str, int]:
    return c.doc_id, c.page


def _pages_first(verdicts: list[CandidateVerdict], by_id: dict[str, CandidateBrief],
                 seen: set[tuple[str, int]]) -> list[CandidateVerdict]:
    """``verdicts`` (best first) with the best one of each page not in ``seen`` moved ahead of the rest, order
    otherwise kept."""
    first, rest = [], []
    seen = set(seen)
    for v in verdicts:
        page = _page(by_id[v.candidate_id])
        (rest if page in seen else first).append(v)
        seen.add(page)
    return first + rest


def _text(c: CandidateBrief, lines_text: LinesText | None) -> str:
    if lines_text is not None and c.line_end - c.line_start + 1 <= MAX_PASSAGE_LINES:
        text = lines_text(c.doc_id, c.line_start, c.line_end)
        if text:
            return text
    return c.snippet


def _contradictions(verdicts: list[CandidateVerdict], by_id: dict[str, CandidateBrief]) -> list[Contradiction]:
    """Each contradicting pair once, whatever side the arbiter reported it from (unknown ids ignored)."""
    pairs: dict[tuple[str, str], None] = {}
    for v in verdicts:
        for other in v.contradicts:
            if other in by_id and other != v.candidate_id:
                pairs[tuple(sorted((v.candidate_id, other)))] = None
    out = []
    for a, b in pairs:
        ca, cb = by_id[a], by_id[b]
        out.append(Contradiction(
            candidate_ids=[a, b],
            note=f"p.{ca.page + 1} lines {ca.line_start}-{ca.line_end} and p.{cb.page + 1} lines "
                 f"{cb.line_start}-{cb.line_end} state different values for the same point",
        ))
    return out
