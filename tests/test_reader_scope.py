"""Reader rules of issue #15's fifth pass, on hand-made passages: a label printed on the line above its value, the
years a question scopes any value to (a name too), answer-format templates that are framing, the row a named code
keys, and money nouns that are only part of a hyphenated word."""

from __future__ import annotations

import pytest

from tasks.generate.asked import asked_class
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
