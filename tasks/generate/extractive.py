"""The offline extractive generator: a Provider that answers from the request payload without a model.

It reads what was asked, typed (``asked.py``: duration, money, percentage, date, count, yes/no, entity, list, a
plain number or free text), reads the passages as sentences (``sentences.py``), and takes the value of the asked
class from the sentence that covers the question's terms best, expanded to the phrase that states it
(``typed.py``). It is right or silent: when no value of the asked class sits next to the question's terms, the
answer is ``answer_found = False`` with the best passage's sentence as evidence and a caveat saying why, and a
confidence that says how close that passage came. It also abstains where it cannot support a value it found: a
question that selects by rank when the value's text states no ranking, a number whose passage names none of the
years or codes the question scopes it to, one side of a comparison, an identifier without digits. Lists, counted
steps and counts read from a list of the counted noun are read by ``lists.py``; a name asked by its role ("Who is
the defendant?") only where the text states that role with it, by ``roles.py``. A single typed value tied to the
question's terms is complete (the sequential loop stops there); a list or a comparison is never complete from a
single passage; a multi-part question is answered only when every part is. A typed value is shown only when it
passes the checks of ``guards.py`` (issue #28): not an explanation asked, a value of the asked kind, a level where
a level is asked, the asked period's, not paired by position with another. Every answer and abstention names the
rule that produced it (``AnswerWithEvidence.rule``: ``<family>.<how>``, e.g. ``value.cell``, ``name.role``, or
``abstain.<check>``), so precision is measured per rule. Deterministic; named as what it is (not an LLM).
"""

from __future__ import annotations

import re
from typing import Any

from schemas.contracts import AnswerWithEvidence, Asked, EvidenceSpan
from tasks.generate import values as V
from tasks.generate.cells import defines_quantity, on_dated_row, pick_cell
from tasks.generate.changes import asks_percent_change, pick_change
from tasks.generate.formula import pick_formula
from tasks.generate.guards import (
    asks_explanation,
    computed_caveat,
    asked_items,
    kind_mismatch,
    measure_unnamed,
    negation_missing,
    paired_by_position,
    period_unverified,
    states_change,
    states_no_change,
)
from tasks.generate.lists import (
    NAME_COVERAGE,
    STEP_NOUNS,
    names_only_the_noun,
    pick_counted,
    pick_list,
    pick_steps,
    pick_values,
)
from tasks.generate.names import (
    COMPLETE_COVERAGE,
    COMPLETE_WORDS,
    FOUND_COVERAGE,
    FOUND_WORDS,
    cue,
    pick_entity,
)
from tasks.generate.normalise import normalise_value
from tasks.generate.picks import pick_comparison, pick_text
from tasks.generate.ranked import pick_consequence, pick_order, pick_ordinal, pick_ranked
from tasks.generate.roles import asked_role, pick_role
from tasks.generate.sentences import STOPWORDS, TOKEN_RE, PLine, stem
from tasks.generate.typed import Pick, Reader, pick_date, pick_numeric
from tasks.generate.yesno import pick_yes_no, required_terms
from tasks.llm.base import LLMRequest, ProviderReply, TerminalLLMError
from tasks.questions.asked import (
    FORMAT_TEMPLATE,
    asked_class,
    asks_ranking,
    question_parts,
    reader_cannot_state,
    states_ranking,
)


def _found(p: Pick | None) -> bool:
    return p is not None and p.strength >= 1 and (p.coverage >= FOUND_COVERAGE or p.strength >= FOUND_WORDS)


def _complete(p: Pick) -> bool:
    """Complete: the value's sentence covers the question well, or a strong fit of the asked class stands in a
    sentence that names at least two of the question's terms."""
    return (p.coverage >= COMPLETE_COVERAGE or p.strength >= COMPLETE_WORDS
            or (p.fit >= 0.5 and p.strength >= 2))


def pick_rule(cls: str, p: Pick) -> str:
    """The rule a typed pick answers by: its family (the asked class) and what it was read from."""
    family = {"entity": "name", "text": "text", "date": "date"}.get(cls, "value")
    return f"{family}.{'cell' if p.kind == 'cell' else 'sentence' if family in ('value', 'date') else p.kind}"


