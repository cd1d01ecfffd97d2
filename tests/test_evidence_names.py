"""A question's word counts as a name only when every occurrence is capitalised, not just at a sentence's start
(tasks/questions/distinct.py ``_capitalised_in``, found with str.find and explicit word edges)."""

import random
import re

import pytest

from tasks.questions.distinct import _capitalised_in
from tasks.terms import stated


@pytest.mark.parametrize("word, text, expected", [
    ("Apple", "What revenue did Apple report in 2023?", True),
    ("What", "What revenue did Apple report?", False),          # capitalised only because it opens the sentence
    ("Revenue", "Revenue grew. What was the revenue of Apple?", False),  # one lower-case occurrence
    ("GAAP", "What is the Non-GAAP margin?", False),            # inside a hyphenated word: not a word of its own
    ("Non-GAAP", "What is the Non-GAAP margin?", True),
    ("Delaware", "Is it governed by the law of the State of Delaware, or Delaware's?", True),
    ("Bank", "Which Bank? Bank fees rose.", True),              # one occurrence mid-sentence is enough
    ("Bank", "Banking at the Bank", True),                      # 'Banking' is another word
    ("İstanbul", "Flights to İstanbul rose.", True),            # a letter whose lower case is longer
    ("Tesla", "What did Ford report?", False),
])
def test_capitalised_in(word, text, expected):
    assert _capitalised_in(word, text) is expected


def test_stated_agrees_with_its_regex():
    """``stated`` finds a term as whole words with str.find; it must say what ``(?<![\\w&])term(?![\\w&])`` says,
    Unicode letters and digits included (word edges, '&', an empty term, a letter whose lower case is longer)."""
    alphabet = list("ab &_-.1é٣ⅷ$%'AÉ") + ["\u0301", "ß", "İ", "²", "\u200d"]
    rng = random.Random(7)
    for _ in range(20_000):
        asked = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        term = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 3)))
        expected = re.search(rf"(?<![\w&]){re.escape(term.lower())}(?![\w&])", asked) is not None
        assert stated(asked, term) is expected, (asked, term)
    assert stated("what did at&t report in 2023?", "AT&T") and not stated("at&tx", "at&t")
