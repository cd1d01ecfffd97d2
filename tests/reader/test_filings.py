"""Values from periodic statements (issue #38): the measure the row or sentence names, a table's negatives and its
per-share rows, a balance at a named date, changes read or computed, a formula the question defines computed from
one cell per operand; each rule with a case where the reader must stay silent or give another value."""

from __future__ import annotations

from tasks.generate.measure import measure_words, unnamed
from tasks.generate.period import fiscal_close
from tests.reader.kit import answer, passage, q

STATEMENT = [
    "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)",
    "(In millions, except per share amounts)",
    "Three Months Ended Six Months Ended",
    "April 1,", "2023", "March 26,", "2022", "April 1,", "2023", "March 26,", "2022",
    "Total net sales $ 94,836 $ 97,278 $ 211,990 $ 221,223",
    "Operating income $ 28,318 $ 29,979 $ 64,334 $ 71,677",
    "Other income/(expense), net $ (265) $ 160 $ (658) $ 87",
    "Net income $ 24,160 $ 25,010 $ 54,158 $ 59,640",
    "Diluted earnings per share $ 1.52 $ 1.52 $ 3.41 $ 3.62",
]
DEFERRED = passage("s1", 9, [
    "Total net sales include $3.5 billion of revenue recognized in the three months ended April 1, 2023 that was",
    "included in deferred revenue as of December 31, 2022.",
])
BALANCE = [
    "CONDENSED CONSOLIDATED BALANCE SHEETS (Unaudited)", "(In millions)",
    "April 30, 2023 January 29, 2023",
    "Inventories $ 4,611 $ 5,159",
    "Total current assets $ 24,883 $ 23,073",
    "Total current liabilities $ 6,925 $ 6,563",
]


def ask(text: str, primary: list[str], passages, shape: str = "amount"):
    return answer(q(text, shape, primary), passages)


def test_the_measure_is_what_the_question_asks_apart_from_whose_when_and_in_what_unit():
    assert measure_words("What operating income did Apple's Americas segment report for the three months ended "
                         "December 31, 2022?") == ["operat", "incom", "america"]
    assert measure_words("Assume that you are an analyst covering Apple. What was the R&D expense for Q3 FY2022, "
                         "in $M?") == ["r&d"]  # the role, the period, the unit and a generic noun aside
    assert "cost" in measure_words("What was the total cost of sales for the first nine months of fiscal 2023?")
    assert unnamed(["r&d"], "Research and development") == []  # an acronym names the words it spells
    assert unnamed(["network", "edg", "revenu"], "NEX revenue increased 14%", "Network and Edge (NEX) revenue") == []


def test_a_sentence_that_names_the_period_but_another_measure_is_not_the_answer():
    a = ask("What was the operating income for the three months ended April 1, 2023?",
            ["operating income", "three months", "April 1, 2023"], [DEFERRED])
    assert not a.answer_found and a.rule == "abstain.measure"


def test_the_row_of_the_measure_and_the_column_of_the_period():
    a = ask("What was the operating income for the three months ended April 1, 2023?",
            ["operating income", "three months", "April 1, 2023"], [DEFERRED, passage("t1", 4, STATEMENT)])
    assert (a.answer_found, a.value, a.rule) == (True, "$28,318 million", "value.cell")


def test_a_negative_in_parentheses_after_the_dollar_sign_stays_negative():
    a = ask("What was other income/(expense), net for the three months ended April 1, 2023?",
            ["other income", "expense", "net", "April 1, 2023"], [passage("t1", 4, STATEMENT)])
    assert a.value == "-$265 million"


def test_a_per_share_row_is_in_dollars_and_only_a_per_share_question_reads_it():
    a = ask("What were diluted earnings per share for the six months ended April 1, 2023?",
            ["diluted earnings per share", "six months"], [passage("t1", 4, STATEMENT)])
    assert a.value == "$3.41"
    a = ask("What were the earnings for the six months ended April 1, 2023?", ["earnings", "six months"],
            [passage("t1", 4, STATEMENT)])
    assert a.value != "$3.41 million"