def _best(picks: list[Pick]) -> Pick | None:
    return max(picks, key=lambda p: (p.score, -p.lines[0].pidx, -p.lines[0].line_no), default=None)


def spans(lines: list[PLine]) -> list[EvidenceSpan]:
    """Consecutive lines of one passage merged into one span quoting them verbatim."""
    out: list[EvidenceSpan] = []
    last: PLine | None = None
    unique = {(ln.pidx, ln.line_no): ln for ln in lines}
    for key in sorted(unique):
        ln = unique[key]
        if out and last and last.pidx == ln.pidx and ln.line_no == out[-1].line_end + 1:
            out[-1].line_end = ln.line_no
            out[-1].quote += "\n" + ln.text
        else:
            out.append(EvidenceSpan(doc_id=ln.passage["doc_id"], page=ln.page, line_start=ln.line_no,
                                    line_end=ln.line_no, quote=ln.text))
        last = ln
    return out


def _answer(value: str | None, lines: list[PLine], found: bool, complete: bool, coverage: float,
            caveats: list[str], rule: str) -> AnswerWithEvidence:
    return AnswerWithEvidence(value=value, evidence=spans(lines), answer_found=True,
                              complete_answer_found=complete and found,
                              confidence=round(min(0.95, 0.35 + 0.6 * coverage), 2), caveats=caveats, rule=rule)


def abstain(r: Reader, reason: str, rule: str) -> AnswerWithEvidence:
    """Not found, honestly: the sentence that came closest as evidence, the reason as a caveat, and a confidence
    of at most 0.2 that says how much of the question that sentence covers."""
    best, cov, _ = r.best_sentence()
    lines = list(dict.fromkeys(best.lines)) if best is not None else []
    return AnswerWithEvidence(value=None, evidence=spans(lines), answer_found=False, complete_answer_found=False,
                              confidence=round(min(0.2, 0.2 * cov), 2), caveats=[f"extractive: {reason}"],
                              rule=f"abstain.{rule}")


def _sole_deadline(picks: list[Pick]) -> Pick | None:
    """The one deadline (a duration stated relative to an event) among the picks, if there is exactly one."""
    fitting = [p for p in picks if "fits the asked relation" in p.notes]
    return fitting[0] if len({normalise_value(p.value) for p in fitting}) == 1 else None


def _scope_missing(r: Reader, best: Pick) -> str | None:
    """The scope a question puts on a value that the passage stating it does not name, else None: none of the
    years it names ("in 2018", "between 1999 to 2000": a value of another period; "the document revised in May
    2018": another edition's author), or a code or acronym it names ("on the TACREV dataset": a value of another
    test set)."""
    passage = best.lines[0].passage
    text = " ".join([passage.get("section") or ""] + [ln.text for ln in r.by_passage[best.lines[0].pidx]]).lower()
    years = set(re.findall(r"\b(?:18|19|20)\d{2}\b", r.q_text))
    if years and not any(y in text for y in years):
        return ", ".join(sorted(years))
    codes = [c for c in re.findall(r"\b[A-Za-z][\w-]*[A-Z0-9][\w-]*\b", r.q_text)
             if sum(ch.isupper() for ch in c) >= 2 and not c.isdigit() and c.lower() not in STOPWORDS
             and not FORMAT_TEMPLATE.fullmatch(c)]
    absent = [c for c in codes if c.lower() not in text]
    return absent[0] if absent else None


def _near(r: Reader) -> str:
    words = r.terms.as_written(r.terms.words[:3])
    return "'" + " ".join(words) + "'" if words else "the question's terms"


def _part_question(question: dict[str, Any], part: str, first: str) -> dict[str, Any]:
    """One ask of a multi-part question as a question of its own; an ask that names too little of its subject
    ("how much is it?") borrows the first part's words."""
    words = [w for w in TOKEN_RE.findall(part.lower()) if w not in STOPWORDS and w not in ("long", "it", "its")]
    if not words:
        words += [w for w in TOKEN_RE.findall(first.lower()) if w not in STOPWORDS]
    part_question = {**question, "text": part + "?", "keywords_primary": words, "keywords_secondary": [],
                     "decomposition": "single"}
    part_question.pop("asked", None)  # the whole question's type: the part is typed on its own
    return part_question


