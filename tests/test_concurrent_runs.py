"""Two processes against one warehouse: the second is refused with WarehouseBusyError, the first is unharmed.

Run A is the real CLI, held inside its first generation call by the fake OpenAI server (so it provably holds the
DuckDB file) while run B (``arbiter answer``) and a reader (``arbiter runs list``) start against the same home.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

from fake_openai import FakeOpenAI, FakeResponse, completion
from test_crash_resume import (
    cli_env,
    duplicate_keys,
    question_subset,
    start_answer,
    wait_for,
)

from tasks.corpus.sample.generate import generate_sample_corpus
from warehouse.db import Warehouse

BUSY = "is in use by another process"


class HoldFirst:
    """Generation replies; the first one waits until the test releases it."""

    def __init__(self):
        self.arrived, self.release = threading.Event(), threading.Event()
        self._first = True
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> FakeResponse:
        with self._lock:
            first, self._first = self._first, False
        if first:
            self.arrived.set()
            self.release.wait(120)
        answer = {"value": "held", "evidence": [], "answer_found": True, "complete_answer_found": True,
                  "confidence": 0.9, "caveats": []}
        return FakeResponse(body=completion(answer))


def test_second_process_is_refused_and_first_run_is_intact(tmp_path, prefect_server):
    sample = generate_sample_corpus(tmp_path / "sample")
    questions = question_subset(sample, tmp_path / "questions.jsonl", ids=["s01", "s02", "s03"])
    home, run_a = tmp_path / "home", "run-a"
    hold = HoldFirst()
    with FakeOpenAI(default=hold) as fake:
        env = cli_env(fake, prefect_server)
        cmd_a = [sys.executable, "-m", "flows.cli", "answer", str(questions), "--data-root", str(sample.root),
                 "--home", str(home), "--run-id", run_a]
        proc_a = start_answer(cmd_a, env, tmp_path / "a.log")
        try:
            wait_for(hold.arrived, proc_a, tmp_path / "a.log")  # A is inside a call, warehouse open
            cmd_b = [*cmd_a[:-2], "--run-id", "run-b"]
            proc_b = subprocess.Popen(cmd_b, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True)
            reader = subprocess.run([sys.executable, "-m", "flows.cli", "runs", "list", "--home", str(home)],
                                    cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
            out_b, _ = proc_b.communicate(timeout=180)
        finally:
            hold.release.set()
        assert proc_a.wait(180) == 0, (tmp_path / "a.log").read_text()[-3000:]

    assert proc_b.returncode != 0 and "WarehouseBusyError" in out_b and BUSY in out_b, out_b[-3000:]
    assert reader.returncode != 0 and BUSY in reader.stdout + reader.stderr, reader.stderr[-3000:]
    with Warehouse(home / "warehouse.duckdb") as wh:  # opens read-write: not corrupt, migrations in place
        assert [r[0] for r in wh.execute("SELECT run_id FROM runs")] == [run_a]  # B never started a run
        assert wh.scalar("SELECT status FROM runs WHERE run_id = ?", [run_a]) == "ok"
        statuses = [r[0] for r in wh.execute("SELECT status FROM questions WHERE run_id = ?", [run_a])]
        assert statuses == ["answered"] * 3
        assert wh.scalar("SELECT count(*) FROM answers WHERE run_id = ? AND status = 'ok'", [run_a]) >= 3
        assert duplicate_keys(wh) == {}
        summary = json.loads(wh.scalar("SELECT summary FROM runs WHERE run_id = ?", [run_a]))
        assert summary["statuses"] == {"answered": 3}
