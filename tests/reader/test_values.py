"""Typed values (rules ``value.sentence``, ``value.cell``, ``value.sole_deadline``, ``date.sentence``): the value
of the asked class in the sentence or the table cell that states it, the numbers that are never answer values (steps,
sections, page furniture), on hand-made passages."""

from __future__ import annotations

import pytest

from schemas.contracts import AnswerWithEvidence, LLMUsage
from tasks.generate.tables import is_header, parse_row
from tasks.generate.period import question_period
from tasks.generate.extractive import ExtractiveProvider, extract_answer
from tasks.generate.loop import run_sequential
from tasks.generate.normalise import answer_matches
from tasks.generate.prompts import build_generation_request
from tasks.generate.router import Budget
from tasks.generate.sentences import PLine, furniture_lines
from tasks.generate.values import find_amounts, iso_date
from tasks.llm.base import LLMResult
from tasks.questions.asked import asked_class
from tests.reader.kit import COSTS, DOC_A, HANDBOOK, answer, numbered, page, passage, passage_at, q


REVENUE = numbered("c1", 4, [(40, "Financial highlights"), (41, "Total revenue in 2023 reached $4.2 million, up 12%"),
                            (42, "from the prior year.")])


def test_amount_with_currency_quotes_its_line():
    a = answer(q("What was the total revenue in 2023?", "amount", ["total revenue", "revenue", "2023"]), [REVENUE])
    assert (a.value, a.answer_found, a.complete_answer_found) == ("$4.2 million", True, True)
    assert [(e.doc_id, e.page, e.line_start, e.line_end) for e in a.evidence] == [(DOC_A, 4, 41, 41)]
    assert a.evidence[0].quote == "Total revenue in 2023 reached $4.2 million, up 12%"


def test_percentage_question_prefers_the_percent_over_other_numbers():
    question = q("By what percentage did total revenue grow in 2023?", "amount",
                 ["percentage", "total revenue", "grow"])
    a = answer(question, [REVENUE])
    assert a.value == "12%"


def test_number_stated_in_the_question_is_not_the_answer():
    p = numbered("c1", 0, [(1, "Of the 2018 survey's 1,500 respondents, 640 were independents.")])
    a = answer(q("Of the 1,500 respondents in 2018, how many were independents?", "amount",
                 ["respondents", "independents", "2018"]), [p])
    assert a.value == "640"


def test_step_numbers_are_not_amounts_and_a_named_unit_wins():
    p = numbered("c1", 24, [(892, "6 Open manual insert lid"), (893, "6 Insert ground coffee (max. 16 g)"),
                           (894, "Wait 2 minutes for 3 cups of coffee.")])
    a = answer(q("How many grams of coffee can be put in the manual insert?", "amount",
                 ["grams", "coffee", "manual insert"]), [p])
    assert a.value == "16 g"


def test_date_full_date_preferred_over_a_bare_year():
    p = numbered("c1", 0, [(1, "Policy signed in 2019."), (2, "This policy takes effect from January 1, 2026.")])
    a = answer(q("When does the policy take effect?", "date", ["policy", "effect"]), [p])
    assert a.value == "January 1, 2026" and a.evidence[0].line_start == 2


def test_which_year_returns_the_year_of_a_full_date():
    p = numbered("c1", 0, [(1, "Annual report published on 31st March, 2007 by the board.")])
    a = answer(q("Which year was the annual report published?", "date", ["annual report", "published"]), [p])
    assert a.value == "2007" and a.evidence[0].quote.startswith("Annual report")


CASH = numbered("c1", 7, [(70, "Notes"), (71, "Cash flow: $1.2 million"), (72, "Staff: 14")])


CASH_WORDS = ["net operating cash flow", "subsidiary"]  # net, operat, cash, flow, subsidiary: 2 of 5 next to $1.2m


@pytest.mark.parametrize("regime", ["sequential", "batch"])
def test_single_typed_value_next_to_partial_keywords_is_found_and_complete(regime):
    # coverage 2/5: found, and (a single typed value has no other part) complete -> the sequential loop stops here
    a = answer(q("What was the net operating cash flow of the subsidiary?", "amount", CASH_WORDS), [CASH], regime)
    assert (a.value, a.answer_found, a.complete_answer_found) == ("$1.2 million", True, True)


