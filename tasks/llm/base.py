"""The interface every model call goes through (DESIGN.md: one client that logs every attempt).

A stage (arbiter, generate) builds an :class:`LLMRequest` carrying both the rendered ``messages`` (what a real LLM
would be sent) and a structured ``payload`` (what offline providers such as the rules arbiter or the extractive
generator compute from). A :class:`Provider` turns a request into a :class:`ProviderReply` (JSON text + usage).
The logging client (``tasks/llm/client.py``) wraps providers: request hash, retries, validation against the
response model, token counting when a provider reports none, one ``llm_calls`` row per attempt.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from schemas.contracts import LLMUsage


class LLMRequest(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    stage: str = Field(description="arbiter | generate")
    question_id: str | None = None
    messages: list[dict[str, str]] = Field(description="chat messages: fixed instructions first, varying data last")
    response_model: type[BaseModel] = Field(description="pydantic model the reply must validate against")
    payload: dict[str, Any] = Field(default_factory=dict, description="structured input for offline providers")
    max_output_tokens: int = 800
    regime: str | None = None
    step: int | None = None

    def request_hash(self) -> str:
        """Provider-independent hash, so that ``replay`` finds a call made by any provider."""
        body = {
            "stage": self.stage,
            "messages": self.messages,
            "response_model": self.response_model.__name__,
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class ProviderReply(BaseModel):
    text: str = Field(description="raw reply (JSON text for structured output)")
    usage: LLMUsage | None = Field(default=None, description="as reported by the API; None -> counted locally")
    raw: str | None = Field(default=None, description="full raw response body, when different from text")
    replay_of: str | None = Field(default=None, description="call_id the reply was replayed from (replay provider)")
    meta: dict[str, Any] | None = Field(default=None, description="what the server was sent with and returned "
                                        "beside the reply: output_mode, token_param, capability_note, timings")


class LLMResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    call_id: str
    provider: str
    model: str
    parsed: Any
    usage: LLMUsage
    latency_ms: float
    attempts: int
    fallback_from: str | None = None


class TransientLLMError(RuntimeError):
    """Worth retrying with backoff: 429, 5xx, timeouts, connection resets."""

    def __init__(self, message: str, retry_after_s: float | None = None, usage: LLMUsage | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.usage = usage


class TerminalLLMError(RuntimeError):
    """Not worth retrying as is: 4xx, refusals, replay misses, schema violations after the allowed retry."""

    def __init__(self, message: str, usage: LLMUsage | None = None):
        super().__init__(message)
        self.usage = usage


class InvalidOutputError(RuntimeError):
    """The reply did not validate (bad JSON, wrong schema, unknown ids). Retried once with the error stated."""

    def __init__(self, message: str, feedback: str | None = None, *, usage: LLMUsage | None = None,
                 raw: str | None = None, meta: dict[str, Any] | None = None):
        super().__init__(message)
        self.feedback = feedback or message
        self.meta = meta  # the provider's ProviderReply.meta for the offending reply
        self.usage = usage  # tokens the invalid reply spent, when the provider knows them
        self.raw = raw  # the offending reply, for the llm_calls row


@runtime_checkable
class Provider(Protocol):
    name: str
    model: str
    offline: bool

    def send(self, request: LLMRequest) -> ProviderReply: ...