def test_a_balance_at_a_named_date_reads_the_column_of_that_date():
    # both columns are of 2023: the month of the date asked tells them apart; one word names the measure whole
    a = ask("What was the value of inventories as of April 30, 2023?", ["inventories", "April 30, 2023"],
            [passage("b1", 3, BALANCE)])
    assert a.value == "$4,611 million"
    a = ask("What were inventories as of January 29, 2023?", ["inventories", "January 29, 2023"],
            [passage("b1", 3, BALANCE)])
    assert a.value == "$5,159 million"


def test_a_change_is_read_where_stated_else_computed_from_the_two_columns():
    change_table = ["(dollars in millions)", "Three Months Ended", "April 1,", "2023", "March 26,", "2022", "Change",
                    "Total net sales $ 94,836 $ 97,278 (3)%"]
    a = ask("By what percentage did total net sales change in the quarter ended April 1, 2023 compared with the "
            "quarter ended March 26, 2022?", ["total net sales", "change"], [passage("c1", 17, change_table)])
    assert (a.value, a.rule) == ("-3%", "change.cell")
    a = ask("By what percentage did net income change in the six months ended April 1, 2023 compared with the six "
            "months ended March 26, 2022?", ["net income", "change"], [passage("t1", 4, STATEMENT)])
    assert (a.value, a.rule) == ("-9.2%", "computed.growth")
    assert "54,158" in a.caveats[0] and "59,640" in a.caveats[0]  # its inputs, cited
    stated = passage("m1", 20, ["In Q3 2022, total revenue was down 20%, as CCG revenue decreased 17%, DCAI",
                                "revenue decreased 27%, and NEX revenue increased 14% from Q3 2021."])
    a = ask("By what percentage did Network and Edge (NEX) revenue change in Q3 2022 compared with Q3 2021?",
            ["NEX", "revenue", "change"], [stated])
    assert (a.value, a.rule) == ("14%", "change.sentence")  # the change stated of its own subject, not the first
    a = ask("By what percentage did Mobileye revenue change in Q3 2022 compared with Q3 2021?",
            ["Mobileye", "revenue", "change"], [stated])
    assert not a.answer_found


def test_a_formula_the_question_defines_is_computed_from_one_cell_per_operand():
    a = ask("What was the net profit margin (net income divided by total net sales) for the three months ended "
            "April 1, 2023?", ["net profit margin", "three months"], [passage("t1", 4, STATEMENT)], "amount")
    assert (a.value, a.rule) == ("25.5%", "computed.formula")
    a = ask("What was the current ratio (total current assets divided by total current liabilities) as of "
            "April 30, 2023?", ["current ratio"], [passage("b1", 3, BALANCE)])
    assert a.value == "3.59"
    a = ask("What was the combined figure (operating income plus research spending) for the three months ended "
            "April 1, 2023?", ["operating income", "research"], [passage("t1", 4, STATEMENT)])
    assert a.rule != "computed.formula"  # an operand no row names: nothing computed


def test_a_yes_no_about_a_dated_event_reads_the_sentence_of_that_year():
    lines = ["We repurchased 18.6 million shares of our common stock for $2.7 billion during the three months",
             "ended March 31, 2022 under these programs.",
             "There were no repurchases of our common stock during the three months ended March 31, 2023."]
    a = ask("Did Amazon repurchase any shares of its common stock during the quarter ended March 31, 2023?",
            ["repurchase", "shares", "common stock", "March 31, 2023"], [passage("y1", 30, lines)], "boolean")
    assert a.value == "No"


