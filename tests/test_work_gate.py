"""The work gate of concurrent questions (tasks/llm/gate.py): one question computes at a time, its model calls wait
outside the gate, so the calls of many questions are still in flight together."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel

from schemas.contracts import LLMUsage
from schemas.settings import LLMSettings
from tasks.llm.base import LLMRequest, ProviderReply
from tasks.llm.client import LLMClient
from tasks.llm.gate import WorkGate
from warehouse.llm_log import calls_for_run


class Answer(BaseModel):
    value: str


class SlowProvider:
    """Sleeps like a model behind an API and records how many calls were in flight at once, and whether the gate
    was free while it waited."""

    name, model, offline = "slow", "m", False

    def __init__(self, gate: WorkGate, delay_s: float):
        self.gate, self.delay_s = gate, delay_s
        self.lock = threading.Lock()
        self.in_flight = self.peak = 0
        self.gate_free = []

    def send(self, request):
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            free = self.gate._lock.acquire(timeout=5)  # someone else could compute meanwhile
            if free:
                self.gate._lock.release()
            self.gate_free.append(free)
            time.sleep(self.delay_s)
            return ProviderReply(text='{"value": "42"}', usage=LLMUsage(input_tokens=10, output_tokens=2))
        finally:
            with self.lock:
                self.in_flight -= 1


def request(i: int) -> LLMRequest:
    return LLMRequest(stage="generate", question_id=f"q{i}", messages=[{"role": "user", "content": f"q{i}"}],
                      response_model=Answer, max_output_tokens=20)


def test_calls_wait_outside_the_gate_and_stay_in_flight_together(wh):
    gate = WorkGate()
    provider = SlowProvider(gate, delay_s=0.2)
    client = LLMClient(provider, wh, "run-g", LLMSettings(max_in_flight=8))
    client.gate = gate
    computing = []  # threads inside the gate at once, sampled while they compute

    def question(i: int) -> str:
        with gate.held():
            computing.append(i)
            time.sleep(0.01)  # the question's own work, under the gate
            computing.remove(i)
            value = client.complete(request(i)).parsed.value
            assert not computing  # the gate is this thread's again after the call
            return value

    started = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(question, range(8))) == ["42"] * 8
    wall = time.perf_counter() - started
    assert all(provider.gate_free)
    assert provider.peak >= 4  # 8 calls of 0.2 s each overlapped, not one after another under the gate
    assert wall < 8 * 0.2
    assert len(calls_for_run(wh, "run-g")) == 8  # every call logged, as without the gate


def test_released_outside_held_is_a_no_op_and_held_is_exclusive():
    gate = WorkGate()
    with gate.released():  # a thread that does not hold the gate (the sequential path) just runs the block
        pass
    order = []

    def other() -> None:
        with gate.held():
            order.append("other")

    with gate.held():
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(0.1)
        assert order == []  # held here: the other thread waits
        with gate.released():
            thread.join(5)
            assert order == ["other"]  # let go for the block (a model call): the other thread computed
        order.append("back")  # and this thread holds it again
    assert order == ["other", "back"]
