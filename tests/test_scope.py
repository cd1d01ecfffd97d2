"""Scoping corpus-wide questions by what documents say they are (tasks.detect.periods, tasks.detect.scope,
tasks.detect.run, tasks.arbiter.named): the periods a question names in analysts' notations, the documents that
match them searched first with a reason, the others still searchable, a comparison reaching both documents, and the
rules arbiter putting the named documents' passages first."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from schemas.contracts import ArbiterOutput, CandidateBrief, CandidateVerdict
from schemas.settings import Settings
from tasks.arbiter.brief import build_arbiter_request
from tasks.arbiter.dispatch import dispatch, verdict_order
from tasks.arbiter.named import arbitrate_named
from tasks.arbiter.rules import BANDS, arbitrate
from tasks.corpus.fiscal import closing_month
from tasks.corpus.identity import frame_lines, read_identity
from tasks.corpus.parse import LINE_SCHEMA
from tasks.corpus.sections import page_sections
from tasks.detect.periods import EXACT, NO_MATCH, SAME_YEAR, DocPeriod, asked_periods, period_match
from tasks.detect.run import CorpusCache, run_detection
from tasks.detect.scope import DocFacts, prefer_documents
from tasks.questions.parser import parse_question


@pytest.mark.parametrize("text, expected", [
    ("R&D for Q3 FY2022?", [(2022, 3, None, None, True)]),
    ("in FY23 Q1", [(2023, 1, None, None, True)]),
    ("at the end of FY2023Q1", [(2023, 1, None, None, True)]),
    ("netsales in Q32023", [(2023, 3, None, None, False)]),
    ("segment income for 3Q22", [(2022, 3, None, None, False)]),
    ("spend in H1 FY23", [(2023, None, 1, None, True)]),
    ("margin in 1H23", [(2023, None, 1, None, False)]),
    ("R&D as a % of revenue for 9M FY22", [(2022, None, None, 9, True)]),
    ("for FY22 YTD (first nine months of fiscal 2022)", [(2022, None, None, 9, True)]),
    ("Q3revenue for FY2023", [(2023, 3, None, None, True)]),
    ("in the second quarter of fiscal 2023", [(2023, 2, None, None, True)]),
    ("in the first quarter of 2023", [(2023, 1, None, None, False)]),
    ("revenue in 2Q FY24", [(2024, 2, None, None, True)]),
    ("In Apple's Q3 10-Q", []),  # '10' of '10-Q' is no year
    ("model H100 sales", []),
])
def test_asked_periods_in_analysts_notations(text, expected):
    got = [(p.year, p.quarter, p.half, p.months, p.fiscal) for p in asked_periods(text)]
    assert got == expected


def test_end_dates_calendar_quarters_and_year_to_date():
    (p,) = asked_periods("revenue for the quarter ended April 30, 2023")
    assert p.end == date(2023, 4, 30)
    (p,) = asked_periods("In calendar Q2 2023, what was revenue?")
    assert (p.year, p.quarter, p.calendar) == (2023, 2, True)
    (p,) = asked_periods("R&D spend for YTD FY2022 (through September)")
    assert (p.year, p.months, p.ytd, p.fiscal) == (2022, 12, True, True)
    assert [(x.year, x.quarter) for x in asked_periods("change from Q1 2023 to Q2 2023")] == [(2023, 1), (2023, 2)]


def _period(end: str, fye: int, names: str | None, fy: int, fp: str) -> DocPeriod:
    d = date.fromisoformat(end)
    y, m = closing_month(d)
    middle = y * 12 + m - 1 - 1
    return DocPeriod(d, 3, fy, fp, middle // 12, f"Q{middle % 12 // 3 + 1}", fye, names)


def test_a_bare_quarter_is_read_in_the_documents_own_notation():
    writes_fiscal_bare = _period("2023-04-01", 9, "fiscal", 2023, "Q2")  # 'the second quarter of 2023' = fiscal
    writes_fiscal_year = _period("2023-07-30", 1, "explicit", 2024, "Q2")  # 'second quarter of fiscal year 2024'
    (bare_q2,) = asked_periods("in Q2 2023")
    (fiscal_q2,) = asked_periods("in Q2 FY2024")
    assert period_match(bare_q2, writes_fiscal_bare) == EXACT
    assert period_match(bare_q2, writes_fiscal_year) == EXACT  # its calendar quarter: most of May-July 2023
    assert period_match(fiscal_q2, writes_fiscal_year) == EXACT
    assert period_match(fiscal_q2, writes_fiscal_bare) == NO_MATCH
    (h1,) = asked_periods("H1 FY2023")
    assert period_match(h1, writes_fiscal_bare) == EXACT  # six months ended: in the second quarter's report
    (fy,) = asked_periods("fiscal 2023 revenue")
    assert period_match(fy, writes_fiscal_bare) == SAME_YEAR


# -- documents --------------------------------------------------------------------------------------------------------
COVER = """FORM 10-Q
QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the quarterly period ended {end}
{name}
(Exact name of registrant as specified in its charter)
Title of each class Trading symbol(s) Name of each exchange
Common Stock {ticker} Nasdaq
The fiscal year is the 52- or 53-week period that ends on the last Saturday of September."""
FILINGS = {
    "nw-q1": ("December 31, 2022", "Northwind Traders Inc.", "NWTR", "1,100"),
    "nw-q2": ("April 1, 2023", "Northwind Traders Inc.", "NWTR", "1,200"),
    "fb-q2": ("April 1, 2023", "Fabrikam Corporation", "FBKM", "9,900"),
}


def _doc(doc_id: str, end: str, name: str, ticker: str, rd: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    pages = [COVER.format(end=end, name=name, ticker=ticker),
             "Statements of operations\nThree Months Ended\nNet sales 50,000\n"
             f"Research and development {rd}\nResearch and development expense increased in the quarter\n"
             f"Total operating expenses {rd}",
             "Liquidity and capital resources\nCash and cash equivalents were sufficient for the needs of the business"]
    rows, n = [], 0
    for p, text in enumerate(pages):
        for t in text.split("\n"):
            rows.append({"doc_id": doc_id, "page": p, "line_no": n, "text": t, "bbox": [0.0, 0.0, 1.0, 1.0],
                         "font_size": 10.0, "bold": False, "block_no": 0})
            n += 1
    lines = pl.DataFrame(rows, schema=LINE_SCHEMA)
    return lines, page_sections(lines, doc_id)


@pytest.fixture
def cache() -> CorpusCache:
    c = CorpusCache(settings=Settings())
    for doc_id, spec in FILINGS.items():
        lines, toc = _doc(doc_id, *spec)
        c.add(doc_id, lines, toc, identity=read_identity(frame_lines(lines)))
    return c


def _facts(cache: CorpusCache) -> list[DocFacts]:
    return cache.identities.facts(sorted(FILINGS))


def test_prefer_documents_by_issuer_period_ticker_and_typo(cache):
    facts = _facts(cache)
    pref = prefer_documents("What was Northwind's R&D in Q2 FY2023?", facts)
    assert pref.groups == [["nw-q2"]] and 'issuer "Northwind"' in pref.reasons["nw-q2"]
    assert "fiscal Q2 2023" in pref.reasons["nw-q2"]
    assert prefer_documents("NWTR revenue", facts).groups == [["nw-q1", "nw-q2"]]
    assert prefer_documents("Nortwind revenue", facts, lambda t: t == "revenu").groups == [["nw-q1", "nw-q2"]]
    assert prefer_documents("Nortwind revenue", facts, lambda t: True) is None  # a word the documents use: no typo
    latest = prefer_documents("Northwind's gross margin in the most recent 10-Q", facts)
    assert latest.groups == [["nw-q2"]]
    back = prefer_documents("Northwind's R&D in the latest quarter compared to the previous quarters", facts)
    assert back.groups == [["nw-q2"], ["nw-q1"]]  # the latest first, the earlier ones its other side
    assert prefer_documents("What is a balance sheet?", facts) is None
    assert prefer_documents("R&D in the 10-Q", facts) is None  # names every document alike


def test_a_comparison_gets_one_group_per_company(cache):
    pref = prefer_documents("Compare Northwind's and Fabrikam's R&D for Q2 FY2023", _facts(cache))
    assert pref.groups == [["nw-q2"], ["fb-q2"]]


def _ask(cache, text):
    q = parse_question("q", text)
    detection = run_detection(q, None, cache, None, None, Settings())
    return q, detection


def test_detection_searches_the_named_document_first_and_keeps_the_others(cache):
    q, detection = _ask(cache, "What was Northwind's research and development expense in Q2 FY2023?")
    assert "scope: 1 of 3 documents searched first" in detection.plan.rule
    keywords = sorted((h for h in detection.hits if h.detector == "keywords"), key=lambda h: h.rank)
    assert keywords[0].doc_id == "nw-q2"
    pool = detection.pool()
    assert {c.doc_id for c in pool} == set(FILINGS)  # the others stay searchable
    named = [c for c in pool if c.doc_id == "nw-q2"]
    assert all(c.preferred and c.preferred_group == 0 for c in named)
    assert all(not c.preferred and c.preferred_group is None for c in pool if c.doc_id != "nw-q2")
    assert all(c.document.startswith(("Northwind", "Fabrikam")) for c in pool)
    request = build_arbiter_request(q, pool, [])
    assert '"preferred": "the question names' in request.messages[1]["content"]
    assert '"document": "Northwind Traders Inc. (NWTR)' in request.messages[1]["content"]

    result = dispatch("q", arbitrate(q, pool, []), pool)
    assert result.status == "found" and result.primary[0].doc_id == "nw-q2"
    assert "searched first: the question names" in result.primary[0].reason
    others = [v for v in arbitrate(q, pool, []).verdicts if v.role == "tangential" and "does not name" in v.reason]
    assert others  # the other filing's matching line, said to be from a document the question does not name


def test_a_comparison_reaches_both_documents(cache):
    q, detection = _ask(cache, "Compare Northwind's and Fabrikam's research and development expense for Q2 FY2023.")
    result = dispatch("q", arbitrate(q, detection.pool(), []), detection.pool())
    assert {p.doc_id for p in result.primary} == {"nw-q2", "fb-q2"}


def test_without_a_named_document_nothing_changes(cache):
    q, detection = _ask(cache, "What was research and development expense?")
    assert "scope:" not in detection.plan.rule
    assert all(not c.preferred and c.preferred_group is None for c in detection.pool())
    assert all(c.document for c in detection.pool())  # the identity is beside every candidate all the same


def test_a_dated_document_answers_for_its_year():
    dated = read_identity([], {"creationDate": "D:20210304000000Z"})
    doc = DocPeriod.of(dated)
    (year,) = asked_periods("the policy in force in 2021")
    (quarter,) = asked_periods("in Q1 2021")
    assert period_match(year, doc) == EXACT and period_match(quarter, doc) == SAME_YEAR
    assert DocPeriod.of(read_identity([], {})) is None


def _brief(cid: str, doc: str, group: int | None) -> CandidateBrief:
    return CandidateBrief(question_id="q", candidate_id=cid, doc_id=doc, page=1, line_start=1, line_end=2, section="",
                          methods=["keywords"], ranks={"keywords": 1}, raw_scores={"keywords": 1.0},
                          matched_keywords=[], snippet="", rrf_score=0.01, document=doc,
                          preferred="the question names it" if group is not None else "", preferred_group=group)


def test_another_documents_passages_rank_after_the_named_documents_once_it_holds_a_primary():
    # each pool's relevance is relative to its own pool: without the recast, the other filing's supporting line
    # (0.6) would rank above the named filing's own (0.5) in the arbiter's order
    pool = [_brief("n1", "named", 0), _brief("n2", "named", 0), _brief("o1", "other", None),
            _brief("o2", "other", None)]
    roles = {"n1": ("primary", 0.9), "n2": ("supporting", 0.5), "o1": ("primary", 0.9), "o2": ("supporting", 0.6)}

    def judge(question, candidates, absent):
        return ArbiterOutput(verdicts=[CandidateVerdict(candidate_id=c.candidate_id, role=roles[c.candidate_id][0],
                                                        reason="rules", relevance=roles[c.candidate_id][1])
                                       for c in candidates])

    q = parse_question("q", "What was research and development expense?")
    out = arbitrate_named(q, pool, [], judge, BANDS)
    role = {v.candidate_id: v.role for v in out.verdicts}
    assert role == {"n1": "primary", "n2": "supporting", "o1": "tangential", "o2": "tangential"}
    assert all("does not name" in v.reason for v in out.verdicts if v.candidate_id.startswith("o"))
    order = verdict_order([(v.candidate_id, v.role, v.relevance) for v in out.verdicts])
    assert order[:2] == ["n1", "n2"]

    roles["n1"] = ("supporting", 0.55)  # no primary in the named filing: the identity may be wrong, nothing moves
    out = arbitrate_named(q, pool, [], judge, BANDS)
    assert {v.candidate_id: v.role for v in out.verdicts} == {"n1": "supporting", "n2": "supporting",
                                                              "o1": "primary", "o2": "supporting"}
