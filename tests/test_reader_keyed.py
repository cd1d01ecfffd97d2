"""Rows a quoted term keys (issue #15): a line that opens with the term the question quotes and goes on with text of
its own is that term's row, its value the rest of the line with the lines that carry its sentence on; on hand-made
passages."""

from __future__ import annotations

from tests.test_reader_examples import answer, passage, q

TEMPLATES = passage("p1", 28, [
    "Table 21: Templates for the event labels.",
    "Event Template",
    "Transaction.Transfer The word {evt} triggers a TRANSFER event: an owner gives an",
    "artifact to another owner.",
    "Contact.Phone The word {evt} triggers a PHONE event: two or more parties talk by",
    "telephone or by radio.",
    "Life.Die The word {evt} triggers a DIE event: a person dies."], start=40)


def test_the_row_a_quoted_term_keys_with_its_continued_sentence():
    a = answer(q("Tell me the template used for label 'Contact.Phone' in this work.", "text",
                 ["template", "Contact.Phone"]), [TEMPLATES])
    assert a.answer_found
    assert a.value == "The word {evt} triggers a PHONE event: two or more parties talk by telephone or by radio."


def test_a_row_ended_by_its_sentence_takes_no_following_row():
    a = answer(q('Which template does the label "Life.Die" use?', "text", ["template", "Life.Die"]), [TEMPLATES])
    assert a.value == "The word {evt} triggers a DIE event: a person dies."


def test_a_quoted_term_no_line_opens_with_is_no_row():
    # the term stands inside a line, not at its start: nothing keys it
    a = answer(q("Tell me the template used for label 'PHONE event' in this work.", "text",
                 ["template", "PHONE event"]), [TEMPLATES])
    assert "telephone" not in (a.value or "")