def answer_parts(question: dict[str, Any], passages: list[dict[str, Any]]) -> AnswerWithEvidence | None:
    """A multi-part question whose parts each ask a number or a date: each part answered on its own, the values
    joined with '; '; complete when every part is found. None when the parts are not all typed values."""
    parts = question_parts(question.get("text") or "")
    if len(parts) < 2:
        return None
    subs = [_part_question(question, part, parts[0]) for part in parts]
    if not all(asked_class(sq).numeric or asked_class(sq).cls == "date" for sq in subs):
        return None
    answers = [extract_answer(sq) for sq in ({"question": sq, "passages": passages} for sq in subs)]
    seen: set[str | None] = set()
    for i, a in enumerate(answers):  # the same value for two asks answers one of them at most
        key = normalise_value(a.value)
        if a.answer_found and key in seen:
            answers[i] = a.model_copy(update={"answer_found": False, "complete_answer_found": False})
        seen.add(key)
    found = [a for a in answers if a.answer_found]
    if not found:
        return None
    evidence = [e for a in found for e in a.evidence]
    if len(found) < len(answers):  # one part's value does not answer the question: right or silent
        return AnswerWithEvidence(
            value=None, evidence=evidence, answer_found=False, complete_answer_found=False, confidence=0.1,
            caveats=[f"extractive: {len(found)} of {len(answers)} parts found; part {i + 1} ({p!r}): "
                     + ("; ".join(a.caveats) or "not found" if not a.answer_found else f"{a.value!r}")
                     for i, (p, a) in enumerate(zip(parts, answers))], rule="abstain.part_missing")
    caveats = [f"part {i + 1} ({p!r}): {'; '.join(a.caveats) or a.value}" for i, (p, a) in enumerate(zip(parts, answers))
               if not a.answer_found or a.caveats]
    return AnswerWithEvidence(value="; ".join(a.value or "" for a in found), evidence=evidence, answer_found=True,
                              complete_answer_found=len(found) == len(answers) and all(
                                  a.complete_answer_found for a in answers),
                              confidence=round(min(a.confidence for a in found), 2), caveats=caveats,
                              rule="parts.values")


