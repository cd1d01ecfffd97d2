"""The question's ask apart from its framing, and the term notations that say nothing about a document's content
(tasks.questions.framing, tasks.terms, tasks.arbiter.evidence's absence terms); the arbiter's unsure rule
(tasks.arbiter.pool)."""

from __future__ import annotations

import pickle

import pytest

from schemas.contracts import CandidateBrief, CandidateVerdict
from tasks.arbiter import evidence as ev
from tasks.arbiter.pool import keep_lexical_best_when_unsure
from tasks.questions.framing import frame_question
from tasks.questions.parser import asked_measure, parse_question
from tasks.terms import carries, is_acronym, is_notation, is_period_notation, vocabulary


def test_role_play_and_instructions_are_framing():
    f = frame_question("Assume that you are a public equities analyst covering Acme. Give a response to the question "
                       "by relying on the details shown in the cash flow statement. What was Acme's capex in Q2?")
    assert f.ask == "What was Acme's capex in Q2?"
    assert len(f.framing) == 2 and f.definitions == {}


@pytest.mark.parametrize("text, term, ask", [
    ("FCF is defined as cash from operations minus capex. What was Acme's FCF for Q1 FY23?", "FCF",
     "What was Acme's FCF for Q1 FY23?"),
    ("Operating margin = operating income / net sales. What was the operating margin?", "Operating margin",
     "What was the operating margin?"),
    ("Taking FCF as net cash from operations less capex, what was Acme's FCF in $M?", "FCF",
     "what was Acme's FCF in $M?"),
    ("What was the margin in H1? Operating margin is defined as operating income / total net sales.",
     "Operating margin", "What was the margin in H1?"),
    ("Treat SG&A as sales and marketing plus general and administrative. What was SG&A in Q3?", "SG&A",
     "What was SG&A in Q3?"),
])
def test_definitions_are_split_from_the_ask(text, term, ask):
    f = frame_question(text)
    assert term in f.definitions and f.ask == ask


def test_plain_questions_are_all_ask():
    text = "What is the total revenue in 2019 according to the annual report?"
    f = frame_question(text)
    assert f.ask == text and not f.framing and not f.definitions
    q = parse_question("q", text)
    assert q.ask == text and q.framing == [] and q.definitions == {}


@pytest.mark.parametrize("word", ["FY2018", "FY23", "Q2", "H1", "FY2023Q1", "Q22023", "3Q22", "1H23", "YTD", "9M"])
def test_period_notations(word):
    assert is_period_notation(word.lower()) and is_notation(word)


@pytest.mark.parametrize("term", ["H100", "2019", "GPT-4", "A100", "Antarctica"])
def test_codes_years_and_names_are_not_notation(term):
    assert not is_notation(term)


@pytest.mark.parametrize("term", ["USD", "USD mn", "$M", "Q3 FY2023", "FY22 YTD", "EUR bn"])
def test_currency_scale_and_period_terms_are_notation(term):
    assert is_notation(term)


def test_acronyms():
    assert all(is_acronym(t) for t in ["COGS", "PP&E", "SG&A", "EBITDA", "GM%"])
    assert not any(is_acronym(t) for t in ["Apple", "GPT-4", "A", "ABCDEFGH"])


def test_carries_spellings_expansions_and_run_together_words():
    vocab = vocabulary(["Microsoft Corporation and Apple Inc.", "Property, plant and equipment, net",
                        "Total net sales", "Cost of goods sold", "Revenue by quarter"])
    for term in ["Microsfot", "Aple", "PP&E", "netsales", "COGS", "Q3revenue"]:
        assert carries(term, vocab), term
    for term in ["Antarctica", "EBITDA", "newspaper"]:
        assert not carries(term, vocab), term
    assert carries("PP&E", pickle.loads(pickle.dumps(vocab)))


def test_absence_terms_keep_the_subject_not_the_framing():
    q = parse_question("q", "Assume that you are an analyst covering Globex. EBITDA = operating income + "
                            "depreciation and amortization. How many stores did Acme open in Antarctica in FY2023, and what was its EBITDA in USD?")
    terms = {t.lower() for t in ev.absence_terms(q)}
    assert {"antarctica", "acme"} <= terms
    assert not {"globex", "ebitda", "fy2023", "usd"} & terms


def test_an_acronym_naming_the_measure_is_computed_not_missing():
    q = parse_question("q", "What was Acme's COGS as a share of net sales in 2023?")
    assert "cogs" in asked_measure(q.text)
    assert "COGS" in ev.question_terms(q) and "COGS" not in ev.absence_terms(q)
    other = parse_question("q", "For the dataset that uses HOVER as the solver, how many examples are used?")
    assert "HOVER" in ev.absence_terms(other)


def test_old_rows_without_the_split_derive_it_from_the_text():
    q = parse_question("q", "Assume that you are an analyst covering Globex. What was Acme's revenue in 2021?")
    old = q.model_copy(update={"ask": "", "framing": [], "definitions": {}})
    assert ev.question_terms(old) == ev.question_terms(q)
    assert "globex" not in {t.lower() for t in ev.question_terms(q)}


def _brief(cid: str, page: int, keywords_rank: int | None) -> CandidateBrief:
    ranks = {"keywords": keywords_rank} if keywords_rank else {"embeddings": 1}
    return CandidateBrief(question_id="q", candidate_id=cid, doc_id="d", page=page, line_start=0, line_end=1,
                          section="", methods=list(ranks), ranks=ranks, raw_scores={k: 1.0 for k in ranks},
                          matched_keywords=[], snippet="", rrf_score=0.01)


def _verdict(cid: str, role: str, relevance: float) -> CandidateVerdict:
    return CandidateVerdict(candidate_id=cid, role=role, decision="keep", reason="lines 0-1 contain x",
                            relevance=relevance)


def test_near_tie_keeps_the_keyword_detectors_best_first_and_says_unsure():
    cands = [_brief("a", 1, None), _brief("b", 2, 1)]
    verdicts = [_verdict("a", "primary", 0.80), _verdict("b", "supporting", 0.79)]
    keep_lexical_best_when_unsure(verdicts, cands)
    assert verdicts[1].role == "primary" and verdicts[1].relevance > verdicts[0].relevance
    assert verdicts[1].reason.startswith("unsure:") and "unsure" in verdicts[0].reason
    assert verdicts[0].role == "primary"  # the rules' own best is kept, second

    clear = [_verdict("a", "primary", 0.90), _verdict("b", "supporting", 0.70)]
    keep_lexical_best_when_unsure(clear, cands)
    assert clear[1].role == "supporting" and "unsure" not in clear[0].reason