def test_deterministic():
    question = q("What was the total revenue in 2023?", "amount", ["total revenue", "2023"])
    assert extract_answer(build_generation_request(question, [REVENUE], "batch").payload) == \
        extract_answer(build_generation_request(question, [REVENUE], "batch").payload)


def test_bare_value_cell_under_its_label_is_complete():
    # table layout: the label line names keywords (2 of 5), the value sits alone on the next line
    p = numbered("c1", 3, [(30, "Cash flow"), (31, "$1.2 million"), (32, "Notes")])
    a = answer(q("What was the net operating cash flow of the subsidiary?", "amount", CASH_WORDS), [p], "sequential")
    assert (a.value, a.answer_found, a.complete_answer_found) == ("$1.2 million", True, True)


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


def test_a_row_under_a_block_heading_takes_the_heading_as_its_label():
    lines = ["Three Months Ended", "2024 2023", "(in millions)", "Cloud", "Net sales $ 500 $ 400",
             "Operating income $ 120 $ 90", "Devices", "Net sales $ 300 $ 350", "Operating income $ 20 $ 35"]
    a = answer(q("What was the Cloud segment operating income in Q1 2024?", "amount",
                 ["cloud", "segment", "operating income", "Q1 2024"]), [passage("p1", 7, lines)])
    assert (a.answer_found, a.value) == (True, "$120 million")


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


KIT = ["3 Getting started", "The kit contains the following parts:", "1. Base unit", "2. Power adaptor",
       "(mains plug included)", "3. Remote control", "4. Quick guide", "3.1 Setting up the base unit",
       "1. Place the base unit on a flat surface."]


def test_a_stated_number_is_the_answer_before_a_counted_list():
    stated = ["The kit contains 5 parts (one is shipped separately):", *KIT[2:]]
    a = answer(q("How many parts are included in the kit?", "amount", ["parts", "kit"]),
               [passage("k", 3, stated, start=40)])
    assert a.value == "5"


LIABILITY = passage("p1", 2, [
    "3.5 Liability (Coverages E and F)",
    "If a claim is made or a suit is brought against an insured for damages because of bodily injury or",
    "property damage caused by an occurrence, we will pay up to our limit of liability.",
    "The personal liability limit for this policy is $300,000 for each occurrence, regardless of the number",
    "of insureds, claims made or persons injured.",
    "Policy No. HO-2024-118604 Page 3 of 7"], start=90)


REPORTING = passage("p2", 4, [
    "6.1 Reporting a Loss",
    "In case of damage to the house or other covered property, you must notify the insurer promptly, and in any",
    "event no later than 60 days after the loss."], start=260)


def test_duration_question_never_gets_a_section_number_and_abstains_without_a_duration():
    question = q("How long do we have to tell the insurer about damage to the house?", "amount",
                 ["insurer", "damage", "house"])
    alone = answer(question, [LIABILITY])
    assert (alone.value, alone.answer_found) == (None, False)
    assert alone.caveats == ["extractive: no duration stated in the passages"]
    assert alone.evidence and alone.confidence <= 0.2  # the best passage is shown, the confidence says "no"
    both = answer(question, [LIABILITY, REPORTING])
    assert both.answer_found and answer_matches(both.value, "60 days after the loss", "amount")
    assert both.value == "no later than 60 days after the loss" and both.evidence[0].line_start == 262


TERMINATION = passage("c1", 1, [
    "ARTICLE IV - TERM AND TERMINATION",
    "4.1 Term. This Agreement begins on the Effective Date and continues for an initial term of twenty-four",
    "(24) months, unless terminated earlier under this Article.",
    "4.3 Termination for Convenience. Either Party may terminate this Agreement, or any SOW, for any",
    "reason by giving the other Party at least ninety (90) days' prior written notice.",
    "4.4 Termination for Cause. Either Party may terminate this Agreement by written notice if the other",
    "Party materially breaches it and fails to cure the breach within thirty (30) days after notice."], start=52)


