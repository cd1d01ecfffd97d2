"""Table cells (issue #15): the value at the row and the column a question names in a table printed as text lines,
answered only when both are identified without doubt; on hand-made passages."""

from __future__ import annotations

import pytest

from tasks.generate.cells import is_header, parse_row, question_period
from tests.test_reader_examples import answer, passage, q

COSTS = ["Operating costs for the periods were as follows (dollars in millions):",
         "Three Months Ended Nine Months Ended", "March 30,", "2024", "March 31,", "2023", "March 30,", "2024",
         "March 31,", "2023",
         "Research and development $ 1,210 $ 1,105 $ 3,480 $ 3,020",
         "Percentage of total revenue 9 % 8 % 9 % 8 %",
         "Sales and marketing $ 950 $ 990 $ 2,700 $ 2,810",
         "Total operating costs $ 2,160 $ 2,095 $ 6,180 $ 5,830"]


@pytest.mark.parametrize("text,primary,value", [
    ("What was the R&D expense for Q3 FY2024, in USD millions?", ["R&D expense", "Q3 FY2024"], "$1,210 million"),
    ("How much was spent on research and development in the nine months of 2023?",
     ["research and development", "nine months", "2023"], "$3,020 million"),
    ("What were sales and marketing costs for 1Q23?", ["sales and marketing", "costs", "1Q23"], "$990 million"),
    # a fiscal year is named after the year it ends in: FY2025's quarter may end in 2024
    ("What was the sales and marketing expense in FY2025 Q3?", ["sales and marketing", "FY2025 Q3"], "$950 million"),
])
def test_the_cell_at_the_named_row_and_column(text, primary, value):
    a = answer(q(text, "amount", primary), [passage("p1", 4, COSTS)])
    assert (a.answer_found, a.value) == (True, value)


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


def test_a_row_under_a_block_heading_takes_the_heading_as_its_label():
    lines = ["Three Months Ended", "2024 2023", "(in millions)", "Cloud", "Net sales $ 500 $ 400",
             "Operating income $ 120 $ 90", "Devices", "Net sales $ 300 $ 350", "Operating income $ 20 $ 35"]
    a = answer(q("What was the Cloud segment operating income in Q1 2024?", "amount",
                 ["cloud", "segment", "operating income", "Q1 2024"]), [passage("p1", 7, lines)])
    assert (a.answer_found, a.value) == (True, "$120 million")


def test_change_columns_printed_before_the_years_leave_the_columns_unknown():
    lines = ["(In millions, except percentages)", "Three Months Ended", "September 30,", "Percentage", "Change",
             "2024 2023", "Research and development $ 700 $ 600 17%"]
    a = answer(q("What was the research and development expense in Q1 2024?", "amount",
                 ["research and development", "expense", "Q1 2024"]), [passage("p1", 3, lines)])
    assert a.value != "$600 million"


def test_rows_headers_and_periods_parse():
    assert parse_row("Operating income (loss) $ (911) $ (2,466) $ 703 $ (5,518)") == (
        "Operating income (loss)", ["$(911)", "$(2,466)", "$703", "$(5,518)"])
    assert parse_row("The revenue grew by 5 percent in 2023") is None
    assert is_header("June 25,") and is_header("Three Months Ended Nine Months Ended") and is_header("($ in millions)")
    assert not is_header("Research and development $ 6,797")
    assert question_period("What was it in Q32023?") == (3, 2023, False)
    assert question_period("for FY23Q1") == (3, 2023, True)
    assert question_period("for H1 FY23") == (6, 2023, True)
    assert question_period("from 2022 to 2023") is None


SEGMENTS = ["Q2 2024 Q2 2023 YTD 2024 YTD 2023", "(In Millions) Amount", "% of Net", "Revenue Amount", "% of Net",
            "Revenue Amount", "% of Net", "Revenue Amount", "% of Net", "Revenue",
            "Net revenue $ 9,000 100.0 % $ 8,000 100.0 % $ 17,500 100.0 % $ 16,000 100.0 %",
            "Gross margin 4,050 45.0 % 3,200 40.0 % 7,700 44.0 % 6,400 40.0 %"]


@pytest.mark.parametrize("text,primary,shape,value", [
    ("What was the gross margin in Q2 2024, in USD millions?", ["gross margin", "Q2 2024"], "amount", "4,050 million"),
    ("What was the gross margin percentage in YTD 2023?", ["gross margin", "percentage", "YTD 2023"], "amount", "40.0%"),
])
def test_columns_named_by_period_may_span_an_amount_and_its_share(text, primary, shape, value):
    a = answer(q(text, shape, primary), [passage("p1", 30, SEGMENTS)])
    assert (a.answer_found, a.value) == (True, value)


def test_a_subject_the_question_names_that_labels_another_row_is_not_the_total():
    other = passage("p2", 11, ["Client Computing 5,000 4,100 9,800 8,000", "Mobileye 530 450 1,442 1,304"])
    a = answer(q("What was Mobileye's net revenue in Q2 2024?", "amount", ["Mobileye", "net revenue", "Q2 2024"]),
               [passage("p1", 30, SEGMENTS), other])
    assert a.value != "$9,000 million"


def test_a_quantity_the_question_defines_by_a_formula_is_computed_not_read():
    a = answer(q("Gross margin rate is defined as gross margin / net revenue. What was it in Q2 2024?", "amount",
                 ["gross margin rate", "Q2 2024"]), [passage("p1", 30, SEGMENTS)])
    assert not a.answer_found and "formula" in a.caveats[0]


def test_a_row_naming_the_segment_but_not_the_metric_is_not_read():
    lines = ["Three Months Ended", "March 31,", "2023 2024", "(in millions)", "Net sales:", "North America $ 600 $ 650",
             "Cloud 180 210", "Consolidated $ 780 $ 860"]
    a = answer(q("What was Cloud operating income for Q1 2024?", "amount", ["Cloud", "operating income", "Q1 2024"]),
               [passage("p1", 7, lines)])
    assert a.value != "210 million"


def test_a_total_row_under_the_table_title_and_an_acronym_of_a_label_prefix():
    table = ["Revenue by Segment", "Three Months Ended", "June 30, 2024 June 30, 2023", "($ in millions)",
             "Hardware $ 700 $ 650", "Software 300 250", "Total $ 1,000 $ 900"]
    a = answer(q("What was the total revenue in Q2 2024?", "amount", ["total revenue", "Q2 2024"]),
               [passage("p1", 9, table)])
    assert (a.answer_found, a.value) == (True, "$1,000 million")
    sheet = ["Six Months Ended", "June 30, 2024 June 30, 2023", "(In millions)",
             "Property, plant and equipment, net 5,100 4,800", "Goodwill 900 900"]
    a = answer(q("What was net PP&E in H1 2024?", "amount", ["net", "PP&E", "H1 2024"]), [passage("p1", 3, sheet)])
    assert (a.answer_found, a.value) == (True, "5,100 million")


def test_a_column_ending_in_another_month_than_the_calendar_quarter_asked_is_another_period():
    lines = ["Three Months Ended", "March 31,", "2023", "March 31,", "2024", "(in millions)",
             "Cloud operating income $ 180 $ 210"]
    a = answer(q("What was Cloud operating income for Q2 2024?", "amount", ["cloud", "operating income", "Q2 2024"]),
               [passage("p1", 7, lines)])
    assert a.value != "$210 million"
    a = answer(q("What was Cloud operating income for Q1 2024?", "amount", ["cloud", "operating income", "Q1 2024"]),
               [passage("p1", 7, lines)])
    assert (a.answer_found, a.value) == (True, "$210 million")
