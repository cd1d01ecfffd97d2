"""The OpenAI Batch API path: many requests as one JSONL batch, at half price, answered within 24 h.

``submit_batch`` uploads the requests (files API, purpose ``batch``) and creates a batch on
``/v1/chat/completions``; ``wait_for_batch`` polls it; ``collect_batch`` downloads the output and error files,
maps lines back by ``custom_id`` and logs one ``llm_calls`` row per request with ``batch_api = true`` (so the
cost views price it at batch rates; ``latency_ms`` is the batch's turnaround). ``run_batch`` does all three.
A batch has no retry loop: a request whose line failed or did not validate comes back as :class:`LLMCallFailed`
in its slot, for the caller to rerun live through :class:`~tasks.llm.client.LLMClient` if it wants.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from schemas.contracts import LLMUsage
from tasks.llm.base import InvalidOutputError, LLMRequest, LLMResult, TransientLLMError
from tasks.llm.client import (
    LLMCallFailed,
    Validator,
    call_record,
    count_usage,
    parse_reply,
)
from tasks.llm.openai_provider import OpenAIProvider
from warehouse.db import Warehouse
from warehouse.llm_log import call_log

log = logging.getLogger("arbiter.llm.batch")

ENDPOINT = "/v1/chat/completions"
FINAL_STATUSES = {"completed", "failed", "expired", "cancelled"}


class BatchNotFinished(TransientLLMError):
    """The batch is still running after ``max_wait_s``; collect it later by its id."""

    def __init__(self, batch_id: str, status: str, waited_s: float):
        self.batch_id, self.status = batch_id, status
        super().__init__(
            f"batch {batch_id} is still {status} after {waited_s:.0f}s; it keeps running at OpenAI: call "
            f"collect_batch(provider, wait_for_batch(provider, {batch_id!r}), requests, ...) later"
        )


def custom_id(index: int, request: LLMRequest) -> str:
    return f"r{index}-{request.request_hash()[:16]}"


def batch_jsonl(provider: OpenAIProvider, requests: list[LLMRequest]) -> bytes:
    lines = [
        json.dumps({"custom_id": custom_id(i, r), "method": "POST", "url": ENDPOINT, "body": provider.chat_body(r)},
                   ensure_ascii=False)
        for i, r in enumerate(requests)
    ]
    return ("\n".join(lines) + "\n").encode()


def submit_batch(provider: OpenAIProvider, requests: list[LLMRequest], run_id: str) -> str:
    """Upload the requests and create the batch; returns the batch id (record it to collect later)."""
    if not requests:
        raise ValueError("submit_batch needs at least one request")
    data = batch_jsonl(provider, requests)
    with provider.sdk_errors("uploading the batch input file"):
        upload = provider.sdk.files.create(file=(f"arbiter-{run_id}.jsonl", data, "application/jsonl"),
                                           purpose="batch")
    with provider.sdk_errors("creating the batch"):
        batch = provider.sdk.batches.create(input_file_id=upload.id, endpoint=ENDPOINT, completion_window="24h",
                                            metadata={"run_id": run_id})
    log.info("submitted batch %s: %d requests, %d bytes", batch.id, len(requests), len(data))
    return batch.id


def wait_for_batch(provider: OpenAIProvider, batch_id: str, *, poll_interval_s: float = 30.0,
                   max_wait_s: float = 24 * 3600.0, sleep: Callable[[float], None] = time.sleep,
                   clock: Callable[[], float] = time.monotonic) -> Any:
    """Poll until the batch reaches a final status; transient poll errors are retried at the next poll."""
    started = clock()
    while True:
        try:
            with provider.sdk_errors(f"polling batch {batch_id}"):
                batch = provider.sdk.batches.retrieve(batch_id)
        except TransientLLMError as exc:
            log.warning("%s; polling again in %.0fs", exc, poll_interval_s)
            status = "unknown"
        else:
            status = batch.status
            if status in FINAL_STATUSES:
                return batch
        if clock() - started >= max_wait_s:
            raise BatchNotFinished(batch_id, status, clock() - started)
        sleep(poll_interval_s)


def _file_lines(provider: OpenAIProvider, file_id: str | None) -> list[dict[str, Any]]:
    if not file_id:
        return []
    with provider.sdk_errors(f"downloading batch file {file_id}"):
        text = provider.sdk.files.content(file_id).text
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def collect_batch(provider: OpenAIProvider, batch: Any, requests: list[LLMRequest], wh: Warehouse | None,
                  run_id: str, *, validate: Validator | None = None, turnaround_s: float | None = None,
                  tokenizer: str = "o200k_base") -> list[LLMResult | LLMCallFailed]:
    """Map the batch's output back onto ``requests`` (same order as submitted) and log one row per request."""
    items = {item["custom_id"]: item for f in (batch.output_file_id, batch.error_file_id)
             for item in _file_lines(provider, f)}
    latency_ms = (turnaround_s if turnaround_s is not None
                  else max(0.0, (getattr(batch, "completed_at", None) or time.time()) - batch.created_at)) * 1000
    writer = call_log(wh) if wh is not None else None
    results: list[LLMResult | LLMCallFailed] = []
    for i, request in enumerate(requests):
        call_id, group = uuid.uuid4().hex, uuid.uuid4().hex
        usage: LLMUsage | None = None
        response: str | None = None
        parsed = None
        item = items.get(custom_id(i, request))
        try:
            if item is None:
                raise InvalidOutputError(f"no result for this request in batch {batch.id} (status {batch.status})")
            if item.get("error"):
                raise InvalidOutputError(f"batch error: {item['error']}")
            status_code = item["response"]["status_code"]
            body = item["response"]["body"]
            response = json.dumps(body, ensure_ascii=False)
            if status_code != 200:
                message = (body.get("error") or {}).get("message") if isinstance(body, dict) else body
                raise InvalidOutputError(f"HTTP {status_code} in batch {batch.id}: {message}")
            reply = provider.reply_from_completion(body, response)
            usage = reply.usage or count_usage(request, reply.text, tokenizer)
            parsed = parse_reply(reply.text, request.response_model)
            if validate is not None:
                validate(parsed)
            error = None
        except InvalidOutputError as exc:
            usage = usage or exc.usage
            error = f"{type(exc).__name__}: {exc}"
        if writer is not None:
            writer.write(call_record(
                call_id=call_id, group=group, run_id=run_id, request=request, request_hash=request.request_hash(),
                provider=provider, status="ok" if error is None else "error", usage=usage, response=response,
                parsed=parsed.model_dump_json() if error is None else None, error=error, attempt=1,
                latency_ms=latency_ms, batch_api=True,
            ))
        if error is None:
            results.append(LLMResult(call_id=call_id, provider=provider.name, model=provider.model, parsed=parsed,
                                     usage=usage, latency_ms=latency_ms, attempts=1))
        else:
            results.append(LLMCallFailed(request.question_id, request.stage, f"{provider.name} (batch)", 1,
                                         usage or LLMUsage(), error))
    return results


def run_batch(provider: OpenAIProvider, requests: list[LLMRequest], wh: Warehouse | None, run_id: str, *,
              validate: Validator | None = None, poll_interval_s: float = 30.0, max_wait_s: float = 24 * 3600.0,
              sleep: Callable[[float], None] = time.sleep) -> list[LLMResult | LLMCallFailed]:
    """Submit, wait, collect: one result (or LLMCallFailed) per request, in order."""
    started = time.monotonic()
    batch_id = submit_batch(provider, requests, run_id)
    batch = wait_for_batch(provider, batch_id, poll_interval_s=poll_interval_s, max_wait_s=max_wait_s, sleep=sleep)
    if batch.status != "completed":
        log.warning("batch %s ended %s; unanswered requests come back as failures", batch_id, batch.status)
    return collect_batch(provider, batch, requests, wh, run_id, validate=validate,
                         turnaround_s=time.monotonic() - started)
