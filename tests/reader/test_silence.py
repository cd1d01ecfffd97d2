"""Right or silent (rules ``abstain.<check>``): the checks a value passes before it is shown, and what the reader
says when none passes (the closest sentence as evidence, the reason as a caveat), on hand-made passages."""

from __future__ import annotations

import pytest

from tasks.generate.guards import paired_by_position
from tasks.generate.sentences import PLine
from tasks.generate.typed import Pick
from tests.reader.kit import COSTS, OUTCOMES, answer, numbered, page, passage, passage_at, q


def test_numbers_in_an_index_are_page_references():
    index = numbered("c1", 104, [(4150, "Preparation of ground coffee using the manual insert 25")], section="Index")
    leaders = numbered("c2", 2, [(20, "Ground coffee quantity ........ 31")])
    a = answer(q("How much ground coffee fits in the manual insert?", "amount", ["ground coffee", "manual insert"]),
               [index, leaders])
    assert not a.answer_found


def test_no_value_of_the_shape_is_not_found_and_shows_the_passage():
    p = numbered("c1", 0, [(1, "The board discussed revenue and strategy at length.")])
    a = answer(q("What was the revenue?", "amount", ["revenue"]), [p])
    assert (a.value, a.answer_found, a.complete_answer_found) == (None, False, False)
    assert [(e.line_start, e.quote) for e in a.evidence] == [(1, "The board discussed revenue and strategy at length.")]
    assert a.caveats == ["extractive: no amount of money stated in the passages"] and a.confidence <= 0.2


def test_keywords_absent_is_not_found_even_with_numbers():
    p = numbered("c1", 0, [(1, "Rainfall was 120 mm in March.")])
    a = answer(q("What was the total revenue?", "amount", ["total revenue"]), [p])
    assert not a.answer_found


def test_a_matching_section_title_alone_does_not_make_an_answer():
    p = numbered("c1", 0, [(1, "Printed in 5 copies for the board.")], section="Total revenue 2023")
    a = answer(q("What was the total revenue in 2023?", "amount", ["total revenue", "2023"]), [p])
    assert not a.answer_found


def test_free_text_on_partial_keyword_evidence_is_not_an_answer():
    # a sentence that covers 2 of 5 terms is not a free-text answer: right or silent
    p = numbered("c1", 7, [(70, "Notes"), (71, "The growth of the subsidiary was reviewed in May.")])
    a = answer(q("Describe the growth strategy of the subsidiary abroad in Asia.", "text",
                 ["growth strategy", "subsidiary", "abroad", "asia"]), [p], "sequential")
    assert not a.answer_found and a.evidence[0].line_start == 71


CASH_WORDS = ["net operating cash flow", "subsidiary"]  # net, operat, cash, flow, subsidiary: 2 of 5 next to $1.2m


def test_single_value_shape_without_a_typed_value_stays_not_found():
    p = numbered("c1", 7, [(70, "Notes"), (71, "Cash flow improved markedly over the period.")])
    a = answer(q("What was the net operating cash flow of the subsidiary?", "amount", CASH_WORDS), [p], "sequential")
    assert (a.answer_found, a.complete_answer_found, a.value) == (False, False, None)


def test_typed_value_only_in_a_neighbouring_sentence_is_not_the_answer():
    # "revenue" is in the sentence before; the number's own sentence names no term of the question: keep looking
    p = numbered("c1", 0, [(1, "Revenue history and notes."), (2, "Unrelated stock of $7 about office furniture.")])
    a = answer(q("What was the total revenue in 2023?", "amount", ["total revenue", "2023"]), [p], "sequential")
    assert (a.value, a.answer_found, a.complete_answer_found) == (None, False, False)


@pytest.mark.parametrize("text,primary", [
    # no period named: four columns, none of them asked
    ("What was the research and development expense?", ["research and development", "expense"]),
    # a year no column carries
    ("What was the R&D expense for Q3 2021?", ["R&D expense", "Q3 2021"]),
    # a quantity defined by a formula over several cells: one cell is an operand
    ("R&D intensity is defined as R&D / revenue. What was the R&D intensity in Q3 2024?", ["R&D intensity", "Q3 2024"]),
])
def test_no_cell_without_a_sure_row_and_column(text, primary):
    a = answer(q(text, "amount", primary), [passage("p1", 4, COSTS)])
    assert a.value not in {"$1,210 million", "$1,105 million", "$3,480 million", "$3,020 million"}


