"""The openai provider's calls in a child process (tasks/llm/call_process.py), against tests/fake_openai.py: the
same replies and errors as in process, logged by the client in this process, and no child left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from schemas.contracts import AnswerWithEvidence, LLMUsage
from schemas.settings import LLMSettings
from tasks.llm.base import InvalidOutputError, LLMRequest, TerminalLLMError, TransientLLMError
from tasks.llm.call_process import ChildCallProvider
from tasks.llm.client import LLMClient
from warehouse.llm_log import calls_for_run, flush_calls

RUN = "run-cp"
GOOD = {"value": "12.5 MEUR", "evidence": [], "answer_found": True, "complete_answer_found": True,
        "confidence": 0.9, "caveats": []}
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def provider(fake):
    p = ChildCallProvider(LLMSettings(base_url=fake.base_url, api_key="sk-test", timeout_s=5.0, max_in_flight=4))
    yield p
    p.close()


def request(qid="q1") -> LLMRequest:
    return LLMRequest(stage="generate", question_id=qid, regime="batch",
                      messages=[{"role": "user", "content": "What was the 2023 revenue?"}],
                      response_model=AnswerWithEvidence, max_output_tokens=300)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) is gone too
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ")[-1][0] != "Z"


def test_reply_usage_and_body_as_in_process(fake, provider, wh):
    fake.enqueue_completion(GOOD, prompt_tokens=1500, cached_tokens=1024, completion_tokens=80)
    s = LLMSettings(base_url=fake.base_url, api_key="sk-test")
    client = LLMClient(provider, wh, RUN, s, sleep=lambda _: None)
    result = client.complete(request())
    assert result.parsed.value == "12.5 MEUR"
    assert result.usage == LLMUsage(input_tokens=1500, cached_tokens=1024, output_tokens=80)
    flush_calls(wh)
    [row] = calls_for_run(wh, RUN)  # logged here, by the client, as with the SDK in process
    assert row["status"] == "ok" and row["provider"] == "openai" and row["tokens_counted"] is False
    assert json.loads(row["response"])["object"] == "chat.completion"
    [sent] = fake.chat_requests()
    assert sent.body["messages"] == request().messages and sent.body["max_completion_tokens"] == 300
    assert provider._child.pid != os.getpid()


def test_errors_cross_with_their_kind_and_details(fake, provider):
    fake.enqueue_error(429, "slow down", headers={"retry-after": "7"})
    with pytest.raises(TransientLLMError) as transient:
        provider.send(request())
    assert transient.value.retry_after_s == 7.0
    fake.enqueue_error(400, "bad request")
    with pytest.raises(TerminalLLMError, match="bad request"):
        provider.send(request())
    fake.enqueue_completion(None, refusal="I cannot help with that", completion_tokens=5)
    with pytest.raises(InvalidOutputError, match="refused") as invalid:
        provider.send(request())
    assert invalid.value.usage.output_tokens == 5 and json.loads(invalid.value.raw)["choices"]
    assert invalid.value.meta["output_mode"] == "json_schema"


def test_a_dead_child_fails_its_calls_as_transient_and_the_next_call_starts_another(fake, provider):
    fake.enqueue_completion(GOOD, delay_s=3.0)
    first = provider._child.pid
    killer = subprocess.Popen([sys.executable, "-c", f"import os,time,signal; time.sleep(0.8); "
                                                     f"os.kill({first}, signal.SIGKILL)"])
    with pytest.raises(TransientLLMError, match="call process ended"):
        provider.send(request())
    killer.wait()
    fake.enqueue_completion(GOOD)
    assert json.loads(provider.send(request()).text)["value"] == "12.5 MEUR"
    assert provider._child.pid != first


def test_close_ends_the_child(provider):
    pid = provider._child.pid
    provider.close()
    assert not alive(pid)
    assert provider._child is None


def test_the_child_goes_when_its_parent_is_killed(fake, tmp_path):
    """SIGKILL of the process that owns the provider: the child sees its input close and exits."""
    script = textwrap.dedent(f"""
        import sys, time
        sys.path[:0] = [{str(REPO)!r}, {str(REPO / 'tests')!r}]
        from schemas.settings import LLMSettings
        from tasks.llm.call_process import ChildCallProvider
        p = ChildCallProvider(LLMSettings(base_url={fake.base_url!r}, api_key="sk-test", max_in_flight=2))
        print(p._child.pid, flush=True)
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO)
    child = int(parent.stdout.readline())
    assert alive(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)


def test_a_stop_signal_to_the_child_does_not_drop_the_calls_in_flight(fake, provider):
    """SIGTERM sent to the whole process group (a scheduler's stop): the parent decides when calls end."""
    fake.enqueue_completion(GOOD)
    provider.send(request())  # the child is up (its handlers are set)
    fake.enqueue_completion(GOOD, delay_s=0.5)
    os.kill(provider._child.pid, signal.SIGTERM)
    assert json.loads(provider.send(request()).text)["value"] == "12.5 MEUR"
