"""``llm_calls``: one row per attempt of every model call (simonw/llm's ``logs`` table, per attempt).

Written only by the LLM client (``tasks/llm/client.py``); read by the replay provider and the cost views.
``request_hash`` names the logical request (the stage's messages before any feedback turn), ``messages`` what
this attempt actually sent, ``call_group`` ties the attempts of one client call together (retries, fallback).
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any

import polars as pl

from warehouse.db import Warehouse, WarehouseError


@dataclass
class CallRecord:
    call_id: str
    call_group: str
    run_id: str
    question_id: str | None
    stage: str
    regime: str | None
    step: int | None
    provider: str
    model: str
    request_hash: str
    messages: str | None  # JSON text
    response: str | None
    parsed: str | None  # JSON text
    input_tokens: int | None
    cached_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    tokens_counted: bool
    latency_ms: float
    status: str  # ok | error
    error: str | None
    attempt: int
    batch_api: bool
    fallback_from: str | None
    replay_of: str | None
    created_at: datetime


_COLUMNS = [f.name for f in fields(CallRecord)]
_INTS = {"step", "input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "attempt"}
_SCHEMA = {
    name: pl.Int64 if name in _INTS else pl.Boolean if name in ("tokens_counted", "batch_api")
    else pl.Float64 if name == "latency_ms" else pl.Datetime("us") if name == "created_at" else pl.Utf8
    for name in _COLUMNS
}


_ROW = "(" + ", ".join("?" for _ in _COLUMNS) + ")"
_VALUES_MAX = 8  # measured: a multi-row VALUES insert is cheaper up to ~8 rows, a columnar (Arrow) one beyond


def insert_calls(wh: Warehouse, records: list[CallRecord]) -> int:
    """Append attempt rows in one statement (a call's rows are never updated afterwards)."""
    if not records:
        return 0
    if len(records) > _VALUES_MAX:
        return wh.insert_df("llm_calls", pl.DataFrame([asdict(r) for r in records], schema=_SCHEMA, orient="row"))
    wh.execute(
        f"INSERT INTO llm_calls ({', '.join(_COLUMNS)}) VALUES {', '.join(_ROW for _ in records)}",
        [getattr(r, c) for r in records for c in _COLUMNS],
    )
    return len(records)


class CallLogError(WarehouseError):
    """Rows of llm_calls could not be written; raised on the next write or flush, never dropped silently."""


class CallLog:
    """Batched writer of ``llm_calls`` rows, one per warehouse (:func:`call_log`), shared by all LLM clients.

    A DuckDB insert costs ~6 ms CPU and ~12 ms wall (commit) whatever its size up to dozens of rows, so a row
    per statement made logging the bottleneck of concurrent calls (benchmarks/llm_throughput.py). One writer
    thread inserts whatever is queued in one statement, then the next batch, and ends when the queue is empty.

    - ``write(record)`` (durable, the default) returns once the row is committed: concurrent callers share
      inserts (group commit), so a call that returned is a stored row, at the cost of one commit's latency.
    - ``write(record, wait=False)`` returns at once; the writer gathers rows for up to ``linger_s`` so that each
      insert carries many (CPU per row falls ~5x). Rows are then committed within ~0.1 s, and only by
      ``flush``: call it (clients do on ``close``) before closing the warehouse. The readers below flush first,
      and an exit hook flushes what is left.

    A failed insert is raised to its waiting writers and again by the next write or flush, never dropped.
    """

    def __init__(self, wh: Warehouse, linger_s: float = 0.05, max_batch: int = 256):
        self._wh = weakref.ref(wh)  # the writer thread holds the warehouse only while it has rows to write
        self.path = wh.path
        self.linger_s = linger_s
        self.max_batch = max_batch
        self._cond = threading.Condition()
        self._queue: list[CallRecord] = []
        self._queued = 0  # rows ever queued
        self._done = 0  # rows ever taken by an insert (committed, or failed into self._error)
        self._waiters = 0  # callers blocked on a commit: the writer does not linger while there are any
        self._error: CallLogError | None = None
        self._error_raised = False
        self._thread: threading.Thread | None = None
        self.batches = 0  # inserts made, for benchmarks and tests

    def write(self, record: CallRecord, wait: bool = True) -> None:
        with self._cond:
            self._raise_error()
            self._queue.append(record)
            self._queued += 1
            if self._thread is None or not self._thread.is_alive():
                wh = self._wh()
                if wh is None:
                    raise CallLogError(f"the warehouse {self.path} is gone; open it again to log calls")
                self._thread = threading.Thread(target=self._run, args=(wh,), name="llm-call-log", daemon=True)
                self._thread.start()
            self._cond.notify_all()
            if wait:
                self._wait_for(self._queued)

    def flush(self) -> None:
        """Block until every row queued before this call is committed; raise if any insert failed."""
        with self._cond:
            self._wait_for(self._queued)

    def _wait_for(self, target: int) -> None:
        self._waiters += 1
        self._cond.notify_all()
        try:
            while self._done < target:
                self._cond.wait()
        finally:
            self._waiters -= 1
        self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            self._error_raised = True
            raise self._error

    def flush_at_exit(self) -> None:
        """Flush; raise only an error nobody has been told about (one already raised is not raised twice)."""
        with self._cond:
            if self._error is not None and self._error_raised:
                return
            self._wait_for(self._queued)

    def _run(self, wh: Warehouse) -> None:
        while True:
            with self._cond:
                if not self._queue:  # idle: end the thread; the next write starts another
                    self._thread = None
                    return
                deadline = time.monotonic() + self.linger_s
                while len(self._queue) < self.max_batch and not self._waiters:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)  # gather a bigger batch; a waiting writer or flush ends it
                batch, self._queue = self._queue, []
            error: CallLogError | None = None
            try:
                insert_calls(wh, batch)
            except BaseException as exc:  # kept, and raised to the next writer or flusher
                error = CallLogError(
                    f"{len(batch)} llm_calls row(s) (calls {', '.join(r.call_id[:8] for r in batch[:3])}...) could "
                    f"not be written to {self.path}: {type(exc).__name__}: {exc}. The calls were made but are "
                    "not logged; fix the warehouse (disk space? closed?) and rerun the affected questions."
                )
                error.__cause__ = exc
            with self._cond:
                if error is not None and self._error is None:
                    self._error = error
                self._done += len(batch)
                self.batches += 1
                self._cond.notify_all()