def test_a_header_with_a_semicolon_and_a_share_count_row_under_per_share():
    lines = ["Consolidated Condensed Statements of Income", "Three Months Ended Nine Months Ended",
             "(In Millions, Except Per Share Amounts; Unaudited) Sep 30, 2023 Oct 1, 2022 Sep 30, 2023 Oct 1, 2022",
             "Net revenue $ 14,158 $ 15,338 $ 38,822 $ 49,012",
             "Earnings per share:", "Diluted $ 0.07 $ (0.02) $ (0.23) $ 1.94",
             "Shares used in computing earnings per share:", "Diluted 4,209 4,115 4,191 4,110"]
    a = ask("What was the total net revenue for the nine months ended September 30, 2023?",
            ["net revenue", "nine months"], [passage("i1", 4, lines)])
    assert a.value == "$38,822 million"
    a = ask("What were diluted earnings per share for the nine months ended September 30, 2023?",
            ["diluted earnings per share", "nine months"], [passage("i1", 4, lines)])
    assert a.value == "-$0.23"  # the per-share row, not the share count printed under "per share"


PRODUCTS = ["Net sales by products and services for the six months ended April 1, 2023 (in millions):", "Six Months Ended", "April 1,", "2023", "March 26,", "2022",
            "iPhone $ 117,109 $ 122,198", "Mac 14,903 18,954", "Services 41,673 39,907",
            "Total net sales $ 211,990 $ 221,223",
            "Other income/(expense):", "Interest income 1,000 900", "Other, net (74) (145)",
            "Total other income (expense), net 926 755"]


def test_a_row_under_a_total_is_a_part_of_it_for_an_operand_never_the_total_asked():
    a = ask("What share of total net sales for the six months ended April 1, 2023 came from iPhone (iPhone net "
            "sales divided by total net sales)?", ["iPhone", "net sales"], [passage("p1", 9, PRODUCTS)])
    assert (a.value, a.rule) == ("55.2%", "computed.formula")
    a = ask("What was net income for the six months ended April 1, 2023?", ["net income", "six months"],
            [passage("p1", 9, PRODUCTS)])
    assert a.value != "-$74 million" and a.value != "-74 million"


def test_one_figure_printed_with_and_without_its_currency_in_two_tables_is_one_value():
    note = ["Note 3: Earnings", "Three Months Ended", "(In Millions) Sep 30, 2023 Oct 1, 2022",
            "Net income attributable to Intel 297 1,019"]
    statement = ["Statements of Income", "Three Months Ended", "(In Millions) Sep 30, 2023 Oct 1, 2022",
                 "Net income attributable to Intel $ 297 $ 1,019"]
    a = ask("What was the net income attributable to Intel for the third quarter of 2023?",
            ["net income attributable to Intel", "third quarter", "2023"],
            [passage("n1", 12, note), passage("s1", 4, statement)])
    assert a.value == "$297 million"


def test_the_one_who_carries_a_figure_is_whose_it_is_not_its_measure():
    assert measure_words("How much accounts payable did Apple carry on its balance sheet as of April 1, 2023?") == \
        ["account", "payabl"]
    assert "mobiley" in measure_words("By what percentage did Mobileye revenue change in Q3 2022?")


def test_an_other_row_is_never_an_operand_the_formula_does_not_name():
    """'Other income/(expense), net' names both words of 'net income': without the statement's own 'Net income'
    row, nothing is computed (it was: 61 / 134,383 as a 0.0% margin)."""
    rows = [line for line in STATEMENT if not line.startswith("Net income")]
    a = ask("What was the net profit margin (net income divided by total net sales) for the three months ended "
            "April 1, 2023?", ["net profit margin", "three months"], [passage("t1", 4, rows)])
    assert a.rule != "computed.formula" and "265" not in (a.value or "")
    a = ask("What was other income as a share of sales (other income divided by total net sales) for the three "
            "months ended April 1, 2023?", ["other income"], [passage("t1", 4, rows)])
    assert (a.value, a.rule) == ("-0.3%", "computed.formula")  # an operand that says 'other' reads that row


