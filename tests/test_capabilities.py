"""The openai provider learns what a server accepts (issue #18): the fake OpenAI server made to reject each feature."""

from __future__ import annotations

import json

import pytest

from schemas.contracts import AnswerWithEvidence, ArbiterOutput
from schemas.settings import LLMSettings
from tasks.llm.base import LLMRequest
from tasks.llm.capabilities import Capabilities, capability_change, is_openai
from tasks.llm.client import LLMClient
from tasks.llm.openai_provider import OpenAIProvider
from tests.fake_openai import FakeOpenAI, FakeResponse, completion, error_body
from warehouse.db import Warehouse
from warehouse.llm_log import calls_for_run

RUN = "run-caps"
GOOD = {"value": "12.5 MEUR", "evidence": [], "answer_found": True, "complete_answer_found": True,
        "confidence": 0.9, "caveats": []}


@pytest.fixture
def wh(tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as w:
        yield w


def rejecting(*features: str, usage: bool = True, timings: dict | None = None):
    """A responder that answers 400 to each named feature (json_schema, json_object, max_completion_tokens)."""
    def respond(body: dict) -> FakeResponse:
        fmt = (body.get("response_format") or {}).get("type")
        for feature in features:
            if feature == fmt or feature in body:
                return FakeResponse(status=400, body=error_body(f"'{feature}' is not supported by this server"))
        out = completion(GOOD, usage=usage)
        if timings is not None:
            out["timings"] = timings
        return FakeResponse(body=out)
    return respond


def client(server, wh, **kw):
    s = LLMSettings(base_url=server.base_url, model="local", timeout_s=2.0, max_attempts=2, backoff_base_s=0.001,
                    backoff_max_s=0.002, **kw)
    return LLMClient(OpenAIProvider(s), wh, RUN, s, sleep=lambda _: None)


def request(qid: str = "q1") -> LLMRequest:
    return LLMRequest(stage="generate", question_id=qid, messages=[{"role": "system", "content": "Answer."},
                                                                   {"role": "user", "content": "Revenue?"}],
                      response_model=AnswerWithEvidence, max_output_tokens=50)


def test_json_schema_rejected_falls_back_to_json_object_for_the_rest_of_the_run(wh):
    with FakeOpenAI(default=rejecting("json_schema")) as server:
        c = client(server, wh)
        assert c.complete(request("q1")).parsed.value == "12.5 MEUR"
        assert c.complete(request("q2")).parsed.value == "12.5 MEUR"
        sent = [r.body for r in server.chat_requests()]
    # q1: rejected, then json_object; q2 goes straight to json_object (learned once, reused)
    assert [b["response_format"]["type"] for b in sent] == ["json_schema", "json_object", "json_object"]
    assert "validate against this JSON schema" in sent[1]["messages"][0]["content"]  # the schema is stated
    rows = calls_for_run(wh, RUN)
    assert [r["output_mode"] for r in rows] == ["json_object", "json_object"]
    assert "json_schema rejected; using json_object" in rows[0]["capability_note"]
    assert "not supported" in rows[0]["capability_note"] and rows[1]["capability_note"] is None


def test_both_formats_rejected_falls_back_to_the_schema_in_the_prompt(wh):
    with FakeOpenAI(default=rejecting("json_schema", "json_object")) as server:
        c = client(server, wh)
        assert c.complete(request()).parsed.answer_found is True
        last = server.chat_requests()[-1].body
    assert "response_format" not in last and "JSON schema" in last["messages"][0]["content"]
    [row] = calls_for_run(wh, RUN)
    assert row["output_mode"] == "prompt" and row["status"] == "ok"
    assert "json_schema rejected" in row["capability_note"] and "json_object rejected" in row["capability_note"]


def test_max_completion_tokens_rejected_switches_to_max_tokens(wh):
    with FakeOpenAI(default=rejecting("max_completion_tokens")) as server:
        c = client(server, wh)
        c.complete(request("q1"))
        c.complete(request("q2"))
        sent = [r.body for r in server.chat_requests()]
    assert ["max_completion_tokens" in b for b in sent] == [True, False, False]
    assert [b.get("max_tokens") for b in sent[1:]] == [50, 50]
    rows = calls_for_run(wh, RUN)
    assert [r["token_param"] for r in rows] == ["max_tokens", "max_tokens"]
    assert rows[0]["capability_note"].startswith("max_completion_tokens rejected; using max_tokens")


def test_no_usage_is_counted_with_the_tokenizer_and_marked(wh):
    with FakeOpenAI(default=rejecting(usage=False)) as server:
        result = client(server, wh).complete(request())
    assert result.usage.counted and result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    [row] = calls_for_run(wh, RUN)
    assert row["tokens_counted"] is True and row["input_tokens"] == result.usage.input_tokens


def test_server_timings_and_cache_n_are_recorded(wh):
    timings = {"cache_n": 40, "prompt_n": 10, "prompt_ms": 250.0, "predicted_n": 12, "predicted_ms": 900.0}

    def respond(body: dict) -> FakeResponse:
        out = completion(GOOD, prompt_tokens=50)
        del out["usage"]["prompt_tokens_details"]  # a server that reports its cache only in timings
        out["timings"] = timings
        return FakeResponse(body=out)

    with FakeOpenAI(default=respond) as server:
        client(server, wh).complete(request())
    [row] = calls_for_run(wh, RUN)
    assert row["cached_tokens"] == 40 and json.loads(row["server_timings"]) == timings
    assert row["output_mode"] == "json_schema" and row["token_param"] == "max_completion_tokens"


def arbiter_request(ids: list[str]) -> LLMRequest:
    return LLMRequest(stage="arbiter", question_id="q", messages=[{"role": "user", "content": "judge"}],
                      response_model=ArbiterOutput, payload={"candidates": [{"candidate_id": i} for i in ids]})


def test_bounds_go_to_local_servers_not_to_openai(monkeypatch):
    local = OpenAIProvider(LLMSettings(base_url="http://127.0.0.1:1/v1", bound_text_chars=99, bound_list_items=4))
    schema = local.chat_body(arbiter_request(["c1", "c2", "c3"]))["response_format"]["json_schema"]["schema"]
    verdicts = schema["properties"]["verdicts"]
    assert (verdicts["minItems"], verdicts["maxItems"]) == (3, 3)  # exactly one verdict per pool candidate
    item = verdicts["items"]["properties"]
    assert item["candidate_id"]["enum"] == ["c1", "c2", "c3"] and item["reason"]["maxLength"] == 99
    assert item["contradicts"]["maxItems"] == 4
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_api = OpenAIProvider(LLMSettings())
    plain = openai_api.chat_body(arbiter_request(["c1"]))["response_format"]["json_schema"]["schema"]
    assert "maxItems" not in json.dumps(plain) and "maxLength" not in json.dumps(plain)  # OpenAI's strict subset
    forced = OpenAIProvider(LLMSettings(output_bounds=True)).chat_body(arbiter_request(["c1"]))
    assert forced["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]["maxItems"] == 1


def test_each_pool_gets_its_own_bounds_from_the_shared_template():
    local = OpenAIProvider(LLMSettings(base_url="http://127.0.0.1:1/v1", bound_text_chars=99, bound_list_items=4))

    def schema(ids: list[str]) -> dict:
        return local.chat_body(arbiter_request(ids))["response_format"]["json_schema"]["schema"]

    first = schema(["a", "b"])
    second = schema(["c"])
    no_pool = schema([])
    enum = lambda s: s["properties"]["verdicts"]["items"]["properties"]["candidate_id"].get("enum")  # noqa: E731
    assert enum(first) == ["a", "b"] and enum(second) == ["c"] and enum(no_pool) is None
    assert first["properties"]["verdicts"]["maxItems"] == 2 and second["properties"]["verdicts"]["maxItems"] == 1
    assert no_pool["properties"]["verdicts"]["maxItems"] == 4 and "minItems" not in no_pool["properties"]["verdicts"]
    assert "maxLength" not in json.dumps(first["properties"]["verdicts"]["items"]["properties"]["candidate_id"])
    # the parts no pool changes are shared with the template, not copied per call
    assert first["properties"]["verdicts"]["items"]["properties"]["reason"] is \
        second["properties"]["verdicts"]["items"]["properties"]["reason"]


def test_a_server_rejecting_a_bound_keyword_gets_the_schema_without_bounds(wh):
    def respond(body: dict) -> FakeResponse:
        if "maxLength" in json.dumps(body.get("response_format")):
            return FakeResponse(status=400, body=error_body("unsupported keyword maxLength in schema"))
        return FakeResponse(body=completion(GOOD))

    with FakeOpenAI(default=respond) as server:
        client(server, wh).complete(request())
        assert len(server.chat_requests()) == 2
    [row] = calls_for_run(wh, RUN)
    assert row["output_mode"] == "json_schema" and "bounds rejected" in row["capability_note"]


def test_openai_itself_gets_no_format_fallback_and_unrelated_400s_none():
    sent = Capabilities()
    assert capability_change("Invalid schema for response_format 'X'", sent, formats=False) is None
    assert capability_change("Invalid schema for response_format 'X'", sent)[0].mode == "json_object"
    assert capability_change("messages[1].content: string too long", sent) is None
    assert is_openai(None) and is_openai("https://api.openai.com/v1") and not is_openai("http://127.0.0.1:8080/v1")
