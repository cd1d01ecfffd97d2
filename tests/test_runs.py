"""Run lineage: a run whose process died shows as 'interrupted', a live one is never touched."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from warehouse.db import Warehouse
from warehouse.errors import RunStopped
from warehouse.runs import fails_run, finish_run, list_runs, mark_interrupted, start_run


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_run_of_a_dead_process_is_marked_interrupted(tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        killed = start_run(wh, "answer", {})
        alive = start_run(wh, "answer", {})
        elsewhere = start_run(wh, "answer", {})
        wh.execute("UPDATE runs SET pid = ? WHERE run_id = ?", [dead_pid(), killed])
        wh.execute("UPDATE runs SET pid = ?, host = 'another-host' WHERE run_id = ?", [dead_pid(), elsewhere])
        assert mark_interrupted(wh) == [killed]
        runs = {r["run_id"]: r for r in list_runs(wh)}
        assert runs[killed]["status"] == "interrupted"
        assert f"--run-id {killed}" in runs[killed]["error"] and "killed or crashed" in runs[killed]["error"]
        assert runs[alive]["status"] == "running"  # this very process: alive
        assert runs[elsewhere]["status"] == "running"  # a pid of another host is not judged here
        assert mark_interrupted(wh) == []  # idempotent

        # resuming the interrupted run makes it running again, owned by this process
        assert start_run(wh, "answer", {}, run_id=killed) == killed
        row = wh.query("SELECT status, error, pid FROM runs WHERE run_id = ?", [killed])[0]
        assert row == {"status": "running", "error": None, "pid": os.getpid()}


def test_a_run_whose_work_raises_is_finished_failed_with_the_error(tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        def status(run_id):
            return wh.query("SELECT status, error FROM runs WHERE run_id = ?", [run_id])[0]

        broken, stopped, fine = (start_run(wh, "answer", {}) for _ in range(3))
        with pytest.raises(LookupError), fails_run(wh, broken):
            raise LookupError("run 'x' not found")
        assert status(broken) == {"status": "failed", "error": "LookupError: run 'x' not found"}
        with pytest.raises(KeyboardInterrupt), fails_run(wh, stopped):  # Ctrl-C: interrupted, resumable, goes on
            raise KeyboardInterrupt()
        assert status(stopped) == {"status": "interrupted", "error": "stopped by an interrupt (Ctrl-C); its finished "
                                   f"work is kept, resume with: rerun the same command with --run-id {stopped}"}
        termed = start_run(wh, "answer", {"questions": "/q/set.jsonl", "data_root": "/data"})
        with pytest.raises(RunStopped) as raised, fails_run(wh, termed):  # a scheduler's SIGTERM
            raise RunStopped("SIGTERM")
        resume = f"arbiter answer /q/set.jsonl --data-root /data --run-id {termed}"
        assert status(termed) == {"status": "interrupted",
                                  "error": f"stopped by SIGTERM; its finished work is kept, resume with: {resume}"}
        assert (raised.value.run_id, raised.value.resume) == (termed, resume)  # what the CLI prints
        with fails_run(wh, fine):
            pass
        assert status(fine) == {"status": "running", "error": None}  # the caller finishes a run that did not raise
        finish_run(wh, fine, "ok", {})
        assert status(fine)["status"] == "ok"