def test_a_sentence_that_names_no_part_of_the_year_states_the_quarter_not_the_nine_months():
    quarter = passage("g1", 30, ["Gaming revenue was up 81% from a year ago and up 15% sequentially. Strong growth",
                                 "reflects higher sell-in to partners."])
    a = ask("By what percentage did Gaming revenue grow in the nine months ended October 29, 2023 compared with the "
            "nine months ended October 30, 2022?", ["Gaming", "revenue", "grow"], [quarter])
    assert not a.answer_found
    nine = passage("g2", 31, ["For the first nine months of fiscal year 2024, Gaming revenue was up 5% from a year",
                              "ago."])
    a = ask("By what percentage did Gaming revenue grow in the nine months ended October 29, 2023 compared with the "
            "nine months ended October 30, 2022?", ["Gaming", "revenue", "grow"], [nine])
    assert (a.value, a.rule) == ("5%", "change.sentence")  # the sentence that names the nine months is read


def test_a_row_of_two_names_joined_is_not_the_figure_of_one_of_them():
    segments = ["Revenue by Reportable Segments", "Three Months Ended Nine Months Ended", "October", "29,", "2023",
                "October", "30,", "2022", "$", "Change", "%", "Change", "October", "29,", "2023", "October", "30,",
                "2022", "$", "Change", "%", "Change", "($ in millions)",
                "Compute & Networking $ 14,645 $ 3,816 $ 10,829 284 % $ 29,507 $ 11,395 $ 18,112 159 %",
                "Graphics 3,475 2,115 1,360 64 % 9,312 9,528 (216) (2)%"]
    a = ask("By what percentage did Networking revenue change in the third quarter of fiscal 2024 compared with a "
            "year earlier?", ["Networking", "revenue", "change"], [passage("n1", 29, segments)])
    assert not a.answer_found  # the joined segment's 284% is not Networking's
    a = ask("By what percentage did Compute & Networking revenue change in the third quarter of fiscal 2024 "
            "compared with a year earlier?", ["Compute", "Networking", "revenue", "change"],
            [passage("n1", 29, segments)])
    assert (a.value, a.rule) == ("284%", "change.cell")


def test_a_footnote_marker_after_a_label_is_no_cell():
    table = ["Net sales by groups of similar products and services is as follows (in millions):",
             "Three Months Ended", "March 31,", "2022 2023", "Net Sales:", "Online stores (1) $ 51,129 $ 51,096",
             "Third-party seller services (3) 25,335 29,820", "Subscription services (4) 8,410 9,657"]
    a = ask("What were third-party seller services net sales in Q1 2023?", ["third-party seller services", "Q1 2023"],
            [passage("t1", 20, table)])
    assert (a.value, a.rule) == ("29,820 million", "value.cell")
    # a number in parentheses where the header has a column for it is a negative cell, not a marker
    loss = ["Three Months Ended", "March 31,", "2021 2022 2023", "Other expense (3) 5 (7)"]
    a = ask("What was other expense in Q1 2022?", ["other expense", "Q1 2022"], [passage("t2", 20, loss)])
    assert a.value == "5"


def test_rows_under_a_heading_that_ends_in_a_colon_keep_their_header():
    flows = ["(In millions) (Unaudited)", "Three Months Ended September 30, 2023 2022", "Operations",
             "Net income $ 22,291 $ 17,556", "Adjustments to reconcile net income to net cash from operations:",
             "Depreciation, amortization, and other 3,921 2,790", "Net cash from operations 30,583 23,198"]
    a = ask("What was net cash from operations in the quarter ended September 30, 2023?",
            ["net cash from operations", "quarter"], [passage("c1", 5, flows)])
    assert (a.value, a.rule) == ("30,583 million", "value.cell")
    prose = flows[:4] + ["Adjustments to reconcile our net income for the period to the net cash we had from "
                         "operations, as described in Note 4"] + flows[5:]
    a = ask("What was net cash from operations in the quarter ended September 30, 2023?",
            ["net cash from operations", "quarter"], [passage("c1", 5, prose)])
    assert a.rule != "value.cell"  # prose between the row and the header: not its header


