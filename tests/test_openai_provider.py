"""The real ``openai`` SDK driven against tests/fake_openai.py, through LLMClient, logging to a real warehouse."""

from __future__ import annotations

import json
import logging

import pytest
from fake_openai import FakeOpenAI, FakeResponse, completion
from pydantic import BaseModel

from schemas.contracts import (
    AnswerWithEvidence,
    ArbiterOutput,
    CandidateVerdict,
    LLMUsage,
)
from schemas.settings import LLMSettings
from tasks.llm.base import (
    InvalidOutputError,
    LLMRequest,
    ProviderReply,
    TerminalLLMError,
)
from tasks.llm.batch_api import (
    BatchNotFinished,
    run_batch,
    submit_batch,
    wait_for_batch,
)
from tasks.llm.client import LLMCallFailed, LLMClient
from tasks.llm.openai_provider import (
    OpenAIProvider,
    SchemaNotStrictError,
    retry_after_seconds,
    strict_json_schema,
)
from warehouse.llm_log import calls_for_run, flush_calls
from warehouse.prices import load_prices

RUN = "run-oa"
SECRET = "sk-test-SECRET123"
GOOD = {"value": "12.5 MEUR", "evidence": [], "answer_found": True, "complete_answer_found": True,
        "confidence": 0.9, "caveats": []}


class QueueRules:
    """A stand-in offline fallback (the real rules arbiter lives with its stage)."""

    name, model, offline = "rules", "rules", True

    def send(self, request):
        return ProviderReply(text=json.dumps({**GOOD, "value": "from rules"}))


@pytest.fixture(autouse=True)
def _flush_call_log(wh):
    yield
    flush_calls(wh)  # before conftest closes the warehouse


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def llm_settings(fake, **kw) -> LLMSettings:
    base = dict(base_url=fake.base_url, api_key=SECRET, model="gpt-4o-mini", timeout_s=2.0, max_attempts=3,
                backoff_base_s=0.001, backoff_max_s=0.002, max_in_flight=4)
    return LLMSettings(**{**base, **kw})


def make(fake, wh, fallback=None, **kw):
    sleeps: list[float] = []
    s = llm_settings(fake, **kw)
    return LLMClient(OpenAIProvider(s), wh, RUN, s, fallback=fallback, sleep=sleeps.append), sleeps


def request(qid="q1", max_output_tokens=300) -> LLMRequest:
    return LLMRequest(stage="generate", question_id=qid, regime="batch",
                      messages=[{"role": "system", "content": "Answer with evidence."},
                                {"role": "user", "content": "What was the 2023 revenue?"}],
                      response_model=AnswerWithEvidence, max_output_tokens=max_output_tokens)


def attempts(wh):
    return [(r["attempt"], r["status"]) for r in calls_for_run(wh, RUN)]


def test_success_maps_usage_and_sends_strict_schema(fake, wh):
    fake.enqueue_completion(GOOD, prompt_tokens=1500, cached_tokens=1024, completion_tokens=80, reasoning_tokens=64)
    c, _ = make(fake, wh, output_bounds=False)  # what OpenAI itself is sent: the plain strict schema
    result = c.complete(request(max_output_tokens=300))
    assert result.parsed.value == "12.5 MEUR"
    assert result.usage == LLMUsage(input_tokens=1500, cached_tokens=1024, output_tokens=80, reasoning_tokens=64)
    [row] = calls_for_run(wh, RUN)
    assert (row["input_tokens"], row["cached_tokens"], row["output_tokens"], row["reasoning_tokens"]) == (
        1500, 1024, 80, 64)
    assert row["tokens_counted"] is False and row["provider"] == "openai" and row["model"] == "gpt-4o-mini"
    assert json.loads(row["response"])["object"] == "chat.completion"  # the raw body is kept
    [sent] = fake.chat_requests()
    body = sent.body
    assert body["model"] == "gpt-4o-mini" and body["max_completion_tokens"] == 300
    assert body["messages"] == request().messages
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == "AnswerWithEvidence"
    assert fmt["json_schema"]["schema"] == strict_json_schema(AnswerWithEvidence)
    assert sent.headers["x-stainless-retry-count"] == "0"  # the SDK did not retry on its own


