"""The rules arbiter: a deterministic, offline provider (not an LLM) that applies the articles' conflict rules.

Seed 000, section 1.3: trust a TOC title that matches the question's keywords; trust lines where the question's
keywords co-occur; an embedding-only hit with no keyword overlap is topical noise (tangential); two kept
candidates stating different values of the asked shape for the same keywords contradict each other. Every verdict
is computed from the candidate's evidence (section title, lines, detector methods), never from what its text asks
for: sentences addressed to the model are set aside first, so a planted instruction cannot promote a passage.

The question's *terms* are the content words of its primary keywords (stemmed); multi-word primary keywords
also count as *phrases*; secondary keywords (variants, synonyms, second topics) count as extra co-occurrence.
Each term is weighted by its rarity in the pool: a word every candidate carries tells them apart least.
When no candidate meets the rules, the one carrying a question term that most detectors agree on is made primary
(when none carries a term, the best-agreed one, at the floor of the primary band), and its reason says so; the
page is the unit of evidence, so one page holds at most one primary. not_found is reserved for a pool that lacks
a distinctive term of the question's ask (a year, a number, a code, a name; not its framing, a term it defines, a
period or currency notation, nor an acronym naming the measure asked for: evidence.absence_terms) that the searched
documents lack too, in every spelling (``absent_terms`` from detection; when not known, the pool alone decides)
(measured on the MMLongBench dev set: weak evidence, or even no term at all, did not tell unanswerable questions
apart, missing names and years did; benchmarks/arbiter_dev.py; on analysts' questions a missing notation did not:
benchmarks/guard_dev.py). When the rules cannot tell their best primary from the keyword detector's best candidate,
the arbiter says it is unsure and keeps both, the detector's first (tasks.arbiter.pool.keep_lexical_best_when_unsure).
"""

from __future__ import annotations

import re

from schemas.contracts import (
    ArbiterOutput,
    CandidateBrief,
    CandidateVerdict,
    ParsedQuestion,
)
from tasks.arbiter import evidence as ev
from tasks.arbiter.named import arbitrate_named, identity_terms
from tasks.arbiter.pool import fit_to_pool, keep_lexical_best_when_unsure
from tasks.arbiter.reading import (
    PRIMARY_FLOOR,
    Evidence,
    Query,
    make_query,
    read_evidence,
    weighted,
)
from tasks.llm.base import LLMRequest, ProviderReply
from tasks.questions.asked import asked_of

# Primary by co-occurrence: the terms in one window weigh at least PRIMARY_FLOOR of all the question's terms and
# PRIMARY_RELATIVE of the best window in the pool (or the candidate's lines do, against the best candidate): the
# arbiter sees the whole pool at once, and a question's context words (parties, document names) are often on no
# answer line. A value of the asked shape next to the terms raises relevance and makes ``anchor_found``.
_DURATION_RE = re.compile(r"(?i)\b(?:\d+|\(\d+\))['’]?\s+(?:business |calendar |working )?(?:days?|weeks?|months?|"
                          r"years?|hours?)\b")
PRIMARY_RELATIVE = 0.75
# Weight of a row label stating the question in the strength (tasks/arbiter/reading.row_label), beside the others
# (title 0.2, coverage 0.3, ...): 0.1, as much as a value of the asked shape; measured on MMLongBench dev, the guard
# set and its corpus-wide form
LABEL_SHARE = 0.1
SUPPORT_COVERAGE = 0.34  # weighted share of the terms on the candidate's lines -> at least supporting
WEAK_COVERAGE = 0.15  # below this, a keyword-only overlap is discarded rather than tangential
CONTRADICTION_OVERLAP = 0.6  # share of the two windows' terms they must have in common to be about one point
# Role bands: relevance = low + span * evidence strength, so a role and its relevance never disagree.
BANDS = {"primary": (0.6, 0.4), "supporting": (0.4, 0.3), "tangential": (0.15, 0.25), "discarded": (0.0, 0.1)}
VALUE_SHAPES = ("amount", "comparison")  # the shapes a table's cells answer
SHAPE_NOUN = {"amount": "amount", "comparison": "value", "date": "date", "boolean": "yes/no cue", "entity": "name",
              "list": "list item", "text": "value"}


