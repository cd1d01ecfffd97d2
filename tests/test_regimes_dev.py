"""The first-page-gold accounting of benchmarks/regimes_dev.py: the class a question falls in, and whether its gold
value is printed on a page's text layer (what an extractive reader could quote at all)."""

from __future__ import annotations

from benchmarks.regimes_dev import evidence_class, printed


def test_evidence_class_reads_the_sources_and_the_ask():
    assert evidence_class("How many green bars appear in Figure 1?",
                          {"evidence_sources": ["Figure"], "answer_format": "Int"}) == ("figure/chart only", "count")
    assert evidence_class("What is the total revenue?", {"evidence_sources": ["Table", "Chart"],
                                                         "answer_format": "Float"}) == ("table", "number")
    assert evidence_class("Which datasets are used?", {"evidence_sources": ["Pure-text (Plain-text)"],
                                                       "answer_format": "List"}) == ("text", "list")
    assert evidence_class("Who wrote it?", {"answer_format": "Str"}) == ("text", "string")


def test_printed_needs_every_item_and_a_count_before_its_noun():
    page = "The machine offers 7 quality levels.\nRevenue was $1,234.5 million in 2023.\nPartners: Alpha, Beta"
    assert printed("7", "count", page, "levels")
    assert not printed("3", "count", page, "levels")
    assert not printed("2023", "count", page, "levels")  # a year is not the count of levels
    assert printed("1234.5", "number", page)
    assert not printed("1235", "number", page + " 999")
    assert not printed("34", "number", page)  # a number inside another is not printed
    assert printed("['Alpha', 'Beta']", "list", page)
    assert not printed("['Alpha', 'Gamma']", "list", page)
