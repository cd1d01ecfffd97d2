"""The arbiter stage of the one walk against a real DuckDB warehouse: storage round trip, failed calls, re-dispatch,
audit.

The sample corpus is parsed and stored, its questions parsed, and detection (TOC + keywords) run for real and
stored by the walk; then each question is walked from the arbiter stage (``tasks.pipeline.walk_question``, each
stage's rows written as it ends), with only the arbiter's provider varying (the rules arbiter, or a provider that
fails).
"""

from __future__ import annotations

import json

import pytest

from flows.backfill import redispatch_run
from schemas.contracts import ArbiterOutput, RetrievalResult
from schemas.settings import LLMSettings, Settings
from tasks.arbiter import evidence as ev
from tasks.arbiter.audit import AuditError, audit_question, render_audit
from tasks.arbiter.brief import build_arbiter_request
from tasks.arbiter.rules import RulesArbiterProvider
from tasks.corpus.parse import parse_pdf
from tasks.corpus.sample.generate import generate_sample_corpus
from tasks.detect.aggregate import AggregatedCandidate
from tasks.detect.run import CorpusCache, absent_terms, run_detection
from tasks.llm.base import TerminalLLMError
from tasks.llm.client import LLMClient
from tasks.pipeline import PipelineContext, walk_question
from tasks.questions.parser import parse_question
from warehouse.corpus import replace_document
from warehouse.detection import detection_rows, load_candidates
from warehouse.llm_log import flush_calls
from warehouse.questions import load_questions, save_questions
from warehouse.retrieval import (
    load_arbiter_output,
    load_retrieval_result,
    load_retrieval_row,
    load_verdicts,
)
from warehouse.runs import get_run, start_run
from warehouse.sink import QuestionSink, QuestionWrite, write_questions

QUESTIONS = ("s10", "s17", "s25", "s26")


class Failing:
    name, model, offline = "down", "down-1", False

    def send(self, request):
        raise TerminalLLMError("HTTP 401 from the provider: invalid API key")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    made = generate_sample_corpus(tmp_path_factory.mktemp("sample"))
    rows = {r["qid"]: r for r in map(json.loads, made.questions_path.read_text().splitlines())}
    return [parse_pdf(p) for p in made.pdfs], rows


@pytest.fixture
def run(wh, corpus, tmp_path):
    """A run holding the sample corpus, four parsed questions and their detected candidates."""
    docs, rows = corpus
    run_id = start_run(wh, "answer", {"profile": "balanced"})
    for d in docs:
        replace_document(wh, run_id, path=str(d.path), doc_id=d.doc_id, n_bytes=d.n_bytes, pages=d.pages,
                         has_outline=d.has_outline, toc_source=d.toc_source, lines=d.lines, toc=d.toc,
                         parser_version="test")
    parsed = {qid: parse_question(qid, rows[qid]["question"]) for qid in QUESTIONS}
    save_questions(wh, run_id, "sample", [
        {"question_id": qid, "text": q.text, "keywords_primary": q.keywords_primary,
         "keywords_secondary": q.keywords_secondary, "answer_shape": q.answer_shape,
         "decomposition": q.decomposition, "intent": q.intent, "parser": q.parser,
         "gold_pages": rows[qid]["gold_pages_0based"]}
        for qid, q in parsed.items()
    ])
    settings = Settings(home=tmp_path / "home")
    cache = CorpusCache(None, settings)  # frames handed in: the documents just stored
    for d in docs:
        cache.add(d.doc_id, d.lines, d.toc)
    ctx = PipelineContext(wh=wh, run_id=run_id, settings=settings, corpus=cache, vectors=None, embedder=None,
                          arbiter=None, generator=None, stop_after="candidates")
    for row in load_questions(wh, run_id):
        assert walk_question(ctx, row, "detect", QuestionSink(wh, run_id, "stage")).status == "detected"
    pools = {qid: load_candidates(wh, run_id, qid) for qid in parsed}
    yield run_id, parsed, pools
    flush_calls(wh)  # the clients log in batches: commit before the warehouse closes


def rules_client(wh, run_id):
    return LLMClient(RulesArbiterProvider(), wh, run_id, LLMSettings())


def arbitrate_question(wh, run_id, question, pool, client, profile="balanced"):
    """Walk ``question`` from the arbiter stage over ``pool`` (stored as its candidates first, as detection would)
    to its retrieval result, each stage written as it ends; returns the stored result (None when it failed)."""
    qid = question.question_id
    _, candidates = detection_rows(run_id, qid, [], [AggregatedCandidate(c, i, True) for i, c in enumerate(pool, 1)])
    write_questions(wh, run_id, [QuestionWrite(qid, "detected", candidates=candidates)])
    ctx = PipelineContext(wh=wh, run_id=run_id, settings=Settings(), corpus=None, vectors=None, embedder=None,
                          arbiter=client, generator=None, profile=profile, stop_after="retrieval")
    row = next(r for r in load_questions(wh, run_id) if r["question_id"] == qid)
    walk_question(ctx, row, "arbitrate", QuestionSink(wh, run_id, "stage"))
    return load_retrieval_result(wh, run_id, qid)


