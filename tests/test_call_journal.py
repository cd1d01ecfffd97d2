"""The llm_calls write-ahead journal: durable rows survive a killed process, recovery on open, no row lost in races.

The crash test SIGKILLs a real process whose durable rows are journaled but not inserted yet (its writer lingers),
then opens the warehouse the ways the CLI does: read-only (a brief read-write open recovers first), read-write.
"""

from __future__ import annotations

import json
import logging
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

import pytest

from warehouse.db import Warehouse, WarehouseError
from warehouse.llm_log import (
    CallLog,
    CallLogError,
    CallRecord,
    _journal_line,
    _journal_record,
    call_log,
    calls_for_run,
    journal_files,
)

REPO = Path(__file__).resolve().parents[1]
RUN = "journal-run"


def rec(call_id: str, **kw) -> CallRecord:
    """A row with every kind of value: NULLs, bools, ints, a float, µs timestamps, non-ASCII and newlines."""
    base = dict(
        call_id=call_id, call_group=f"g-{call_id}", run_id=RUN, question_id=None, stage="generate", regime="batch",
        step=2, provider="openai", model="gpt-4o-mini", request_hash="h" * 64,
        messages=json.dumps([{"role": "user", "content": "Umsatz 2024 in €?\nZeile 2"}], ensure_ascii=False),
        response='{"value": "42 €"}', parsed='{"value": "42 €"}', input_tokens=1200, cached_tokens=0,
        output_tokens=None, reasoning_tokens=None, tokens_counted=True, latency_ms=1234.5678901, status="ok",
        error=None, attempt=1, batch_api=False, fallback_from=None, replay_of=None,
        created_at=datetime(2025, 9, 1, 12, 30, 45, 123456),
    )
    return CallRecord(**{**base, **kw})


def stored(wh: Warehouse) -> dict[str, dict]:
    return {r["call_id"]: r for r in calls_for_run(wh, RUN)}


def test_journal_line_round_trips_exactly():
    for record in (rec("a"), rec("b", created_at=datetime(2025, 1, 1), latency_ms=0.1, batch_api=True,
                                 tokens_counted=False, step=None, error="Boom:\n\"quoted\"\tand \\ back\u2028slash",
                                 input_tokens=0, status="error")):
        line = _journal_line(record)
        assert line.endswith(b"\n") and line.count(b"\n") == 1  # one line, whatever the strings hold
        back = _journal_record(line)
        assert asdict(back) == asdict(record)
        assert [type(v) for v in asdict(back).values()] == [type(v) for v in asdict(record).values()]


CHILD = """
import sys, time
sys.path[:0] = [{repo!r}, {tests!r}]
from test_call_journal import rec
from warehouse.db import Warehouse
from warehouse.llm_log import call_log

wh = Warehouse(sys.argv[1])
log = call_log(wh)
log.write(rec("committed"))
log.flush()                       # one row inserted before the crash
log.linger_s = 3600               # the writer now holds its batch: the rows below are journaled, not inserted
for i in range(5):
    log.write(rec(f"journaled-{{i}}"))   # durable: returns once the line is on disk
log.write(rec("batched"), wait=False)   # durable_log=False: not journaled, dies with the process
assert wh.scalar("SELECT count(*) FROM llm_calls") == 1
print("written", flush=True)
time.sleep(120)
"""