def test_max_tokens_param_for_compatible_servers(fake):
    fake.enqueue_completion(GOOD)
    s = llm_settings(fake)
    OpenAIProvider(s, token_limit_param="max_tokens").send(request(max_output_tokens=77))
    body = fake.chat_requests()[0].body
    assert body["max_tokens"] == 77 and "max_completion_tokens" not in body


def test_missing_usage_is_counted_locally(fake, wh):
    fake.enqueue_completion(GOOD, usage=False)
    c, _ = make(fake, wh)
    result = c.complete(request())
    assert result.usage.counted and result.usage.input_tokens > 10 and result.usage.output_tokens > 10
    assert calls_for_run(wh, RUN)[0]["tokens_counted"] is True


def test_429_with_retry_after_then_success(fake, wh):
    fake.enqueue_error(429, "Rate limit reached", headers={"Retry-After": "7"})
    fake.enqueue_completion(GOOD)
    c, sleeps = make(fake, wh)
    assert c.complete(request()).attempts == 2
    assert sleeps == [7.0]
    assert attempts(wh) == [(1, "error"), (2, "ok")]
    assert "HTTP 429" in calls_for_run(wh, RUN)[0]["error"]


def test_500_then_success(fake, wh):
    fake.enqueue_error(500, "upstream exploded")
    fake.enqueue_completion(GOOD)
    c, sleeps = make(fake, wh)
    assert c.complete(request()).parsed.answer_found
    assert len(sleeps) == 1 and 0.0 <= sleeps[0] <= 0.001
    assert attempts(wh) == [(1, "error"), (2, "ok")]


def test_timeout_then_success(fake, wh):
    fake.enqueue_completion(GOOD, delay_s=1.0)
    fake.enqueue_completion(GOOD)
    c, _ = make(fake, wh, timeout_s=0.25)
    assert c.complete(request()).attempts == 2
    first = calls_for_run(wh, RUN)[0]
    assert first["status"] == "error" and "timed out after 0.25s" in first["error"]


def test_persistent_500_fails_after_max_attempts(fake, wh):
    for _ in range(4):
        fake.enqueue_error(503, "overloaded")
    c, sleeps = make(fake, wh, max_attempts=3)
    with pytest.raises(LLMCallFailed) as failed:
        c.complete(request(qid="q7"))
    assert failed.value.attempts == 3 and failed.value.question_id == "q7"
    assert len(fake.chat_requests()) == 3 and len(sleeps) == 2 and fake.pending == 1
    assert attempts(wh) == [(1, "error"), (2, "error"), (3, "error")]


def test_400_is_terminal_and_not_retried(fake, wh):
    # a 400 that names no feature the provider can do without (those fall back: test_capabilities.py)
    fake.enqueue_error(400, "Invalid 'messages[1].content': string too long")
    fake.enqueue_completion(GOOD)
    c, sleeps = make(fake, wh)
    with pytest.raises(LLMCallFailed, match="HTTP 400.*string too long"):
        c.complete(request())
    assert len(fake.chat_requests()) == 1 and sleeps == []
    assert attempts(wh) == [(1, "error")]


def test_invalid_json_gets_one_retry_with_feedback(fake, wh):
    fake.enqueue_completion('{"value": "12.5 MEUR", "evid')
    fake.enqueue_completion(GOOD)
    c, _ = make(fake, wh)
    assert c.complete(request()).attempts == 2
    second = fake.chat_requests()[1].body["messages"]
    assert len(second) == 3 and "not valid JSON" in second[-1]["content"]
    assert attempts(wh) == [(1, "error"), (2, "ok")]
    assert calls_for_run(wh, RUN)[0]["input_tokens"] == 120  # the invalid attempt's tokens are recorded


def test_invalid_twice_fails(fake, wh):
    fake.enqueue_completion("nonsense")
    fake.enqueue_completion({"value": 3})
    c, _ = make(fake, wh)
    with pytest.raises(LLMCallFailed) as failed:
        c.complete(request())
    assert failed.value.attempts == 2 and failed.value.usage.input_tokens == 240
    assert attempts(wh) == [(1, "error"), (2, "error")]


