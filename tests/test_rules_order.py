"""The rules arbiter's order among passages that all carry the question's words: the row labelled with the asked
measure first, the named filing's own identity (issuer, period) no evidence of place inside it, an acronym with no
token of its own ('R&D') read as the pool spells it out. Synthetic briefs shaped like a quarterly report's passages."""

from __future__ import annotations

from schemas.contracts import CandidateBrief
from tasks.arbiter.dispatch import dispatch, verdict_order
from tasks.arbiter.named import identity_terms
from tasks.arbiter.reading import make_query, row_label
from tasks.arbiter.rules import arbitrate
from tasks.questions.parser import parse_question

DOCUMENT = ("Northwind Traders Inc. (NWTR) · quarterly report (Form 10-Q) · fiscal Q1 2024, period ended 2023-04-30 · "
            "dated 2023-05-26")


def brief(cid: str, page: int, section: str, lines: list[str], rank: int, doc: str = "nw",
          named: bool = False) -> CandidateBrief:
    return CandidateBrief(
        question_id="q", candidate_id=cid, doc_id=doc, page=page, line_start=page * 10, line_end=page * 10 + 3,
        section=section, methods=["keywords"], ranks={"keywords": rank}, raw_scores={"keywords": 1.0 / rank},
        matched_keywords=[], snippet="\n".join(lines), rrf_score=1 / (60 + rank), document=DOCUMENT,
        preferred="the question names issuer \"Northwind\" (its name): Northwind Traders Inc." if named else "",
        preferred_group=0 if named else None)


def order(question: str, pool: list[CandidateBrief]) -> list[str]:
    out = arbitrate(parse_question("q", question), pool, [])
    return verdict_order([(v.candidate_id, v.role, v.relevance) for v in out.verdicts])


def test_a_row_labelled_with_the_asked_measure_goes_before_a_sentence_with_another_figure():
    # both carry "net sales", the segment and the year; the sentence's figure is a share of another total
    pool = [brief("share", 31, "Quantitative and Qualitative Disclosures About Market Risk > Foreign Exchange Risk",
                  ["During Q3 2022, net sales from our Widgets segment accounted for 22% of our consolidated",
                   "revenues. Net sales and related expenses generated from our international stores are",
                   "primarily denominated in the functional currencies of the corresponding stores."], rank=2),
            brief("row", 18, "Notes > Note 8 - Segment Information",
                  ["Widgets segment, Q3 2022 and Q3 2021",
                   "Net sales $ 16,110 $ 20,538 $ 44,422 $ 58,718",
                   "Operating expenses 11,227 15,135 31,183 41,082"], rank=3)]
    question = "What were net sales of the Widgets segment in Q3 2022, in USD millions?"
    assert order(question, pool)[0] == "row"
    row = next(v for v in arbitrate(parse_question("q", question), pool, []).verdicts if v.candidate_id == "row")
    assert row.reason.endswith('; the row "Net sales" is labelled with the question\'s words')


def test_row_label_reads_the_words_before_the_first_number():
    q = make_query(parse_question("q", "What was the net income attributable to Northwind in Q3 2023?"))
    # as inside Northwind's filing for Q3 2023: its name and year are the context of the question's terms
    q.context = [t for t in q.terms if t in ("northwind", "2023")]
    q.terms = [t for t in q.terms if t not in q.context]
    q.weights = {t: 1.0 for t in q.terms}
    whole, label = row_label(q, ["Net income (loss) attributable to Northwind $ 297 $ 1,019 $ (980) $ 8,678"])
    assert whole == 1.0 and label == "Net income attributable to Northwind"
    # a row of another measure, a sentence, a label-less row of numbers, a contents line and its page number, a
    # range: no row labelled with the question's words
    assert row_label(q, ["Less: Net income (loss) attributable to non-controlling interests 13 — (5) —",
                         "Net income attributable to Northwind rose in the quarter, by $ 12 to $ 297",
                         "310 1,019 (985) 8,678", "Net income attributable to Northwind 7",
                         "Net income 2021-2023"]) == (0.0, "")
    part, label = row_label(q, ["Net income (loss) 310 1,019 (985) 8,678"])
    assert 0 < part < 1 and label == "Net income"


COVER = ["NORTHWIND TRADERS INC.", "FORM 10-Q", "FOR THE QUARTER ENDED April 30, 2023", "TABLE OF CONTENTS"]
INCOME = ["Condensed Consolidated Statements of Income (In millions)", "Three Months Ended",
          "Revenue $ 7,192 $ 8,288", "Cost of revenue 2,544 3,789"]


