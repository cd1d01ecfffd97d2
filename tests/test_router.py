"""The deterministic generation router."""

from __future__ import annotations

import pytest

from schemas.contracts import ParsedQuestion, RetrievalResult, RetrievedPassage
from schemas.settings import GenerateSettings
from tasks.generate.router import close_call, route

SETTINGS = GenerateSettings(top_k=5, close_call_margin=0.05, seq_max_tokens=9000, seq_max_seconds=30)


def q(shape: str, decomposition: str = "single") -> ParsedQuestion:
    return ParsedQuestion(question_id="q", text="?", keywords_primary=["k"], keywords_secondary=[],
                          answer_shape=shape, decomposition=decomposition, intent="t", parser="test")


def p(cid: str, relevance: float, page: int, doc: str = "d" * 64) -> RetrievedPassage:
    return RetrievedPassage(candidate_id=cid, doc_id=doc, page=page, line_start=1, line_end=4, section="", text="t",
                            role="primary", decision="keep", reason="r", relevance=relevance, anchor_found=True)


def result(*passages: RetrievedPassage, status: str = "found") -> RetrievalResult:
    return RetrievalResult(question_id="q", status=status, primary=list(passages), rule="r",
                           arbiter_provider="rules", arbiter_model="rules")


CLEAR = result(p("a", 0.9, 1), p("b", 0.6, 2), p("c", 0.5, 3))


@pytest.mark.parametrize("shape", ["amount", "date", "boolean", "entity"])
def test_single_typed_value_goes_sequential(shape):
    r = route(q(shape), CLEAR, SETTINGS)
    assert (r.regime, r.rule) == ("sequential", f"shape:{shape}")
    assert (r.budget.max_candidates, r.budget.max_input_tokens, r.budget.max_seconds) == (3, 9000, 30)


@pytest.mark.parametrize("shape", ["list", "comparison", "text"])
def test_list_comparison_text_go_batch(shape):
    r = route(q(shape), CLEAR, SETTINGS)
    assert (r.regime, r.rule) == ("batch", f"shape:{shape}")
    assert (r.budget.max_candidates, r.budget.max_input_tokens) == (3, None)


@pytest.mark.parametrize("decomposition", ["multi_part", "compare"])
def test_decomposed_questions_go_batch_even_for_typed_values(decomposition):
    assert route(q("amount", decomposition), CLEAR, SETTINGS).rule == f"decomposition:{decomposition}"


def test_close_call_on_different_pages_goes_batch():
    close = result(p("a", 0.90, 1), p("b", 0.87, 7))
    r = route(q("amount"), close, SETTINGS)
    assert (r.regime, r.rule) == ("batch", "close_call")


def test_close_call_on_the_same_page_stays_sequential():
    same_page = result(p("a", 0.90, 1), p("b", 0.89, 1))
    assert route(q("amount"), same_page, SETTINGS).regime == "sequential"
    other_doc = result(p("a", 0.90, 1), p("b", 0.89, 1, doc="e" * 64))
    assert close_call(other_doc, 0.05)


def test_margin_is_relative_and_configurable():
    pair = result(p("a", 0.80, 1), p("b", 0.70, 2))
    assert not close_call(pair, 0.05)
    assert close_call(pair, 0.15)
    assert route(q("date"), pair, SETTINGS.model_copy(update={"close_call_margin": 0.15})).rule == "close_call"


def test_not_found_routes_without_passages():
    r = route(q("amount"), result(status="not_found"), SETTINGS)
    assert r.rule == "not_found" and r.budget.max_candidates == 0


def test_top_k_caps_the_budget():
    many = result(*[p(str(i), 0.9 - i * 0.1, i) for i in range(8)])
    assert route(q("list"), many, SETTINGS).budget.max_candidates == 5


def test_same_input_same_route():
    close = result(p("a", 0.90, 1), p("b", 0.87, 7))
    for shape in ("amount", "list", "text"):
        for decomposition in ("single", "compare"):
            for r in (CLEAR, close):
                first = route(q(shape, decomposition), r, SETTINGS)
                again = route(q(shape, decomposition), r.model_copy(deep=True), SETTINGS)
                assert first == again
