"""The offline reader on the examples of issue #15 (hand-made passages shaped like a policy, a contract and a
handbook), the asked class, the numbers that are not answer values, and the matcher's fairness on hand-made pairs.
Each example failed on the reader before the typed one (it answered 3.5, 4.4, 35 hours, 3.3, 'Governing Law. This
Agreement', 'Yes')."""

from __future__ import annotations

import pytest

from schemas.contracts import AnswerWithEvidence, LLMUsage, ParsedQuestion
from tasks.generate.extractive import ExtractiveProvider
from tasks.generate.loop import run_sequential
from tasks.generate.normalise import answer_matches
from tasks.generate.prompts import GenerationPassage, PassageLine, build_generation_request
from tasks.generate.router import Budget
from tasks.generate.values import find_amounts
from tasks.llm.base import LLMResult
from tasks.questions.asked import asked_class

DOC = "d" * 64


def q(text: str, shape: str, primary: list[str], decomposition: str = "single") -> ParsedQuestion:
    return ParsedQuestion(question_id="q1", text=text, keywords_primary=primary, keywords_secondary=[],
                          answer_shape=shape, decomposition=decomposition, intent="t", parser="test")


def passage(cid: str, page: int, lines: list[str], start: int = 1, section: str = "") -> GenerationPassage:
    return GenerationPassage(candidate_id=cid, doc_id=DOC, page=page, line_start=start,
                             line_end=start + len(lines) - 1, section=section,
                             lines=[PassageLine(line_no=start + i, page=page, text=t) for i, t in enumerate(lines)])


def answer(question: ParsedQuestion, passages: list[GenerationPassage], regime: str = "batch") -> AnswerWithEvidence:
    request = build_generation_request(question, passages, regime, step=1, total=len(passages))
    return AnswerWithEvidence.model_validate_json(ExtractiveProvider().send(request).text)


LIABILITY = passage("p1", 2, [
    "3.5 Liability (Coverages E and F)",
    "If a claim is made or a suit is brought against an insured for damages because of bodily injury or",
    "property damage caused by an occurrence, we will pay up to our limit of liability.",
    "The personal liability limit for this policy is $300,000 for each occurrence, regardless of the number",
    "of insureds, claims made or persons injured.",
    "Policy No. HO-2024-118604 Page 3 of 7"], start=90)
REPORTING = passage("p2", 4, [
    "6.1 Reporting a Loss",
    "In case of damage to the house or other covered property, you must notify the insurer promptly, and in any",
    "event no later than 60 days after the loss."], start=260)
TERMINATION = passage("c1", 1, [
    "ARTICLE IV - TERM AND TERMINATION",
    "4.1 Term. This Agreement begins on the Effective Date and continues for an initial term of twenty-four",
    "(24) months, unless terminated earlier under this Article.",
    "4.3 Termination for Convenience. Either Party may terminate this Agreement, or any SOW, for any",
    "reason by giving the other Party at least ninety (90) days' prior written notice.",
    "4.4 Termination for Cause. Either Party may terminate this Agreement by written notice if the other",
    "Party materially breaches it and fails to cure the breach within thirty (30) days after notice."], start=52)
PAYMENT = passage("c2", 1, [
    "ARTICLE III - FEES AND PAYMENT",
    "3.3 Payment Terms. Client shall pay each undisputed invoice within forty-five (45) days of the invoice",
    "date, by bank transfer to the account named on the invoice."], start=37)
GOVERNING = passage("c3", 3, [
    "ARTICLE VIII - GOVERNING LAW AND DISPUTES",
    "8.1 Governing Law. This Agreement is governed by the laws of the State of Delaware, without regard to",
    "its conflict of laws rules."], start=93)
HANDBOOK = passage("h1", 2, [
    "Employees are also classified by schedule. Full-time employees are regularly scheduled",
    "to work at least 35 hours a week. Part-time employees are regularly scheduled for fewer",
    "than 35 hours a week.",
    "2.3 Probationary Period",
    "Every new employee, and every employee who moves into a new role, begins with a",
    "probationary period of 90 calendar days. Shift swaps are allowed when both",
    "employees agree and the supervisor approves the swap."], start=51)


def test_duration_question_never_gets_a_section_number_and_abstains_without_a_duration():
    question = q("How long do we have to tell the insurer about damage to the house?", "amount",
                 ["insurer", "damage", "house"])
    alone = answer(question, [LIABILITY])
    assert (alone.value, alone.answer_found) == (None, False)
    assert alone.caveats == ["extractive: no duration stated in the passages"]
    assert alone.evidence and alone.confidence <= 0.2  # the best passage is shown, the confidence says "no"
    both = answer(question, [LIABILITY, REPORTING])
    assert both.answer_found and answer_matches(both.value, "60 days after the loss", "amount")
    assert both.value == "no later than 60 days after the loss" and both.evidence[0].line_start == 262


def test_notice_to_end_without_cause_is_the_notice_period_not_a_clause_number():
    a = answer(q("How much notice is needed to end the agreement without cause?", "amount",
                 ["notice", "end", "agreement", "cause"]), [TERMINATION])
    assert a.value == "at least 90 days' prior written notice"
    assert answer_matches(a.value, "90 days' prior written notice", "amount")