def test_the_date_in_brackets_names_the_column_of_a_fiscal_period():
    eps = ["Earnings Per Share", "Three Months Ended September 30, 2022 2021", "Basic (A/B) $ 2.35 $ 2.73"]
    a = ask("What was basic earnings per share for the first quarter of fiscal year 2023 (quarter ended September "
            "30, 2022)?", ["basic earnings per share", "first quarter"], [passage("e1", 10, eps)])
    assert (a.value, a.rule) == ("$2.35", "value.cell")


def test_an_owners_share_of_another_measure_does_not_make_the_question_about_another_row():
    income = ["Consolidated Condensed Statements of Income", "Three Months Ended Nine Months Ended",
              "(In Millions) Sep 30, 2023 Oct 1, 2022 Sep 30, 2023 Oct 1, 2022",
              "Net revenue $ 14,158 $ 15,338 $ 38,822 $ 49,012",
              "Net income (loss) attributable to Intel $ 297 $ 1,019 $ (980) $ 8,678"]
    a = ask("What was Intel's total net revenue for the first nine months of 2023 (nine months ended September 30, "
            "2023)?", ["Intel", "net revenue", "nine months"], [passage("i1", 5, income)])
    assert (a.value, a.rule) == ("$38,822 million", "value.cell")
    segments = income[:3] + ["Mobileye 530 450 1,500 1,350"]
    a = ask("What was Mobileye's net revenue for the first nine months of 2023?", ["Mobileye", "net revenue"],
            [passage("i1", 5, segments)])
    assert a.value != "$38,822 million"  # a name another row carries is that row's subject


def test_one_figure_under_its_segment_and_under_its_measure_is_one_subject():
    by_segment = ["(in millions)", "Three Months Ended", "September 30,", "2021 2022", "International",
                  "Net sales $ 29,145 $ 27,720", "Operating income (loss) $ (911) $ (2,466)"]
    by_measure = ["(in millions)", "Three Months Ended", "September 30,", "2021 2022", "Operating Income (Loss):",
                  "North America $ 880 $ (412)", "International (911) (2,466)"]
    a = ask("What was the operating income (loss) of the International segment in the third quarter of 2022?",
            ["operating income (loss)", "International", "third quarter"],
            [passage("s1", 18, by_segment), passage("s2", 24, by_measure)])
    assert (a.value, a.rule) == ("-$2,466 million", "value.cell")
    other = by_measure[:-1] + ["International (900) (2,400)"]  # two different values: no one figure
    a = ask("What was the operating income (loss) of the International segment in the third quarter of 2022?",
            ["operating income (loss)", "International", "third quarter"],
            [passage("s1", 18, by_segment), passage("s2", 24, other)])
    assert a.rule != "value.cell"


def test_an_empty_percent_cell_keeps_its_row_in_the_table():
    recon = ["Three Months Ended", "(In Millions, Except Per Share Amounts) Oct 1, 2022 Sep 25, 2021",
             "Gross margin percentage 42.6 % 56.0 %", "Acquisition-related adjustments 2.2 % 1.7 %",
             "NAND memory business — % 0.1 %", "Non-GAAP gross margin percentage 45.9 % 58.3 %"]
    a = ask("What was the non-GAAP gross margin percentage for the third quarter of 2022?",
            ["non-GAAP gross margin percentage", "third quarter"], [passage("r1", 43, recon)], shape="amount")
    assert (a.value, a.rule) == ("45.9%", "value.cell")


def test_a_rank_word_inside_a_name_selects_nothing():
    from tasks.questions.asked import asks_ranking  # noqa: PLC0415 (the one test of the question brick here)
    assert asks_ranking("What operating income did the Greater China segment report in Q3 2022?") is None
    assert asks_ranking("Which segment reported the greater operating income in Q3 2022?") == "greater"