class RulesArbiterProvider:
    """Provider protocol implementation: computes an ArbiterOutput from ``request.payload``; no network, no model."""

    name = "rules"
    model = "rules-v1"
    offline = True

    def send(self, request: LLMRequest) -> ProviderReply:
        try:
            question = ParsedQuestion.model_validate(request.payload["question"])
            candidates = [CandidateBrief.model_validate(c) for c in request.payload["candidates"]]
        except KeyError as exc:
            raise ValueError(
                f"rules arbiter needs payload['question'] and payload['candidates'] (build the request with "
                f"tasks.arbiter.brief.build_arbiter_request); missing {exc}"
            ) from None
        absent = request.payload.get("absent_terms")  # absent (older stored requests): not known
        return ProviderReply(text=arbitrate(question, candidates, absent).model_dump_json())


def arbitrate(question: ParsedQuestion, candidates: list[CandidateBrief],
              absent_terms: list[str] | None = None) -> ArbiterOutput:
    """Verdicts for every candidate, contradictions and the not-found decision, from the evidence alone.

    ``absent_terms``: the question's distinctive terms that occur in none of the searched documents (detection's
    :func:`tasks.detect.run.absent_terms`); None when not known, and then a term missing from the pool is enough.
    When detection searched the documents the question names first, their passages are judged first
    (:mod:`tasks.arbiter.named`)."""
    return arbitrate_named(question, candidates, absent_terms, _judge, BANDS)


def _judge(question: ParsedQuestion, candidates: list[CandidateBrief],
           absent_terms: list[str] | None = None) -> ArbiterOutput:
    """The rules over one pool (see :func:`arbitrate`)."""
    query = make_query(question)
    stripped = [ev.strip_instructions(c.snippet.split("\n")) for c in candidates]
    # what each candidate carries: its section path, its lines, and the keywords a detector matched on its hit
    texts = [ev.tokens("\n".join([c.section, *ls, *c.matched_keywords])) for c, (ls, _) in zip(candidates, stripped)]
    fit_to_pool(query, texts)
    _set_aside_identity(query, identity_terms(question, candidates))
    query.weights = ev.rarity(query.terms, [set(t) for t in texts])
    found = [read_evidence(query, c, ls, ignored) for c, (ls, ignored) in zip(candidates, stripped)]
    pages: dict[tuple[str, int], set[str]] = {}
    for c, t in zip(candidates, texts):
        pages.setdefault((c.doc_id, c.page), set()).update(t)
    for e in found:
        e.page_coverage = weighted(query, pages[(e.cand.doc_id, e.cand.page)])
    bars = (max([PRIMARY_FLOOR] + [PRIMARY_RELATIVE * e.window_coverage for e in found]),
            max([PRIMARY_FLOOR] + [PRIMARY_RELATIVE * e.coverage for e in found]))
    roles = [_role(query, e, bars) for e in found]
    carrying = [i for i, e in enumerate(found) if e.present]
    if carrying and not any(role == "primary" for role, _ in roles):
        # no passage meets the co-occurrence rules: the one most detectors agree on is the primary, said as such
        # (on the dev set, when the text evidence is this weak the detectors' agreement picked the page more
        # often than the weak evidence did; a pool's weak evidence did not tell unanswerable questions apart)
        # when the question asks how long, a passage that states a duration is the better guess of the
        # detectors' equals (as many detectors proposed it): the asked class of value is evidence too
        duration = asked_of(question).cls == "duration"
        best = max(carrying, key=lambda i: (len(set(found[i].cand.methods)),
                                            duration and bool(_DURATION_RE.search(found[i].cand.snippet)),
                                            *_agreement(found[i].cand)[1:], _strength(query, found[i])))
        roles[best] = ("primary", f"best agreed on by the detectors ({_agreed(found[best].cand)}): " + roles[best][1])
    elif not carrying and any(not e.ignored for e in found):
        # no candidate carries a question term (a question about a chart or a picture, worded unlike the text):
        # on the dev set such pools were answerable three times out of four, so the passage the detectors agree
        # on most is primary, at the bottom of the primary band (a strict profile's threshold drops it); never
        # one holding a sentence addressed to the model
        best = max((i for i, e in enumerate(found) if not e.ignored), key=lambda i: _agreement(found[i].cand))
        roles[best] = ("primary", f"no candidate carries a question term; best agreed on by the detectors "
                                  f"({_agreed(found[best].cand)})")
    _one_primary_per_page(query, found, roles)
    verdicts = [_verdict(query, e, role, reason) for e, (role, reason) in zip(found, roles)]
    keep_lexical_best_when_unsure(verdicts, candidates)
    _mark_contradictions(query, verdicts, found)
    not_found, reason = _not_found(query, found, texts, absent_terms)
    return ArbiterOutput(verdicts=verdicts, not_found=not_found, not_found_reason=reason)


