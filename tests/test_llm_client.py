"""LLMClient logic with a queue-fed fake provider (llm's MockModel style), the rate limiter, replay, prices/views."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from datetime import datetime

import pytest
from pydantic import BaseModel

from schemas.contracts import LLMUsage
from schemas.settings import LLMSettings, Settings
from tasks.llm.base import (
    InvalidOutputError,
    LLMRequest,
    ProviderReply,
    TerminalLLMError,
    TransientLLMError,
)
from tasks.llm.client import LLMCallFailed, LLMClient, parse_reply
from tasks.llm.ratelimit import RateLimiter
from tasks.llm.replay import ReplayProvider
from tasks.llm.tokens import count_messages, count_tokens
from tasks.providers import make_clients
from warehouse.db import Warehouse
from warehouse.llm_log import (
    CallLog,
    CallLogError,
    CallRecord,
    call_log,
    calls_for_run,
    flush_calls,
    insert_calls,
)
from warehouse.prices import PRICES_CSV, PriceFileError, load_prices, read_price_file

RUN = "run-1"


class Answer(BaseModel):
    value: str
    ids: list[str] = []


class QueueProvider:
    """Answers from a queue of reply texts, ProviderReplies or exceptions; records what it was sent."""

    def __init__(self, name="fake", model="gpt-4o-mini", offline=False, items=(), delay_s=0.0, usage=True):
        self.name, self.model, self.offline = name, model, offline
        self.queue = deque(items)
        self.delay_s = delay_s
        self.usage = usage
        self.sent: list[LLMRequest] = []
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def send(self, request):
        with self._lock:
            self.sent.append(request)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            item = self.queue.popleft() if self.queue else '{"value": "default"}'
        try:
            if self.delay_s:
                time.sleep(self.delay_s)
            if isinstance(item, BaseException):
                raise item
            if isinstance(item, ProviderReply):
                return item
            usage = LLMUsage(input_tokens=100, cached_tokens=20, output_tokens=10) if self.usage else None
            return ProviderReply(text=item, usage=usage)
        finally:
            with self._lock:
                self.in_flight -= 1


@pytest.fixture(autouse=True)
def _flush_call_log(wh):
    yield
    flush_calls(wh)  # before conftest closes the warehouse


def settings(**kw) -> LLMSettings:
    base = dict(max_attempts=3, backoff_base_s=0.01, backoff_max_s=0.05, max_in_flight=4)
    return LLMSettings(**{**base, **kw})


def request(qid="q1", stage="generate", text="What is the revenue?") -> LLMRequest:
    return LLMRequest(stage=stage, question_id=qid, regime="batch", step=1,
                      messages=[{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": text}],
                      response_model=Answer, max_output_tokens=50)


def client(provider, wh, fallback=None, sleeps=None, **kw):
    return LLMClient(provider, wh, RUN, settings(**kw), fallback=fallback,
                     sleep=(sleeps.append if sleeps is not None else (lambda s: None)))


def rows(wh):
    return calls_for_run(wh, RUN)


# -- parsing -----------------------------------------------------------------------------------------------------------
def test_parse_reply_accepts_fenced_json_and_explains_errors():
    assert parse_reply('```json\n{"value": "x"}\n```', Answer).value == "x"
    with pytest.raises(InvalidOutputError, match="not valid JSON") as bad:
        parse_reply('{"value": ', Answer)
    assert "line 1" in bad.value.feedback
    with pytest.raises(InvalidOutputError, match="value") as wrong:
        parse_reply('{"ids": []}', Answer)
    assert "Answer schema" in wrong.value.feedback
    with pytest.raises(InvalidOutputError, match="empty"):
        parse_reply("  ", Answer)


# -- one attempt -------------------------------------------------------------------------------------------------------
def test_success_writes_one_complete_row(wh):
    provider = QueueProvider(items=['{"value": "42", "ids": ["a"]}'])
    result = client(provider, wh).complete(request())
    assert result.parsed == Answer(value="42", ids=["a"])
    assert (result.provider, result.model, result.attempts, result.fallback_from) == ("fake", "gpt-4o-mini", 1, None)
    assert result.usage == LLMUsage(input_tokens=100, cached_tokens=20, output_tokens=10)
    [row] = rows(wh)
    assert row["call_id"] == result.call_id and row["status"] == "ok" and row["attempt"] == 1
    assert row["request_hash"] == request().request_hash()
    assert json.loads(row["messages"]) == request().messages
    assert json.loads(row["parsed"]) == {"value": "42", "ids": ["a"]}
    assert row["response"] == '{"value": "42", "ids": ["a"]}'
    assert (row["input_tokens"], row["cached_tokens"], row["output_tokens"]) == (100, 20, 10)
    assert row["tokens_counted"] is False and row["error"] is None
    assert (row["question_id"], row["stage"], row["regime"], row["step"]) == ("q1", "generate", "batch", 1)
    assert row["provider"] == "fake" and row["batch_api"] is False and row["latency_ms"] >= 0


def test_offline_provider_tokens_are_counted(wh):
    reply = '{"value": "counted"}'
    provider = QueueProvider(name="extractive", model="extractive", offline=True, items=[reply], usage=False)
    result = client(provider, wh).complete(request())
    expected_in = count_messages(request().messages)
    assert result.usage == LLMUsage(input_tokens=expected_in, output_tokens=count_tokens(reply), counted=True)
    [row] = rows(wh)
    assert row["tokens_counted"] is True and row["input_tokens"] == expected_in and row["cached_tokens"] == 0


def test_no_warehouse_still_works():
    assert client(QueueProvider(items=['{"value": "x"}']), None).complete(request()).parsed.value == "x"


# -- retries -----------------------------------------------------------------------------------------------------------
def test_transient_errors_back_off_with_jitter_and_retry_after_wins(wh):
    sleeps: list[float] = []
    provider = QueueProvider(items=[TransientLLMError("HTTP 503"), TransientLLMError("429", retry_after_s=1.5),
                                    '{"value": "ok"}'])
    result = client(provider, wh, sleeps=sleeps, max_attempts=3).complete(request())
    assert result.attempts == 3
    assert 0.0 <= sleeps[0] <= 0.01  # full jitter under base * 2**0
    assert sleeps[1] == 1.5
    assert [(r["attempt"], r["status"]) for r in rows(wh)] == [(1, "error"), (2, "error"), (3, "ok")]
    assert "TransientLLMError: HTTP 503" in rows(wh)[0]["error"]
    assert len({r["call_group"] for r in rows(wh)}) == 1


def test_backoff_is_exponential_and_capped(wh):
    c = client(QueueProvider(), wh, backoff_base_s=1.0, backoff_max_s=3.0)
    assert max(c._backoff(1, None) for _ in range(200)) <= 1.0
    assert max(c._backoff(2, None) for _ in range(200)) > 1.0
    assert max(c._backoff(8, None) for _ in range(200)) <= 3.0


def test_persistent_transient_errors_fail_after_max_attempts(wh):
    provider = QueueProvider(items=[TransientLLMError(f"HTTP 500 #{i}") for i in range(5)])
    with pytest.raises(LLMCallFailed) as failed:
        client(provider, wh, max_attempts=3).complete(request(qid="q9"))
    exc = failed.value
    assert (exc.question_id, exc.attempts, exc.stage) == ("q9", 3, "generate")
    assert "HTTP 500 #2" in exc.last_error and "ARBITER_LLM__FALLBACK" in str(exc)
    assert isinstance(exc, TerminalLLMError)
    assert [r["status"] for r in rows(wh)] == ["error"] * 3
    assert len(provider.queue) == 2


def test_terminal_error_is_not_retried(wh):
    provider = QueueProvider(items=[TerminalLLMError("HTTP 400 bad request"), '{"value": "never"}'])
    with pytest.raises(LLMCallFailed, match="HTTP 400"):
        client(provider, wh).complete(request())
    assert len(provider.sent) == 1 and len(rows(wh)) == 1


def test_invalid_reply_gets_one_retry_with_the_error_stated(wh):
    provider = QueueProvider(items=['{"value": ', '{"value": "fixed"}'])
    result = client(provider, wh).complete(request())
    assert result.parsed.value == "fixed" and result.attempts == 2
    assert result.usage.input_tokens == 200  # both attempts spent tokens
    retry_messages = provider.sent[1].messages
    assert retry_messages[:2] == request().messages
    assert retry_messages[-1]["role"] == "user" and "not valid JSON" in retry_messages[-1]["content"]
    first, second = rows(wh)
    assert first["status"] == "error" and "InvalidOutputError" in first["error"] and first["response"] == '{"value": '
    assert first["input_tokens"] == 100
    assert second["status"] == "ok" and second["request_hash"] == first["request_hash"]
    assert json.loads(second["messages"]) == retry_messages


def test_invalid_twice_fails_with_total_usage(wh):
    provider = QueueProvider(items=["not json", '{"wrong": 1}', '{"value": "too late"}'])
    with pytest.raises(LLMCallFailed) as failed:
        client(provider, wh).complete(request())
    assert failed.value.attempts == 2
    assert failed.value.usage.input_tokens == 200 and failed.value.usage.output_tokens == 20
    assert "Answer" in failed.value.last_error
    assert [r["status"] for r in rows(wh)] == ["error", "error"]


def test_validate_hook_error_is_fed_back(wh):
    provider = QueueProvider(items=['{"value": "x", "ids": ["zz"]}', '{"value": "x", "ids": ["a"]}'])

    def known_ids(parsed: Answer) -> None:
        unknown = sorted(set(parsed.ids) - {"a", "b"})
        if unknown:
            raise InvalidOutputError(f"unknown candidate ids {unknown}",
                                     feedback=f"Use only the candidate ids given; unknown: {unknown}")

    result = client(provider, wh).complete(request(), validate=known_ids)
    assert result.parsed.ids == ["a"]
    assert "unknown: ['zz']" in provider.sent[1].messages[-1]["content"]
    assert "unknown candidate ids" in rows(wh)[0]["error"]


def test_unexpected_exception_is_recorded_and_propagates(wh):
    provider = QueueProvider(items=[KeyError("bug in provider")])
    with pytest.raises(KeyError):
        client(provider, wh).complete(request())
    [row] = rows(wh)
    assert row["status"] == "error" and "KeyError" in row["error"]


# -- fallback ----------------------------------------------------------------------------------------------------------
def test_fallback_fires_after_final_failure_and_is_recorded(wh):
    primary = QueueProvider(name="openai", items=[TerminalLLMError("HTTP 401 bad key")])
    rules = QueueProvider(name="rules", model="rules", offline=True, items=['{"value": "from rules"}'], usage=False)
    result = client(primary, wh, fallback=rules).complete(request())
    assert result.parsed.value == "from rules"
    assert (result.provider, result.fallback_from, result.attempts) == ("rules", "openai", 2)
    assert result.usage.counted
    first, second = rows(wh)
    assert (first["provider"], first["status"], first["fallback_from"]) == ("openai", "error", None)
    assert (second["provider"], second["status"], second["fallback_from"], second["attempt"]) == (
        "rules", "ok", "openai", 2)
    assert first["call_group"] == second["call_group"]


def test_fallback_failure_names_both(wh):
    primary = QueueProvider(name="openai", items=[TerminalLLMError("HTTP 403")])
    rules = QueueProvider(name="rules", offline=True, items=[TerminalLLMError("no candidates")])
    with pytest.raises(LLMCallFailed) as failed:
        client(primary, wh, fallback=rules).complete(request())
    assert "openai: TerminalLLMError: HTTP 403" in str(failed.value)
    assert "fallback rules: TerminalLLMError: no candidates" in str(failed.value)
    assert failed.value.attempts == 2


# -- concurrency and rate ----------------------------------------------------------------------------------------------
def test_max_in_flight_is_never_exceeded(wh):
    provider = QueueProvider(delay_s=0.02)
    c = client(provider, wh, max_in_flight=4)
    errors: list[BaseException] = []

    def worker(i):
        try:
            c.complete(request(qid=f"q{i}"))
        except BaseException as exc:  # surfaced by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert provider.peak == 4
    c.close()
    assert wh.scalar("SELECT count(*) FROM llm_calls WHERE status = 'ok'") == 40


def test_a_runs_clients_share_their_slots(wh, tmp_path):
    """MAX_IN_FLIGHT is the run's: the arbiter's and the generator's calls together never exceed it, though more
    questions than slots are walked at once (tasks/pipeline.process_concurrently)."""
    active, peak, lock = [0], [0], threading.Lock()

    class Counted(QueueProvider):
        def send(self, request):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            try:
                return super().send(request)
            finally:
                with lock:
                    active[0] -= 1

    s = Settings(home=tmp_path, llm=settings(max_in_flight=3))
    arb, gen = make_clients(s, wh, RUN)
    assert arb._slots is gen._slots
    arb.provider, gen.provider = Counted(delay_s=0.02), Counted(delay_s=0.02)
    threads = [threading.Thread(target=(arb if i % 2 else gen).complete, args=(request(qid=f"q{i}"),))
               for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 3


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.now += s


def test_rate_limiter_requests_per_minute():
    clock = FakeClock()
    limiter = RateLimiter(requests_per_minute=60, clock=clock, sleep=clock.sleep)  # 1/s, burst 1
    for _ in range(5):
        limiter.acquire()
    assert clock.now == pytest.approx(4.0)
    assert limiter.waited_s == pytest.approx(4.0)


def test_rate_limiter_tokens_per_minute_with_debt_and_settle():
    clock = FakeClock()
    limiter = RateLimiter(tokens_per_minute=6000, clock=clock, sleep=clock.sleep)  # 100 tokens/s, capacity 100
    limiter.acquire(50)
    limiter.acquire(50)
    assert clock.now == 0.0
    limiter.acquire(50)
    assert clock.now == pytest.approx(0.5)
    limiter.acquire(500)  # larger than the bucket: waits for a full bucket, then runs into debt
    assert clock.now == pytest.approx(1.5)
    limiter.settle(reserved_tokens=500, used_tokens=100)  # the API reported fewer: 400 back, debt paid
    limiter.acquire(100)
    assert clock.now == pytest.approx(2.5)  # a full bucket from 0 (without the settle: from -400, t = 6.5)


def test_rate_limiter_is_thread_safe():
    limiter = RateLimiter(requests_per_minute=6000, burst_s=0.01)  # 100/s, capacity 1
    started = time.perf_counter()
    threads = [threading.Thread(target=lambda: [limiter.acquire() for _ in range(3)]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.perf_counter() - started >= 0.22  # 24 requests at 100/s with a bucket of 1


def test_client_rate_limits_online_providers_only(wh):
    clock = FakeClock()
    limiter = RateLimiter(requests_per_minute=60, tokens_per_minute=600_000, clock=clock, sleep=clock.sleep)
    online = LLMClient(QueueProvider(), wh, RUN, settings(), limiter=limiter)
    for _ in range(3):
        online.complete(request())
    assert clock.now == pytest.approx(2.0)
    offline = LLMClient(QueueProvider(offline=True), wh, RUN, settings(), limiter=limiter)
    for _ in range(3):
        offline.complete(request())
    assert clock.now == pytest.approx(2.0)


# -- replay ------------------------------------------------------------------------------------------------------------
def test_replay_serves_the_logged_answer(wh):
    original = client(QueueProvider(items=['{"value": "42"}']), wh).complete(request())
    replay = LLMClient(ReplayProvider(wh, run_id=RUN), wh, "run-2", settings())
    result = replay.complete(request())
    assert result.parsed == original.parsed and result.provider == "replay"
    [row] = calls_for_run(wh, "run-2")
    assert row["replay_of"] == original.call_id and row["model"] == "replay"
    assert (row["input_tokens"], row["cached_tokens"], row["output_tokens"]) == (100, 20, 10)
    # a replay of the replay still points at the original call
    again = LLMClient(ReplayProvider(wh, run_id="run-2"), wh, "run-3", settings()).complete(request())
    assert calls_for_run(wh, "run-3")[0]["replay_of"] == original.call_id and again.parsed == original.parsed


def test_replay_miss_is_loud(wh):
    client(QueueProvider(items=['{"value": "42"}']), wh).complete(request())
    replay = LLMClient(ReplayProvider(wh, run_id="other-run"), wh, "run-2", settings())
    with pytest.raises(LLMCallFailed) as missed:
        replay.complete(request())
    message = str(missed.value)
    assert "replay cannot invent an answer; rerun with a live provider" in message
    assert request().request_hash()[:16] in message and "other-run" in message
    assert missed.value.attempts == 1
    with pytest.raises(LLMCallFailed, match="no logged call"):
        LLMClient(ReplayProvider(wh), wh, "run-2", settings()).complete(request(text="never asked"))


# -- prices and cost views ---------------------------------------------------------------------------------------------
def _record(call_id, model, created, status="ok", batch=False, tokens=(1000, 200, 500), group=None, run=RUN,
            stage="generate", regime="batch", replay_of=None):
    return CallRecord(
        call_id=call_id, call_group=group or call_id, run_id=run, question_id="q1", stage=stage, regime=regime,
        step=1, provider="p", model=model, request_hash="h", messages="[]", response="{}", parsed="{}",
        input_tokens=tokens[0], cached_tokens=tokens[1], output_tokens=tokens[2], reasoning_tokens=0,
        tokens_counted=False, latency_ms=1.0, status=status, error=None, attempt=1, batch_api=batch,
        fallback_from=None, replay_of=replay_of, created_at=created,
    )


def _costs(wh):
    return {r["call_id"]: r for r in wh.query("SELECT * FROM llm_call_costs")}


def test_price_file_loads_idempotently(wh):
    n = load_prices(wh)
    assert n == len(read_price_file()) and n >= 10
    load_prices(wh)
    assert wh.scalar("SELECT count(*) FROM prices") == n
    models = {r[0] for r in wh.execute("SELECT model FROM prices")}
    assert {"gpt-4o-mini", "gpt-4o", "gpt-4.1", "o4-mini", "rules", "extractive", "replay", "reference"} <= models


def test_cost_views_price_tokens(wh):
    load_prices(wh)
    when = datetime(2025, 9, 1, 12, 0)
    insert_calls(wh, [
        _record("a", "gpt-4o-mini", when),
        _record("b", "gpt-4o-mini", when, batch=True),
        _record("c", "rules", when),
        _record("d", "no-such-model", when),
        _record("e", "gpt-4o-mini", datetime(2020, 1, 1)),  # before the model's price took effect
    ])
    costs = _costs(wh)
    assert costs["a"]["cost_usd"] == pytest.approx((800 * 0.15 + 200 * 0.075 + 500 * 0.60) / 1e6)
    assert costs["b"]["cost_usd"] == pytest.approx((800 * 0.075 + 200 * 0.075 + 500 * 0.30) / 1e6)
    assert costs["c"]["cost_usd"] == 0.0
    assert costs["c"]["reference_cost_usd"] == pytest.approx(costs["a"]["cost_usd"])
    assert costs["d"]["cost_usd"] is None and costs["e"]["cost_usd"] is None
    assert costs["a"]["price_version"] == "openai-list-2025-08"
    as_4o = {r["call_id"]: r for r in wh.query("SELECT * FROM llm_call_costs_at('gpt-4o')")}
    assert as_4o["c"]["cost_usd"] == pytest.approx((800 * 2.5 + 200 * 1.25 + 500 * 10.0) / 1e6)


def test_repricing_is_edit_reload_requery(wh, tmp_path):
    load_prices(wh)
    insert_calls(wh, [_record("old", "gpt-4o-mini", datetime(2025, 1, 5)),
                      _record("new", "gpt-4o-mini", datetime(2026, 3, 5))])
    before = _costs(wh)
    assert before["old"]["cost_usd"] == before["new"]["cost_usd"]
    edited = tmp_path / "prices.csv"
    edited.write_text(read_csv_text() + "price-cut-2026,gpt-4o-mini,2026-03-01,0.10,0.05,0.40,0.05,0.20\n")
    load_prices(wh, edited)
    after = _costs(wh)
    assert after["old"]["cost_usd"] == before["old"]["cost_usd"]
    assert after["new"]["cost_usd"] == pytest.approx((800 * 0.10 + 200 * 0.05 + 500 * 0.40) / 1e6)
    assert after["new"]["price_version"] == "price-cut-2026"


def read_csv_text():
    return PRICES_CSV.read_text()


def test_costs_by_run_stage_counts_calls_attempts_failures(wh):
    load_prices(wh)
    when = datetime(2025, 9, 1)
    insert_calls(wh, [
        _record("g1a", "gpt-4o-mini", when, status="error", group="g1", tokens=(0, 0, 0)),
        _record("g1b", "gpt-4o-mini", when, group="g1"),
        _record("g2a", "gpt-4o-mini", when, status="error", group="g2", tokens=(100, 0, 0)),
        _record("g3", "replay", when, replay_of="g1b"),
        _record("s1", "gpt-4o-mini", when, stage="arbiter", regime=None),
    ])
    by = {(r["stage"], r["regime"]): r for r in wh.query("SELECT * FROM llm_costs_by_run_stage WHERE run_id = ?", [RUN])}
    gen = by[("generate", "batch")]
    assert (gen["calls"], gen["attempts"], gen["failed"], gen["failed_attempts"], gen["replayed"]) == (3, 4, 1, 2, 1)
    assert gen["input_tokens"] == 1000 + 100 + 1000
    assert gen["cost_usd"] == pytest.approx((800 * 0.15 + 200 * 0.075 + 500 * 0.60 + 100 * 0.15) / 1e6)
    assert gen["unpriced_attempts"] == 0
    assert by[("arbiter", None)]["calls"] == 1


@pytest.mark.parametrize("line, message", [
    ("v,gpt-x,2025-13-01,1,1,1,1,1", "not an ISO date"),
    ("v,gpt-x,2025-01-01,abc,1,1,1,1", "input_per_mtok 'abc' is not a number"),
    ("v,gpt-x,2025-01-01,-1,1,1,1,1", "negative"),
    ("v,gpt-x,2025-01-01,1,1,1", "expected 8 columns"),
    ("v,gpt-4o-mini,2024-07-18,1,1,1,1,1", "already has a price"),
])
def test_bad_price_file_names_line_and_fix(tmp_path, line, message):
    path = tmp_path / "prices.csv"
    path.write_text(read_csv_text() + line + "\n")
    with pytest.raises(PriceFileError, match=message) as bad:
        read_price_file(path)
    assert f"{path}:" in str(bad.value)


# -- the call log ------------------------------------------------------------------------------------------------------
def _journaled(log) -> list[str]:
    return [json.loads(line)["call_id"] for path in log.journal_paths for line in path.read_bytes().splitlines()]


def test_client_rows_are_durable_before_complete_returns(wh):
    log = call_log(wh)
    log.linger_s = 30  # the writer holds its batch until a flush: the row is journaled, not inserted
    result = client(QueueProvider(items=['{"value": "x"}']), wh).complete(request())
    assert _journaled(log) == [result.call_id]  # on disk beside the warehouse (tests/test_call_journal.py: crash)
    assert wh.scalar("SELECT count(*) FROM llm_calls") == 0  # straight from DuckDB, no flush
    assert [r["call_id"] for r in rows(wh)] == [result.call_id]  # readers flush first
    assert _journaled(log) == []  # committed: dropped from the journal


def _write_concurrently(log, n, wait):
    threads = [threading.Thread(target=log.write, args=(_record(f"c{i}", "gpt-4o-mini", datetime(2025, 9, 1)),),
                                kwargs={"wait": wait}) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_call_log_group_commits_concurrent_durable_writes(wh):
    log = CallLog(wh, linger_s=30)
    _write_concurrently(log, 24, wait=True)
    assert sorted(_journaled(log)) == sorted(f"c{i}" for i in range(24))  # every returned write is on disk
    assert log.syncs < 24  # writers shared syncs
    log.flush()
    assert wh.scalar("SELECT count(*) FROM llm_calls") == 24
    assert log.batches == 1  # one insert for all (the flush ended the writer's lingering)
    assert _journaled(log) == []


def test_call_log_batches_non_durable_writes_until_flush(wh):
    log = CallLog(wh, linger_s=0.5)
    _write_concurrently(log, 40, wait=False)
    assert log.journal_paths == []  # not journaled: durable_log=False trades the crash guarantee for no syncs
    log.flush()
    assert wh.scalar("SELECT count(*) FROM llm_calls") == 40
    assert log.batches <= 2
    client_batch = LLMClient(QueueProvider(items=['{"value": "x"}']), wh, RUN, settings(), durable_log=False)
    client_batch.complete(request())
    client_batch.close()
    assert wh.scalar("SELECT count(*) FROM llm_calls") == 41


def test_call_log_failure_is_raised_not_dropped(tmp_path):
    closed = Warehouse(tmp_path / "closed.duckdb")
    log = CallLog(closed)
    closed.close()
    log.write(_record("x1", "gpt-4o-mini", datetime(2025, 9, 1)))  # durable: journaled, returns before the insert
    with pytest.raises(CallLogError, match=r"could not be written to .*closed\.duckdb.*kept in its llm_calls "
                                           r"journal") as first:
        log.flush()
    assert first.value.__cause__ is not None
    with pytest.raises(CallLogError):  # sticky: the next writer hears of it too
        log.write(_record("x2", "gpt-4o-mini", datetime(2025, 9, 1)))
    log.flush_at_exit()  # already told: the exit hook does not raise it again (and leaves the journal)
    with Warehouse(tmp_path / "closed.duckdb") as reopened:  # the journaled row is inserted on the next open
        assert [r["call_id"] for r in reopened.query("SELECT call_id FROM llm_calls")] == ["x1"]
        batch_log = CallLog(reopened)
    with pytest.raises(CallLogError, match=r"not journaled.*not logged, rerun"):  # durable_log=False: lost
        batch_log.write(_record("x3", "gpt-4o-mini", datetime(2025, 9, 1)), wait=False)
        batch_log.flush()
