"""Lists and counts (rules ``list.items``, ``list.values``, ``list.role_names``, ``count.steps``,
``count.listed``, ``abstain.no_list``, ``abstain.count_scope``): a list's items, the values one sentence states
together, numbered steps counted, the items listed under the line that names the counted noun; on hand-made
passages."""

from __future__ import annotations

from tasks.generate.lists import _stated_count, asked_values, pick_counted
from tasks.generate.normalise import split_items
from tasks.generate.typed import Reader
from tasks.questions.asked import asked_class
from tests.reader.kit import DOC_A, DOC_B, OUTCOMES, answer, numbered, passage, passage_at, q


LIST_A = numbered("c1", 2, [(20, "Uses of the remote sensing satellite constellation:"),
                           (21, "• Agricultural drought"), (22, "• Forest fire"),
                           (23, "• Landslides and earthquakes monitoring")])


LIST_Q = q("What are the uses of the remote sensing satellite constellation?", "list",
           ["uses", "remote sensing", "satellite constellation"])


def test_list_from_one_passage_is_never_complete():
    a = answer(LIST_Q, [LIST_A], "sequential")
    assert a.value == "Agricultural drought; Forest fire; Landslides and earthquakes monitoring"
    assert a.answer_found and not a.complete_answer_found
    assert [(e.line_start, e.line_end) for e in a.evidence] == [(21, 23)]


LIST_B = numbered("c2", 5, [(50, "Remote sensing uses include flood mapping, ocean state forecasting and fisheries.")],
                 doc=DOC_B)


def test_list_in_batch_combines_passages():
    a = answer(LIST_Q, [LIST_A, LIST_B])
    assert split_items(a.value)[-3:] == ["flood mapping", "ocean state forecasting", "fisheries"]
    assert a.complete_answer_found
    assert {e.doc_id for e in a.evidence} == {DOC_A, DOC_B}


def test_bullets_under_the_line_that_names_the_counted_noun_are_counted_in_the_unit_asked():
    a = answer(q("How many learning outcomes should be answered in unit 8?", "amount",
                 ["learning outcomes", "outcomes", "unit 8"]), [passage("c", 5, OUTCOMES, start=260)])
    assert (a.answer_found, a.value) == (True, "4")  # the wrapped line "makes a selection fair?" continues an item
    assert "LEARNING OUTCOMES" in a.evidence[0].quote
    a = answer(q("How many learning outcomes should be answered in unit 7?", "amount",
                 ["learning outcomes", "outcomes", "unit 7"]), [passage("c", 5, OUTCOMES, start=260)])
    assert (a.answer_found, a.value) == (True, "3")


def test_a_list_is_followed_into_the_next_passage_while_the_line_numbers_run_on():
    first, rest = OUTCOMES[:12], OUTCOMES[12:]
    a = answer(q("How many learning outcomes should be answered in unit 8?", "amount",
                 ["learning outcomes", "outcomes", "unit 8"]),
               [passage("c1", 5, first, start=260), passage("c2", 5, rest, start=260 + len(first))])
    assert (a.answer_found, a.value) == (True, "4")
    gap = answer(q("How many learning outcomes should be answered in unit 8?", "amount",
                   ["learning outcomes", "outcomes", "unit 8"]),
                 [passage("c1", 5, first, start=260), passage("c2", 6, rest, start=300)])
    assert not gap.answer_found  # lines are missing in between: the list may hold more items


KIT = ["3 Getting started", "The kit contains the following parts:", "1. Base unit", "2. Power adaptor",
       "(mains plug included)", "3. Remote control", "4. Quick guide", "3.1 Setting up the base unit",
       "1. Place the base unit on a flat surface."]


def test_numbered_items_under_an_announcing_line_are_counted_until_the_numbering_restarts():
    a = answer(q("How many parts are included in the kit?", "amount", ["parts", "kit"]),
               [passage("k", 3, KIT, start=40)])
    assert (a.answer_found, a.value) == (True, "4")


GROWTH = passage("g", 0, ["Against a forecast growth of 6.7%, the economy grew by 4.3% in the year. In the first two",
                          "quarters the growth was 5.3% and 5.2%. The growth slowed in the third quarter; it recovered",
                          "in the fourth quarter to 4.9%."])