def extract_answer(payload: dict[str, Any]) -> AnswerWithEvidence:
    """Answer one generation payload (see ``prompts.build_generation_request``) by extraction."""
    question, passages = payload["question"], payload.get("passages") or []
    # the question brick's type of the ask, sent with the question (tasks.generate.prompts); typed here by the same
    # function only for a payload built without it
    asked = Asked.model_validate(question["asked"]) if question.get("asked") else asked_class(question)
    explains = asks_explanation(question.get("text") or "")
    if asked.multi_part and asked.cls != "list" and not explains and (parts := answer_parts(question, passages)):
        return parts
    r = Reader(question, passages, asked)  # the passages as sentences, read once for every pick below
    if (then := pick_consequence(r)) is not None:  # before the computed-value check: "if ... less than 1.5 A"
        return _answer(then[0], then[1], True, True, 0.8, [], "condition.consequence")  # is a condition
    if asks_percent_change(r.q_text) and (change := pick_change(r)) is not None:
        pick, rule = change  # stated by a change column or a sentence, else computed from two printed figures
        return _answer(pick.value, pick.lines, True, True, pick.coverage, pick.notes, rule)
    if (computed := pick_formula(r)) is not None:  # the question's own formula, one printed cell per operand
        return _answer(computed.value, computed.lines, True, True, computed.coverage, computed.notes,
                       "computed.formula")
    printed = "\n".join(ln.get("text") or "" for p in passages for ln in p.get("lines") or [])
    if cannot := reader_cannot_state(question.get("text") or "", printed):
        what, why = cannot
        return abstain(r, computed_caveat(r, why) if what == "computed" else why, what)
    if (nth := pick_ordinal(r)) is not None:
        return _answer(nth[0], nth[1], True, False, 0.6, [f"counted in the section {nth[1][0].passage.get('section')!r}"], "rank.ordinal")
    if (order := pick_order(r)) is not None:
        return _answer(order[0], order[1], True, True, 0.9,
                       [f"{order[1][0].text.strip()!r} stands {order[0]} {order[1][1].text.strip()!r}"], "rank.order")
    single = len(passages) == 1
    caveats: list[str] = []
    shape = question.get("answer_shape", "text")
    if asked.cls == "list":
        items, lines, cov, strength = pick_list(r)
        found = len(items) >= 2 and strength >= 2 and cov >= NAME_COVERAGE
        if not found and (values := pick_values(r)):
            # the question says how many values it asks, and one sentence states that many, joined
            items, lines, cov = values
            return _answer("; ".join(items), lines, True, cov >= COMPLETE_COVERAGE and not single, cov,
                           [f"the {len(items)} values stated together in one sentence"], "list.values")
        if not found and (role := asked_role(r.q_text)) and (named := pick_role(r, role)):
            # "which judges' opinions": the names the passages state the role with ("E. SCOTT BRADLEY, Judge.")
            names = list(dict.fromkeys(n for p in named for n in p.value.split("; ")))
            return _answer("; ".join(names), [ln for p in named for ln in p.lines], True, False, 0.75,
                           [f"the names stated as the {role.text}"], "list.role_names")
        if not found:
            return abstain(r, f"no list of items stated near {_near(r)}", "no_list")
        if (asks := asked_items(items)) * 2 > len(items):  # a list of questions states no answer
            return abstain(r, f"{asks} of the {len(items)} items listed are questions, not statements",
                           "list_of_questions")
        if single:
            caveats.append("list read from a single passage; other passages may hold more items")
        return _answer("; ".join(items), lines, True, not single, cov, caveats, "list.items")
    if shape == "comparison" or (asked.cls in ("entity", "text", "yesno") and V.comparison_sides(r.q_text)
                                 and cue(r, "max") != cue(r, "min")):
        value, lines, complete, cov, caveats = pick_comparison(r, len(passages))
        if value is None:
            return abstain(r, "; ".join(caveats) or "no values for the two sides of the comparison", "comparison")
        return _answer(value, lines, True, complete, cov, caveats, "compare.sides")
    if asked.cls == "yesno":
        pick, why = pick_yes_no(r)
        if pick is None:
            return abstain(r, f"{why}: no yes/no stated about the asked subject", "no_yes_no")
        complete = not asked.multi_part and pick.strength >= required_terms(len(r.terms.words))
        if asked.multi_part:
            caveats.append("multi-part question: the yes/no may not answer every part")
        return _answer(pick.value, pick.lines, True, complete, pick.coverage, caveats, "yesno.cue")
    if asked.cls == "count" and stem(asked.unit).startswith(STEP_NOUNS) and (steps := pick_steps(r)):
        count, lines, cov = steps
        return _answer(str(count), lines, True, cov >= COMPLETE_COVERAGE and not asked.multi_part, cov,
                       [f"counted the numbered steps under {lines[0].text.strip()!r}"], "count.steps")
    if asked.cls != "list" and (ask := explains):
        return abstain(r, f"the question asks an explanation or a relation ({ask!r}), not a value the passages "
                          f"print", "explanation")
    rank = asks_ranking(r.q_text)
    # "which course has the longest duration": a name is asked, whatever the class of the measure it ranks by
    if (asked.cls in ("entity", "text") or shape == "entity") and rank and (ranked := pick_ranked(r, rank)):
        top, rows = ranked  # compared here, so never complete: another passage may hold a row of the same table
        others = "; ".join(f"{row.name} {row.value}" for row in rows if row is not top)
        return _answer(top.name, [ln for row in rows for ln in row.lines], True, False, 0.6,
                       [f"the {rank} of {len(rows)} rows compared: {top.value}; the others: {others}"], "rank.rows")
    if asked.numeric:  # a table cell at the row and column the question names, else the best-covered value
        if (cell := pick_cell(r)) is None and defines_quantity(r.q_text):
            return abstain(r, computed_caveat(r, "the question defines the value it asks by a formula; the passages "
                                                 "would have to state it computed"), "computed")
        picks = [cell] if cell is not None else pick_numeric(r)
    elif asked.cls == "date":
        picks = pick_date(r)
    elif asked.cls == "entity":
        picks = [p for p in pick_entity(r) if p.coverage >= NAME_COVERAGE or p.fit >= 0.5]
        if asked.entity_noun == "number":  # a phone, case or account number is written with digits
            picks = [p for p in picks if re.search(r"\d", p.value)]
    else:
        picks = [p for p in pick_text(r) if p.coverage >= COMPLETE_COVERAGE and p.strength >= 2]
    best = _best(picks)
    if asked.cls == "count" and _found(best) and names_only_the_noun(r, best.lines):
        return abstain(r, f"the sentence that states {best.value!r} names only the counted noun of the question "
                          f"({asked.unit!r}), none of what scopes it", "count_scope")
    if asked.cls == "count" and not _found(best) and (counted := pick_counted(r)):
        # no number stated for the asked noun, but a list of it printed under a line that names it: its items
        count, lines, cov = counted
        return _answer(str(count), lines, True, cov >= COMPLETE_COVERAGE and not asked.multi_part, cov,
                       [f"counted the {count} items listed under {lines[0].text.strip()!r}"], "count.listed")
    if not _found(best) and (sole := _sole_deadline(picks)) is not None:
        # the only time limit stated in the passages the arbiter kept, where the question asks for one: shown,
        # never complete (its sentence does not name the question's terms)
        return _answer(sole.value, sole.lines, True, False, sole.coverage,
                       [f"the only time limit stated in the passages; its sentence does not name {_near(r)}"],
                       "value.sole_deadline")
    if not _found(best) and asked.cls == "entity" and (role := asked_role(r.q_text)):
        return abstain(r, f"no name stated as the {role.text} (by a caption, a signature, an apposition, a title, "
                          f"a label or a copula); other names near the word are not the {role.text}", "no_role")
    if not _found(best):
        where = "in the passages" if not picks else f"near {_near(r)}"
        return abstain(r, f"no {asked.describe()} stated {where}", "not_found")
    assert best is not None
    if asked.numeric and best.kind != "cell" and on_dated_row(r, best):
        return abstain(r, f"{best.value!r} stands in a table row whose columns are dated, none of them the column of "
                          f"the period asked", "dated_row")
    # a cell's column already carries the period the question names ("FY2022" is a header's year there)
    if asked.cls != "yesno" and best.kind != "cell" and (missing := _scope_missing(r, best)):
        return abstain(r, f"the question asks about {missing}; the passage that states {best.value!r} does not "
                          f"name it", "scope")
    if asked.numeric and best.kind != "cell" and (why := measure_unnamed(r, best)):
        return abstain(r, why, "measure")
    if asked.numeric and (why := kind_mismatch(asked.cls, best)):
        return abstain(r, why, "kind")
    if asked.numeric and (why := states_change(r.q_text, best) or states_no_change(r.q_text, best)):
        return abstain(r, why, "change")
    if asked.numeric and (why := period_unverified(r, best)):
        return abstain(r, why, "period")
    if asked.numeric and (why := paired_by_position(best)):
        return abstain(r, why, "paired")
    if asked.numeric and (why := negation_missing(r.q_text, best)):
        return abstain(r, why, "negation")
    if rank and not states_ranking(" ".join(ln.text for ln in best.lines)):
        return abstain(r, f"the question selects by rank ({rank!r}) and the text by {best.value!r} states no "
                          f"ranking; the values would have to be compared", "rank")
    complete = _complete(best)
    if asked.multi_part:
        complete = False
        caveats.append(f"{question.get('decomposition')} question: one extracted value may not answer every part")
    rivals = [p for p in picks if p.lines[0].pidx != best.lines[0].pidx and p.score >= best.score - 0.1
              and normalise_value(p.value) != normalise_value(best.value)]
    if rivals:
        rv = max(rivals, key=lambda p: p.score)
        caveats.append(f"candidate {rv.lines[0].passage.get('candidate_id')} states {rv.value!r} instead")
    return _answer(best.value, best.lines, True, complete, best.coverage, caveats, pick_rule(asked.cls, best))


class ExtractiveProvider:
    """Offline generator over ``LLMRequest.payload``; the client counts its tokens from the messages."""

    name = "extractive"
    model = "extractive"
    offline = True

    def send(self, request: LLMRequest) -> ProviderReply:
        if request.stage != "generate" or "question" not in request.payload:
            raise TerminalLLMError(
                f"the extractive provider answers generation requests only (stage 'generate' with a question "
                f"payload), got stage {request.stage!r}; configure another provider for this stage")
        return ProviderReply(text=extract_answer(request.payload).model_dump_json())
