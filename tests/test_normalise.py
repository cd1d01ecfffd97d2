"""Answer matching (``tasks.generate.normalise``): numbers as numbers, strings by their folded form, lists item
by item, a reference's key values; fair on hand-made pairs."""

from __future__ import annotations

import pytest

from tasks.generate.normalise import answer_matches, normalise_value, parse_number


# -- normalisation -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("predicted,reference,shape,expected", [
    ("18.29%", "18.29%", "amount", True),
    ("18.3 %", "18.29%", "amount", True),
    ("0.1829", "18.29%", "amount", True),
    ("$1.2 million", "1,200,000", "amount", True),
    ("nine", "9", "amount", True),
    ("9 chapters", "9", "amount", True),
    ("10", "9", "amount", False),
    ("No leans who are male", "no leans who are male", "entity", True),
    ("red; gray", "['gray', 'red']", "list", True),
    ("gray, red, blue", "['gray', 'red']", "list", False),
    ("red", "['gray', 'red']", "list", False),
    (None, "Not answerable", "text", True),
    ("5", "Not answerable", "amount", False),
    (None, "5", "amount", False),
    ("01983 873655", "01983 873655", "entity", True),
    ("01983 873656", "01983 873655", "entity", False),
    ("2016", "2015-2016", "date", False),
    ("Wake up the voice assistant", "Wake up the voice assistant. ", "text", True),
    ("Forest", "Agricultural Drought", "entity", False),
])
def test_answer_matches(predicted, reference, shape, expected):
    assert answer_matches(predicted, reference, shape) is expected


def test_normalise_value_and_parse_number():
    assert normalise_value("$1,200,000") == normalise_value("1.2 million") == "1.2e+06"
    assert normalise_value("b; A", "list") == normalise_value("['a', 'b']") == "a | b"
    assert normalise_value(None) is None and normalise_value("Not answerable") is None
    assert parse_number("USD 3.5 bn") == (3.5e9, False) and parse_number("12 %") == (12.0, True)
    assert parse_number("between 3 and 4") is None


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
