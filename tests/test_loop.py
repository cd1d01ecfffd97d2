"""The two regimes and their exits (queue-fed fake client), then the walk from generation against a real warehouse
with the real LLMClient and the extractive provider (``tests.walks.answer_question``)."""

from __future__ import annotations

import json

import pytest

from schemas.contracts import (
    AnswerWithEvidence,
    DocumentIdentity,
    IdentityField,
    LLMUsage,
    ParsedQuestion,
    RetrievalResult,
    RetrievedPassage,
)
from schemas.settings import GenerateSettings, LLMSettings, Settings
from tasks.generate.extractive import ExtractiveProvider
from tasks.generate.loop import run_batch, run_sequential
from tasks.generate.prompts import (
    GenerationPassage,
    PassageLine,
    build_generation_request,
    passage_block,
)
from tasks.corpus.identity import IDENTITY_VERSION, identity_json
from tasks.generate.router import Budget
from tasks.generate.run import join_adjacent, prepare_passage
from tasks.llm.base import LLMResult, TerminalLLMError
from tasks.llm.client import LLMCallFailed, LLMClient
from tasks.llm.tokens import count_messages, count_tokens
from warehouse.llm_log import flush_calls
from warehouse.prices import load_prices
from warehouse.runs import start_run
from tests.reader.kit import answer as extract
from tests.walks import answer_question

DOC = "d" * 64


def q(shape: str = "amount", decomposition: str = "single", qid: str = "q1", text: str | None = None,
      primary: list[str] | None = None) -> ParsedQuestion:
    return ParsedQuestion(question_id=qid, text=text or "What was the total revenue in 2023?",
                          keywords_primary=primary or ["total revenue", "2023"], keywords_secondary=[],
                          answer_shape=shape, decomposition=decomposition, intent="t", parser="test")


def gp(i: int) -> GenerationPassage:
    return GenerationPassage(candidate_id=f"c{i}", doc_id=DOC, page=i, line_start=10 * i, line_end=10 * i,
                             lines=[PassageLine(line_no=10 * i, page=i, text=f"line {i}")])


def aw(found: bool, complete: bool, value: str | None = "v") -> AnswerWithEvidence:
    return AnswerWithEvidence(value=value if found else None, answer_found=found, complete_answer_found=complete,
                              confidence=0.5)


class QueueClient:
    """Fake client: answers from a queue, reports fixed usage, records the requests it saw."""

    def __init__(self, *answers: AnswerWithEvidence | Exception, input_tokens: int = 100):
        self.queue = list(answers)
        self.requests = []
        self.input_tokens = input_tokens

    def complete(self, request, validate=None):
        self.requests.append(request)
        item = self.queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return LLMResult(call_id=f"call{len(self.requests)}", provider="fake", model="fake-1", parsed=item,
                         usage=LLMUsage(input_tokens=self.input_tokens, output_tokens=10), latency_ms=5.0, attempts=1)


BUDGET = Budget(max_candidates=4, max_input_tokens=100_000, max_seconds=60)


def test_batch_is_one_call_with_all_top_k():
    client = QueueClient(aw(True, True))
    out = run_batch(client, q(), [gp(i) for i in range(6)], BUDGET)
    assert (out.exit, out.steps, out.status, out.call_ids) == ("single_call", 1, "ok", ["call1"])
    assert len(client.requests[0].payload["passages"]) == 4 and client.requests[0].regime == "batch"


def test_sequential_stops_on_sufficiency():
    client = QueueClient(aw(False, False), aw(True, False, "partial"), aw(True, True, "full"), aw(True, True))
    out = run_sequential(client, q(), [gp(i) for i in range(4)], BUDGET)
    assert (out.exit, out.steps, out.answer.value) == ("sufficiency", 3, "full")
    assert [r.step for r in client.requests] == [1, 2, 3]
    assert [r.payload["passages"][0]["candidate_id"] for r in client.requests] == ["c0", "c1", "c2"]
    assert out.usage.input_tokens == 300 and out.latency_ms == 15.0