def test_validate_hook_error_reaches_the_model(fake, wh):
    verdict = {"candidate_id": "zz:9:l1-2", "role": "primary", "decision": "keep", "reason": "states revenue",
               "relevance": 0.9, "contradicts": [], "anchor_found": True, "rewrite": None, "flagged": False}
    fake.enqueue_completion({"verdicts": [verdict], "not_found": False, "not_found_reason": None})
    fake.enqueue_completion({"verdicts": [{**verdict, "candidate_id": "ab:1:l1-2"}], "not_found": False,
                             "not_found_reason": None})

    def known(parsed: ArbiterOutput) -> None:
        unknown = [v.candidate_id for v in parsed.verdicts if v.candidate_id != "ab:1:l1-2"]
        if unknown:
            raise InvalidOutputError(f"unknown candidate ids: {unknown}")

    c, _ = make(fake, wh)
    arb = LLMRequest(stage="arbiter", question_id="q1", messages=[{"role": "user", "content": "rank"}],
                     response_model=ArbiterOutput)
    result = c.complete(arb, validate=known)
    assert result.parsed.verdicts[0].candidate_id == "ab:1:l1-2"
    assert "unknown candidate ids: ['zz:9:l1-2']" in fake.chat_requests()[1].body["messages"][-1]["content"]


@pytest.mark.parametrize("kwargs, error", [
    ({"finish_reason": "length"}, "cut off at the output token limit"),
    ({"refusal": "I can't help with that.", "content": None}, "the model refused"),
    ({"finish_reason": "content_filter"}, "content filter"),
])
def test_truncation_refusal_filter_are_invalid_output(fake, wh, kwargs, error):
    content = kwargs.pop("content", '{"value": "12.5 ME')
    fake.enqueue_completion(content, **kwargs)
    fake.enqueue_completion(GOOD)
    c, _ = make(fake, wh)
    assert c.complete(request()).attempts == 2
    first = calls_for_run(wh, RUN)[0]
    assert first["status"] == "error" and error in first["error"] and first["input_tokens"] == 120
    assert "rejected" in fake.chat_requests()[1].body["messages"][-1]["content"]


def test_fallback_provider_fires_and_is_recorded(fake, wh):
    fake.enqueue_error(401, "Incorrect API key provided")
    c, _ = make(fake, wh, fallback=QueueRules())
    result = c.complete(request())
    assert result.parsed.value == "from rules" and result.fallback_from == "openai"
    rows = calls_for_run(wh, RUN)
    assert [(r["provider"], r["status"], r["attempt"], r["fallback_from"]) for r in rows] == [
        ("openai", "error", 1, None), ("rules", "ok", 2, "openai")]
    assert "check the API key" in rows[0]["error"]
    assert rows[1]["tokens_counted"] is True


def test_connection_refused_is_transient(wh):
    s = LLMSettings(base_url="http://127.0.0.1:9/v1", api_key=SECRET, timeout_s=1.0, max_attempts=2)
    c = LLMClient(OpenAIProvider(s), wh, RUN, s, sleep=lambda _: None)
    with pytest.raises(LLMCallFailed, match="cannot reach") as failed:
        c.complete(request())
    assert failed.value.attempts == 2


def test_api_key_is_never_stored_or_logged(fake, wh, caplog):
    caplog.set_level(logging.DEBUG)
    fake.enqueue_error(500, "boom")
    fake.enqueue_error(401, f"Incorrect API key provided: {SECRET}")  # a proxy that echoes the key
    fake.enqueue_completion(GOOD)
    c, _ = make(fake, wh, fallback=QueueRules())
    assert c.complete(request()).fallback_from == "openai"  # 500, then 401 echoing the key, then rules
    assert c.complete(request(qid="q2")).provider == "openai"
    c.close()
    assert fake.chat_requests()[0].headers["authorization"] == f"Bearer {SECRET}"  # it was sent...
    dump = []
    for (table,) in wh.execute("SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"):
        dump.append(repr(wh.execute(f'SELECT * FROM "{table}"')))
    dump = "\n".join(dump)
    assert "***" in dump  # ...the echoed key was scrubbed from the error text...
    assert SECRET not in dump and "SECRET123" not in dump  # ...and is nowhere in the warehouse
    assert caplog.records and SECRET not in caplog.text  # nor in any log line
    assert SECRET not in repr(c.provider)