def count(wh, table, run_id=None):
    flush_calls(wh)
    if run_id is None:
        return wh.scalar(f"SELECT count(*) FROM {table}")
    return wh.scalar(f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id])


def test_arbitrate_stores_verdicts_and_result_idempotently(wh, run):
    run_id, parsed, pools = run
    q, pool = parsed["s17"], pools["s17"]
    assert len(pool) >= 2
    result = arbitrate_question(wh, run_id, q, pool, rules_client(wh, run_id), "balanced")
    assert isinstance(result, RetrievalResult) and result.status == "found"
    flush_calls(wh)
    call_id = wh.scalar("SELECT call_id FROM llm_calls WHERE question_id = 's17' AND status = 'ok'")
    assert (result.arbiter_provider, result.arbiter_model, result.arbiter_call_id) == ("rules", "rules-v1", call_id)

    rows = load_verdicts(wh, run_id, "s17")
    assert [r["candidate_id"] for r in rows] == [c.candidate_id for c in pool]
    assert {(r["provider"], r["model"], r["call_id"]) for r in rows} == {("rules", "rules-v1", call_id)}
    assert load_retrieval_result(wh, run_id, "s17") == result
    row = load_retrieval_row(wh, run_id, "s17")
    assert row["status"] == "found" and row["rule"] == result.rule and row["error"] is None

    # passage text is the stored lines of the candidate's range, not the snippet
    p = result.primary[0]
    stored = wh.execute("SELECT text FROM lines WHERE doc_id = ? AND line_no BETWEEN ? AND ? ORDER BY line_no",
                        [p.doc_id, p.line_start, p.line_end])
    assert p.text == "\n".join(t for (t,) in stored)

    # the fee contradiction between the contract and its amendment reaches the result
    fees = {c.candidate_id for c in pool if "$12,500" in c.snippet or "$14,000" in c.snippet}
    assert any(set(c.candidate_ids) == fees for c in result.contradictions), result.contradictions

    again = arbitrate_question(wh, run_id, q, pool, rules_client(wh, run_id), "balanced")
    assert again.model_dump(exclude={"arbiter_call_id"}) == result.model_dump(exclude={"arbiter_call_id"})
    assert count(wh, "verdicts", run_id) == len(pool) and count(wh, "retrieval_results", run_id) == 1


def test_failed_call_is_recorded_the_next_question_goes_on_and_a_rerun_retries_it(wh, run):
    run_id, parsed, pools = run
    down = LLMClient(Failing(), wh, run_id, LLMSettings())
    assert arbitrate_question(wh, run_id, parsed["s10"], pools["s10"], down, "balanced") is None
    row = load_retrieval_row(wh, run_id, "s10")
    assert row["status"] == "failed" and row["result"] is None and "invalid API key" in row["error"]
    assert load_retrieval_result(wh, run_id, "s10") is None  # a rerun retries it
    q = {r["question_id"]: r for r in load_questions(wh, run_id)}["s10"]
    assert q["status"] == "failed" and "arbiter:" in q["error"]
    flush_calls(wh)
    assert wh.scalar("SELECT count(*) FROM errors WHERE run_id = ? AND stage = 'arbiter' AND subject = 's10'",
                     [run_id]) == 1
    assert count(wh, "verdicts", run_id) == 0

    ok = arbitrate_question(wh, run_id, parsed["s25"], pools["s25"], rules_client(wh, run_id), "balanced")
    assert ok is not None and ok.status == "found"
    again = arbitrate_question(wh, run_id, parsed["s10"], pools["s10"], rules_client(wh, run_id), "balanced")
    assert again is not None and load_retrieval_row(wh, run_id, "s10")["error"] is None
    q = {r["question_id"]: r for r in load_questions(wh, run_id)}["s10"]
    assert q["status"] == "arbitrated" and q["error"] is None


def test_empty_pool_is_not_found_without_a_call(wh, run):
    run_id, parsed, pools = run
    calls = count(wh, "llm_calls")
    result = arbitrate_question(wh, run_id, parsed["s25"], [], rules_client(wh, run_id), "balanced")
    assert result.status == "not_found" and result.rule == "not_found: no candidates"
    assert result.arbiter_call_id is None and count(wh, "llm_calls") == calls
    assert load_verdicts(wh, run_id, "s25") == []