def test_probation_period_is_the_days_stated_not_an_hour_count():
    a = answer(q("How long is the probation period for new hires?", "amount",
                 ["probation", "probation period", "period", "new", "new hires", "hires"]), [HANDBOOK])
    assert a.value == "90 calendar days" and a.complete_answer_found


def test_days_to_pay_an_invoice_is_the_spelled_out_term_not_the_clause():
    a = answer(q("How many days does the client have to pay an invoice?", "amount",
                 ["days", "client", "pay", "invoice"]), [PAYMENT])
    assert a.value == "within 45 days of the invoice" and answer_matches(a.value, "45 days", "amount")


def test_which_state_law_is_the_state_not_the_heading():
    a = answer(q("Which state's law governs the services agreement?", "entity",
                 ["law", "governs", "services agreement", "agreement"]), [GOVERNING])
    assert a.value == "State of Delaware" and answer_matches(a.value, "Delaware", "entity")


def test_yes_no_about_an_absent_subject_is_not_found():
    a = answer(q("Are employees allowed to bring their dogs to the office?", "boolean",
                 ["employees", "allowed", "bring", "dogs", "office"]), [HANDBOOK])
    assert (a.value, a.answer_found) == (None, False)
    assert "'dogs'" in a.caveats[0]


def test_yes_no_comes_from_the_sentence_about_the_subject():
    installments = passage("i1", 4, [
        "5.3 Installments",
        "You may pay the premium in full at the start of the policy period or in four quarterly installments."])
    cancel = passage("i2", 5, ["When you have not paid the premium, we may cancel at any time."])
    question = q("Can the premium be paid in instalments?", "boolean", ["premium", "paid", "instalments"])
    assert answer(question, [cancel, installments]).value == "Yes"
    only_cancel = answer(question, [cancel])  # premium and paid, but nothing about instalments: no answer
    assert not only_cancel.answer_found


class _Client:
    def complete(self, request, validate=None) -> LLMResult:
        parsed = AnswerWithEvidence.model_validate_json(ExtractiveProvider().send(request).text)
        return LLMResult(call_id=f"c{request.step}", provider="extractive", model="extractive", parsed=parsed,
                         usage=LLMUsage(), latency_ms=0.0, attempts=1)


def test_sequential_keeps_reading_past_an_abstention_and_keeps_the_closest_passage_when_nothing_is_found():
    question = q("How long do we have to tell the insurer about damage to the house?", "amount",
                 ["insurer", "damage", "house"])
    budget = Budget(max_candidates=2, max_input_tokens=None, max_seconds=None)
    out = run_sequential(_Client(), question, [LIABILITY, REPORTING], budget)
    assert (out.exit, out.steps, out.answer.value) == ("sufficiency", 2, "no later than 60 days after the loss")
    none = run_sequential(_Client(), question, [LIABILITY], budget)
    assert none.exit == "exhaustion" and not none.answer.answer_found and none.answer.evidence


@pytest.mark.parametrize("text,cls", [
    ("How long is the probation period for new hires?", "duration"),
    ("How many vacation days do full-time employees get each year?", "duration"),
    ("How much notice is needed to end the agreement?", "duration"),
    ("What deductible do I pay on an ordinary property claim?", "money"),
    ("What is the premium?", "money"),
    ("What percentage of voters are independents?", "percentage"),
    ("When did the agreement take effect?", "date"),
    ("How many respondents were surveyed?", "count"),
    ("Did the amendment change how much notice is needed?", "yesno"),
    ("Which state's law governs the agreement?", "entity"),
    ("What is the telephone number of the office?", "entity"),
    ("Which public holidays does the company give employees off?", "list"),
])
def test_asked_class(text, cls):
    assert asked_class({"text": text, "answer_shape": "text"}).cls == cls


@pytest.mark.parametrize("line", [
    "3.5 Liability (Coverages E and F)", "4.4 Termination for Cause.", "see Section 7 and Table 3",
    "Policy No. HO-2024-118604 Page 3 of 7", "Call (555) 123-4567 today", "as set out in clause 12 and item 4",
    "2) Open the lid", "400 Harbor Street, Portland"])
def test_reference_numbers_are_not_amounts(line):
    assert find_amounts(line) == []


@pytest.mark.parametrize("predicted,reference,shape,expected", [
    ("$1,842", "$1,842.00", "amount", True),  # money with and without cents
    ("$1,842.00", "1842", "amount", True),
    ("$1,900", "$1,842.00", "amount", False),
    ("sixty (60) days", "60 days", "amount", True),
    ("60 days", "sixty days", "amount", True),
    ("90 hours", "90 days", "amount", False),  # another time unit is another value
    ("at least 30 days' written notice", "At least 30 days", "amount", True),
    ("between 10 and 30 days", "30 days", "amount", False),  # a value more is not the value
    ("1 March 2024", "March 1, 2024", "date", True),
    ("April 1, 2024", "March 1, 2024", "date", False),
    ("No", "No; it remains 90 days' prior written notice", "boolean", True),
    ("Yes", "No; it remains 90 days", "boolean", False),
    ("the State of Delaware", "Delaware", "entity", True),
    ("red; gray; blue", "blue, red and gray", "list", True),  # lists in any order
    ("red; gray", "blue, red and gray", "list", False),
    ("flood (surface water); war", "war; flood (surface water)", "list", True),  # commas inside brackets
])
def test_matcher_is_fair(predicted, reference, shape, expected):
    assert answer_matches(predicted, reference, shape) is expected
