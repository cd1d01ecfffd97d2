"""The plain-HTTP path of the openai provider (tasks/llm/plain_http.py): taken only where the SDK adds nothing the
server sees, the same request on the wire as the SDK's, and a kept-alive connection the server closed is sent again."""

from __future__ import annotations

import http.client
import socket
import threading

import httpx2
import openai
import pytest
from fake_openai import FakeOpenAI, FakeResponse, completion

from schemas.settings import LLMSettings
from tasks.llm.openai_provider import OpenAIProvider
from tasks.llm.plain_http import plain_http_for


@pytest.fixture
def fake():
    with FakeOpenAI(default=lambda body: FakeResponse(body=completion({"value": "42"}))) as server:
        yield server


def provider(base_url: str, **kw) -> OpenAIProvider:
    return OpenAIProvider(LLMSettings(base_url=base_url, api_key="sk-test", **kw))


def test_taken_for_plain_http_only(fake, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert provider(fake.base_url)._plain is not None
    assert provider("https://api.example.com/v1")._plain is None  # TLS stays with the SDK
    assert OpenAIProvider(LLMSettings(base_url=fake.base_url, api_key="sk-test"),
                          http_client=httpx2.Client())._plain is None  # an injected transport is used
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert provider(fake.base_url)._plain is None  # the SDK's client goes through the proxy
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert provider(fake.base_url)._plain is not None  # ... unless the host bypasses it


def test_same_request_on_the_wire_as_the_sdk(fake):
    p = provider(fake.base_url)
    body = {"model": "m", "messages": [{"role": "user", "content": "é, ü and 100 %"}], "max_completion_tokens": 5}
    plain = p._plain.post("/chat/completions", body)
    sdk = p.sdk.post("/chat/completions", body=body, cast_to=httpx2.Response)
    assert plain.status_code == sdk.status_code == 200 and plain.json()["object"] == "chat.completion"
    a, b = fake.chat_requests()
    assert a.path == b.path and a.body == b.body
    wire = {"accept-encoding", "connection"}  # how each HTTP library frames the same request
    assert {k: v for k, v in a.headers.items() if k not in wire} == {k: v for k, v in b.headers.items()
                                                                       if k not in wire}


def test_http_errors_are_the_sdks_exceptions(fake):
    p = provider(fake.base_url)
    fake.enqueue_error(429, "slow down", headers={"retry-after": "2"})
    with pytest.raises(openai.RateLimitError) as err:
        p._plain.post("/chat/completions", {"model": "m", "messages": []})
    assert err.value.status_code == 429 and "slow down" in err.value.message
    assert err.value.response.headers["retry-after"] == "2"


def test_a_connection_the_server_closed_is_sent_again_on_a_fresh_one(fake):
    closer = socket.socket()
    closer.bind(("127.0.0.1", 0))
    closer.listen(1)

    def accept_and_close() -> None:
        conn, _ = closer.accept()
        conn.recv(65536)
        conn.close()  # an idle keep-alive connection the server dropped: no reply

    threading.Thread(target=accept_and_close, daemon=True).start()
    p = provider(fake.base_url)
    stale = http.client.HTTPConnection("127.0.0.1", closer.getsockname()[1], timeout=5)
    stale.connect()
    p._plain._idle.append(stale)
    reply = p._plain.post("/chat/completions", {"model": "m", "messages": []})
    assert reply.status_code == 200 and len(fake.chat_requests()) == 1
    closer.close()
