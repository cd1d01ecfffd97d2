"""Crash safety at the flow level: SIGKILL mid-generation then resume by run id; one question's arbiter failing.

The killed run is the real CLI (``python -m flows.cli answer``) in its own process group, generating through the
real ``openai`` SDK against the fake OpenAI server of ``tests/fake_openai.py``. The fake holds the K-th generation
request open and tells the test it arrived, so the kill always lands inside a generation call, after exactly
K-1 completed ones: deterministic, no sleeps, no log scraping. Subprocesses use the test session's Prefect server
(``PREFECT_API_URL``) instead of starting their own.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, FakeResponse, completion, error_body

from flows.answer import answer_flow
from tasks.corpus.sample.generate import generate_sample_corpus
from warehouse.db import Warehouse

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = 6           # the crash test's question subset (s01..s06: one document)
GATE_AT = 3             # the generation request held open when the process is killed
TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "_migrations": ("name",),
    "runs": ("run_id",),
    "errors": ("run_id", "stage", "subject", "error"),
    "documents": ("path",),
    "lines": ("doc_id", "line_no"),
    "toc": ("doc_id", "section_id"),
    "questions": ("run_id", "question_id"),
    "detector_hits": ("run_id", "question_id", "detector", "rank"),
    "candidates": ("run_id", "question_id", "candidate_id"),
    "verdicts": ("run_id", "question_id", "candidate_id"),
    "retrieval_results": ("run_id", "question_id"),
    "answers": ("run_id", "question_id", "regime"),
    "llm_calls": ("call_id",),
    "prices": ("model", "effective_date"),
    "eval_results": ("run_id", "question_id", "method"),
    "kw_docs": ("doc_id",),
    "kw_windows": ("doc_id", "win"),
    "kw_postings": ("term", "doc_id", "win"),
    "kw_sorted": ("rows",),
}


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return generate_sample_corpus(tmp_path_factory.mktemp("sample"))


def question_subset(sample, dest: Path, ids: list[str] | None = None, n: int = QUESTIONS) -> Path:
    rows = [json.loads(line) for line in sample.questions_path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["qid"] in ids] if ids else rows[:n]
    dest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return dest


def duplicate_keys(wh: Warehouse) -> dict[str, int]:
    """Tables whose rows repeat a key (name -> number of repeated keys); every table must have a known key."""
    tables = [r[0] for r in wh.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'")]
    unknown = sorted(set(tables) - set(TABLE_KEYS))
    assert not unknown, f"new table(s) {unknown}: add their key to TABLE_KEYS"
    out = {}
    for table in tables:
        cols = ", ".join(TABLE_KEYS[table])
        n = wh.scalar(f"SELECT count(*) FROM (SELECT {cols} FROM {table} GROUP BY ALL HAVING count(*) > 1)")
        if n:
            out[table] = n
    return out


class GatedAnswers:
    """Generation replies for the fake server: reply n says ``answer #n``; reply ``gate_at`` waits for release."""

    def __init__(self, gate_at: int | None):
        self.gate_at = gate_at
        self.count = 0
        self.arrived = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> FakeResponse:
        with self._lock:
            self.count += 1
            n = self.count
        if n == self.gate_at:
            self.arrived.set()
            self.release.wait(120)
        answer = {"value": f"answer #{n}", "evidence": [], "answer_found": True, "complete_answer_found": True,
                  "confidence": 0.9, "caveats": []}
        return FakeResponse(body=completion(answer, prompt_tokens=300 + n, completion_tokens=20))


