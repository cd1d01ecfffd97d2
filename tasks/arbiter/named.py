"""The rules arbiter and the documents a question names: detection searched them first (``CandidateBrief.preferred``,
from what the documents say they are: ``tasks.detect.scope``); the arbiter judges their passages first.

- The named documents' passages are judged as a pool of their own, as if the question had been asked of those
  documents alone (the rules' bars and term weights are relative to a pool: another company's filing printing the
  same line items would otherwise set the bar), and the other documents' passages as another pool.
- Once a named document holds a primary, a primary or supporting passage of another document becomes tangential,
  with the reason: another company's or another period's line items match the question's words as well, and are
  not its answer nor its context (each pool's relevance is relative to its own pool, so another document's
  supporting passage would otherwise rank beside the named document's own).
  When no named document holds one, nothing changes: the identity may be wrong, or the answer elsewhere, and the
  other documents' passages keep the roles the rules gave them.
- Over two groups of named documents or more (a comparison), each group keeps one primary, its best (a group
  without one takes its best supporting passage), so that the dispatcher's cap on primaries cannot drop a side.
- Not found only when both pools say so: a term the named documents lack but another document carries may mean
  the identity was misread.
- Inside the named documents, or the one periodic report a question is asked of, the question's words that their
  identity states (the issuer, the period: :func:`identity_terms`) are no evidence of where the answer lies: every
  page of that filing is that issuer's and reports that period. The rules set them aside there and judge the
  passages on the rest of the question (the asked measure and its subject), so that a cover page or a sentence
  repeating "the quarter ended April 30, 2023" does not outrank the row of the asked figure.
"""

from __future__ import annotations

from collections.abc import Callable

from schemas.contracts import ArbiterOutput, CandidateBrief, CandidateVerdict, ParsedQuestion
from tasks.corpus.identity import reports_a_period
from tasks.detect.periods import asked_periods
from tasks.words import tokens

Judge = Callable[[ParsedQuestion, list[CandidateBrief], list[str] | None], ArbiterOutput]


def arbitrate_named(question: ParsedQuestion, candidates: list[CandidateBrief], absent_terms: list[str] | None,
                    judge: Judge, bands: dict[str, tuple[float, float]]) -> ArbiterOutput:
    """``judge`` (the rules over one pool) over the named documents' candidates and the others' apart, merged so that
    the named documents come first; the plain ``judge`` when the pool has no named document or nothing else."""
    named = [i for i, c in enumerate(candidates) if c.preferred_group is not None]
    if not named:
        return judge(question, candidates, absent_terms)
    if len(named) == len(candidates):  # every document is named (a comparison asked of its own documents)
        output = judge(question, candidates, absent_terms)
        _one_primary_per_group(list(zip(candidates, output.verdicts)), bands)
        return output
    others = [i for i in range(len(candidates)) if i not in set(named)]
    first = judge(question, [candidates[i] for i in named], absent_terms)
    second = judge(question, [candidates[i] for i in others], absent_terms)
    verdicts: list[CandidateVerdict] = [None] * len(candidates)  # type: ignore[list-item]
    for i, v in [*zip(named, first.verdicts), *zip(others, second.verdicts)]:
        verdicts[i] = v
    _one_primary_per_group([(candidates[i], verdicts[i]) for i in named], bands)
    for i in named:  # the reason says why its document came first
        if verdicts[i].role == "primary" and candidates[i].preferred:
            verdicts[i].reason = f"{verdicts[i].reason}; searched first: {candidates[i].preferred}"
    if any(verdicts[i].role == "primary" for i in named):
        for i in others:
            v = verdicts[i]
            if v.role in ("primary", "supporting"):
                other = candidates[i].document or f"document {candidates[i].doc_id[:8]}"
                _recast(v, "tangential", bands, f"{v.reason}; but from a document the question does not name ({other})")
    not_found = first.not_found and second.not_found
    return ArbiterOutput(verdicts=verdicts, not_found=not_found,
                         not_found_reason=first.not_found_reason if not_found else None)


def identity_terms(question: ParsedQuestion, candidates: list[CandidateBrief]) -> set[str]:
    """The words (tokens) that the candidates' documents state by being what they are: the words of each document's
    identity line (issuer, ticker, type, period) and of the periods the question asks, when every candidate is a
    passage of a document the question names (detection matched them on that identity), or when the whole pool is
    one periodic report (a question asked of that report: every page of it is that issuer's and reports that period;
    on the guard set and the filings set, a footer or certification page repeating the issuer and the period
    outranked the row asked for). Empty otherwise: beside other documents, a document not named may be another
    issuer's or period's, where those words still tell passages apart; and a document that reports no period (a
    manual, a paper, an inspection report) is about what its title and issuer name ('How many grams of coffee ...'
    asked of a coffee machine's manual), so those words stay evidence (on MMLongBench dev they were)."""
    if not candidates:
        return set()
    words = {t for c in candidates for t in tokens(c.document)}
    one_report = len({c.doc_id for c in candidates}) == 1 and reports_a_period(candidates[0].document)
    if not (all(c.preferred for c in candidates) or one_report):
        return set()
    return words | {t for p in asked_periods(question.text) for t in tokens(p.text)}


def _one_primary_per_group(named: list[tuple[CandidateBrief, CandidateVerdict]],
                           bands: dict[str, tuple[float, float]]) -> None:
    groups = sorted({c.preferred_group for c, _ in named})
    if len(groups) < 2:
        return
    for g in groups:
        members = [v for c, v in named if c.preferred_group == g]
        primaries = [v for v in members if v.role == "primary"]
        if not primaries:
            supporting = [v for v in members if v.role == "supporting"]
            if not supporting:
                continue
            best = max(supporting, key=lambda v: v.relevance)
            _recast(best, "primary", bands, f"the best passage of one of the documents the question compares: "
                                            f"{best.reason}")
            continue
        keep = max(primaries, key=lambda v: v.relevance)
        for v in primaries:
            if v is not keep:
                _recast(v, "supporting", bands, f"{v.reason}; the primary of its document is {keep.candidate_id}")


def _recast(v: CandidateVerdict, role: str, bands: dict[str, tuple[float, float]], reason: str) -> None:
    """A verdict moved to another role, its relevance carried to the same place in that role's band (a role and its
    relevance never disagree)."""
    low, span = bands[v.role]
    share = min(1.0, max(0.0, (v.relevance - low) / span)) if span else 0.0
    new_low, new_span = bands[role]
    v.role, v.reason = role, reason
    v.relevance = round(new_low + new_span * share, 3)
    if role == "discarded":
        v.decision = "discard"
    elif v.decision == "discard":
        v.decision = "keep"