def test_notice_to_end_without_cause_is_the_notice_period_not_a_clause_number():
    a = answer(q("How much notice is needed to end the agreement without cause?", "amount",
                 ["notice", "end", "agreement", "cause"]), [TERMINATION])
    assert a.value == "at least 90 days' prior written notice"
    assert answer_matches(a.value, "90 days' prior written notice", "amount")


def test_probation_period_is_the_days_stated_not_an_hour_count():
    a = answer(q("How long is the probation period for new hires?", "amount",
                 ["probation", "probation period", "period", "new", "new hires", "hires"]), [HANDBOOK])
    assert a.value == "90 calendar days" and a.complete_answer_found


PAYMENT = passage("c2", 1, [
    "ARTICLE III - FEES AND PAYMENT",
    "3.3 Payment Terms. Client shall pay each undisputed invoice within forty-five (45) days of the invoice",
    "date, by bank transfer to the account named on the invoice."], start=37)


def test_days_to_pay_an_invoice_is_the_spelled_out_term_not_the_clause():
    a = answer(q("How many days does the client have to pay an invoice?", "amount",
                 ["days", "client", "pay", "invoice"]), [PAYMENT])
    assert a.value == "within 45 days of the invoice" and answer_matches(a.value, "45 days", "amount")


class _Client:
    def complete(self, request, validate=None) -> LLMResult:
        parsed = AnswerWithEvidence.model_validate_json(ExtractiveProvider().send(request).text)
        return LLMResult(call_id=f"c{request.step}", provider="extractive", model="extractive", parsed=parsed,
                         usage=LLMUsage(), latency_ms=0.0, attempts=1)


def test_sequential_keeps_reading_past_an_abstention_and_keeps_the_closest_passage_when_nothing_is_found():
    question = q("How long do we have to tell the insurer about damage to the house?", "amount",
                 ["insurer", "damage", "house"])
    budget = Budget(max_candidates=2, max_input_tokens=None, max_seconds=None)
    out = run_sequential(_Client(), question, [LIABILITY, REPORTING], budget)
    assert (out.exit, out.steps, out.answer.value) == ("sufficiency", 2, "no later than 60 days after the loss")
    none = run_sequential(_Client(), question, [LIABILITY], budget)
    assert none.exit == "exhaustion" and not none.answer.answer_found and none.answer.evidence


@pytest.mark.parametrize("line", [
    "3.5 Liability (Coverages E and F)", "4.4 Termination for Cause.", "see Section 7 and Table 3",
    "Policy No. HO-2024-118604 Page 3 of 7", "Call (555) 123-4567 today", "as set out in clause 12 and item 4",
    "2) Open the lid", "400 Harbor Street, Portland"])
def test_reference_numbers_are_not_amounts(line):
    assert find_amounts(line) == []


def test_a_running_footer_and_a_copyright_notice_are_furniture():
    lines = [PLine(0, {}, i, p, t) for i, (p, t) in enumerate([
        (3, "Annual Report 2023 | Example Corp | 4"), (7, "Annual Report 2023 | Example Corp | 8"),
        (3, "Revenue was $4.2 million in 2023."), (7, "Revenue was $4.2 million in 2023."),  # repeated, not running
        (3, "Three Months Ended 2022"), (5, "Three Months Ended 2023"),  # a table's header: a year is no page number
        (3, "14"), (7, "15"),  # page numbers alone are no header
        (9, "© 2021 Example Corp. All rights reserved.")])]
    assert {lines.index(ln) for ln in lines if id(ln) in furniture_lines(lines)} == {0, 1, 8}


def test_a_question_about_the_edition_reads_the_footer():
    question = q("What is the issue date of the copyright notice?", "date", ["issue date", "copyright"])
    a = answer(question, [page(33, ["Open the app and touch Devices."], 1230)])
    assert a.value == "2020-09-07" and a.answer_found


def test_a_page_number_in_the_question_is_framing_and_the_row_of_the_asked_year_answers():
    a = answer(q("What was the population of the town on page 3 in 1900?", "amount", ["population", "town",
                                                                                        "page 3", "1900"]),
               [passage("t1", 12, ["Table 2. Population by Town, 1900-2000", "1900 2,410 310 NA",
                                   "1950 3,120 600 75", "1990 3,805 512 90"], section="Population by Town")])
    assert (a.answer_found, a.value) == (True, "2,410")