def test_sequential_exhaustion_returns_best_partial():
    client = QueueClient(aw(False, False), aw(True, False, "partial"), aw(True, False, "later"))
    out = run_sequential(client, q(), [gp(i) for i in range(3)], BUDGET)
    assert (out.exit, out.steps, out.answer.value, out.answer.complete_answer_found) == (
        "exhaustion", 3, "partial", False)
    assert "no single candidate was sufficient" in out.answer.caveats[-1]


def test_sequential_exhaustion_with_nothing_found_is_a_first_class_answer():
    out = run_sequential(QueueClient(aw(False, False), aw(False, False)), q(), [gp(0), gp(1)], BUDGET)
    assert (out.exit, out.status, out.answer.answer_found, out.answer.value) == ("exhaustion", "ok", False, None)


def test_sequential_token_budget_is_checked_before_each_step():
    client = QueueClient(aw(False, False), aw(False, False), aw(False, False), input_tokens=400)
    budget = Budget(max_candidates=3, max_input_tokens=600, max_seconds=None)
    out = run_sequential(client, q(), [gp(i) for i in range(3)], budget)
    assert (out.exit, out.steps) == ("budget", 1)  # 400 spent + next step's estimate (~260 tokens) > 600
    assert out.budget_hit.startswith("tokens: 400 spent")
    assert out.usage.input_tokens <= 600 and "budget reached" in out.answer.caveats[-1]


def test_a_passage_too_long_for_the_budget_left_is_passed_over_for_a_shorter_one_that_fits():
    long = GenerationPassage(candidate_id="long", doc_id=DOC, page=1, line_start=10, line_end=10,
                             lines=[PassageLine(line_no=10, page=1, text="revenue " * 400)])
    client = QueueClient(aw(False, False), aw(True, True, "$4.2 million"), input_tokens=300)
    budget = Budget(max_candidates=3, max_input_tokens=700, max_seconds=None)
    out = run_sequential(client, q(), [gp(0), long, gp(2)], budget)
    # 300 spent; the long passage (~600 tokens) would pass 700, the short third one (~260) fits and answers
    assert (out.exit, out.steps, out.answer.value) == ("sufficiency", 2, "$4.2 million")
    assert [r.payload["passages"][0]["candidate_id"] for r in client.requests] == ["c0", "c2"]
    assert [r.step for r in client.requests] == [1, 2]  # the steps are the calls made, in order
    assert out.budget_hit.startswith("tokens: 300 spent") and "for passage 2" in out.budget_hit
    assert out.usage.input_tokens <= 700


def test_sequential_time_budget():
    ticks = iter([0.0, 0.0, 5.0, 11.0, 11.0])
    budget = Budget(max_candidates=3, max_input_tokens=None, max_seconds=10)
    out = run_sequential(QueueClient(aw(False, False), aw(True, False)), q(), [gp(i) for i in range(3)], budget,
                         clock=lambda: next(ticks))
    assert (out.exit, out.steps, out.answer.value) == ("budget", 2, "v")
    assert out.budget_hit.startswith("seconds")


def test_failed_call_ends_the_regime_with_the_error_and_its_usage():
    failure = LLMCallFailed("q1", "generate", "fake", 3, LLMUsage(input_tokens=42), "TransientLLMError: 503")
    out = run_sequential(QueueClient(aw(False, False), failure), q(), [gp(0), gp(1), gp(2)], BUDGET)
    assert (out.exit, out.status, out.steps, out.answer) == ("failed", "failed", 2, None)
    assert "503" in out.error and out.usage.input_tokens == 142


# -- the walk from generation: real client, real warehouse ------------------------------------------------------------------
def passage(cid: str, page: int, lines: list[str], start: int, relevance: float, role: str = "primary"):
    return RetrievedPassage(candidate_id=cid, doc_id=DOC, page=page, line_start=start,
                            line_end=start + len(lines) - 1, section="Results", text="\n".join(lines), role=role,
                            decision="keep", reason="r", relevance=relevance, anchor_found=True)