def test_inside_a_named_filing_its_issuer_and_period_are_no_evidence_of_place():
    question = "What was Northwind's revenue for the quarter ended April 30, 2023, in $M?"
    named = [brief("cover", 1, "FORM 10-Q FOR THE QUARTER ENDED April 30, 2023", COVER, rank=1, named=True),
             brief("income", 3, "Condensed Consolidated Statements of Income", INCOME, rank=2, named=True)]
    other = brief("other", 5, "Revenue", ["Revenue was $6.5 billion for the quarter ended April 30, 2022"], rank=3,
                  doc="nw-2022")
    q = parse_question("q", question)
    assert {"northwind", "april", "30", "2023"} <= identity_terms(q, named)
    assert order(question, [*named, other])[0] == "income"
    result = dispatch("q", arbitrate(q, [*named, other], []), [*named, other])
    assert result.primary[0].candidate_id == "income"
    # a document the question does not name, beside others, keeps every word of the question: its period may be
    # another one
    assert identity_terms(q, [*named, other]) == set()
    two = [c.model_copy(update={"preferred": "", "preferred_group": None}) for c in (named[0], other)]
    assert identity_terms(q, two) == set()


def test_inside_the_one_filing_a_question_is_asked_of_its_issuer_and_period_are_no_evidence_of_place():
    # asked of one periodic report (doc-scoped: detection names no preference), the pool is its passages: every
    # page is its issuer's and reports its period, so those words tell the passages apart no more than inside a
    # named filing; the certification page that repeats the issuer's name and the period does not outrank the row
    question = "What was Northwind's accounts payable at the period-end of the quarter ended April 30, 2023, in $M?"
    pool = [brief("certification", 40, "Exhibit 31.1 > Certification",
                  ["I, Jane Roe, certify that I have reviewed this quarterly report on Form 10-Q of Northwind",
                   "Traders Inc. for the period ended April 30, 2023; based on my knowledge, this report does not"],
                  rank=1),
            brief("balance", 4, "Condensed Consolidated Balance Sheets",
                  ["April 30, 2023 January 31, 2023", "Accounts payable $ 1,204 $ 1,390",
                   "Accrued liabilities 2,015 2,122"], rank=2)]
    q = parse_question("q", question)
    assert {"northwind", "april", "2023"} <= identity_terms(q, pool)
    assert order(question, pool)[0] == "balance"
    # a document that reports no period (a manual, a paper) is about what its title and issuer name: every word stays
    manual = 'Northwind Traders Inc. · manual · "Coffee machine user manual" · dated 2023-05-26'
    assert identity_terms(q, [c.model_copy(update={"document": manual}) for c in pool]) == set()
    assert identity_terms(q, [c.model_copy(update={"document": ""}) for c in pool]) == set()


def test_an_acronym_with_no_token_of_its_own_is_read_as_the_pool_spells_it():
    q = parse_question("q", "How much did Northwind spend on R&D in Q2 FY2023, in USD millions?")
    assert "R&D" in make_query(q).acronyms
    pool = [brief("cover", 1, "NORTHWIND TRADERS INC.", COVER, rank=1),
            brief("rnd", 29, "Results of Operations > Operating Expenses",
                  ["($ in millions)", "Research and development", "expenses $ 2,040 $ 1,824 $ 216 12 %"], rank=2)]
    assert order(q.text, pool)[0] == "rnd"


def test_a_row_labelled_with_the_asked_segment_is_primary_beside_prose_that_carries_more_of_the_words():
    """Prose about the segments carries 'segment' as well; the table's row 'Cloud' under 'Revenue' does not, yet its
    cells hold the asked figure: a row labelled with the question's words makes a primary of an amount question."""
    pool = [brief("prose", 33, "MD&A > Segment Metrics",
                  ["Metrics related to our Productivity and Cloud segments assess the health of our core businesses",
                   "within these segments. Cloud segment revenue metrics reflect our cloud strategy and trends."],
                  rank=1),
            brief("table", 36, "MD&A > Segment Results of Operations",
                  ["Revenue",
                   "Productivity and Business Processes $ 17,002 $ 15,936 7% $ 33,467 $ 30,975 8%",
                   "Cloud 21,508 18,262 18% 41,833 35,174 19%",
                   "Total $ 52,747 $ 51,728 2% $ 102,869 $ 97,045 6%"], rank=2),
            brief("policy", 12, "Notes > Revenue Recognition",
                  ["Revenue is recognized when control of the promised goods or services is transferred to our",
                   "customers, in an amount that reflects the consideration we expect to receive."], rank=3),
            brief("segments", 30, "MD&A > Reportable Segments",
                  ["We report our financial performance based on the following segments: Productivity and",
                   "Business Processes and More Personal Computing."], rank=4),
            brief("risk", 51, "Risk Factors",
                  ["Our revenue may fluctuate from quarter to quarter, and changes in demand could reduce",
                   "revenue and operating income."], rank=5)]
    question = "What was the Cloud segment revenue in the second quarter of fiscal 2023?"
    verdicts = {v.candidate_id: v for v in arbitrate(parse_question("q", question), pool, []).verdicts}
    assert verdicts["prose"].role == "primary"
    assert verdicts["table"].role == "primary", verdicts["table"].reason
    assert verdicts["table"].reason.endswith('; the row "Cloud" is labelled with the question\'s words')
    # a question whose answer is not a figure: the label alone makes no primary
    verdicts = {v.candidate_id: v for v in arbitrate(
        parse_question("q", "Which products does the Cloud segment sell?"), pool, []).verdicts}
    assert verdicts["table"].role != "primary"