def run_and_kill(db: Path) -> None:
    """A process that journals rows, then dies by SIGKILL before its writer inserts them."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD.format(repo=str(REPO), tests=str(REPO / "tests")), str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "written", proc.stderr.read() if proc.poll() is not None else line
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)


def test_sigkilled_process_loses_no_returned_call(tmp_path, caplog):
    db = tmp_path / "warehouse.duckdb"
    run_and_kill(db)
    files = journal_files(db)
    assert len(files) == 2 and sum(p.stat().st_size for p in files) > 0
    saved = tmp_path / "saved"
    saved.mkdir()
    for path in files:
        shutil.copy(path, saved / path.name)
    expected = {"committed", *(f"journaled-{i}" for i in range(5))}
    journaled = {_journal_record(line).call_id for p in files for line in p.read_bytes().splitlines()}
    assert journaled == expected - {"committed"}  # the committed row's line was dropped with its batch

    # a reader first: the brief read-write open inserts the journaled rows, exactly as they were written
    with caplog.at_level(logging.WARNING, logger="arbiter.warehouse"):
        with Warehouse(db, read_only=True) as wh:
            rows = stored(wh)
    assert set(rows) == expected  # "batched" (durable_log=False) died with the process
    for call_id, row in rows.items():
        assert row == asdict(rec(call_id))  # created_at to the µs, NULLs, bools, ints, float
    assert journal_files(db) == []
    assert "recovered 5 llm_calls row(s)" in caplog.text

    # the same journal again (recovery interrupted before it removed the files), plus a row, plus a torn line
    for path in saved.iterdir():
        shutil.copy(path, db.with_name(path.name))
    with open(files[0], "ab") as f:
        f.write(_journal_line(rec("late")))
        f.write(_journal_line(rec("torn"))[:-40])  # cut mid-line: that call never returned
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="arbiter.warehouse"):
        with Warehouse(db) as wh:
            assert set(stored(wh)) == expected | {"late"}
            assert wh.scalar("SELECT count(*) FROM llm_calls") == len(expected) + 1
    assert "torn last line" in caplog.text and "recovered 1 llm_calls row(s)" in caplog.text
    assert "(5 were stored already)" in caplog.text
    assert journal_files(db) == []
    with Warehouse(db) as wh:  # nothing left to do
        assert wh.scalar("SELECT count(*) FROM llm_calls") == len(expected) + 1


def test_damaged_journal_is_loud_on_write_and_tolerated_on_read(tmp_path, caplog):
    db = tmp_path / "warehouse.duckdb"
    Warehouse(db).close()
    bad = db.with_name(f"{db.name}.llm_calls.1-0a.journal")
    bad.write_bytes(_journal_line(rec("ok-1")) + b"\x00\x00garbage\n" + _journal_line(rec("ok-2")))
    with pytest.raises(WarehouseError, match=r"1-0a\.journal:2: unreadable llm_calls journal line.*move it away"):
        Warehouse(db)
    with caplog.at_level(logging.WARNING, logger="arbiter.warehouse"):
        with Warehouse(db, read_only=True) as wh:  # readers still read (without the journal's rows)
            assert wh.scalar("SELECT count(*) FROM llm_calls") == 0
    assert "could not be opened read-write" in caplog.text
    assert bad.exists()  # kept for the operator
    bad.rename(tmp_path / "damaged.journal")  # (failed opens released the file: nothing stays locked)
    with Warehouse(db) as wh:
        assert wh.scalar("SELECT count(*) FROM llm_calls") == 0


def test_journal_of_a_live_log_is_not_recovered_by_a_second_open(wh):
    log = CallLog(wh, linger_s=30)
    log.write(rec("live"))
    assert log.journal_paths and journal_files(wh.path) == []  # this process is writing it: not a leftover
    Warehouse(wh.path).close()  # another open of the same file in this process (DuckDB shares the database)
    log.flush()  # would fail on the primary key had the second open inserted the row too
    assert wh.scalar("SELECT count(*) FROM llm_calls") == 1


def test_close_removes_the_journal_and_later_writes_raise(tmp_path):
    wh = Warehouse(tmp_path / "warehouse.duckdb")
    log = call_log(wh)
    log.write(rec("a"))
    paths = log.journal_paths
    assert all(p.exists() for p in paths)
    wh.close()
    assert not any(p.exists() for p in paths)
    with Warehouse(tmp_path / "warehouse.duckdb", read_only=True) as again:
        assert again.scalar("SELECT count(*) FROM llm_calls") == 1
    with pytest.raises(CallLogError, match="closed"):
        log.write(rec("b"))


def test_returned_rows_are_always_journaled_or_committed(wh):
    """While 16 threads write rows and the writer commits batches and truncates journal segments, every durable
    row whose write returned is in the journal or in llm_calls at every moment (the checker reads the journal
    first, then the table: a segment may only be truncated after its rows are committed)."""
    log = CallLog(wh, linger_s=0.002, max_batch=32)
    returned: list[str] = []  # durable rows whose write returned
    stop = threading.Event()
    checks, problems = [0], []

    def writer(t: int) -> None:
        rng = random.Random(t)
        for i in range(60):
            durable = rng.random() > 0.1  # some non-durable rows in the same batches
            log.write(rec(f"w{t}-{i}"), wait=durable)
            if durable:
                returned.append(f"w{t}-{i}")
            if rng.random() < 0.2:
                time.sleep(0.001)

    def checker() -> None:
        while not stop.is_set():
            durable = set(returned)
            journaled = set()
            for path in log.journal_paths:
                for line in path.read_bytes().split(b"\n")[:-1]:  # not the last: it may be half written
                    journaled.add(_journal_record(line).call_id)
            committed = {r[0] for r in wh.execute("SELECT call_id FROM llm_calls")}
            if durable - journaled - committed:
                problems.append(sorted(durable - journaled - committed)[:5])
            checks[0] += 1
            time.sleep(0.003)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(16)]
    check = threading.Thread(target=checker)
    check.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    check.join()
    log.flush()
    assert problems == [] and checks[0] > 5
    assert wh.scalar("SELECT count(*) FROM llm_calls") == 16 * 60
    assert log.batches > 5 and log.syncs < len(returned)  # many batches rotated segments; writers shared syncs
    assert [p.stat().st_size for p in log.journal_paths] == [0, 0]  # all committed: nothing left journaled