def _set_aside_identity(query: Query, identity: set[str]) -> None:
    """The terms the named documents' identity states leave the query's terms for its context (tasks.arbiter.named),
    unless they are all its terms (then nothing else would tell the passages apart)."""
    rest = [t for t in query.terms if t not in identity]
    if rest and len(rest) < len(query.terms):
        query.context = [t for t in query.terms if t in identity]
        query.terms = rest


# -- verdicts ------------------------------------------------------------------------------------------------------
def _strength(query: Query, e: Evidence) -> float:
    """Evidence strength in [0, 1]: title match, coverage, co-occurrence, phrases, value, distinct terms, agreement,
    and the coverage of the candidate's page (the page is the unit of evidence: a statement whose title, row labels
    and header are three candidates carries the question as one page), and LABEL_SHARE of how much of the question a
    value row's label states (reading.row_label): among passages that carry the same words, the row of the asked
    measure ('Net income attributable to Northwind $ 297') before a sentence with another figure."""
    title = weighted(query, set(e.title_terms))
    phrases = len(e.phrases) / len(query.phrases) if query.phrases else e.window_coverage
    return min(1.0, (
        0.20 * title
        + 0.30 * e.coverage
        + 0.15 * e.window_coverage
        + 0.08 * phrases
        + 0.10 * (1.0 if e.values else 0.0)
        + 0.10 * e.distinct
        + 0.07 * (len(set(e.cand.methods)) - 1) / 2
        + 0.20 * e.page_coverage
    ) + LABEL_SHARE * e.label)


def _agreement(c: CandidateBrief) -> tuple[int, float]:
    """How far the detectors agree on a candidate: how many proposed it, then their fused rank."""
    return len(set(c.methods)), c.rrf_score


def _agreed(c: CandidateBrief) -> str:
    return ", ".join(f"{m} rank {c.ranks[m]}" for m in c.methods if m in c.ranks) or "no detector rank"


def _one_primary_per_page(query: Query, found: list[Evidence], roles: list[tuple[str, str]]) -> None:
    """The page is the unit of evidence: of several primaries on one page, the strongest stays primary and the
    others support it, so that the primaries point at distinct pages."""
    best: dict[tuple[str, int], int] = {}
    for i, (role, _) in enumerate(roles):
        if role != "primary":
            continue
        key = (found[i].cand.doc_id, found[i].cand.page)
        j = best.get(key)
        if j is None or _strength(query, found[i]) > _strength(query, found[j]):
            best[key] = i
    for i, (role, reason) in enumerate(roles):
        if role == "primary":
            j = best[(found[i].cand.doc_id, found[i].cand.page)]
            if j != i:
                roles[i] = ("supporting", f"{reason}; same page as the primary {found[j].cand.candidate_id}")


def _quote(items: list[str], n: int = 4) -> str:
    shown = [f'"{i}"' for i in items[:n]]
    if len(items) > n:
        shown.append(f"{len(items) - n} more")
    return ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else (shown[0] if shown else "")


