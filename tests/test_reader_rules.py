"""The reader rules added after the typed reader's dev check (issue #15, second pass), on hand-made passages:
framing words that say where to look are not the subject, a name takes its label line, a colour the text prints
is a legend, a named physical quantity rejects measures of another, a date in the format asked, an identifier on
the line that names its kind, an e-mail address that carries the asked name, and a kind of the asked noun."""

from __future__ import annotations

import pytest

from schemas.contracts import AnswerWithEvidence
from tasks.generate.values import iso_date
from tasks.questions.asked import asked_class, reader_cannot_state
from tests.test_reader_examples import answer, passage, q

COVER = ["2019-2021", "Jane Doe", "MAYOR", "Tom Ray, PhD", "City Treasurer"]


def test_a_name_takes_the_role_line_under_it_on_the_first_page():
    a = answer(q("What is the name of the mayor as mentioned on the first page of the document?", "entity",
                 ["name", "mayor", "first page"]), [passage("p1", 0, COVER)])
    assert (a.answer_found, a.value) == (True, "Jane Doe")


@pytest.mark.parametrize("text,page", [
    ("What is the name of the mayor as mentioned on the first page of the document?", 4),  # not the first page
    ("What is the name of the mayor as mentioned on the last page of the document?", 0),  # 'last' cannot be checked
])
def test_a_name_elsewhere_than_the_page_asked_is_not_found(text, page):
    a = answer(q(text, "entity", ["name", "mayor", "last page" if "last" in text else "first page"]),
               [passage("p1", page, COVER)])
    assert not a.answer_found and a.value is None


def test_a_label_line_ending_in_a_colon_names_the_line_under_it():
    a = answer(q("Who published the plan?", "entity", ["published", "plan"]), [passage("p1", 1, [
        "Version 2.1", "Revised June 2020", "Published by:", "Riverside Water Board", "12 Elm Road"],
        section="Strategic Plan")])
    assert (a.answer_found, a.value) == (True, "Riverside Water Board")


def test_a_page_number_in_the_question_is_framing_and_the_row_of_the_asked_year_answers():
    a = answer(q("What was the population of the town on page 3 in 1900?", "amount", ["population", "town",
                                                                                        "page 3", "1900"]),
               [passage("t1", 12, ["Table 2. Population by Town, 1900-2000", "1900 2,410 310 NA",
                                   "1950 3,120 600 75", "1990 3,805 512 90"], section="Population by Town")])
    assert (a.answer_found, a.value) == (True, "2,410")


LEGEND = passage("m1", 7, ["3.2 Water supply", "Colour Water temperature", "• blue cold water (up to 10 °C)",
                           "• red hot water (above 60 °C)", "The heater needs approx. 20 seconds to warm the water."])


def test_a_colour_the_text_prints_is_a_legend_and_the_quantity_asked_rejects_other_measures():
    a = answer(q("What temperature does the blue light of the kettle represent for the water?", "amount",
                 ["temperature", "blue", "light", "kettle", "water"]), [LEGEND])
    assert (a.answer_found, a.value) == (True, "up to 10 °C")
    assert asked_class({"text": "What temperature is the water?", "answer_shape": "amount"}).dimension == \
        "temperature"


def test_a_colour_the_text_does_not_print_is_still_a_picture():
    text = "What temperature does the green light represent?"
    assert reader_cannot_state(text, "\n".join(ln.text for ln in LEGEND.lines)) is not None
    assert reader_cannot_state("What temperature does the blue light represent?",
                               "\n".join(ln.text for ln in LEGEND.lines)) is None


@pytest.mark.parametrize("text,iso", [("January 5, 2022", "2022-01-05"), ("5th Jan 2022", "2022-01-05"),
                                      ("01/05/2022", "2022-01-05"), ("25/01/2022", "2022-01-25"),
                                      ("2022-01-05", "2022-01-05"), ("March 2022", None), ("2022", None)])
def test_iso_date(text, iso):
    assert iso_date(text) == iso


def test_a_date_is_given_in_the_format_the_question_asks():
    a = answer(q("What is the date of the letter? Format your answer as YYYY-MM-DD.", "date", ["date", "letter"]),
               [passage("l1", 0, ["This letter is dated March 14, 2021.", "Dear Sir or Madam,"])])
    assert (a.answer_found, a.value) == (True, "2021-03-14")


def test_an_identifier_on_the_line_that_names_its_kind_under_the_asked_subject():
    a = answer(q("What is the telephone number for Oak House Care Home?", "text", ["telephone", "oak house care home"]),
               [passage("h1", 0, ["Oak House Care Home is registered to provide care for 30 people.",
                                  "Care provided at Oak House was safe.", "Oak House Care Home Limited",
                                  "12 Elm Road", "Tel: 01632 960123"], section="Oak House Care Home")])
    assert (a.answer_found, a.value) == (True, "01632 960123")


def test_the_email_address_that_carries_the_asked_name():
    a = answer(q("What is the email id of Ms Ann Lee?", "entity", ["email id", "ann lee"]), [passage("e1", 3, [
        "Counsel for the applicants: Mr John Smith and Ms Ann Lee, Smith Lee LLP,",
        "jsmith@smithlee.example, alee@smithlee.example"])])
    assert (a.answer_found, a.value) == (True, "alee@smithlee.example")


def test_a_kind_of_the_asked_noun_even_as_a_heading():
    a = answer(q("What type of court is noted on the cover page?", "entity", ["type", "court", "cover page"]),
               [passage("c1", 0, ["DISTRICT COURT", "COUNTY OF NORTHFIELD", "Case No. 21-0042"],
                        section="DISTRICT COURT")])
    assert isinstance(a, AnswerWithEvidence) and (a.answer_found, a.value) == (True, "DISTRICT COURT")

