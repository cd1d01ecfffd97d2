"""The scorer reads figures the way an analyst accepts them (tasks.generate.amounts, through
tasks.generate.normalise.answer_matches): each rule with pairs it accepts and a pair that must stay wrong."""

from __future__ import annotations

import pytest

from tasks.generate.amounts import read_amounts
from tasks.generate.normalise import answer_matches, headline


@pytest.mark.parametrize("predicted,reference,expected", [
    # scale words, suffixes and table headers
    ("$6,797 million", "$6,797 million", True),
    ("$6.797 billion", "$6,797 million", True),
    ("6,797M", "$6,797 million", True),
    ("$6,797 (in millions)", "$6,797 million", True),
    ("6,797,000,000", "$6,797 million", True),
    ("$6,797", "$6,797 million", False),  # a value in millions read as units
    ("12,345", "12,345 thousand shares", False),  # in thousands read as units
    ("12.345 million shares", "12,345 thousand shares", True),
    # printed precision: the coarser one decides, with enough digits stated
    ("$6.80 billion", "$6,797 million", True),
    ("$6.8 billion", "$6,797 million", False),  # two significant digits for a four-digit figure
    ("$6,760 million", "$6,797 million", False),  # within 1% but another figure
    ("18.3%", "18.29%", True),
    ("18.2%", "18.29%", False),
    ("30.7%", "30.66%", True),
    ("$1.29", "$1.29", True),
    ("$1.30", "$1.29", False),
    # currency
    ("USD 5,000 million", "$5,000 million", True),
    ("€5,000 million", "$5,000 million", False),
    # percent and percentage points
    ("2.1 percentage points", "2.1 pp", True),
    ("2.1%", "2.1 percentage points", False),
    ("210 basis points", "2.1 percentage points", True),
    ("0.445", "44.5%", True),
    # sign: parentheses, minus, words of loss or decline
    ("$(175) million", "-$175 million", True),
    ("(175) million", "-$175 million", True),
    ("an operating loss of $175 million", "-$175 million", True),
    ("$175 million", "-$175 million", False),  # the reference states a loss, the answer does not
    ("-$175 million", "$175 million", False),
    ("decreased 5%", "-5%", True),
    ("5%", "5% decrease", True),
    ("increased 5%", "-5%", False),
    ("increased 5%", "5% decrease", False),
])
def test_figures(predicted, reference, expected):
    assert answer_matches(predicted, reference, "amount") is expected


@pytest.mark.parametrize("predicted,reference,expected", [
    # a computed figure's reference shows its inputs: the answer is the figure, never one of its inputs
    ("6.1%", "6.1% ($18,654M / $304,182M; reported as 6%)", True),
    ("$18,654 million", "6.1% ($18,654M / $304,182M; reported as 6%)", False),
    ("$30,218 million", "$30,218 million ($34,005M - $3,787M)", True),
    ("$34,005 million", "$30,218 million ($34,005M - $3,787M)", False),
    ("-$2,758 million", "$2.758 billion loss (-$2,758 million)", True),
    # a scale header in parentheses is the unit, not an explanation
    ("$1,234 million", "1,234 (in millions)", True),
    ("1,234", "1,234 (in millions)", False),
])
def test_headline_of_a_reference(predicted, reference, expected):
    assert answer_matches(predicted, reference, "amount") is expected


PROSE = ("The revenue from Microsoft's cloud services, including Azure, in the latest quarter was $22,308 million.\n\n"
         "SOURCE(S): 2023 Q3 MSFT.pdf")
LONG = ("Based on the provided documents, Apple's total net sales were $82,959 million for the quarter ended June 25, "
        "2022 and $117,154 million for the quarter ended December 31, 2022, driven by iPhone and Services.")


@pytest.mark.parametrize("predicted,reference,expected", [
    ("$22,308 million", PROSE, True),
    ("$22.308 billion", PROSE, True),
    ("$22,380 million", PROSE, False),  # a figure the reference does not state
    ("$22,308", PROSE, False),  # the right digits at the wrong scale
    ("Azure: $22,308 million", PROSE, True),
    ("Dynamics 365: $22,308 million", PROSE, False),  # a name the reference does not state
    ("$117,154 million", LONG, True),
    ("iPhone", LONG, True),
    ("Mac", LONG, False),
    ("the quarter", LONG, False),  # states neither a figure nor a name
])
def test_short_answer_against_a_long_reference(predicted, reference, expected):
    assert answer_matches(predicted, reference, "text") is expected


def test_headline_and_read_amounts():
    assert headline(PROSE).endswith("$22,308 million.")
    assert headline("very cold milk (up to 8 degrees celsius)") == "very cold milk (up to 8 degrees celsius)"
    assert [a.value for a in read_amounts("sixty (60) days")] == [60.0]  # a number echoed in parentheses
    assert [a.value for a in read_amounts("in fiscal 2023 it was $(1,234) thousand")] == [-1_234_000.0]