def _role(query: Query, e: Evidence, bars: tuple[float, float]) -> tuple[str, str]:
    """Role and reason by the conflict rules, in order. ``bars``: the window coverage, or the coverage of the whole
    candidate, that a co-occurrence needs to make a primary."""
    c = e.cand

    def words(stems: list[str]) -> list[str]:
        return [query.surface.get(t, t) for t in stems]

    where = f"lines {c.line_start}-{c.line_end}"
    noun = SHAPE_NOUN[query.shape]
    value = f" with the {noun} {e.values[0]}" if e.values else ""
    single_term = len(query.terms) == 1
    cooccur = len(e.window_terms) >= 2 or (single_term and bool(e.window_terms)) or \
        (bool(e.window_terms) and bool(e.secondary))

    if e.title_terms and (e.present or "toc" in c.methods):
        role = "primary"
        reason = f'TOC title "{e.title}" matches {_quote(words(e.title_terms))}'
        if e.window_terms:
            reason += f"; {where} contain {_quote(words(e.window_terms))}{value}"
    elif cooccur and (e.window_coverage >= bars[0] or e.coverage >= bars[1]
                      # a row whose label states the question's words holds the asked figure in its cells, even
                      # when prose carries more of its words ('segment' beside 'Intelligent Cloud' revenue)
                      or (e.label >= SUPPORT_COVERAGE and query.shape in VALUE_SHAPES)):
        role = "primary"
        reason = f"{where} contain {_quote(words(e.window_terms) + e.secondary)}{value}"
    elif cooccur or e.coverage >= SUPPORT_COVERAGE:
        role = "supporting"
        gap = f", no {noun} near them" if e.needs_value and not e.values else ""
        reason = (f"{where} contain {_quote(words(e.present))} ({len(e.present)} of {len(query.terms)} question terms"
                  f"{gap})")
    elif e.present and (e.coverage >= WEAK_COVERAGE or "embeddings" in c.methods):
        role = "tangential"
        reason = f"weak overlap: only {_quote(words(e.present))} of {len(query.terms)} question terms on {where}"
    elif "embeddings" in c.methods and not (e.present or e.secondary):
        role = "tangential"
        hit = "embedding-only hit" if c.methods == ["embeddings"] else f"{'+'.join(c.methods)} hit"
        reason = f"{hit} with no keyword overlap: topical noise"
    else:
        role = "discarded"
        found = words(e.present) + e.secondary
        reason = f"only {_quote(found)} on {where}: too little of the question" if found else \
            f"no question term on {where}"
    if e.label_text and role in ("primary", "supporting"):
        reason += f'; the row "{e.label_text}" is labelled with the question\'s words'
    if e.ignored:
        reason += "; a sentence addressed to the model was ignored as evidence"
    return role, reason


def _verdict(query: Query, e: Evidence, role: str, reason: str) -> CandidateVerdict:
    c = e.cand
    low, span = BANDS[role]
    decision = "discard" if role == "discarded" else ("rewrite" if e.rewrite else "keep")
    return CandidateVerdict(
        candidate_id=c.candidate_id, role=role, decision=decision, reason=reason,
        relevance=round(low + span * _strength(query, e), 3), anchor_found=role != "discarded" and e.anchor_found,
        rewrite=e.rewrite if decision == "rewrite" else None,
    )


def _mark_contradictions(query: Query, verdicts: list[CandidateVerdict], found: list[Evidence]) -> None:
    """Kept candidates stating different amounts/dates next to the same question terms contradict each other.

    The value a candidate states is the first of its values (found on its line richest in question terms); the
    other candidate must not mention it at all.
    """
    if query.shape not in ("amount", "date", "comparison"):
        return
    stating = [
        (v, e) for v, e in zip(verdicts, found)
        if v.role in ("primary", "supporting") and v.anchor_found and e.values
    ]
    for i, (v1, e1) in enumerate(stating):
        for v2, e2 in stating[i + 1 :]:
            t1, t2 = set(e1.window_terms), set(e2.window_terms)
            if len(t1 & t2) >= 2 and len(t1 & t2) >= CONTRADICTION_OVERLAP * len(t1 | t2) \
                    and e1.values[0] not in e2.values and e2.values[0] not in e1.values:
                v1.contradicts.append(v2.candidate_id)
                v2.contradicts.append(v1.candidate_id)


def _not_found(query: Query, found: list[Evidence], texts: list[list[str]],
               absent_terms: list[str] | None = None) -> tuple[bool, str | None]:
    """Not found when a distinctive term of the question (year, number, code, name) is on no candidate and, when
    detection says which terms the searched documents lack (``absent_terms``), in none of the documents either.

    Measured on the dev set, a low keyword coverage does not tell unanswerable questions apart (they are
    worded like answerable ones); a name or a year that the whole pool lacks does, and far more so when the
    document lacks it too: a term the pool lacks but the document carries means retrieval missed the passage
    (such questions were answerable two times out of three), not that the answer is absent.
    """
    if not found:
        return True, "no candidate was proposed"
    sets = [set(t) for t in texts]
    telling = set(ev.absence_terms(query.question))
    missing = [t for t in query.distinct if t in telling and not any(ev.carries(t, s) for s in sets)]
    if absent_terms is None:  # not known (a pool stored before detection computed it): the pool alone decides
        if missing:
            verb = "appears" if len(missing) == 1 else "appear"
            return True, f"{_quote(missing, 3)} {verb} in no candidate"
        return False, None
    absent = set(absent_terms)
    nowhere = [t for t in missing if t in absent]
    if nowhere:
        verb = "appears" if len(nowhere) == 1 else "appear"
        return True, f"{_quote(nowhere, 3)} {verb} nowhere in the searched documents"
    return False, None