def test_a_value_of_a_dated_table_row_whose_column_is_not_the_period_asked_is_not_answered():
    # the columns end in March: the first quarter, not the third
    a = answer(q("What were sales and marketing costs for 3Q23?", "amount", ["sales and marketing", "costs", "3Q23"]),
               [passage("p1", 4, COSTS)])
    assert not a.answer_found and "column" in a.caveats[0]


def test_change_columns_printed_before_the_years_leave_the_columns_unknown():
    lines = ["(In millions, except percentages)", "Three Months Ended", "September 30,", "Percentage", "Change",
             "2024 2023", "Research and development $ 700 $ 600 17%"]
    a = answer(q("What was the research and development expense in Q1 2024?", "amount",
                 ["research and development", "expense", "Q1 2024"]), [passage("p1", 3, lines)])
    assert a.value != "$600 million"


SEGMENTS = ["Q2 2024 Q2 2023 YTD 2024 YTD 2023", "(In Millions) Amount", "% of Net", "Revenue Amount", "% of Net",
            "Revenue Amount", "% of Net", "Revenue Amount", "% of Net", "Revenue",
            "Net revenue $ 9,000 100.0 % $ 8,000 100.0 % $ 17,500 100.0 % $ 16,000 100.0 %",
            "Gross margin 4,050 45.0 % 3,200 40.0 % 7,700 44.0 % 6,400 40.0 %"]


def test_a_subject_the_question_names_that_labels_another_row_is_not_the_total():
    other = passage("p2", 11, ["Client Computing 5,000 4,100 9,800 8,000", "Mobileye 530 450 1,442 1,304"])
    a = answer(q("What was Mobileye's net revenue in Q2 2024?", "amount", ["Mobileye", "net revenue", "Q2 2024"]),
               [passage("p1", 30, SEGMENTS), other])
    assert a.value != "$9,000 million"


def test_a_quantity_the_question_defines_by_a_formula_is_computed_not_read():
    a = answer(q("Gross margin rate is defined as gross margin / net revenue. What was it in Q2 2024?", "amount",
                 ["gross margin rate", "Q2 2024"]), [passage("p1", 30, SEGMENTS)])
    assert not a.answer_found and "formula" in a.caveats[0] and a.rule == "abstain.computed"
    assert "would be computed from the printed values" in a.caveats[0]  # the inputs, each with its line


def test_a_row_naming_the_segment_but_not_the_metric_is_not_read():
    lines = ["Three Months Ended", "March 31,", "2023 2024", "(in millions)", "Net sales:", "North America $ 600 $ 650",
             "Cloud 180 210", "Consolidated $ 780 $ 860"]
    a = answer(q("What was Cloud operating income for Q1 2024?", "amount", ["Cloud", "operating income", "Q1 2024"]),
               [passage("p1", 7, lines)])
    assert a.value != "210 million"


def test_a_list_cut_off_by_the_end_of_the_passage_is_not_counted():
    a = answer(q("How many learning outcomes should be answered in unit 8?", "amount",
                 ["learning outcomes", "outcomes", "unit 8"]), [passage("c", 5, OUTCOMES[:12], start=260)])
    assert not a.answer_found and a.value is None


def test_a_list_under_a_sentence_that_does_not_announce_it_is_not_counted():
    lines = ["Most parts of the kit are recyclable.", "• Base unit", "• Power adaptor", "• Remote control",
             "Dispose of batteries separately."]
    a = answer(q("How many parts are included in the kit?", "amount", ["parts", "kit"]),
               [passage("k", 3, lines, start=40)])
    assert not a.answer_found