FILLER = [f"Unrelated note {i} about office furniture and the weather in the region." for i in range(5)]
RESULT = RetrievalResult(
    question_id="q1", status="found", rule="primary", arbiter_provider="rules", arbiter_model="rules",
    primary=[passage("c1", 1, ["Total revenue in 2023 reached $4.2 million.", *FILLER], 10, 0.9),
             passage("c2", 3, ["Revenue by segment: retail 2.1 million", *FILLER], 50, 0.6)],
    supporting=[passage(f"c{i}", i + 3, ["Revenue history and notes.", *FILLER], 100 + 10 * i, 0.4, "supporting")
                for i in range(3, 6)],
)


@pytest.fixture
def run_id(wh):
    load_prices(wh)
    return start_run(wh, "answer", {"regime": "both"})


def client_for(wh, run_id, provider=None):
    return LLMClient(provider or ExtractiveProvider(), wh, run_id, LLMSettings(), sleep=lambda s: None)


def test_answer_question_both_regimes_rows_calls_and_views(wh, run_id):
    rows = answer_question(wh, run_id, q(), RESULT, client_for(wh, run_id), Settings(), "both", answer="$4.2 million")
    flush_calls(wh)
    by = {r["regime"]: r for r in rows}
    assert by["batch"]["exit"] == "single_call" and by["sequential"]["exit"] == "sufficiency"
    assert (by["sequential"]["routed"], by["batch"]["routed"]) == (True, False)
    assert by["sequential"]["route_rule"] == "shape:amount" and by["sequential"]["steps"] == 1
    assert by["batch"]["value"] == by["sequential"]["value"] == "$4.2 million"
    assert by["batch"]["correct"] is True and by["sequential"]["correct"] is True
    calls = wh.query("SELECT regime, step, stage, status, input_tokens, tokens_counted FROM llm_calls "
                     "WHERE run_id = ? ORDER BY regime", [run_id])
    assert [(c["regime"], c["step"], c["stage"], c["status"]) for c in calls] == [
        ("batch", 1, "generate", "ok"), ("sequential", 1, "generate", "ok")]
    assert all(c["tokens_counted"] for c in calls)
    stored = {r["regime"]: r for r in wh.query("SELECT * FROM answers WHERE run_id = ?", [run_id])}
    assert stored["batch"]["input_tokens"] == calls[0]["input_tokens"] > stored["sequential"]["input_tokens"]
    cmp = wh.query("SELECT * FROM regime_comparison WHERE run_id = ?", [run_id])[0]
    assert cmp["values_agree"] and cmp["routed_regime"] == "sequential"
    assert cmp["input_ratio"] == pytest.approx(stored["sequential"]["input_tokens"] / stored["batch"]["input_tokens"])
    assert cmp["auto_input_tokens"] == stored["sequential"]["input_tokens"]
    costs = {r["regime"]: r for r in wh.query("SELECT * FROM answer_costs WHERE run_id = ?", [run_id])}
    assert costs["batch"]["cost_usd"] == 0.0 and costs["batch"]["cost_basis"] == "llm_calls"
    expected = (calls[0]["input_tokens"] * 0.15 + stored["batch"]["output_tokens"] * 0.60) / 1e6
    assert costs["batch"]["reference_cost_usd"] == pytest.approx(expected)
    summary = {r["answer_shape"]: r for r in wh.query("SELECT * FROM regime_summary WHERE run_id = ?", [run_id])}
    assert set(summary) == {"amount", "(all)"}
    assert summary["(all)"]["input_savings"] == pytest.approx(1 - cmp["input_ratio"])
    assert summary["amount"]["seq_accuracy"] == 1.0 and summary["amount"]["seq_sufficiency"] == 1
    at = wh.query("SELECT sum(cost_usd) AS usd FROM answer_costs_at('gpt-4o') WHERE run_id = ?", [run_id])[0]
    assert at["usd"] > 0