def test_missing_key_without_base_url_says_what_to_set(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(TerminalLLMError, match="ARBITER_LLM__API_KEY or OPENAI_API_KEY"):
        OpenAIProvider(LLMSettings())


def test_retry_after_forms():
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a past date
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def _walk(node, path=""):
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{path}[{i}]")


@pytest.mark.parametrize("model", [ArbiterOutput, AnswerWithEvidence, CandidateVerdict])
def test_strict_schema_rules(model):
    schema = strict_json_schema(model)
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text and '"default"' not in text
    for path, node in _walk(schema):
        if "properties" in node:
            assert node["additionalProperties"] is False, path
            assert node["required"] == list(node["properties"]), path
    assert model.model_json_schema() != schema  # the pydantic schema itself was not mutated


def test_strict_schema_keeps_nullable_and_rejects_dicts():
    props = strict_json_schema(ArbiterOutput)["properties"]
    assert {"type": "null"} in props["not_found_reason"]["anyOf"]
    verdict = props["verdicts"]["items"]["properties"]
    assert {"type": "null"} in verdict["rewrite"]["anyOf"]
    assert verdict["role"]["enum"] == ["primary", "supporting", "tangential", "discarded"]

    class Loose(BaseModel):
        scores: dict[str, float]

    with pytest.raises(SchemaNotStrictError, match="dict field"):
        strict_json_schema(Loose)

    class Node(BaseModel):
        children: list["Node"] = []

    with pytest.raises(SchemaNotStrictError, match="recursive"):
        strict_json_schema(Node)


def test_unqueued_request_fails_loudly(fake, wh):
    c, _ = make(fake, wh)
    with pytest.raises(LLMCallFailed, match="no response queued"):
        c.complete(request())
    assert fake.unqueued == 1


def test_fake_serves_raw_responses(fake):
    fake.enqueue(FakeResponse(body=completion("{}"), headers={"x-request-id": "req_1"}))
    s = llm_settings(fake)
    reply = OpenAIProvider(s).send(request())
    assert reply.text == "{}" and reply.usage.input_tokens == 120


def test_batch_api_round_trip_is_logged_and_priced_at_batch_rates(fake, wh):
    fake.enqueue_completion(GOOD, prompt_tokens=1000, cached_tokens=400, completion_tokens=100)
    fake.enqueue_completion("not json at all")
    fake.enqueue_error(500, "batch line failed")
    s = llm_settings(fake)
    sleeps: list[float] = []
    requests = [request(qid=f"b{i}") for i in range(3)]
    results = run_batch(OpenAIProvider(s), requests, wh, RUN, poll_interval_s=5.0, sleep=sleeps.append)
    assert results[0].parsed.value == "12.5 MEUR" and results[0].usage.cached_tokens == 400
    assert isinstance(results[1], LLMCallFailed) and "not valid JSON" in results[1].last_error
    assert isinstance(results[2], LLMCallFailed) and "HTTP 500" in results[2].last_error
    assert sleeps == [5.0, 5.0]  # polled (3 times) until the fake reported completion
    routes = [(r.method, r.path.split("?")[0]) for r in fake.requests]
    assert routes[:2] == [("POST", "/v1/files"), ("POST", "/v1/batches")]
    assert ("GET", "/v1/files/" + routes[-1][1].split("/")[3] + "/content") == routes[-1]
    batch_body = fake.requests[1].body
    assert batch_body["endpoint"] == "/v1/chat/completions" and batch_body["metadata"] == {"run_id": RUN}
    rows = calls_for_run(wh, RUN)
    assert sorted((r["question_id"], r["status"], r["batch_api"]) for r in rows) == [
        ("b0", "ok", True), ("b1", "error", True), ("b2", "error", True)]
    load_prices(wh)
    cost = wh.scalar("SELECT cost_usd FROM llm_call_costs WHERE question_id = 'b0'")
    assert cost == pytest.approx((600 * 0.075 + 400 * 0.075 + 100 * 0.30) / 1e6)
    by = wh.query("SELECT calls, failed FROM llm_costs_by_run_stage WHERE run_id = ?", [RUN])
    assert by == [{"calls": 3, "failed": 2}]


def test_batch_still_running_says_how_to_collect(fake, wh):
    fake.enqueue_completion(GOOD)
    fake.batch_polls = 100
    provider = OpenAIProvider(llm_settings(fake))
    batch_id = submit_batch(provider, [request()], RUN)
    ticks = iter([0.0, 0.0, 100.0, 100.0])
    with pytest.raises(BatchNotFinished, match=f"collect_batch.*{batch_id}"):
        wait_for_batch(provider, batch_id, poll_interval_s=1.0, max_wait_s=50.0, sleep=lambda _: None,
                       clock=lambda: next(ticks))