def test_a_word_of_the_counted_phrase_that_no_heading_names_does_not_identify_the_list():
    lines = ["Remote control", "The red light shows the remote is on.", "Remote buttons", "1 Power", "2 Volume",
             "3 Channel", "Batteries:", "Use two AA batteries."]
    a = answer(q("How many red remote buttons can the TV be set to?", "amount",
                 ["red remote buttons", "buttons", "tv", "set"]), [passage("r", 4, lines, start=10)])
    assert not a.answer_found


def test_a_list_whose_marks_stand_alone_above_their_text_is_open_until_it_visibly_ends():
    lines = ["Location and function of parts", "1.", "Tactile dot", "There is a dot on the left unit.", "2.",
             "Built-in antenna", "3.", "Headband"]
    a = answer(q("How many parts of the headset are introduced?", "amount", ["parts", "headset", "introduced"]),
               [passage("h", 10, lines, start=220, section="Location and function of parts")])
    assert not a.answer_found  # item 3's text is the passage's last line: more items may follow


def test_two_counted_nouns_are_not_answered_with_one_list():
    lines = ["Strengths and weaknesses:", "• Clear goals", "• Strong team", "• Few funds", "Next steps",
             "We will report in May."]
    a = answer(q("How many strengths and weaknesses are mentioned?", "amount",
                 ["strengths", "weaknesses", "mentioned"]), [passage("s", 2, lines, start=10)])
    assert not a.answer_found


def test_a_count_of_a_unit_of_measure_is_not_read_from_a_list():
    lines = ["Grams of coffee:", "• Use fresh beans", "• Grind just before brewing", "Cleaning", "Rinse daily."]
    a = answer(q("How many grams of coffee does the filter take?", "amount", ["grams", "coffee", "filter"]),
               [passage("g", 2, lines, start=10)])
    assert not a.answer_found


def test_a_date_in_the_footer_is_not_the_answer():
    passages = [page(33, ["5.5 Setting watch faces", "Open the app and touch Devices, then Watch faces."], 1230),
                page(9, ["Touch and hold the home screen to set the watch face."], 415)]
    question = q("What is the time on the gallery screenshot when setting watch faces?", "date",
                 ["time", "gallery screenshot", "setting", "watch faces"])
    for regime, shown in (("batch", passages), ("sequential", passages[:1])):
        a = answer(question, shown, regime)
        assert (a.value, a.answer_found) == (None, False), regime


COVER = ["Annual Safety Report", "Revised March 2019", "Produced by:", "Harbor Transit Authority", "Page 1"]


def test_a_year_the_question_names_that_the_passage_does_not_is_another_edition():
    a = answer(q("Who produced the report that was revised in March 2021?", "entity", ["produced", "revised", "2021"]),
               [passage("p1", 0, COVER)])
    assert not a.answer_found and "2021" in a.caveats[0]


def test_a_heading_over_a_list_is_not_a_label_of_its_first_item():
    a = answer(q("What is the title of the essay given in week 3?", "entity", ["title", "essay", "week 3"]),
               [passage("p1", 4, ["Week 3 Tasks:", "• Quiz on chapters 1 and 2", "• Essay on river ecology",
                                  "Week 4 Tasks:"])])
    assert a.value != "• Quiz on chapters 1 and 2"


ROWS = ["Region Name Code", "Northshore (NS)", "1. Lakeside North LK01", "2. Lakeside South LK02",
        "Westvale (WV)", "1. Old Town WV01"]


def test_a_code_on_no_row_keys_nothing():
    a = answer(q("What's the region name for code LK09?", "entity", ["region name", "LK09"]), [passage("p1", 3, ROWS)])
    assert not a.answer_found


COURSES = ["Course Length", "Foundations of", "Field Surveying 6 weeks", "Advanced Mapping 5 months",
           "Site Safety Basics 3 days", "All courses are taught in English."]


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


def test_a_step_order_with_one_step_missing_is_not_answered():
    a = answer(q('Is "Installing the filter" the step before or after "Descaling"?', "text",
                 ["installing filter", "descaling"]), STEPS)
    assert a.value not in ("before", "after")