LEGEND = passage("m1", 7, ["3.2 Water supply", "Colour Water temperature", "• blue cold water (up to 10 °C)",
                           "• red hot water (above 60 °C)", "The heater needs approx. 20 seconds to warm the water."])


def test_a_colour_the_text_prints_is_a_legend_and_the_quantity_asked_rejects_other_measures():
    a = answer(q("What temperature does the blue light of the kettle represent for the water?", "amount",
                 ["temperature", "blue", "light", "kettle", "water"]), [LEGEND])
    assert (a.answer_found, a.value) == (True, "up to 10 °C")
    assert asked_class({"text": "What temperature is the water?", "answer_shape": "amount"}).dimension == \
        "temperature"


@pytest.mark.parametrize("text,iso", [("January 5, 2022", "2022-01-05"), ("5th Jan 2022", "2022-01-05"),
                                      ("01/05/2022", "2022-01-05"), ("25/01/2022", "2022-01-25"),
                                      ("2022-01-05", "2022-01-05"), ("March 2022", None), ("2022", None)])
def test_iso_date(text, iso):
    assert iso_date(text) == iso


def test_a_date_is_given_in_the_format_the_question_asks():
    a = answer(q("What is the date of the letter? Format your answer as YYYY-MM-DD.", "date", ["date", "letter"]),
               [passage("l1", 0, ["This letter is dated March 14, 2021.", "Dear Sir or Madam,"])])
    assert (a.answer_found, a.value) == (True, "2021-03-14")


def test_an_answer_format_template_is_framing_not_a_code_to_find():
    a = answer(q("What is the date of the memo? Format your answer as YYYY-MM-DD.", "date", ["date", "memo"]),
               [passage("p1", 0, ["Internal memo", "Date: March 3, 2021", "To: all staff"])])
    assert (a.answer_found, a.value) == (True, "2021-03-03")


TERM = passage_at("t", 1, [
    "4.1 Term. This Agreement begins on the Effective Date and continues for an initial term of twenty-four",
    "(24) months, unless terminated earlier under this Article.",
    "4.2 Renewal. After the initial term, this Agreement renews automatically for successive periods of twelve",
    "(12) months unless either Party gives written notice of non-renewal at least sixty (60) days before the end",
    "of the then-current term.",
    "4.3 Termination for Convenience. Either Party may terminate this Agreement, or any SOW, for any",
    "reason by giving the other Party at least ninety (90) days' prior written notice."])


def test_a_length_question_gets_the_length_not_the_deadline():
    a = answer(q("How long is the initial term, and how long is each renewal?", "amount",
                 ["initial term", "term", "renewal"], "multi_part"), [TERM])
    assert a.value == "24 months; 12 months"


def test_a_notice_question_gets_the_notice_the_asked_noun_follows():
    a = answer(q("How much notice is needed to end the agreement without cause?", "amount",
                 ["notice", "end", "agreement", "cause"]), [TERM])
    assert a.value == "at least 90 days' prior written notice"


def test_the_only_deadline_in_the_passages_is_shown_but_not_complete():
    claims = passage_at("c", 5, [
        "In case of a loss to covered property, you must give us prompt notice, and in any event no later than",
        "60 days after the date of the loss. Notice may be given to us directly or to the agent who sold you",
        "this policy."])
    a = answer(q("How long do we have to tell the insurer about damage to the house?", "amount",
                 ["insurer", "damage", "house"]), [claims])
    assert (a.value, a.answer_found, a.complete_answer_found) == ("60 days after the date", True, False)
    assert "only time limit" in a.caveats[0]


def test_the_page_a_question_points_at_is_the_only_page_read():
    first = passage_at("a", 0, ["Report issued in July 2009 by the county office."])
    second = passage_at("b", 1, ["In 2002, the county office moved to a new building."])
    a = answer(q("What date is mentioned on the second page of the county report?", "date",
                 ["date", "county", "office"]), [first, second])
    assert a.value == "2002"  # page 1 (0-based) is the second page; July 2009 is on the first
