"""Right or silent (issue #28): the checks a value passes before it is shown, and the reader's abstentions
(``abstain.<check>`` rules), on hand-made passages."""
from __future__ import annotations

from tests.reader.kit import answer, passage, q


# -- issue #28: a value of the wrong kind, period or scope is not shown ---------------------------------------------
RESULTS = passage("r1", 12, [
    "Results of operations",
    "Total net sales include $3.3 billion of revenue recognized in the three months ended July 1, 2023.",
    "Cost of revenue increased $850 million or 6% driven by growth in cloud services.",
    "Cloud revenue was $31.8 billion and $25.7 billion for the three months ended September 30, 2023 and 2022,",
    "respectively.",
    "Net losses were $1.1 billion in the first nine months of 2022 ($28 million net losses in the third quarter of",
    "2021).",
    "Example Corp. | Q3 2023 Form 10-Q | 17",
])


def test_a_question_that_asks_an_explanation_is_not_answered_with_a_printed_value():
    a = answer(q("How does the discussion of compensation relate to the reported cost of revenue?", "amount",
                 ["compensation", "cost of revenue"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.explanation" and a.evidence
    a = answer(q("In Q3 2023, analyze the relationship between cloud revenue and currency risk.", "amount",
                 ["cloud revenue", "currency risk"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.explanation"


def test_a_value_stated_as_a_change_does_not_answer_a_level():
    a = answer(q("What was the cost of revenue?", "amount", ["cost of revenue"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.change" and "'increased'" in a.caveats[0]
    # asked as a change, the same sentence answers
    a = answer(q("By how much did the cost of revenue increase?", "amount", ["cost of revenue", "increase"]),
               [RESULTS])
    assert a.rule != "abstain.change"


def test_a_sentence_value_answers_a_period_only_when_it_names_that_period_next_to_it():
    # the latest quarter cannot be told from one sentence
    a = answer(q("What was the cloud revenue in the latest quarter?", "amount", ["cloud revenue"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.period"
    # the third quarter of 2022 is asked: the $1.1 billion is stated for nine months, the $28 million for 2021
    a = answer(q("What were the net losses in the third quarter of 2022?", "amount", ["net losses"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.period" and "'nine months'" in a.caveats[0]
    year = passage("r2", 3, ["Net losses were $28 million in the third quarter of 2021, against a profit in 2022."])
    a = answer(q("What were the net losses in the third quarter of 2022?", "amount", ["net losses"]), [year])
    assert not a.answer_found and a.rule == "abstain.period" and "2021" in a.caveats[0]


def test_values_paired_by_position_are_not_told_apart():
    a = answer(q("What was the cloud revenue for the three months ended September 30, 2023?", "amount",
                 ["cloud revenue", "three months"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.paired"


def test_a_bare_figure_is_not_money_outside_a_table_cell():
    # the page footer's number stands next to the words of the question; it states no currency
    a = answer(q("How much money did Example Corp. report in its Form 10-Q?", "amount",
                 ["example corp", "form 10-q"]), [RESULTS])
    assert not a.answer_found


def test_a_multi_part_question_that_asks_an_explanation_too_is_not_answered_with_one_value():
    a = answer(q("How much was recognized from deferred revenue, and what were the strategic priorities?", "amount",
                 ["deferred revenue", "strategic priorities"], "multi_part"), [RESULTS])
    assert not a.answer_found


def test_a_computed_value_is_not_answered_and_the_caveat_names_its_inputs():
    a = answer(q("What is the ratio of the cost of revenue increase to total net sales?", "amount",
                 ["cost of revenue", "total net sales"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.computed"
    assert "computed value ('ratio')" in a.caveats[0] and "it would be computed from the printed values" in a.caveats[0]
    assert "$850 million" in a.caveats[0] or "$3.3 billion" in a.caveats[0]