def test_a_table_of_shares_prints_percents_without_the_sign():
    amounts = ["Three Months Ended", "(In millions) Oct 30, 2022 Oct 31, 2021", "Operating expenses",
               "Research and development $ 1,945 $ 1,403"]
    shares = ["The following table sets forth certain items of our statements of income expressed as a",
              "percentage of revenue.", "Three Months Ended", "October 30,", "2022", "October 31,", "2021",
              "Operating expenses", "Research and development 32.8 19.8"]
    a = ask("What was R&D expense in the three months ended October 30, 2022?", ["R&D expense", "three months"],
            [passage("a1", 3, amounts), passage("s1", 29, shares)])
    assert (a.value, a.rule) == ("$1,945 million", "value.cell")  # the share is no second amount
    mix = ["Three Months Ended", "March 31,", "2022 2023", "Net Sales:", "AWS $ 18,441 $ 21,354", "Net sales mix:",
           "AWS 16 17"]
    a = ask("By what percentage did AWS net sales change in the first quarter of 2023 compared with the first "
            "quarter of 2022?", ["AWS", "net sales", "change"], [passage("m1", 24, mix)])
    assert (a.value, a.rule) == ("15.8%", "computed.growth")  # a share's change is not the growth of the sales


def test_a_fiscal_year_is_the_column_of_its_own_year_where_another_table_has_it():
    older = ["Three Months Ended Nine Months Ended", "June 25,", "2022", "June 26,", "2021", "June 25,", "2022",
             "June 26,", "2021", "Operating expenses:", "Research and development $ 6,797 $ 5,717 $ 19,490 $ 16,142"]
    newer = ["Three Months Ended Nine Months Ended", "July 1,", "2023", "June 25,", "2022", "July 1,", "2023",
             "June 25,", "2022", "Operating expenses:", "Research and development $ 7,442 $ 6,797 $ 22,608 $ 19,490"]
    a = ask("By what percentage did 9M FY23 R&D expense grow versus 9M FY22?", ["R&D expense", "9M FY23"],
            [passage("o1", 3, older), passage("n1", 3, newer)])
    assert (a.value, a.rule) == ("16.0%", "computed.growth")
    a = ask("What was R&D expense in 9M FY23?", ["R&D expense", "9M FY23"], [passage("o1", 3, older),
                                                                           passage("n1", 3, newer)])
    assert a.value == "$22,608"  # no scale printed


def test_a_table_without_the_asked_column_leaves_the_subject_to_the_table_that_has_it():
    twelve = ["Twelve Months Ended", "March 31,", "2022 2023", "Inventories $ 32,000 $ 34,000"]
    quarter = ["(In millions)", "Three Months Ended", "March 31,", "2022 2023", "Inventories $ 31,000 $ 34,170"]
    a = ask("What were inventories for the three months ended March 31, 2023?", ["inventories", "three months"],
            [passage("y1", 22, twelve), passage("q1", 5, quarter)])
    assert (a.value, a.rule) == ("$34,170 million", "value.cell")
    a = ask("What were inventories for the three months ended March 31, 2023?", ["inventories", "three months"],
            [passage("y1", 22, twelve)])
    assert a.rule != "value.cell"  # no column of the period asked: no cell


def test_a_row_printed_on_two_lines_does_not_cut_the_rows_below_from_their_header():
    segments = ["Three Months Ended Nine Months Ended", "(In Millions) Oct 1, 2022 Sep 25, 2021 Oct 1, 2022 Sep 25, 2021",
                "Operating income (loss):", "Client Computing", "1,655 3,592 5,567 11,909",
                "Accelerated Computing Systems and Graphics (378) (222) (1,275) (566)"]
    a = ask("What was the operating income (loss) of the Accelerated Computing Systems and Graphics (AXG) segment in "
            "Q3 2022?", ["operating income", "Accelerated Computing Systems and Graphics", "Q3 2022"],
            [passage("s1", 10, segments)])
    assert (a.value, a.rule) == ("-378 million", "value.cell")
    flows = ["Three Months Ended", "(In millions) March 31, 2023 2022", "Investing",
             "Acquisition of companies, net of cash acquired, and purchases of",
             "intangible and other assets (301) (18,719)", "Net cash used in investing (3,264) (16,171)"]
    a = ask("What was net cash used in investing in the three months ended March 31, 2023?",
            ["net cash used in investing", "three months"], [passage("f1", 5, flows)])
    assert (a.value, a.rule) == ("-3,264 million", "value.cell")
    prose = flows[:3] + ["We invested in data centers and acquired companies during the quarter, as described in",
                         "Note 8 of the accompanying notes.", "Net cash used in investing (3,264) (16,171)"]
    a = ask("What was net cash used in investing in the three months ended March 31, 2023?",
            ["net cash used in investing", "three months"], [passage("f1", 5, prose)])
    assert a.rule != "value.cell"  # prose between the row and the header