LEASE = passage("p1", 4, ["Late payment", "If the tenant pays the monthly rent after the fifth day, a late fee of $50 is",
                          "added to the next invoice. Rent is due on the first day of each month."])


def test_what_if_under_a_condition_no_sentence_states_finds_no_consequence():
    a = answer(q("What happens if the landlord sells the building?", "text", ["landlord", "sells", "building"]),
               [LEASE])
    assert not a.answer_found


SAFETY = passage("p1", 6, ["Before first use, read these instructions.", "• Keep the unit away from water.",
                           "• Operate the unit on 100-240 V AC only.", "• Do not open the housing.",
                           "Storage", "Store the unit in a dry place when it is not in use for a long time."],
                 section="Manual > Safety instructions")


def test_an_nth_item_past_the_end_of_the_section_is_not_answered():
    a = answer(q("What is the fifth bullet point of the safety instructions?", "text", ["safety instructions"]),
               [SAFETY])
    assert not a.answer_found


def test_a_period_notation_or_a_code_not_looked_up_keys_no_row():
    rows = ["Segment results", "Q1 Highlights North America", "Revenue grew in every region."]
    a = answer(q("Which segment led growth in Q1?", "entity", ["segment", "growth", "Q1"]), [passage("p1", 3, rows)])
    assert a.value != "Highlights North America"


def test_what_is_not_a_count():
    cases = {"3": "How many items are included in the package?",  # a number alone on its line
             "We select 1-5 examples from the training set.": "How many examples are selected from the training set?",
             "We use 50- and 100-shot datasets.": "How many datasets are used?"}
    for line, text in cases.items():
        p = passage_at("n", 2, ["Package contents", line] if line == "3" else [line])
        a = answer(q(text, "amount", [w for w in text.lower().strip("?").split()[2:]]), [p])
        assert not a.answer_found, (line, a.value)


def test_a_number_scoped_to_a_year_or_a_code_needs_a_passage_that_names_it():
    prose = passage_at("y", 4, ["The hotel chain together earned Rs. 2444 crores in dividends over the decade."])
    a = answer(q("What is the total dividend of the hotel chain between 1999 to 2000?", "amount",
                 ["dividend", "hotel chain", "1999", "2000"]), [prose])
    assert not a.answer_found and "1999" in a.caveats[0]
    gains = passage_at("g", 8, ["The performance of the filter-then-rerank methods is 2.1% higher on the average dataset."])
    a = answer(q("What is the performance of filter-then-rerank methods on the TACREV dataset?", "amount",
                 ["performance", "filter-then-rerank", "methods", "tacrev", "dataset"]), [gains])
    assert not a.answer_found and "TACREV" in a.caveats[0]


def test_an_identifier_question_is_not_answered_with_a_name():
    p = passage_at("i", 1, ["The Care Quality Commission inspects the operation of the Deprivation of Liberty Safeguards."])
    a = answer(q("What is the telephone no for the Care Quality Commission?", "text",
                 ["telephone", "care quality commission"]), [p])
    assert not a.answer_found


# -- issue #28: a value of the wrong kind, period or scope is not shown ---------------------------------------------
RESULTS = passage("r1", 12, [
    "Results of operations",
    "Total net sales include $3.3 billion of revenue recognized in the three months ended July 1, 2023.",
    "Cost of revenue increased $850 million or 6% driven by growth in cloud services.",
    "Cloud revenue was $31.8 billion and $25.7 billion for the three months ended September 30, 2023 and 2022,",
    "respectively.",
    "Net losses were $1.1 billion in the first nine months of 2022 ($28 million net losses in the third quarter of",
    "2021).",
    "Example Corp. | Q3 2023 Form 10-Q | 17",
])