def test_answer_question_is_idempotent(wh, run_id):
    client = client_for(wh, run_id)
    first = answer_question(wh, run_id, q(), RESULT, client, GenerateSettings(), "auto")
    again = answer_question(wh, run_id, q(), RESULT, client, GenerateSettings(), "auto")
    flush_calls(wh)
    assert [r["regime"] for r in first] == ["sequential"] and again[0]["value"] == first[0]["value"]
    assert wh.scalar("SELECT count(*) FROM llm_calls WHERE run_id = ?", [run_id]) == 1
    assert wh.scalar("SELECT count(*) FROM answers WHERE run_id = ?", [run_id]) == 1


def test_not_found_result_writes_a_row_and_makes_no_call(wh, run_id):
    nf = RetrievalResult(question_id="q1", status="not_found", rule="no_primary", not_found_reason="no primary",
                         arbiter_provider="rules", arbiter_model="rules")
    rows = answer_question(wh, run_id, q(), nf, client_for(wh, run_id), GenerateSettings(), "both")
    assert [(r["regime"], r["exit"], r["steps"], r["status"], r["input_tokens"]) for r in rows] == [
        ("batch", "not_found", 0, "ok", 0), ("sequential", "not_found", 0, "ok", 0)]
    assert "no primary" in json.loads(rows[0]["answer"])["caveats"][0]
    flush_calls(wh)
    assert wh.scalar("SELECT count(*) FROM llm_calls") == 0
    assert wh.query("SELECT cost_basis, cost_usd FROM answer_costs")[0] == {"cost_basis": "no_call", "cost_usd": 0.0}


def test_failed_call_gives_a_failed_row_an_error_and_the_other_regime_runs(wh, run_id):
    class HalfBroken(ExtractiveProvider):
        def send(self, request):
            if request.regime == "batch":
                raise TerminalLLMError("HTTP 400: context too long")
            return super().send(request)

    rows = answer_question(wh, run_id, q(), RESULT, client_for(wh, run_id, HalfBroken()), GenerateSettings(), "both")
    by = {r["regime"]: r for r in rows}
    assert (by["batch"]["status"], by["batch"]["exit"]) == ("failed", "failed")
    assert "context too long" in by["batch"]["error"]
    assert by["sequential"]["status"] == "ok"
    assert wh.scalar("SELECT count(*) FROM errors WHERE run_id = ? AND stage = 'generate'", [run_id]) == 1
    # a rerun redoes only the failed regime
    answer_question(wh, run_id, q(), RESULT, client_for(wh, run_id), GenerateSettings(), "both")
    assert {r["regime"]: r["status"] for r in wh.query("SELECT regime, status FROM answers")} == {
        "batch": "ok", "sequential": "ok"}


def test_prepare_passage_reads_lines_with_context_on_the_same_page(wh):
    rows = [(DOC, 1, n, f"line {n}") for n in range(5, 10)] + [(DOC, 2, n, f"line {n}") for n in range(10, 16)]
    for doc, page, n, text in rows:
        wh.execute("INSERT INTO lines VALUES ('r', ?, ?, ?, ?, [0,0,1,1], 10, false, 0)", [doc, page, n, text])
    p = passage("c", 2, ["line 10", "line 11"], 10, 0.9)
    gp_ = prepare_passage(wh, p, context_lines=2)
    assert [ln.line_no for ln in gp_.lines] == [10, 11, 12, 13] and gp_.lines_source == "warehouse"
    missing = prepare_passage(wh, passage("c", 0, ["alpha", "beta"], 500, 0.9))
    assert [(ln.line_no, ln.text) for ln in missing.lines] == [(500, "alpha"), (501, "beta")]
    assert missing.lines_source == "retrieval_text"


def test_a_passage_that_opens_its_page_mid_sentence_carries_the_previous_pages_end(wh):
    # "PKG" / "10" / "introduces ...": the subject was printed on the page before; its number is left out
    rows = [(1, 20, "The bridge model is trained."), (1, 21, "more strategies like repetition. Furthermore, PKG"),
            (2, 22, "10"), (2, 23, "introduces an innovative method for integrating knowledge"),
            (2, 24, "into white-box models via directive fine-tuning.")]
    for page, n, text in rows:
        wh.execute("INSERT INTO lines VALUES ('r', ?, ?, ?, ?, [0,0,1,1], 10, false, 0)", [DOC, page, n, text])
    gp_ = prepare_passage(wh, passage("c", 2, ["10", "introduces an innovative method"], 22, 0.9))
    assert [(ln.line_no, ln.page) for ln in gp_.lines] == [(21, 1), (23, 2), (24, 2)]
    # a page that opens on a sentence of its own carries nothing over
    wh.execute("INSERT INTO lines VALUES ('r', ?, 3, 25, 'Results are shown below.', [0,0,1,1], 10, false, 0)", [DOC])
    assert [ln.line_no for ln in prepare_passage(wh, passage("c", 3, ["Results are shown below."], 25, 0.9)).lines] == [25]