_LOGS: weakref.WeakKeyDictionary[Warehouse, CallLog] = weakref.WeakKeyDictionary()
_LOGS_LOCK = threading.Lock()


def call_log(wh: Warehouse) -> CallLog:
    """The warehouse's shared call log (created on first use)."""
    with _LOGS_LOCK:
        log = _LOGS.get(wh)
        if log is None:
            log = _LOGS[wh] = CallLog(wh)
        return log


def flush_calls(wh: Warehouse) -> None:
    """Commit every queued llm_calls row of this warehouse; call before reading llm_calls or its views."""
    with _LOGS_LOCK:
        log = _LOGS.get(wh)
    if log is not None:
        log.flush()


@atexit.register
def _flush_all_at_exit() -> None:
    for log in list(_LOGS.values()):
        log.flush_at_exit()


def find_replayable(wh: Warehouse, request_hash: str, run_id: str | None = None) -> dict[str, Any] | None:
    """The latest successful call with this request hash (in ``run_id`` when given), or None."""
    flush_calls(wh)
    sql = (
        "SELECT call_id, run_id, provider, model, response, parsed, input_tokens, cached_tokens, output_tokens, "
        "reasoning_tokens, tokens_counted, replay_of, created_at FROM llm_calls "
        "WHERE request_hash = ? AND status = 'ok' AND parsed IS NOT NULL"
    )
    params: list[Any] = [request_hash]
    if run_id is not None:
        sql += " AND run_id = ?"
        params.append(run_id)
    sql += " ORDER BY (replay_of IS NULL) DESC, created_at DESC LIMIT 1"
    rows = wh.query(sql, params)
    return rows[0] if rows else None


def calls_for_run(wh: Warehouse, run_id: str, question_id: str | None = None) -> list[dict[str, Any]]:
    """Attempt rows of a run (optionally one question), in call then attempt order."""
    flush_calls(wh)
    sql = f"SELECT {', '.join(_COLUMNS)} FROM llm_calls WHERE run_id = ?"
    params: list[Any] = [run_id]
    if question_id is not None:
        sql += " AND question_id = ?"
        params.append(question_id)
    return wh.query(sql + " ORDER BY created_at, call_group, attempt", params)