def test_a_printed_change_and_the_change_computed_to_its_precision_are_one_figure():
    mdna = ["Three Months Ended Nine Months Ended", "July 1,", "2023", "June 25,", "2022", "Change", "July 1,", "2023",
            "June 25,", "2022", "Change", "Net sales by category:",
            "Total net sales $ 81,797 $ 82,959 (1)% $ 293,787 $ 304,182 (3)%"]
    statement = ["Three Months Ended Nine Months Ended", "July 1,", "2023", "June 25,", "2022", "July 1,", "2023",
                 "June 25,", "2022", "Total net sales $ 81,797 $ 82,959 $ 293,787 $ 304,182"]
    a = ask("By what percentage did total net sales change in Q3 FY23 versus Q3 FY22?", ["total net sales", "change"],
            [passage("m1", 18, mdna), passage("s1", 9, statement)])
    assert (a.value, a.rule) == ("-1%", "change.cell")
    other = statement[:-1] + ["Total net sales $ 81,797 $ 80,000 $ 293,787 $ 304,182"]  # 2.2%: another figure
    a = ask("By what percentage did total net sales change in Q3 FY23 versus Q3 FY22?", ["total net sales", "change"],
            [passage("m1", 18, mdna), passage("s1", 9, other)])
    assert not a.answer_found


def test_an_expense_a_reconciliation_takes_off_its_total_is_the_outlay_asked():
    recon = ["Three Months Ended Nine Months Ended", "June 25,", "2022", "June 26,", "2021", "June 25,", "2022",
             "June 26,", "2021", "Segment operating income $ 30,000 $ 28,000 $ 90,000 $ 85,000",
             "Research and development expense (6,797) (5,717) (19,490) (16,142)"]
    a = ask("What was R&D expense for the three months ended June 25, 2022?", ["R&D expense", "three months"],
            [passage("r1", 15, recon)])
    assert (a.value, a.rule) == ("6,797", "value.cell")
    loss = recon[:-1] + ["Foreign currency loss (97) (12) (105) (40)"]
    a = ask("What was the foreign currency loss for the three months ended June 25, 2022?",
            ["foreign currency loss", "three months"], [passage("r1", 15, loss)])
    assert a.value == "-97"  # not an expense: its sign stays


def test_a_fiscal_quarter_is_the_column_its_documents_fiscal_year_closes_it_in():
    """'Q2 FY2023' of a year ending in December closes in June: the March quarter of a first-quarter report is not
    it; of a year ending in September it closes in March, and the March quarter is it."""
    segments = ["Three Months Ended", "March 31,", "2022 2023", "AWS", "Net sales $ 18,441 $ 21,354",
                "Operating income $ 6,518 $ 5,123"]
    q2 = "What was AWS operating income for Q2 FY2023?"
    december = passage("s1", 19, segments).model_copy(update={"fiscal_year_end_month": 12})
    a = ask(q2, ["AWS", "operating income", "Q2 FY2023"], [december])
    assert a.value != "$5,123"
    september = passage("s1", 19, segments).model_copy(update={"fiscal_year_end_month": 9})
    a = ask(q2, ["AWS", "operating income", "Q2 FY2023"], [september])
    assert (a.value, a.rule) == ("$5,123", "value.cell")
    assert fiscal_close("the first quarter of fiscal year 2024", 6) == 9
    assert fiscal_close("H1 FY23", 9) == 3 and fiscal_close("Q3 2022", 12) is None  # a calendar quarter