def test_a_passage_that_ends_inside_a_list_reads_the_rest_of_it_over_the_page_break(wh):
    rows = [(5, 40, "UNIT 8: Managing People"), (5, 41, "ANSWER THESE LEARNING OUTCOMES:"),
            (5, 42, "• How do firms recruit applicants?"), (5, 43, "• How do firms select applicants?"),
            (6, 44, "Writer-ER Course Guide"), (6, 45, "• What is a labor union and what are some of the key"),
            (6, 46, "negotiation issues?"), (6, 47, "• What trends affect labor relations?"),
            (6, 48, "Unit 8 Key Assignments:"), (6, 49, "• Quiz 4")]
    for page, n, text in rows:
        wh.execute("INSERT INTO lines VALUES ('r', ?, ?, ?, ?, [0,0,1,1], 10, false, 0)", [DOC, page, n, text])
    gp_ = prepare_passage(wh, passage("c", 5, ["UNIT 8: Managing People"], 40, 0.9), context_lines=2)
    # the running header of page 6 left out; the list read to the line that ends it, and no further
    assert [ln.line_no for ln in gp_.lines] == [40, 41, 42, 43, 45, 46, 47, 48]
    a = extract(q("amount", text="How many learning outcomes should be answered in UNIT 8?",
                 primary=["learning outcomes", "UNIT 8"]), [gp_])
    assert (a.answer_found, a.value) == (True, "4")
    # a passage that ends on prose reads no further
    assert [ln.line_no for ln in prepare_passage(wh, passage("c", 6, ["Unit 8 Key Assignments:"], 48, 0.9),
                                                 context_lines=0).lines] == [48]


def test_a_passage_that_opens_inside_a_table_carries_its_header(wh):
    """Rows cut from their column header are a row of numbers; the header (with the title and scale above it and
    the block heading nearest the passage) comes with them, the rows between left out."""
    rows = [(30, "Net sales information is as follows (in millions):"), (31, "Three Months Ended June 30,"),
            (32, "2022 2023"), (33, "Operating expenses:"), (34, "Cost of sales $ 66,424 $ 69,373"),
            (35, "Fulfillment 20,342 21,305"), (36, "Technology and infrastructure 18,072 21,931"),
            (37, "Sales and marketing 10,086 10,745"), (38, "We expect these costs to grow in 2024."),
            (39, "Other 1 2")]
    for n, text in rows:
        wh.execute("INSERT INTO lines VALUES ('r', ?, 7, ?, ?, [0,0,1,1], 10, false, 0)", [DOC, n, text])
    gp_ = prepare_passage(wh, passage("c", 7, ["Technology and infrastructure 18,072 21,931"], 36, 0.9),
                          context_lines=1)
    assert [ln.line_no for ln in gp_.lines] == [30, 31, 32, 33, 35, 36, 37]
    a = extract(q("amount", text="What was the technology and infrastructure expense in the second quarter of 2023?",
                  primary=["technology and infrastructure", "second quarter"]), [gp_])
    assert (a.value, a.rule) == ("21,931 million", "value.cell")
    # a passage that opens inside the header carries the rest of it
    opens = passage("c", 7, ["2022 2023", "Operating expenses:", "Cost of sales $ 66,424 $ 69,373", "Fulfillment 20,342 "
                                   "21,305", "Technology and infrastructure 18,072 21,931"], 32, 0.9)
    assert [ln.line_no for ln in prepare_passage(wh, opens, context_lines=0).lines] == [30, 31, 32, 33, 34, 35, 36]
    # a passage whose rows follow prose of its own, or that prints its own header, carries nothing
    assert [ln.line_no for ln in prepare_passage(wh, passage("c", 7, ["2022 2023"], 32, 0.9),
                                                 context_lines=0).lines] == [32]
    assert [ln.line_no for ln in prepare_passage(wh, passage("c", 7, ["Other 1 2"], 39, 0.9),
                                                 context_lines=1).lines] == [38, 39]  # prose first