def test_values_a_list_question_counts_are_read_from_one_sentence_that_states_that_many_joined():
    assert asked_values("What were the growth rates for the first and second quarters respectively?") == 2
    assert asked_values("Where are the two plants of the company located?") == 2
    assert asked_values("Which datasets have exactly three methods?") == 0  # a condition, not how many are asked
    assert asked_values("What are the names of Unit 1 and Unit 2 on page 3?") == 0
    a = answer(q("What were the growth rates for the first and second quarters respectively?", "list",
                 ["growth", "rates", "first", "second", "quarters"]), [GROWTH])
    assert (a.answer_found, a.value) == (True, "5.3%; 5.2%")


def test_values_of_separate_statements_are_not_a_list_answer():
    a = answer(q("What were the growth rates for the third and fourth quarters respectively?", "list",
                 ["growth", "rates", "third", "fourth", "quarters"]), [GROWTH])
    assert not a.answer_found


def test_items_numbered_from_two_continue_another_list_and_are_not_the_list_under_the_line():
    rules = passage("r", 2, ["Compulsory courses", "1. All students take the compulsory courses of the programme.",
                             "2. Students may ask to drop up to 3 modules.", "3. Requests are made in the first month.",
                             "4. Changes after the results are not allowed."], start=30)
    a = answer(q("Which compulsory courses must the students take?", "list",
                 ["compulsory", "courses", "students"]), [rules])
    assert not a.answer_found


def test_a_weakly_related_passage_adds_no_items_to_a_list():
    main = passage("m", 2, ["Uses of the satellite constellation:", "• Drought monitoring",
                            "• Forest fire mapping"], start=10)
    other = passage("o", 9, ["Satellite dish care:", "• Battery care", "• Cleaning"], start=90,
                    section="Satellite ground stations")
    a = answer(q("What are the uses of the satellite constellation?", "list",
                 ["uses", "satellite", "constellation"]), [main, other])
    assert a.value == "Drought monitoring; Forest fire mapping"


def test_a_count_whose_sentence_names_only_the_counted_noun_does_not_answer_a_scoped_question():
    p = passage("e", 5, ["4 Experiments", "We evaluate on the full test set consisting of 300 examples."], start=590)
    a = answer(q("How many prompt examples are given in the appendix?", "amount",
                 ["prompt examples", "examples", "appendix"]), [p])
    assert not a.answer_found and "names only the counted noun" in a.caveats[0]
    scoped = passage("e", 15, ["The appendix gives 12 prompt examples, one per task."], start=900)
    a = answer(q("How many prompt examples are given in the appendix?", "amount",
                 ["prompt examples", "examples", "appendix"]), [scoped])
    assert (a.answer_found, a.value) == (True, "12")


LEVELS = ["Coffee quality", "The quality levels influence the coffee brewing. The higher the quality level, the",
          "stronger the coffee.", "Quality levels", "1 After pressing, the coffee swells.", "2 The coffee is brewed",
          "at once.", "3 A pre-infusion occurs.", "4 Same as for Quality 3, with wet pressing.", "Instructions:",
          "If very fine coffee is used with little water, a high quality level can cause", "a flow error."]


def test_rows_numbered_without_a_dot_under_a_heading_that_names_the_counted_phrase_are_counted():
    # "machine" and "set" only frame the ask; "coffee quality levels" names the list (its heading and the lines
    # above it); the wrapped line "... a high quality level can cause" is no heading of another list
    a = answer(q("How many coffee quality levels can the coffee machine be set to?", "amount",
                 ["coffee quality levels", "quality", "levels", "coffee machine", "set"]),
               [passage("l", 38, LEVELS, start=1466, section="Beverages > Change recipes")])
    assert (a.answer_found, a.value) == (True, "4")


def test_a_list_that_disagrees_with_the_number_its_intro_states_is_not_counted():
    lines = ["3 System", "Our system is composed of five modules:", "1) a verifier that checks the claim,",
             "2) a generator of questions, 3) an answering module, 4) a validator", "and 5) a reasoner.",
             "4 Evaluation", "1. We test on two datasets."]
    question = {"text": "How many modules does the system consist of?", "answer_shape": "amount",
                "keywords_primary": ["modules", "system", "consist"]}
    reader = Reader(question, [passage("m", 2, lines, start=90).model_dump()], asked_class(question))
    assert _stated_count(lines[1], "modules") == 5
    assert pick_counted(reader) is None  # items 3-5 share lines: the list reads as two items, not the five stated


