"""Reader rules of issue #15's fifth pass, on hand-made passages: a label printed on the line above its value, the
years a question scopes any value to (a name too), answer-format templates that are framing, the row a named code
keys, and money nouns that are only part of a hyphenated word."""

from __future__ import annotations

import pytest

from tasks.questions.asked import asked_class
from tests.test_reader_examples import answer, passage, q

COVER = ["Annual Safety Report", "Revised March 2019", "Produced by:", "Harbor Transit Authority", "Page 1"]


def test_a_label_on_the_line_above_names_its_value():
    a = answer(q("Who produced the report that was revised in March 2019?", "entity", ["produced", "revised", "2019"]),
               [passage("p1", 0, COVER)])
    assert (a.answer_found, a.value) == (True, "Harbor Transit Authority")


def test_a_year_the_question_names_that_the_passage_does_not_is_another_edition():
    a = answer(q("Who produced the report that was revised in March 2021?", "entity", ["produced", "revised", "2021"]),
               [passage("p1", 0, COVER)])
    assert not a.answer_found and "2021" in a.caveats[0]


def test_a_heading_over_a_list_is_not_a_label_of_its_first_item():
    a = answer(q("What is the title of the essay given in week 3?", "entity", ["title", "essay", "week 3"]),
               [passage("p1", 4, ["Week 3 Tasks:", "• Quiz on chapters 1 and 2", "• Essay on river ecology",
                                  "Week 4 Tasks:"])])
    assert a.value != "• Quiz on chapters 1 and 2"


def test_an_answer_format_template_is_framing_not_a_code_to_find():
    a = answer(q("What is the date of the memo? Format your answer as YYYY-MM-DD.", "date", ["date", "memo"]),
               [passage("p1", 0, ["Internal memo", "Date: March 3, 2021", "To: all staff"])])
    assert (a.answer_found, a.value) == (True, "2021-03-03")


ROWS = ["Region Name Code", "Northshore (NS)", "1. Lakeside North LK01", "2. Lakeside South LK02",
        "Westvale (WV)", "1. Old Town WV01"]


@pytest.mark.parametrize("code,name", [("LK02", "Lakeside South"), ("WV01", "Old Town")])
def test_the_row_a_named_code_keys_gives_the_name(code, name):
    a = answer(q(f"What's the region name for code {code}?", "entity", ["region name", code]),
               [passage("p1", 3, ROWS)])
    assert (a.answer_found, a.value) == (True, name)


def test_a_code_on_no_row_keys_nothing():
    a = answer(q("What's the region name for code LK09?", "entity", ["region name", "LK09"]), [passage("p1", 3, ROWS)])
    assert not a.answer_found


@pytest.mark.parametrize("text,cls", [
    ("Which method integrates knowledge into models via directive fine-tuning?", "entity"),
    ("Is the design cost-effective?", "yesno"),
    ("What is the fine for a late return?", "money"),
    ("How much is the cost-sharing fee?", "money"),
])
def test_a_money_noun_joined_to_another_word_names_no_amount(text, cls):
    assert asked_class({"text": text, "answer_shape": "entity"}).cls == cls


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


def test_a_superlative_with_too_few_rows_or_a_tie_is_not_answered():
    two = answer(q("Which course has the longest duration?", "entity", ["course", "duration"]),
                 [passage("p1", 2, COURSES[:3] + COURSES[5:], section="Survey courses")])
    assert not two.answer_found
    tie = answer(q("Which course has the longest duration?", "entity", ["course", "duration"]),
                 [passage("p1", 2, ["Course Length", "Field Surveying 3 weeks", "Advanced Mapping 21 days",
                                    "Site Safety Basics 2 days"], section="Survey courses")])
    assert not tie.answer_found  # 3 weeks and 21 days are the same length: no one row is the longest


def test_page_numbers_of_a_contents_list_are_not_compared():
    a = answer(q("Which chapter has the most pages?", "entity", ["chapter", "pages"]),
               [passage("p1", 1, ["Contents", "Getting started ........ 3", "Cleaning the unit ........ 25",
                                  "Troubleshooting ........ 31"], section="Contents")])
    assert not a.answer_found


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


def test_a_step_order_with_one_step_missing_is_not_answered():
    a = answer(q('Is "Installing the filter" the step before or after "Descaling"?', "text",
                 ["installing filter", "descaling"]), STEPS)
    assert a.value not in ("before", "after")


LEASE = passage("p1", 4, ["Late payment", "If the tenant pays the monthly rent after the fifth day, a late fee of $50 is",
                          "added to the next invoice. Rent is due on the first day of each month."])


def test_what_if_is_answered_by_the_consequence_of_the_same_condition():
    a = answer(q("What happens if the tenant pays the monthly rent after the fifth day?", "text",
                 ["tenant", "monthly rent", "fifth day"]), [LEASE])
    assert (a.answer_found, a.value) == (True, "a late fee of $50 is added to the next invoice")


def test_what_if_under_a_condition_no_sentence_states_finds_no_consequence():
    a = answer(q("What happens if the landlord sells the building?", "text", ["landlord", "sells", "building"]),
               [LEASE])
    assert not a.answer_found


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


def test_an_nth_item_past_the_end_of_the_section_is_not_answered():
    a = answer(q("What is the fifth bullet point of the safety instructions?", "text", ["safety instructions"]),
               [SAFETY])
    assert not a.answer_found


SYLLABUS = [passage("p1", 3, ["Unit 2 Key Assignments:", "• Essay- Water Rights in the Modern West—due in week 3"]),
            passage("p2", 5, ["Unit 5 Key Assignments:", "• Case Study- Supply Chains Under Strain—submit online",
                              "• Quiz on units 4 and 5"])]


def test_the_title_printed_after_the_kind_asked_in_the_part_the_question_names():
    a = answer(q("What is the title of the case study given under unit 5?", "entity", ["title", "case study", "unit 5"]),
               SYLLABUS)
    assert (a.answer_found, a.value) == (True, "Supply Chains Under Strain")
    b = answer(q("What is the title of the essay given under unit 2?", "entity", ["title", "essay", "unit 2"]), SYLLABUS)
    assert (b.answer_found, b.value) == (True, "Water Rights in the Modern West")


def test_a_period_notation_or_a_code_not_looked_up_keys_no_row():
    rows = ["Segment results", "Q1 Highlights North America", "Revenue grew in every region."]
    a = answer(q("Which segment led growth in Q1?", "entity", ["segment", "growth", "Q1"]), [passage("p1", 3, rows)])
    assert a.value != "Highlights North America"