def test_a_passage_carries_its_documents_fiscal_year_end(wh):
    """Which months a fiscal quarter covers is the document's to say (its identity): the passage carries it."""
    ident = DocumentIdentity(version=IDENTITY_VERSION, fiscal_year_end_month=IdentityField(
        value=9, source='page 10 line 4: "fiscal year ends on the last Saturday of September"'))
    wh.execute("INSERT INTO documents (path, doc_id, run_id, status, identity, ingested_at) VALUES ('a.pdf', ?, 'r', 'ok', ?, "
               "current_timestamp)",
               [DOC, identity_json(ident)])
    wh.execute("INSERT INTO lines VALUES ('r', ?, 1, 5, 'Total net sales $ 94,836', [0,0,1,1], 10, false, 0)", [DOC])
    assert prepare_passage(wh, passage("c", 1, ["Total net sales $ 94,836"], 5, 0.9)).fiscal_year_end_month == 9
    other = "e" * 64  # a document with no identity read: not known
    wh.execute("INSERT INTO lines VALUES ('r', ?, 1, 5, 'Total net sales $ 94,836', [0,0,1,1], 10, false, 0)", [other])
    unknown = passage("c", 1, ["Total net sales $ 94,836"], 5, 0.9).model_copy(update={"doc_id": other})
    assert prepare_passage(wh, unknown).fiscal_year_end_month is None


def test_passages_that_run_on_into_each_other_are_read_as_one_sequential_step():
    # a procedure broken over a page: its steps in two passages, one of them right after the other
    first = GenerationPassage(candidate_id="a", doc_id=DOC, page=8, line_start=10, line_end=12, role="supporting",
                              lines=[PassageLine(line_no=n, page=8, text=f"line {n}") for n in (10, 11, 12)])
    then = GenerationPassage(candidate_id="b", doc_id=DOC, page=9, line_start=13, line_end=14,
                             lines=[PassageLine(line_no=n, page=9, text=f"line {n}") for n in (12, 13, 14)])
    apart = gp(5)
    joined = join_adjacent([first, apart, then])
    assert [p.candidate_id for p in joined] == ["a", "c5"]
    assert [ln.line_no for ln in joined[0].lines] == [10, 11, 12, 13, 14] and joined[0].role == "primary"
    assert (joined[0].line_start, joined[0].line_end) == (10, 14)
    # two long chunks of one table are not joined past a passage's length: one step would cost too much
    long = [GenerationPassage(candidate_id=c, doc_id=DOC, page=2, line_start=a, line_end=a + 29,
                              lines=[PassageLine(line_no=n, page=2, text=f"row {n}") for n in range(a, a + 30)])
            for c, a in (("x", 100), ("y", 130))]
    assert [p.candidate_id for p in join_adjacent(long)] == ["x", "y"]
    # two chunks of one page are read a step each, as retrieval cut them (no page break between them)
    same_page = then.model_copy(update={"page": 8, "lines": [ln.model_copy(update={"page": 8}) for ln in then.lines]})
    assert [p.candidate_id for p in join_adjacent([first, same_page])] == ["a", "b"]


def test_sequential_step_fixed_overhead_is_small():
    # what every sequential step pays besides its one passage: instruction, question, shape, mode line, framing
    # (the pre-#5 prompt paid ~330 tokens here; a sequential run pays it once per step)
    request = build_generation_request(q(), [gp(1)], "sequential", step=2, total=5)
    assert count_messages(request.messages) - count_tokens(passage_block(gp(1))) <= 250