def test_a_segment_block_closed_by_its_total_heads_none_of_the_rows_below():
    """'Client Computing' heads Desktop and Notebook, whose total is the line of cells alone: not the rows after it.
    A segment named by its acronym is carried by its own row, and the issuer whose segment it is is no other
    subject ('Intel Foundry Services' also says 'Intel')."""
    segments = ["Three Months Ended Six Months Ended", "(In Millions) Jul 1, 2023 Jul 2, 2022 Jul 1, 2023 Jul 2, 2022",
                "Net revenue:", "Client Computing", "Desktop $ 2,000 $ 3,000 $ 4,000 $ 6,000",
                "Notebook 4,000 5,000 8,000 10,000", "6,000 8,000 12,000 16,000",
                "Intel Foundry Services 232 57 350 213", "Operating income (loss):",
                "Client Computing $ 1,000 $ 2,000 $ 2,500 $ 4,000", "Intel Foundry Services (143) (44) (283) (99)"]
    a = ask("What was Intel Foundry Services (IFS) revenue for the quarter ended July 1, 2023?",
            ["Intel Foundry Services", "revenue", "quarter"], [passage("s1", 11, segments)])
    assert (a.value, a.rule) == ("232 million", "value.cell")
    a = ask("What was the operating income (loss) of Intel's Intel Foundry Services segment in the quarter ended "
            "July 1, 2023?", ["operating income", "Intel Foundry Services"], [passage("s1", 11, segments)])
    assert (a.value, a.rule) == ("-143 million", "value.cell")


def test_an_acronym_defined_after_a_possessive_is_named_by_its_long_form():
    q3 = "What was the operating income (loss) of Intel's Accelerated Computing Systems and Graphics (AXG) segment?"
    assert unnamed(measure_words(q3), "Accelerated Computing Systems and Graphics Operating income (loss):", q3) == []
    assert unnamed(measure_words(q3), "Client Computing Operating income (loss):", q3) != []


def test_a_row_whose_label_prints_figures_of_its_own_does_not_cut_the_rows_below_from_their_header():
    balance = ["CONSOLIDATED BALANCE SHEETS (Unaudited)", "(In Millions) Jul 1, 2023 Dec 31, 2022",
               "Current assets:", "Inventories 11,984 13,224", "Total current assets 43,356 50,407",
               "Property, plant, and equipment, net of accumulated depreciation of $95,781 ($93,386 as of "
               "December 31, 2022) 90,945 80,860",
               "Goodwill 27,591 27,591", "Total assets $ 185,629 $ 182,103"]
    a = ask("What were the total assets as of July 1, 2023?", ["total assets", "July 1, 2023"],
            [passage("b1", 7, balance)])
    assert (a.answer_found, a.value) == (True, "$185,629 million")
    # a sentence that ends in figures is still prose between a row and a header: the row under it has none
    cut = balance[:5] + ["Our goodwill was tested in the quarter, and the results were 27,591 and 27,591",
                         "Total assets $ 185,629 $ 182,103"]
    assert ask("What were the total assets as of July 1, 2023?", ["total assets", "July 1, 2023"],
               [passage("b1", 7, cut)]).value != "$185,629 million"


def test_a_row_that_says_it_is_included_in_the_measure_is_a_part_of_it_not_the_measure():
    note = ["Three Months Ended September 30,", "(In millions) 2022 2021",
            "Tax benefit included in provision for income taxes (12) (3)"]
    a = ask("What was the provision for income taxes for the three months ended September 30, 2022?",
            ["provision for income taxes", "three months", "September 30, 2022"], [passage("n1", 24, note)])
    assert not a.answer_found
    statement = note[:2] + ["Provision for income taxes 4,016 3,457"]
    a = ask("What was the provision for income taxes for the three months ended September 30, 2022?",
            ["provision for income taxes", "three months", "September 30, 2022"],
            [passage("n1", 24, note), passage("s1", 3, statement)])
    assert (a.answer_found, a.value) == (True, "4,016 million")