def test_a_question_that_asks_an_explanation_is_not_answered_with_a_printed_value():
    a = answer(q("How does the discussion of compensation relate to the reported cost of revenue?", "amount",
                 ["compensation", "cost of revenue"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.explanation" and a.evidence
    a = answer(q("In Q3 2023, analyze the relationship between cloud revenue and currency risk.", "amount",
                 ["cloud revenue", "currency risk"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.explanation"


def test_a_value_stated_as_a_change_does_not_answer_a_level():
    a = answer(q("What was the cost of revenue?", "amount", ["cost of revenue"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.change" and "'increased'" in a.caveats[0]
    # asked as a change, the same sentence answers
    a = answer(q("By how much did the cost of revenue increase?", "amount", ["cost of revenue", "increase"]),
               [RESULTS])
    assert a.rule != "abstain.change"


def test_a_sentence_value_answers_a_period_only_when_it_names_that_period_next_to_it():
    # the latest quarter cannot be told from one sentence
    a = answer(q("What was the cloud revenue in the latest quarter?", "amount", ["cloud revenue"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.period"
    # the third quarter of 2022 is asked: the $1.1 billion is stated for nine months, the $28 million for 2021
    a = answer(q("What were the net losses in the third quarter of 2022?", "amount", ["net losses"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.period" and "'nine months'" in a.caveats[0]
    year = passage("r2", 3, ["Net losses were $28 million in the third quarter of 2021, against a profit in 2022."])
    a = answer(q("What were the net losses in the third quarter of 2022?", "amount", ["net losses"]), [year])
    assert not a.answer_found and a.rule == "abstain.period" and "2021" in a.caveats[0]


def test_values_paired_by_position_are_not_told_apart():
    a = answer(q("What was the cloud revenue for the three months ended September 30, 2023?", "amount",
                 ["cloud revenue", "three months"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.paired"


def test_a_bare_figure_is_not_money_outside_a_table_cell():
    # the page footer's number stands next to the words of the question; it states no currency
    a = answer(q("How much money did Example Corp. report in its Form 10-Q?", "amount",
                 ["example corp", "form 10-q"]), [RESULTS])
    assert not a.answer_found


def test_a_multi_part_question_that_asks_an_explanation_too_is_not_answered_with_one_value():
    a = answer(q("How much was recognized from deferred revenue, and what were the strategic priorities?", "amount",
                 ["deferred revenue", "strategic priorities"], "multi_part"), [RESULTS])
    assert not a.answer_found


def test_a_computed_value_is_not_answered_and_the_caveat_names_its_inputs():
    a = answer(q("What is the ratio of the cost of revenue increase to total net sales?", "amount",
                 ["cost of revenue", "total net sales"]), [RESULTS])
    assert not a.answer_found and a.rule == "abstain.computed"
    assert "computed value ('ratio')" in a.caveats[0] and "it would be computed from the printed values" in a.caveats[0]
    assert "$850 million" in a.caveats[0] or "$3.3 billion" in a.caveats[0]


def test_a_value_of_the_group_a_question_does_not_ask_is_not_its_answer():
    survey = passage("s1", 5, ["Internet use", "Today 46% of seniors go online, up from 14% in 2000."])
    a = answer(q("What is the percentage of seniors who do not go online?", "amount",
                 ["percentage", "seniors", "online"]), [survey])
    assert not a.answer_found and a.rule == "abstain.negation"
    a = answer(q("What is the percentage of seniors who go online?", "amount", ["percentage", "seniors", "online"]),
               [survey])
    assert a.value == "46%"


def test_a_list_of_questions_is_not_a_list_answer():
    unit = passage("u1", 2, ["Unit 1 essential questions:", "• Why do people start businesses?",
                             "• What do successful owners share?", "• How do small firms grow?"])
    a = answer(q("What are the names of the units?", "list", ["names", "units"]), [unit])
    assert not a.answer_found


def test_the_second_of_two_values_paired_by_position_is_not_told_apart_either():
    line = PLine(0, {}, 5, 8, "we recorded an inventory provision of approximately $343 million and $570 million, "
                              "respectively.")
    assert "pairs '$570 million'" in paired_by_position(Pick("$570 million", [line], 1.0, 1.0, 2, "currency"))
    one = passage("i2", 8, ["In the second quarter of fiscal 2023 we recorded an inventory provision of $570 million."])
    a = answer(q("What was the inventory provision in the second quarter of fiscal 2023?", "amount",
                 ["inventory provision", "second quarter"]), [one])
    assert a.value == "$570 million"