def test_redispatch_makes_a_linked_run_without_llm_calls(wh, run):
    run_id, parsed, pools = run
    client = rules_client(wh, run_id)
    first = {qid: arbitrate_question(wh, run_id, parsed[qid], pools[qid], client, "lenient")
             for qid in ("s17", "s25", "s26")}
    arbitrate_question(wh, run_id, parsed["s10"], pools["s10"], LLMClient(Failing(), wh, run_id, LLMSettings()))
    calls_before = count(wh, "llm_calls")

    new = redispatch_run(wh, run_id, profile="strict", overrides={"max_primary": 1})
    assert new != run_id and count(wh, "llm_calls") == calls_before
    info = get_run(wh, new)
    assert info["flow"] == "redispatch" and info["parent_run_id"] == run_id and info["status"] == "partial"
    summary = json.loads(info["summary"])
    assert summary["profile"] == "strict+overrides" and summary["statuses"] == {"found": 3, "failed": 1}
    for table in ("questions", "candidates", "verdicts"):
        assert count(wh, table, new) == count(wh, table, run_id)
    assert load_candidates(wh, new, "s17") == load_candidates(wh, run_id, "s17")

    for qid, before in first.items():
        after = load_retrieval_result(wh, new, qid)
        assert after.profile == "strict+overrides" and after.arbiter_call_id == before.arbiter_call_id
        assert len(after.primary) <= 1
        assert {p.candidate_id for p in after.primary} <= {p.candidate_id for p in before.primary}
        assert all(p.relevance >= 0.9 for p in after.primary)
        assert load_retrieval_result(wh, run_id, qid) == before  # the source run is untouched
    assert load_retrieval_row(wh, new, "s10")["status"] == "failed"

    # the arbiter's own not_found survives a re-dispatch (it lives in the call's parsed output)
    output, source = load_arbiter_output(wh, new, "s17")
    assert source["call_id"] == first["s17"].arbiter_call_id and output.not_found is False

    lenient = redispatch_run(wh, new, profile="lenient")
    assert get_run(wh, lenient)["parent_run_id"] == new and count(wh, "llm_calls") == calls_before
    assert load_retrieval_result(wh, lenient, "s17").model_dump(exclude={"profile"}) == \
        first["s17"].model_dump(exclude={"profile"})


def test_redispatch_of_unknown_run_fails_clearly(wh):
    with pytest.raises(LookupError, match="run 'nope' not found"):
        redispatch_run(wh, "nope")


def test_audit_rebuilds_the_decision(wh, run):
    run_id, parsed, pools = run
    result = arbitrate_question(wh, run_id, parsed["s17"], pools["s17"], rules_client(wh, run_id), "balanced")
    audit = audit_question(wh, run_id, "s17")
    assert audit["question"]["keywords_primary"] == parsed["s17"].keywords_primary
    assert audit["detector_plan"]["detectors"] and audit["detector_plan"]["rule"]
    assert len([c for c in audit["candidates"] if c["in_pool"]]) == len(pools["s17"])
    assert {v["candidate_id"] for v in audit["verdicts"]} == {c.candidate_id for c in pools["s17"]}
    assert audit["retrieval"]["rule"] == result.rule
    assert audit["retrieval"]["primary"] == [p.candidate_id for p in result.primary]
    (call,) = audit["llm_calls"]
    assert call["provider"] == "rules" and call["status"] == "ok" and call["input_tokens"] > 0
    assert "cost_usd" in call  # the llm_call_costs view exists in this schema

    text = render_audit(audit)
    for piece in ("Question: How did the monthly fee change", "Detector plan:", "Brief:", "Verdicts (",
                  f"Dispatcher (balanced profile): found - {result.rule}", "contradiction:",
                  "rules/rules-v1 attempt 1 ok"):
        assert piece in text, piece
    primary = result.primary[0]
    assert f"reason: {primary.reason}" in text

    new = redispatch_run(wh, run_id, profile="strict")
    assert f"(from run {run_id})" in render_audit(audit_question(wh, new, "s17"))
    with pytest.raises(AuditError, match="no rows in run"):
        audit_question(wh, run_id, "missing")


def test_detection_names_the_question_terms_absent_from_the_documents(corpus, tmp_path):
    """s31 asks about a policy year the insurance document does not hold: detection says so, and the rules arbiter
    declares it not found with that evidence; a year the corpus holds is not absent."""
    docs, rows = corpus
    settings = Settings(home=tmp_path / "home")
    cache = CorpusCache(None, settings)
    for d in docs:
        cache.add(d.doc_id, d.lines, d.toc)
    q = parse_question("s31", rows["s31"]["question"])
    det = run_detection(q, None, cache, None, None, settings)
    assert det.absent_terms == ["2019"] and "absent_terms" in det.seconds
    assert absent_terms(q, [d.doc_id for d in docs], cache) == ["2019"]
    reply = RulesArbiterProvider().send(build_arbiter_request(q, det.pool(), det.absent_terms))
    out = ArbiterOutput.model_validate_json(reply.text)
    assert out.not_found and out.not_found_reason == '"2019" appears nowhere in the searched documents'
    present = sorted({y for d in docs for t in d.lines["text"].to_list() for y in ev.YEAR_RE.findall(t)})[0]
    q2 = parse_question("y", f"What was the annual premium on the Okafors' policy for the {present} policy year?")
    assert absent_terms(q2, None, cache) == []
