"""Ranks, orders, comparisons and conditions (rules ``rank.rows``, ``rank.ordinal``, ``rank.order``,
``compare.sides``, ``condition.consequence``, ``abstain.comparison``): a superlative over a table's rows, the nth
item of a section, which of two steps comes first, the two sides of a comparison, the consequence of a condition;
on hand-made passages."""

from __future__ import annotations

import pytest

from tasks.generate.values import comparison_sides
from tests.reader.kit import answer, numbered, passage, q


CMP_Q = q("Which group is larger in 2018: Republicans who are Hispanic, or no leans who are male?", "comparison",
          ["group", "republicans", "hispanic", "no leans", "male"], "compare")


CMP_A = numbered("c1", 2, [(5, "Among Republicans, 7% are Hispanic.")])


CMP_B = numbered("c2", 21, [(90, "No leans who are male: 55%")])


def test_comparison_in_batch_combines_two_passages():
    a = answer(CMP_Q, [CMP_A, CMP_B])
    assert a.value == "no leans who are male"
    assert a.complete_answer_found and len(a.evidence) == 2
    assert any("7%" in c and "55%" in c for c in a.caveats)


def test_comparison_from_one_passage_is_not_an_answer():
    # one side's value does not say which side is larger: not found, the side that was seen in the caveat
    a = answer(CMP_Q, [CMP_B], "sequential")
    assert not a.answer_found and not a.complete_answer_found
    assert any("1 of 2 sides" in c and "no leans who are male" in c for c in a.caveats)


def test_comparison_sides():
    assert comparison_sides("Is revenue higher in 2023 or 2022?") == ("revenue higher in 2023", "2022")
    assert comparison_sides("How does A compare between Europe and Asia?") == ("Europe", "Asia")
    assert comparison_sides("What is the revenue?") is None


TRIM = passage("p1", 9, ["Removing the door trim", "To remove the trim piece:", "1. Remove all items from the shelf.",
                         "2. Pull straight up on the trim piece at each", "end.", "To replace the trim piece:",
                         "1. Locate each end of the trim piece.", "2. Push the trim piece down.",
                         "3. Replace items on the shelf."], start=320, section="removing the door trim")


CRISPER = passage("p2", 12, ["Removing the crisper", "To remove the crisper:", "1. Slide the crisper out to the stop.",
                             "2. Lift the front slightly.", "3. Slide out the rest of the way.",
                             "4. Replace in reverse order.", "Page 12"], start=433, section="removing the crisper")


@pytest.mark.parametrize("ask,value", [("more", "to remove the crisper"), ("fewer", "To remove the trim piece")])
def test_which_procedure_has_more_steps_counts_each_sides_numbered_steps(ask, value):
    # each side's steps under the line that names it; the other procedure on the page ("To replace ...") not counted
    a = answer(q(f"Which task has {ask} steps, To remove the trim piece or to remove the crisper?", "comparison",
                 ["steps", "trim piece", "crisper"]), [TRIM, CRISPER])
    assert (a.answer_found, a.value) == (True, value)
    assert "trim piece: 2" in a.caveats[0] and "crisper: 4" in a.caveats[0]


def test_a_side_without_numbered_steps_is_no_comparison():
    a = answer(q("Which task has more steps, To remove the trim piece or to clean the filter?", "comparison",
                 ["steps", "trim piece", "filter"]), [TRIM, CRISPER])
    assert not a.answer_found


COURSES = ["Course Length", "Foundations of", "Field Surveying 6 weeks", "Advanced Mapping 5 months",
           "Site Safety Basics 3 days", "All courses are taught in English."]


@pytest.mark.parametrize("text,name", [
    ("Which course has the longest duration among the survey courses?", "Advanced Mapping"),
    ("Which course is the shortest of the survey courses?", "Site Safety Basics"),
])
def test_a_superlative_compares_the_rows_of_a_table_in_one_unit(text, name):
    a = answer(q(text, "entity", ["course", "survey courses"]), [passage("p1", 2, COURSES, section="Survey courses")])
    assert (a.answer_found, a.value) == (True, name)
    assert not a.complete_answer_found  # another passage may hold a row of the same table


STEPS = [passage("p1", 3, ["Installing the filter", "Remove the old cartridge and turn the new one a quarter turn."],
                 start=40),
         passage("p2", 2, ["Unpacking the unit", "Keep the packaging until the unit has been tested."], start=12)]


@pytest.mark.parametrize("text,value", [
    ('Is "Installing the filter" the step before or after "Unpacking the unit"?', "after"),
    ('Is "Unpacking the unit" the step before or after "Installing the filter"?', "before"),
])
def test_which_of_two_named_steps_comes_first_is_read_from_where_they_stand(text, value):
    a = answer(q(text, "text", ["installing filter", "unpacking unit"]), STEPS)
    assert (a.answer_found, a.value) == (True, value)


LEASE = passage("p1", 4, ["Late payment", "If the tenant pays the monthly rent after the fifth day, a late fee of $50 is",
                          "added to the next invoice. Rent is due on the first day of each month."])


def test_what_if_is_answered_by_the_consequence_of_the_same_condition():
    a = answer(q("What happens if the tenant pays the monthly rent after the fifth day?", "text",
                 ["tenant", "monthly rent", "fifth day"]), [LEASE])
    assert (a.answer_found, a.value) == (True, "a late fee of $50 is added to the next invoice")


SAFETY = passage("p1", 6, ["Before first use, read these instructions.", "• Keep the unit away from water.",
                           "• Operate the unit on 100-240 V AC only.", "• Do not open the housing.",
                           "Storage", "Store the unit in a dry place when it is not in use for a long time."],
                 section="Manual > Safety instructions")


RESEARCH = passage("p1", 9, ["Several questions remain open.", "Effects on rents",
                             "Earlier work looked at prices, but little is known about rents after a change.",
                             "Effects on schools", "Enrolment may rise where new housing is built."],
                   section="Report > Areas for future research")


@pytest.mark.parametrize("text,p,value", [
    ("What is the second bullet point of the safety instructions?", SAFETY, "Operate the unit on 100-240 V AC only."),
    ("What is the last bullet point of the safety instructions?", SAFETY, "Do not open the housing."),
    ("What is the first topic in the areas for future research?", RESEARCH, "Effects on rents"),
    ("What is the second topic in the areas for future research?", RESEARCH, "Effects on schools"),
])
def test_the_nth_item_or_topic_of_the_section_named_is_counted_from_its_start(text, p, value):
    a = answer(q(text, "text", ["safety instructions"] if p is SAFETY else ["areas", "future research"]), [p])
    assert (a.answer_found, a.value) == (True, value)