def cli_env(fake: FakeOpenAI, prefect_server, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARBITER_")}
    env.update({
        "PREFECT_API_URL": prefect_server.api_url,
        "PREFECT_LOGGING_TO_API_ENABLED": "false",
        "ARBITER_EMBEDDER__KIND": "hash",
        "ARBITER_GENERATE__PROVIDER": "openai",
        "ARBITER_LLM__BASE_URL": fake.base_url,
        "ARBITER_LLM__API_KEY": "sk-test",
        "ARBITER_LLM__MODEL": "gpt-4o-mini",
        "PYTHONUNBUFFERED": "1",
        **extra,
    })
    return env


def answer_cmd(questions: Path, data_root: Path, home: Path, run_id: str) -> list[str]:
    return [sys.executable, "-m", "flows.cli", "answer", str(questions), "--data-root", str(data_root),
            "--home", str(home), "--run-id", run_id]


def start_answer(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    out = log.open("w")
    return subprocess.Popen(cmd, cwd=log.parent, env=env, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)  # its own process group: the kill takes all of it


def wait_for(event: threading.Event, proc: subprocess.Popen, log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not event.wait(0.2):
        if proc.poll() is not None:
            pytest.fail(f"the run exited ({proc.returncode}) before the gated request:\n{log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"no gated request within {timeout}s:\n{log.read_text()[-3000:]}")


def snapshot(wh: Warehouse, run_id: str, qids: list[str]) -> dict[str, list[dict]]:
    out = {}
    for table, order in (("answers", "question_id, regime"), ("retrieval_results", "question_id"),
                         ("verdicts", "question_id, candidate_id"), ("candidates", "question_id, candidate_id")):
        out[table] = wh.query(f"SELECT * FROM {table} WHERE run_id = ? AND question_id IN (SELECT unnest(?)) "
                              f"ORDER BY {order}", [run_id, qids])
    return out


def test_sigkill_mid_generation_then_resume(sample, tmp_path, prefect_server):
    questions = question_subset(sample, tmp_path / "questions.jsonl")
    home, run_id = tmp_path / "home", "crash-test-run"
    gate = GatedAnswers(gate_at=GATE_AT)
    with FakeOpenAI(default=gate) as fake:
        t0 = time.monotonic()
        cmd = answer_cmd(questions, sample.root, home, run_id)
        proc = start_answer(cmd, cli_env(fake, prefect_server), tmp_path / "first.log")
        wait_for(gate.arrived, proc, tmp_path / "first.log")
        os.killpg(proc.pid, signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
        t_killed = time.monotonic() - t0
        gate.release.set()

        with Warehouse(home / "warehouse.duckdb", read_only=True) as wh:  # the lock died with the process
            assert wh.scalar("SELECT status FROM runs WHERE run_id = ?", [run_id]) == "running"
            statuses = dict(wh.execute("SELECT question_id, status FROM questions WHERE run_id = ?", [run_id]))
            done = sorted(q for q, s in statuses.items() if s == "answered")
            assert 0 < len(done) < QUESTIONS, f"the kill did not land mid-run: {statuses}"
            assert any(s == "arbitrated" for s in statuses.values()), "no question was mid-generation"
            calls_before = wh.scalar("SELECT count(*) FROM llm_calls WHERE run_id = ? AND stage = 'generate' "
                                     "AND status = 'ok'", [run_id])
            assert calls_before == GATE_AT - 1  # the held call never returned, so it was never logged
            before = snapshot(wh, run_id, done)

        gate.gate_at = None
        requests_before = len(fake.chat_requests())
        t1 = time.monotonic()
        resume = subprocess.run(
            [*cmd, "--json"], cwd=tmp_path, env=cli_env(fake, prefect_server), capture_output=True, text=True,
            timeout=240)
        t_resume = time.monotonic() - t1
        resumed_requests = len(fake.chat_requests()) - requests_before
    assert resume.returncode == 0, resume.stdout[-2000:] + resume.stderr[-3000:]
    summary = json.loads(resume.stdout[resume.stdout.index("{"):resume.stdout.rindex("}") + 1])
    assert summary["run_id"] == run_id and summary["processed"] == QUESTIONS - len(done)

    with Warehouse(home / "warehouse.duckdb", read_only=True) as wh:
        assert duplicate_keys(wh) == {}
        assert wh.scalar("SELECT status FROM runs WHERE run_id = ?", [run_id]) == "ok"
        assert wh.scalar("SELECT count(*) FROM runs") == 1  # resumed, not a second run
        final = dict(wh.execute("SELECT question_id, status FROM questions WHERE run_id = ?", [run_id]))
        assert set(final.values()) == {"answered"}, final
        assert snapshot(wh, run_id, done) == before, "a question finished before the kill changed on resume"
        calls_after = wh.scalar("SELECT count(*) FROM llm_calls WHERE run_id = ? AND stage = 'generate' "
                                "AND status = 'ok'", [run_id])
        assert resumed_requests == calls_after - calls_before  # only unfinished questions were generated again
        assert wh.scalar("SELECT count(*) FROM (SELECT question_id, regime, step FROM llm_calls WHERE run_id = ? "
                         "AND stage = 'generate' AND status = 'ok' GROUP BY ALL HAVING count(*) > 1)", [run_id]) == 0
        missing = wh.scalar("SELECT count(*) FROM (SELECT unnest(call_ids) AS c FROM answers WHERE run_id = ?) a "
                            "WHERE c NOT IN (SELECT call_id FROM llm_calls WHERE status = 'ok')", [run_id])
        assert missing == 0
    print(f"\nkill after {t_killed:.1f}s ({len(done)}/{QUESTIONS} answered, {GATE_AT - 1} generation calls); "
          f"resume {t_resume:.1f}s ({resumed_requests} generation calls)")


# -- LLM faults at the flow level ----------------------------------------------------------------------------------
FAILING = "s02"


def arbiter_replies(body: dict) -> FakeResponse:
    """A valid ArbiterOutput naming the brief's first candidate primary; HTTP 400 for question FAILING."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    qid = re.search(r"Question \(([^)]+)\)", user).group(1)
    if qid == FAILING:
        return FakeResponse(status=400, body=error_body(f"fake: request for {qid} rejected"))
    ids = re.findall(r'"id":\s*"([^"]+)"', user)
    verdicts = [{"candidate_id": ids[0], "role": "primary", "reason": "fake arbiter: first candidate",
                 "relevance": 0.95, "anchor_found": True}] if ids else []
    return FakeResponse(body=completion({"verdicts": verdicts, "not_found": not ids}))


@pytest.mark.parametrize("fallback", [None, "rules"])
def test_arbiter_failing_for_one_question(sample, tmp_path, monkeypatch, prefect_server, fallback):
    questions = question_subset(sample, tmp_path / "questions.jsonl", ids=["s01", "s02", "s03", "s04"])
    with FakeOpenAI(default=arbiter_replies) as fake:
        for key, value in {"ARBITER_EMBEDDER__KIND": "hash", "ARBITER_ARBITER__PROVIDER": "openai",
                           "ARBITER_LLM__BASE_URL": fake.base_url, "ARBITER_LLM__API_KEY": "sk-test",
                           "ARBITER_LLM__BACKOFF_BASE_S": "0.01"}.items():
            monkeypatch.setenv(key, value)
        if fallback:
            monkeypatch.setenv("ARBITER_LLM__FALLBACK", fallback)
        else:
            monkeypatch.delenv("ARBITER_LLM__FALLBACK", raising=False)
        summary = answer_flow(str(questions), data_root=str(sample.root), home=str(tmp_path / "home"))
    run_id = summary["run_id"]
    with Warehouse(tmp_path / "home" / "warehouse.duckdb", read_only=True) as wh:
        status = dict(wh.execute("SELECT question_id, status FROM questions WHERE run_id = ?", [run_id]))
        calls = wh.query("SELECT provider, status, fallback_from, error FROM llm_calls WHERE run_id = ? AND "
                         "question_id = ? AND stage = 'arbiter' ORDER BY attempt", [run_id, FAILING])
        errors = wh.query("SELECT stage, error FROM errors WHERE run_id = ? AND subject = ?", [run_id, FAILING])
        others = {q: s for q, s in status.items() if q != FAILING}
        assert others and set(others.values()) == {"answered"}, status
        assert calls[0]["provider"] == "openai" and calls[0]["status"] == "error" and "400" in calls[0]["error"]
        if fallback is None:
            assert status[FAILING] == "failed" and summary["statuses"].get("failed") == 1
            assert errors and errors[0]["stage"] == "arbiter" and "rejected" in errors[0]["error"]
            assert wh.scalar("SELECT status FROM retrieval_results WHERE run_id = ? AND question_id = ?",
                             [run_id, FAILING]) == "failed"
        else:
            assert status[FAILING] == "answered" and not errors
            assert calls[-1]["provider"] == "rules" and calls[-1]["status"] == "ok"
            assert calls[-1]["fallback_from"] == "openai"
            assert wh.scalar("SELECT arbiter_provider FROM retrieval_results WHERE run_id = ? AND question_id = ?",
                             [run_id, FAILING]) == "rules"


def session_processes(sid: int) -> list[str]:
    """Processes still in session ``sid`` (the killed CLI's own session: it and everything it started)."""
    out = subprocess.run(["ps", "-eo", "pid=,sid=,args="], capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines() if line.split()[1:2] == [str(sid)]]


def test_sigterm_mid_generation_ends_interrupted_and_leaves_no_process(sample, tmp_path, prefect_server):
    """A scheduler's stop: SIGTERM to the CLI's pid (not its group) while a generation call is held open. The CLI
    starts its own temporary Prefect server (no PREFECT_API_URL), as an operator's run does: that server must not
    outlive it. The run ends 'interrupted' with its resume command, what finished stays, and a resume completes."""
    questions = question_subset(sample, tmp_path / "questions.jsonl")
    home, run_id = tmp_path / "home", "sigterm-test-run"
    gate = GatedAnswers(gate_at=GATE_AT)
    with FakeOpenAI(default=gate) as fake:
        env = cli_env(fake, prefect_server)
        env.pop("PREFECT_API_URL")  # its own temporary server, the one a `kill <pid>` used to orphan
        cmd = answer_cmd(questions, sample.root, home, run_id)
        proc = start_answer(cmd, env, tmp_path / "first.log")
        wait_for(gate.arrived, proc, tmp_path / "first.log", timeout=240)
        assert len(session_processes(proc.pid)) >= 2, "no temporary Prefect server was started"
        os.kill(proc.pid, signal.SIGTERM)
        threading.Timer(1.0, gate.release.set).start()  # the held call returns meanwhile, as a real one would
        try:
            code = proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"the run did not end within 60 s of SIGTERM:\n{(tmp_path / 'first.log').read_text()[-3000:]}")
        log = (tmp_path / "first.log").read_text()
        assert code == 128 + signal.SIGTERM, log[-3000:]
        assert f"resume with: arbiter answer {questions}" in log
        deadline = time.monotonic() + 15
        while session_processes(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = session_processes(proc.pid)
        if left:
            os.killpg(proc.pid, signal.SIGKILL)
        assert not left, f"processes left behind by the stopped run: {left}"

        with Warehouse(home / "warehouse.duckdb", read_only=True) as wh:
            run = wh.query("SELECT status, error FROM runs WHERE run_id = ?", [run_id])[0]
            assert run["status"] == "interrupted", run
            assert "SIGTERM" in run["error"] and f"--run-id {run_id}" in run["error"], run["error"]
            statuses = dict(wh.execute("SELECT question_id, status FROM questions WHERE run_id = ?", [run_id]))
            done = sorted(q for q, s in statuses.items() if s == "answered")
            assert 0 < len(done) < QUESTIONS, statuses
            assert duplicate_keys(wh) == {}
            before = snapshot(wh, run_id, done)

        gate.gate_at = None
        resume = subprocess.run([*cmd, "--json"], cwd=tmp_path, env=cli_env(fake, prefect_server),
                                capture_output=True, text=True, timeout=240)
    assert resume.returncode == 0, resume.stdout[-2000:] + resume.stderr[-3000:]
    with Warehouse(home / "warehouse.duckdb", read_only=True) as wh:
        assert wh.scalar("SELECT status FROM runs WHERE run_id = ?", [run_id]) == "ok"
        assert set(dict(wh.execute("SELECT question_id, status FROM questions WHERE run_id = ?",
                                   [run_id])).values()) == {"answered"}
        assert snapshot(wh, run_id, done) == before
        assert duplicate_keys(wh) == {}