def test_offline_generator_counts_the_tokens_of_each_step_prompt(wh, run_id):
    # the value sits only in the third passage: three sequential steps, each logged with the bpe count of the
    # messages that step would send (one passage each), and batch with the count of its single K-passage prompt
    result = RESULT.model_copy(update={"primary": [
        passage("c1", 1, ["Revenue history and notes.", *FILLER], 10, 0.9),
        passage("c2", 3, ["Revenue by region is described below.", *FILLER], 50, 0.8),
        passage("c3", 5, ["Total revenue in 2023 reached $4.2 million.", *FILLER], 90, 0.5)], "supporting": []})
    rows = answer_question(wh, run_id, q(), result, client_for(wh, run_id),
                           GenerateSettings(seq_max_batch_share=0), "both")  # no cap: all three steps
    flush_calls(wh)
    by = {r["regime"]: r for r in rows}
    assert (by["sequential"]["exit"], by["sequential"]["steps"], by["sequential"]["value"]) == (
        "sufficiency", 3, "$4.2 million")
    shown = [prepare_passage(wh, p) for p in result.passages()]
    calls = wh.query("SELECT regime, step, input_tokens FROM llm_calls WHERE run_id = ? ORDER BY regime, step",
                     [run_id])
    expected = [("batch", 1, count_messages(build_generation_request(q(), shown, "batch", 1, 3).messages))] + [
        ("sequential", i, count_messages(build_generation_request(q(), [p], "sequential", i, 3).messages))
        for i, p in enumerate(shown, start=1)]
    assert [(c["regime"], c["step"], c["input_tokens"]) for c in calls] == expected
    assert by["sequential"]["input_tokens"] == sum(t for r, _, t in expected if r == "sequential")


def test_sequential_never_spends_more_input_than_the_batch_prompt(wh, run_id):
    # the value sits only in the third passage, but three one-passage prompts cost more than the one 3-passage
    # prompt: with the default cap (seq_max_batch_share < 1) sequential stops on its budget before passing batch
    result = RESULT.model_copy(update={"primary": [
        passage("c1", 1, ["Revenue history and notes.", *FILLER], 10, 0.9),
        passage("c2", 3, ["Revenue by region is described below.", *FILLER], 50, 0.8),
        passage("c3", 5, ["Total revenue in 2023 reached $4.2 million.", *FILLER], 90, 0.5)], "supporting": []})
    rows = answer_question(wh, run_id, q(), result, client_for(wh, run_id), GenerateSettings(), "both")
    by = {r["regime"]: r for r in rows}
    seq, batch = by["sequential"], by["batch"]
    assert seq["exit"] == "budget" and 1 <= seq["steps"] < 3 and seq["value"] != "$4.2 million"  # never read
    assert seq["input_tokens"] <= batch["input_tokens"]
    budget = json.loads(seq["budget"]) if isinstance(seq["budget"], str) else seq["budget"]
    first = count_messages(build_generation_request(
        q(), [prepare_passage(wh, result.passages()[0])], "sequential", 1, 3).messages)
    cap = max(int(batch["input_tokens"] * GenerateSettings().seq_max_batch_share), first)
    assert budget["max_input_tokens"] == cap and budget["budget_hit"].startswith("tokens:")


def test_sequential_cap_always_allows_the_first_step(wh, run_id):
    # one passage: the sequential prompt is a few tokens longer than the batch one, and must still be read
    result = RESULT.model_copy(update={"supporting": []})
    result = result.model_copy(update={"primary": result.primary[:1]})
    rows = answer_question(wh, run_id, q(), result, client_for(wh, run_id), GenerateSettings(), "both")
    by = {r["regime"]: r for r in rows}
    assert (by["sequential"]["exit"], by["sequential"]["steps"], by["sequential"]["value"]) == (
        "sufficiency", 1, "$4.2 million")
    shown = [prepare_passage(wh, p) for p in result.passages()]
    one_seq = count_messages(build_generation_request(q(), shown, "sequential", 1, 1).messages)
    one_batch = count_messages(build_generation_request(q(), shown, "batch", 1, 1).messages)
    assert one_seq > one_batch  # what the floor is for
