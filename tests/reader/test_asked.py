"""What a question asks, as the reader reads it (``tasks.questions.asked``): the value class, the framing that is
not the subject, a picture the text cannot state."""

from __future__ import annotations

import pytest

from tasks.questions.asked import asked_class, reader_cannot_state
from tests.reader.kit import passage


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


LEGEND = passage("m1", 7, ["3.2 Water supply", "Colour Water temperature", "• blue cold water (up to 10 °C)",
                           "• red hot water (above 60 °C)", "The heater needs approx. 20 seconds to warm the water."])


def test_a_colour_the_text_does_not_print_is_still_a_picture():
    text = "What temperature does the green light represent?"
    assert reader_cannot_state(text, "\n".join(ln.text for ln in LEGEND.lines)) is not None
    assert reader_cannot_state("What temperature does the blue light represent?",
                               "\n".join(ln.text for ln in LEGEND.lines)) is None


@pytest.mark.parametrize("text,cls", [
    ("Which method integrates knowledge into models via directive fine-tuning?", "entity"),
    ("Is the design cost-effective?", "yesno"),
    ("What is the fine for a late return?", "money"),
    ("How much is the cost-sharing fee?", "money"),
])
def test_a_money_noun_joined_to_another_word_names_no_amount(text, cls):
    assert asked_class({"text": text, "answer_shape": "entity"}).cls == cls


def test_a_leading_clause_does_not_make_a_count_a_date():
    assert asked_class({"text": "When using GPT-4 as the base model, how many datasets does it win?",
                        "answer_shape": "amount"}).cls == "count"
    assert asked_class({"text": "When was the agreement signed?", "answer_shape": "date"}).cls == "date"
