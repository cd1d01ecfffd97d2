"""The one LLM client: every model call of the pipeline goes through :meth:`LLMClient.complete`.

It parses the reply into the request's response model, retries transient errors with backoff (Retry-After
wins), gives an invalid reply one retry with the error stated, falls back to a second provider after a final
failure, counts tokens when a provider reports none, bounds concurrency and rate, and logs one ``llm_calls``
row per attempt through the warehouse's :class:`~warehouse.llm_log.CallLog` (on disk, in its journal, before
``complete`` returns, and inserted in batches; with ``durable_log=False`` not journaled; in DuckDB after
:meth:`flush`, by :meth:`close` at the latest). Attempts of one call share ``call_group``; their ``attempt`` numbers
run on across a fallback.
``LLMResult.usage`` is the total over all attempts (retries spend tokens too); the per-attempt figures are in
the rows. API keys never reach this module: providers hold them and scrub them from error texts.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from schemas.contracts import LLMUsage
from schemas.settings import LLMSettings
from tasks.llm.base import (
    InvalidOutputError,
    LLMRequest,
    LLMResult,
    Provider,
    ProviderReply,
    TerminalLLMError,
    TransientLLMError,
)
from tasks.llm.gate import WorkGate
from tasks.llm.ratelimit import RateLimiter
from tasks.llm.tokens import count_messages, count_tokens
from warehouse.db import Warehouse, to_json, utcnow
from warehouse.llm_log import CallRecord, call_log

log = logging.getLogger("arbiter.llm")

Validator = Callable[[BaseModel], None]


class LLMCallFailed(TerminalLLMError):
    """A call that ended without a valid reply, after its retries (and fallback, if any). Carries its data."""

    def __init__(self, question_id: str | None, stage: str, provider: str, attempts: int, usage: LLMUsage,
                 last_error: str):
        self.question_id = question_id
        self.stage = stage
        self.provider = provider
        self.attempts = attempts
        self.last_error = last_error
        super().__init__(
            f"{stage} call for question {question_id or '(none)'} failed with {provider} after {attempts} "
            f"attempt(s): {last_error}. Every attempt is in llm_calls; fix the provider settings (ARBITER_LLM__*: "
            "key, base_url, model) or set ARBITER_LLM__FALLBACK=rules, then rerun the question.",
            usage=usage,
        )


def add_usage(total: LLMUsage, usage: LLMUsage | None) -> LLMUsage:
    if usage is None:
        return total
    return LLMUsage(
        input_tokens=total.input_tokens + usage.input_tokens,
        cached_tokens=total.cached_tokens + usage.cached_tokens,
        output_tokens=total.output_tokens + usage.output_tokens,
        reasoning_tokens=total.reasoning_tokens + usage.reasoning_tokens,
        counted=total.counted or usage.counted,
    )


def _strip_fence(text: str) -> str:
    """Drop one surrounding Markdown code fence (```json ... ```), which some compatible servers add."""
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        body = text[3:-3]
        first_newline = body.find("\n")
        if first_newline != -1 and body[:first_newline].strip().isalpha():
            body = body[first_newline + 1 :]
        return body.strip()
    return text


def parse_reply(text: str, model: type[BaseModel]) -> BaseModel:
    """Reply text -> ``model``; raises :class:`InvalidOutputError` whose feedback tells the model what to fix."""
    body = _strip_fence((text or "").strip())
    if not body:
        raise InvalidOutputError("empty reply", feedback="Your reply was empty.")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise InvalidOutputError(
            f"reply is not valid JSON: {exc}",
            feedback=f"Your reply was not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}).",
        ) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}" for err in exc.errors()[:10]
        )
        raise InvalidOutputError(
            f"reply does not match {model.__name__}: {problems}",
            feedback=f"Your reply did not match the {model.__name__} schema: {problems}.",
        ) from None


def feedback_message(error: InvalidOutputError) -> dict[str, str]:
    return {
        "role": "user",
        "content": f"Your previous reply was rejected: {error.feedback}\n"
        "Reply again with one JSON object that follows the schema, and nothing else.",
    }


def call_record(*, call_id: str, group: str, run_id: str, request: LLMRequest, request_hash: str,
                provider: Provider, status: str, usage: LLMUsage | None, response: str | None, parsed: str | None,
                error: str | None, attempt: int, latency_ms: float, fallback_from: str | None = None,
                replay_of: str | None = None, batch_api: bool = False, meta: dict[str, Any] | None = None) -> CallRecord:
    """The ``llm_calls`` row of one attempt (tokens NULL when unknown, e.g. a 429 that spent none)."""
    meta = meta or {}
    return CallRecord(
        call_id=call_id, call_group=group, run_id=run_id, question_id=request.question_id, stage=request.stage,
        regime=request.regime, step=request.step, provider=provider.name, model=provider.model,
        request_hash=request_hash, messages=to_json(request.messages), response=response, parsed=parsed,
        input_tokens=usage.input_tokens if usage else None,
        cached_tokens=usage.cached_tokens if usage else None,
        output_tokens=usage.output_tokens if usage else None,
        reasoning_tokens=usage.reasoning_tokens if usage else None,
        tokens_counted=bool(usage and usage.counted), latency_ms=latency_ms, status=status, error=error,
        attempt=attempt, batch_api=batch_api, fallback_from=fallback_from, replay_of=replay_of, created_at=utcnow(),
        output_mode=meta.get("output_mode"), token_param=meta.get("token_param"),
        capability_note=meta.get("capability_note"),
        server_timings=to_json(meta["timings"]) if meta.get("timings") is not None else None,
    )


def count_usage(request: LLMRequest, reply_text: str, encoding: str) -> LLMUsage:
    """Locally counted usage: the messages that would be sent, and the reply text."""
    return LLMUsage(input_tokens=count_messages(request.messages, encoding),
                    output_tokens=count_tokens(reply_text, encoding), counted=True)


class _Failure(Exception):
    """Internal: one failed attempt, already recorded; says whether and how to go on."""

    def __init__(self, kind: str, error: Exception, usage: LLMUsage | None):
        self.kind, self.error, self.usage = kind, error, usage


class LLMClient:
    """Logs, retries, validates and throttles model calls for one run; safe to share between threads."""

    def __init__(
        self,
        provider: Provider,
        wh: Warehouse | None,
        run_id: str,
        settings: LLMSettings,
        fallback: Provider | None = None,
        *,
        limiter: RateLimiter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        durable_log: bool = True,
        slots: threading.BoundedSemaphore | None = None,
    ):
        if settings.max_attempts < 1 or settings.max_in_flight < 1:
            raise ValueError("ARBITER_LLM__MAX_ATTEMPTS and ARBITER_LLM__MAX_IN_FLIGHT must be at least 1")
        self.provider = provider
        self.fallback = fallback
        self.wh = wh
        self.call_log = call_log(wh) if wh is not None else None
        self.durable_log = durable_log  # False: rows are not journaled (lost if the process dies before a batch)
        self.run_id = run_id
        self.settings = settings
        self.limiter = limiter or RateLimiter(settings.requests_per_minute, settings.tokens_per_minute)
        # the calls in flight at once; ``slots`` shared by a run's clients (arbiter, generator) caps them together
        self._slots = slots or threading.BoundedSemaphore(settings.max_in_flight)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.gate: WorkGate | None = None  # set while questions run concurrently: let go for the call's duration

    # -- public ---------------------------------------------------------------------------------------------------
    def complete(self, request: LLMRequest, validate: Validator | None = None) -> LLMResult:
        """One logical call: a validated ``request.response_model`` instance, or :class:`LLMCallFailed`.

        ``validate(parsed)`` may raise :class:`InvalidOutputError` (e.g. unknown candidate ids) to get the one
        retry with its feedback. The result's ``usage`` and ``latency_ms`` cover all attempts (and the fallback).
        """
        if self.gate is not None:
            with self.gate.released():
                return self._complete(request, validate)
        return self._complete(request, validate)

    def _complete(self, request: LLMRequest, validate: Validator | None) -> LLMResult:
        group = uuid.uuid4().hex
        started = time.perf_counter()
        try:
            call_id, parsed, usage, attempts = self._call(self.provider, request, validate, group)
            provider, fallback_from = self.provider, None
        except LLMCallFailed as primary:
            if self.fallback is None:
                raise
            log.warning("%s failed for %s; falling back to %s", self.provider.name, request.question_id,
                        self.fallback.name)
            try:
                call_id, parsed, usage, attempts = self._call(
                    self.fallback, request, validate, group, attempt_base=primary.attempts,
                    usage_base=primary.usage or LLMUsage(), fallback_from=self.provider.name,
                )
            except LLMCallFailed as second:
                raise LLMCallFailed(
                    request.question_id, request.stage, f"{self.provider.name} then {self.fallback.name}",
                    second.attempts, second.usage or LLMUsage(),
                    f"{self.provider.name}: {primary.last_error}; fallback {self.fallback.name}: {second.last_error}",
                ) from second
            provider, fallback_from = self.fallback, self.provider.name
        return LLMResult(
            call_id=call_id, provider=provider.name, model=provider.model, parsed=parsed, usage=usage,
            latency_ms=(time.perf_counter() - started) * 1000, attempts=attempts, fallback_from=fallback_from,
        )

    def flush(self) -> None:
        """Commit every llm_calls row this process has queued for the warehouse (rows are written in batches)."""
        if self.call_log is not None:
            self.call_log.flush()

    def wait_ready(self) -> None:
        """Wait for the providers that start something before their first call (the openai provider's call
        process): once, in a run's set-up."""
        for provider in (self.provider, self.fallback):
            if callable(getattr(provider, "wait_ready", None)):
                provider.wait_ready()

    def close(self) -> None:
        """Flush the call log, and end what the providers hold open (the call process of the openai provider)."""
        self.flush()
        for provider in (self.provider, self.fallback):
            if callable(getattr(provider, "close", None)):
                provider.close()

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- one provider, all its attempts -----------------------------------------------------------------------------
    def _call(self, provider: Provider, request: LLMRequest, validate: Validator | None, group: str, *,
              attempt_base: int = 0, usage_base: LLMUsage | None = None, fallback_from: str | None = None):
        request_hash = request.request_hash()
        messages = list(request.messages)
        total = usage_base or LLMUsage()
        attempt, transient, invalid = attempt_base, 0, 0
        while True:
            attempt += 1
            sent = request if not invalid else request.model_copy(update={"messages": messages})
            try:
                call_id, parsed, usage = self._attempt(provider, sent, validate, request_hash, group, attempt,
                                                       fallback_from)
                return call_id, parsed, add_usage(total, usage), attempt
            except _Failure as failure:
                total = add_usage(total, failure.usage)
                error = failure.error
                if failure.kind == "transient":
                    transient += 1
                    if transient < self.settings.max_attempts:
                        delay = self._backoff(transient, getattr(error, "retry_after_s", None))
                        log.info("%s %s %s attempt %d: %s; retrying in %.2fs", provider.name, request.stage,
                                 request.question_id, attempt, error, delay)
                        self._sleep(delay)
                        continue
                elif failure.kind == "invalid" and invalid == 0:
                    invalid += 1
                    messages = [*messages, feedback_message(error)]
                    log.info("%s %s %s attempt %d: %s; retrying once with the error stated", provider.name,
                             request.stage, request.question_id, attempt, error)
                    continue
                raise LLMCallFailed(request.question_id, request.stage, provider.name, attempt, total,
                                    f"{type(error).__name__}: {error}") from error

    def _attempt(self, provider: Provider, request: LLMRequest, validate: Validator | None, request_hash: str,
                 group: str, attempt: int, fallback_from: str | None) -> tuple[str, Any, LLMUsage]:
        call_id = uuid.uuid4().hex
        started = time.perf_counter()

        def record(status: str, usage: LLMUsage | None, response: str | None, parsed: str | None = None,
                   error: str | None = None, replay_of: str | None = None, meta: dict | None = None) -> None:
            if self.call_log is not None:
                self.call_log.write(call_record(
                    call_id=call_id, group=group, run_id=self.run_id, request=request, request_hash=request_hash,
                    provider=provider, status=status, usage=usage, response=response, parsed=parsed, error=error,
                    attempt=attempt, latency_ms=(time.perf_counter() - started) * 1000,
                    fallback_from=fallback_from, replay_of=replay_of, meta=meta,
                ), wait=self.durable_log)

        def fail(kind: str, exc: Exception, usage: LLMUsage | None, response: str | None,
                 meta: dict | None = None) -> _Failure:
            record("error", usage, response, error=f"{type(exc).__name__}: {exc}", meta=meta)
            return _Failure(kind, exc, usage)

        try:
            reply = self._send(provider, request)
        except TransientLLMError as exc:
            raise fail("transient", exc, exc.usage, None) from exc
        except InvalidOutputError as exc:
            # a reply came back but reported no usage (or an offline provider): count it, marked counted
            usage = exc.usage or (self._count(request, exc.raw or "") if provider.offline or exc.raw else None)
            raise fail("invalid", exc, usage, exc.raw, exc.meta) from exc
        except TerminalLLMError as exc:
            raise fail("terminal", exc, exc.usage, None) from exc
        except Exception as exc:  # a bug or an unmapped error: record it, then let it propagate unchanged
            record("error", None, None, error=f"{type(exc).__name__}: {exc}")
            raise
        usage = reply.usage if reply.usage is not None else self._count(request, reply.text)
        response = reply.raw if reply.raw is not None else reply.text
        try:
            parsed = parse_reply(reply.text, request.response_model)
            if validate is not None:
                validate(parsed)
        except InvalidOutputError as exc:
            raise fail("invalid", exc, usage, response, reply.meta) from exc
        except Exception as exc:
            record("error", usage, response, error=f"{type(exc).__name__}: {exc}", meta=reply.meta)
            raise
        record("ok", usage, response, parsed=parsed.model_dump_json(), replay_of=reply.replay_of, meta=reply.meta)
        return call_id, parsed, usage

    # -- helpers ----------------------------------------------------------------------------------------------------
    def _send(self, provider: Provider, request: LLMRequest) -> ProviderReply:
        """Call the provider inside an in-flight slot and, for online providers, the rate limiter."""
        limited = not provider.offline and self.limiter.active
        reserved = 0
        if limited and self.limiter.limits_tokens:
            reserved = count_messages(request.messages, self.settings.tokenizer) + request.max_output_tokens
        with self._slots:
            if limited:
                self.limiter.acquire(reserved)
            reply = provider.send(request)
        if reserved and reply.usage is not None:
            self.limiter.settle(reserved, reply.usage.input_tokens + reply.usage.output_tokens)
        return reply

    def _count(self, request: LLMRequest, reply_text: str) -> LLMUsage:
        return count_usage(request, reply_text, self.settings.tokenizer)

    def _backoff(self, failures: int, retry_after_s: float | None) -> float:
        """Full-jitter exponential backoff; a server's Retry-After wins."""
        if retry_after_s is not None and retry_after_s >= 0:
            return float(retry_after_s)
        ceiling = min(self.settings.backoff_max_s, self.settings.backoff_base_s * 2 ** (failures - 1))
        return self._rng.uniform(0.0, ceiling)
