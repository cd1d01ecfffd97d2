"""The ``openai`` provider: the OpenAI API or any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LiteLLM).

Chat completions with structured output (``response_format`` json_schema, strict). The SDK's own retries are
off (``max_retries=0``): :class:`~tasks.llm.client.LLMClient` retries, so that every attempt is a logged row.
SDK errors are mapped at this boundary: 429 / 408 / 409 / 5xx / timeouts / connection errors are transient
(with the server's Retry-After), other HTTP errors terminal; refusals, truncation and content filtering are
invalid output. The API key lives only in the SDK client and is scrubbed from every error text.
"""

from __future__ import annotations

import contextlib
import copy
import email.utils
import json
import logging
import math
import os
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

import httpx2
import openai
from pydantic import BaseModel

from schemas.contracts import LLMUsage
from schemas.settings import LLMSettings
from tasks.llm.base import (
    InvalidOutputError,
    LLMRequest,
    ProviderReply,
    TerminalLLMError,
    TransientLLMError,
)
from tasks.llm.capabilities import (
    Capabilities,
    capability_change,
    is_openai,
    pool_bounds,
    pool_ids,
    schema_instruction,
    size_bounds,
)

log = logging.getLogger("arbiter.llm")

TRANSIENT_STATUS = {408, 409, 429}


class _Rejected(Exception):
    """Internal: the server answered 400 to a feature we can do without; retry with ``caps``."""

    def __init__(self, caps: Capabilities, note: str):
        super().__init__(note)
        self.caps, self.note = caps, note