def test_a_list_question_that_asks_for_names_is_not_answered_with_amounts():
    p = passage("p", 3, ["The two plants of the company produced 5.3 and 5.2 million units in the year."])
    a = answer(q("Where are the two plants of the company located?", "list", ["two plants", "plants", "company",
                                                                            "located"]), [p])
    assert not a.answer_found
    a = answer(q("How many units did the two plants of the company produce?", "list",
                 ["units", "two plants", "plants", "company", "produce"]), [p])
    assert (a.answer_found, a.value) == (True, "5.3 million; 5.2 million")


def test_lettered_items_are_counted_and_sub_items_of_a_numbered_list_are_its_text():
    lettered = ["Required documents", "The applicant must submit the following documents:", "a) a copy of the ID,",
                "b) proof of address,", "c) two photos.", "Fees", "The fee is payable on submission."]
    a = answer(q("How many documents must the applicant submit?", "amount", ["documents", "applicant", "submit"]),
               [passage("d", 1, lettered, start=5)])
    assert (a.answer_found, a.value) == (True, "3")
    nested = ["The kit contains the following parts:", "1. Base unit", "a) stand", "b) cover", "2. Adaptor",
              "3. Remote control", "3.1 Setting up the base unit"]
    a = answer(q("How many parts are included in the kit?", "amount", ["parts", "kit"]),
               [passage("k", 3, nested, start=40)])
    assert (a.answer_found, a.value) == (True, "3")


def test_a_note_inside_a_numbered_list_does_not_end_it():
    lines = ["To clean the filter:", "1. Open the lid.", "2. Remove the filter.", "NOTE", "Do not use soap.",
             "3. Rinse the filter.", "Drying the filter", "Let it dry for an hour."]
    a = answer(q("How many steps are needed to clean the filter?", "amount", ["steps", "clean", "filter"]),
               [passage("f", 7, lines, start=300)])
    assert (a.answer_found, a.value) == (True, "3")
    items = ["The set includes the following parts:", "1. Base unit.", "2. Cover.", "NOTE", "Keep the box.",
             "3. Power cord.", "Assembly", "Put the cover on the base unit."]
    a = answer(q("How many parts does the set include?", "amount", ["parts", "set", "include"]),
               [passage("s", 7, items, start=300)])
    assert (a.answer_found, a.value) == (True, "3")


def test_an_apposition_with_initials_names_the_judge():
    a = answer(q("The document represents which judges' opinions?", "list", ["judges", "opinions"]),
               [passage("p1", 0, ["Janet A. Wright, Esq., Dover, DE.", "R. THOMAS QUILL, Judge.", "Dear Counsel:"])])
    assert (a.answer_found, a.value) == (True, "R. THOMAS QUILL")


HOLIDAYS = passage_at("h", 7, [
    "6.2 Public Holidays",
    "The company observes the following paid holidays each year. When a holiday falls on a",
    "Saturday it is observed on the Friday before.",
    "New Year's Day", "Memorial Day", "Independence Day", "Labor Day",
    "Employees who are scheduled to work on a public holiday are paid at one and a half times their rate.",
    "Northwind Logistics | Employee Handbook"], section="6. Time Off > 6.2 Public Holidays")


def test_an_announced_list_under_a_heading_takes_the_passage_as_its_context():
    a = answer(q("Which public holidays does Northwind give employees off?", "entity",
                 ["public holidays", "holidays", "northwind", "employees"]), [HOLIDAYS])
    assert a.value == "New Year's Day; Memorial Day; Independence Day; Labor Day"


def test_numbered_steps_under_the_task_are_counted():
    grille = passage_at("g", 16, ["Removing the base grille", "To remove the grille:", "1. Open both doors.",
                               "2. Pull base grille forward.", "To replace the grille:",
                               "1. Line up grille support tabs with metal", "clips.", "2. Push firmly to snap into place.",
                               "3. Close the doors."])
    a = answer(q("How many steps are required to replace the grille?", "amount",
                 ["steps", "required", "replace", "grille"]), [grille])
    assert (a.value, a.answer_found) == ("3", True)
    assert a.evidence[0].quote.startswith("To replace the grille:")
