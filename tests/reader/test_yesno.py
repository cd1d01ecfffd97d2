"""Yes/no (rules ``yesno.cue``, ``abstain.no_yes_no``): the yes or no of the sentence about the asked subject,
negation read; on hand-made passages."""

from __future__ import annotations

from tests.reader.kit import answer, numbered, passage, q


def test_boolean_reads_negation():
    p = numbered("c1", 1, [(3, "Is the service safe? The service was not safe."), (4, "Staff were kind.")])
    a = answer(q("Is the service safe?", "boolean", ["service", "safe"]), [p])
    assert a.value == "No" and a.complete_answer_found


HANDBOOK = passage("h1", 2, [
    "Employees are also classified by schedule. Full-time employees are regularly scheduled",
    "to work at least 35 hours a week. Part-time employees are regularly scheduled for fewer",
    "than 35 hours a week.",
    "2.3 Probationary Period",
    "Every new employee, and every employee who moves into a new role, begins with a",
    "probationary period of 90 calendar days. Shift swaps are allowed when both",
    "employees agree and the supervisor approves the swap."], start=51)


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
