"""Yes/no (rules ``yesno.cue``, ``abstain.no_yes_no``): the yes or no of the sentence about the asked subject,
negation read; on hand-made passages."""

from __future__ import annotations

from tests.reader.kit import HANDBOOK, answer, numbered, passage, q


def test_boolean_reads_negation():
    p = numbered("c1", 1, [(3, "Is the service safe? The service was not safe."), (4, "Staff were kind.")])
    a = answer(q("Is the service safe?", "boolean", ["service", "safe"]), [p])
    assert a.value == "No" and a.complete_answer_found


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