class SchemaNotStrictError(TypeError):
    """A response model that strict structured output cannot express (free-form dicts, recursion)."""


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema made strict-compatible: refs inlined, every property required, no extra keys.

    Fields with a ``None`` default stay nullable (the model may answer null); fields with another default become
    required with their own type (the model states them). ``default`` keywords are dropped (strict mode rejects
    them and every field is required anyway).
    """
    root = model.model_json_schema()
    defs = root.get("$defs", {})

    def walk(node: Any, path: str, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, f"{path}[{i}]", seen) for i, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        node = dict(node)
        ref = node.pop("$ref", None)
        if ref is not None:
            name = ref.rsplit("/", 1)[-1]
            if not ref.startswith("#/$defs/") or name not in defs:
                raise SchemaNotStrictError(f"{model.__name__}: unresolvable $ref {ref!r} at {path}")
            if name in seen:
                raise SchemaNotStrictError(f"{model.__name__}: recursive model {name} at {path} cannot be inlined")
            node = {**copy.deepcopy(defs[name]), **node}
            seen = (*seen, name)
        node.pop("$defs", None)
        had_none_default = "default" in node and node["default"] is None
        node.pop("default", None)
        out = {key: walk(value, f"{path}.{key}", seen) for key, value in node.items()}
        if out.get("type") == "object" or "properties" in out:
            extra = out.get("additionalProperties")
            if isinstance(extra, dict) or extra is True:
                raise SchemaNotStrictError(
                    f"{model.__name__}: free-form object at {path} (a dict field) is not allowed in strict "
                    "structured output; give it a model with named fields"
                )
            out["additionalProperties"] = False
            out["required"] = list(out.get("properties", {}))
        if had_none_default and not _nullable(out):
            out = {"anyOf": [out, {"type": "null"}]}
        return out

    return walk(root, model.__name__, ())


def _nullable(schema: dict[str, Any]) -> bool:
    if schema.get("type") == "null" or (isinstance(schema.get("type"), list) and "null" in schema["type"]):
        return True
    return any(isinstance(s, dict) and s.get("type") == "null" for s in schema.get("anyOf", []))


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date); None when absent or unreadable."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            parsed = email.utils.parsedate_tz(value) if divisor == 1.0 else None
            if parsed is None:
                continue
            seconds = email.utils.mktime_tz(parsed) - time.time()
        if math.isfinite(seconds):
            return max(0.0, seconds)
    return None


class OpenAIProvider:
    """Chat completions through the real ``openai`` SDK; ``offline = False``."""

    offline = False

    def __init__(
        self,
        settings: LLMSettings,
        *,
        api_key: str | None = None,
        name: str = "openai",
        http_client: Any = None,
        token_limit_param: Literal["max_completion_tokens", "max_tokens"] | None = None,
        temperature: float | None = None,
    ):
        key = api_key
        if key is None and settings.api_key is not None:
            key = settings.api_key.get_secret_value()
        if key is None:
            key = os.environ.get("OPENAI_API_KEY")
        if not key:
            if settings.base_url is None:
                raise TerminalLLMError(
                    "no OpenAI API key: set ARBITER_LLM__API_KEY or OPENAI_API_KEY, point ARBITER_LLM__BASE_URL at "
                    "an OpenAI-compatible server, or use an offline provider (rules / extractive)"
                )
            key = "not-needed"  # local OpenAI-compatible servers ignore the key, but the SDK wants one
        self._secret = key
        self.name = name
        self.model = settings.model
        self.base_url = settings.base_url
        self.timeout_s = settings.timeout_s
        self.temperature = temperature
        bounds = settings.output_bounds if settings.output_bounds is not None else not is_openai(settings.base_url)
        # the run's capabilities: one provider per client per run, so a fallback learned here is reused by every
        # later call of the run (and shows on each of their llm_calls rows)
        self.caps = Capabilities(mode=settings.structured_output,
                                 token_param=token_limit_param or settings.token_limit_param, bounds=bounds)
        self._caps_lock = threading.Lock()
        self.text_chars, self.list_items = settings.bound_text_chars, settings.bound_list_items
        self._schemas: dict[type[BaseModel], dict[str, Any]] = {}
        self._bounded: dict[type[BaseModel], dict[str, Any]] = {}  # _schemas with size bounds (never changed)
        self._client = openai.OpenAI(
            api_key=key, base_url=settings.base_url, timeout=settings.timeout_s, max_retries=0,
            http_client=http_client,
        )

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIProvider(name={self.name!r}, model={self.model!r}, base_url={self.base_url!r})"

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret and self._secret != "not-needed" else text

    @property
    def token_limit_param(self) -> str:
        return self.caps.token_param

    def schema_for(self, request: LLMRequest, caps: Capabilities | None = None) -> dict[str, Any]:
        """The strict schema of the request's model, bounded to this request when the capabilities say so."""
        caps = caps or self.caps
        schema = self._schemas.get(request.response_model)
        if schema is None:
            schema = self._schemas[request.response_model] = strict_json_schema(request.response_model)
        if not caps.bounds:
            return schema
        bounded = self._bounded.get(request.response_model)
        if bounded is None:
            bounded = self._bounded[request.response_model] = size_bounds(
                schema, text_chars=self.text_chars, list_items=self.list_items)
        return pool_bounds(bounded, pool_ids(request.payload))

    def response_format(self, model: type[BaseModel]) -> dict[str, Any]:
        schema = self._schemas.get(model)
        if schema is None:
            schema = self._schemas[model] = strict_json_schema(model)
        return {"type": "json_schema", "json_schema": {"name": model.__name__, "schema": schema, "strict": True}}

    def chat_body(self, request: LLMRequest, caps: Capabilities | None = None) -> dict[str, Any]:
        """The request body (also used for Batch API lines) under ``caps`` (default: the run's capabilities)."""
        caps = caps or self.caps
        schema = self.schema_for(request, caps)
        messages = request.messages
        if caps.mode == "json_schema":
            response_format: dict[str, Any] | None = {
                "type": "json_schema",
                "json_schema": {"name": request.response_model.__name__, "schema": schema, "strict": True},
            }
        else:
            # the server does not enforce the schema: state it (json_object also needs the word JSON present)
            response_format = {"type": "json_object"} if caps.mode == "json_object" else None
            messages = [dict(m) for m in request.messages]
            if messages and messages[0].get("role") == "system":
                messages[0]["content"] = messages[0]["content"] + schema_instruction(schema)
            else:
                messages.insert(0, {"role": "system", "content": schema_instruction(schema).strip()})
        body: dict[str, Any] = {"model": self.model, "messages": messages, caps.token_param: request.max_output_tokens}
        if response_format is not None:
            body["response_format"] = response_format
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    @property
    def sdk(self) -> openai.OpenAI:
        """The SDK client (for the Batch API path); it holds the key, so never log or store it."""
        return self._client

    @contextlib.contextmanager
    def sdk_errors(self, action: str) -> Iterator[None]:
        """Convert SDK exceptions raised inside the block into Transient / Terminal LLM errors."""
        where = self.base_url or "the OpenAI API"
        try:
            yield
        except openai.APITimeoutError as exc:
            raise TransientLLMError(f"timed out after {self.timeout_s}s {action} at {where}") from exc
        except openai.APIConnectionError as exc:
            raise TransientLLMError(self._scrub(f"cannot reach {where} {action}: {exc.__cause__ or exc}")) from exc
        except openai.APIStatusError as exc:
            detail = self._scrub(f"HTTP {exc.status_code} from {where} {action}: {exc.message}")
            if exc.status_code in TRANSIENT_STATUS or exc.status_code >= 500:
                raise TransientLLMError(detail, retry_after_s=retry_after_seconds(exc.response.headers)) from exc
            hint = {
                401: "check the API key (ARBITER_LLM__API_KEY / OPENAI_API_KEY)",
                403: "the key has no access to this model or project",
                404: f"check ARBITER_LLM__MODEL ({self.model}) and ARBITER_LLM__BASE_URL",
            }.get(exc.status_code, "the request was rejected; fix it before retrying")
            raise TerminalLLMError(f"{detail} ({hint})") from exc

    def _post(self, body: dict[str, Any], caps: Capabilities) -> httpx2.Response:
        with self.sdk_errors("for a chat completion"):
            try:
                # The SDK's documented low-level call (README, "undocumented requests"): same transport, auth and
                # error mapping as chat.completions.create, minus its param transform and model parsing, which
                # cost half the client CPU per call; the body is plain JSON we built, and we keep the raw text.
                return self._client.post("/chat/completions", body=body, cast_to=httpx2.Response)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                change = capability_change(f"{exc.message} {exc.body}", caps, formats=not is_openai(self.base_url))
                if change is None:
                    raise
                raise _Rejected(change[0], self._scrub(
                    f"{change[1]} (HTTP {exc.status_code} from {self.base_url or 'the OpenAI API'}: "
                    f"{str(exc.message)[:200]})")) from exc

    def send(self, request: LLMRequest) -> ProviderReply:
        notes: list[str] = []
        caps = self.caps
        for _ in range(6):  # at most: token param, bounds, json_schema -> json_object -> prompt, and a spare
            try:
                response = self._post(self.chat_body(request, caps), caps)
                break
            except _Rejected as rejected:
                notes.append(rejected.note)
                with self._caps_lock:
                    if self.caps == caps:  # another thread may have learned it already
                        self.caps = rejected.caps
                        log.warning("%s: %s; kept for the rest of this run", self.name, rejected.note)
                    caps = self.caps
        else:
            raise TerminalLLMError(f"{self.base_url or 'the OpenAI API'} rejected every fallback: {'; '.join(notes)}")
        body = response.text
        meta = {"output_mode": caps.mode, "token_param": caps.token_param, "bounds": caps.bounds,
                "capability_note": "; ".join(notes) or None}
        try:
            completion = json.loads(body)
        except json.JSONDecodeError as exc:
            raise TransientLLMError(f"{self.base_url or 'the OpenAI API'} answered HTTP {response.status_code} "
                                    f"with a non-JSON body: {self._scrub(body[:200])!r}") from exc
        return self.reply_from_completion(completion, body, meta)

    def reply_from_completion(self, completion: dict[str, Any], body: str,
                              meta: dict[str, Any] | None = None) -> ProviderReply:
        """Map a chat completion (as a dict) to a reply, or raise InvalidOutputError for refusal / truncation.

        ``meta`` (the capabilities it was sent with) gains the server's ``timings`` (llama.cpp) when present."""
        usage = usage_from(completion.get("usage"), completion.get("timings"))
        meta = dict(meta or {})
        if isinstance(completion.get("timings"), dict):
            meta["timings"] = completion["timings"]
        choices = completion.get("choices") or []
        if not choices:
            raise InvalidOutputError("the reply has no choices", usage=usage, raw=body, meta=meta)
        choice = choices[0]
        message = choice.get("message") or {}
        finish = choice.get("finish_reason")
        if message.get("refusal"):
            raise InvalidOutputError(
                f"the model refused: {message['refusal']}",
                feedback="You refused. This is a document-analysis task over the passages given; answer with the schema.",
                usage=usage, raw=body, meta=meta,
            )
        if finish == "length":
            raise InvalidOutputError(
                "the reply was cut off at the output token limit (finish_reason 'length')",
                feedback="Your reply was cut off at the token limit. Keep every text field to one short line.",
                usage=usage, raw=body, meta=meta,
            )
        if finish == "content_filter":
            raise InvalidOutputError("the reply was stopped by the content filter", usage=usage, raw=body, meta=meta)
        content = message.get("content")
        if content is None:
            raise InvalidOutputError(f"the reply has no content (finish_reason {finish!r})", usage=usage, raw=body,
                                     meta=meta)
        return ProviderReply(text=content, usage=usage, raw=body, meta=meta)


def usage_from(usage: dict[str, Any] | None, timings: dict[str, Any] | None = None) -> LLMUsage | None:
    """OpenAI usage -> LLMUsage (cached = prompt_tokens_details.cached_tokens, reasoning likewise); a server that
    reports no cached tokens there but llama.cpp ``timings`` gives them as ``cache_n``."""
    if not usage:
        return None
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    cache_n = timings.get("cache_n") if isinstance(timings, dict) else None
    return LLMUsage(
        input_tokens=usage.get("prompt_tokens") or 0,
        cached_tokens=prompt_details.get("cached_tokens") or cache_n or 0,
        output_tokens=usage.get("completion_tokens") or 0,
        reasoning_tokens=completion_details.get("reasoning_tokens") or 0,
    )
