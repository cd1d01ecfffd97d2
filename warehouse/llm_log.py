"""``llm_calls``: one row per attempt of every model call (simonw/llm's ``logs`` table, per attempt).

Written only by the LLM client (``tasks/llm/client.py``); read by the replay provider and the cost views.
``request_hash`` names the logical request (the stage's messages before any feedback turn), ``messages`` what
this attempt actually sent, ``call_group`` ties the attempts of one client call together (retries, fallback).

Durable rows go first to a write-ahead journal beside the warehouse (``<warehouse>.llm_calls.*.journal``, one JSON
line per row) and reach DuckDB in batches (:class:`CallLog`); opening the warehouse inserts whatever a killed
process journaled but never inserted (:func:`recover_journal`).
"""

from __future__ import annotations

import atexit
import glob
import itertools
import json
import logging
import os
import threading
import time
import weakref
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from warehouse.errors import WarehouseError

if TYPE_CHECKING:  # annotations only: db imports this module (it recovers the journal on open)
    from warehouse.db import Warehouse

log = logging.getLogger("arbiter.warehouse")


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
    # what the server was sent with and returned (m005); defaults: rows journaled before m005 still load
    output_mode: str | None = None  # json_schema | json_object | prompt (openai provider)
    token_param: str | None = None  # max_completion_tokens | max_tokens
    capability_note: str | None = None  # a capability fallback this call made, and why (kept for the run)
    server_timings: str | None = None  # JSON text: the server's own timings object (llama.cpp), as returned


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
        # by column: ``asdict`` deep-copies every value, which cost more CPU than the insert itself
        return wh.insert_df("llm_calls", pl.DataFrame({c: [getattr(r, c) for r in records] for c in _COLUMNS},
                                                      schema=_SCHEMA))
    wh.execute(
        f"INSERT INTO llm_calls ({', '.join(_COLUMNS)}) VALUES {', '.join(_ROW for _ in records)}",
        [getattr(r, c) for r in records for c in _COLUMNS],
    )
    return len(records)


class CallLogError(WarehouseError):
    """Rows of llm_calls could not be written; raised on the next write or flush, never dropped silently."""


# -- the journal -------------------------------------------------------------------------------------------------------
_fdatasync = getattr(os, "fdatasync", os.fsync)  # data and size only: cheaper than fsync where it exists
_JOURNAL_IDS = itertools.count()
_LIVE_JOURNALS: set[str] = set()  # segment files an open CallLog of this process writes: recovery leaves them be


def _journal_glob(db_path: Path) -> str:
    db_path = Path(db_path).resolve()
    return str(db_path.parent / f"{glob.escape(db_path.name)}.llm_calls.*.journal")


def journal_files(db_path: Path | str) -> list[Path]:
    """Journal files beside the warehouse that no call log of this process is writing (left by a killed one)."""
    return sorted(Path(p) for p in glob.glob(_journal_glob(Path(db_path))) if p not in _LIVE_JOURNALS)


def _journal_line(record: CallRecord) -> bytes:
    """One row as a JSON line (ASCII: strings escape their newlines); ``created_at`` in ISO form, to the µs."""
    row = {name: getattr(record, name) for name in _COLUMNS}
    row["created_at"] = record.created_at.isoformat()
    return (json.dumps(row, separators=(",", ":")) + "\n").encode("ascii")


def _journal_record(line: bytes) -> CallRecord:
    row = json.loads(line)
    row["created_at"] = datetime.fromisoformat(row["created_at"])
    return CallRecord(**row)


class _Journal:
    """The two append-only segment files of one :class:`CallLog`.

    Rows are appended to the active segment. When the writer takes a batch it makes the other (empty) segment
    active, so every line of the old one is in that batch or an earlier, committed one; once the batch is
    committed the old segment is truncated. The journal thus holds at most two batches' rows, whatever the load.
    """

    def __init__(self, db_path: Path):
        db_path = db_path.resolve()
        while True:  # pid and counter make the names unique; O_EXCL guards against a crashed namesake's files
            stem = f"{db_path.name}.llm_calls.{os.getpid()}-{next(_JOURNAL_IDS)}"
            self.paths = [db_path.with_name(f"{stem}{seg}.journal") for seg in "ab"]
            self.fds: list[int] = []
            try:
                for path in self.paths:
                    self.fds.append(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644))
                break
            except OSError as exc:
                for fd, path in zip(self.fds, self.paths):
                    os.close(fd)
                    path.unlink()
                if not isinstance(exc, FileExistsError):
                    raise
        _LIVE_JOURNALS.update(str(p) for p in self.paths)
        self._release = weakref.finalize(self, _Journal._close, list(self.fds), [str(p) for p in self.paths])
        self._release.atexit = False  # at exit the call logs close their journals (after the last batch)
        try:  # best effort: the new names survive a power cut too (not every file system syncs directories)
            dir_fd = os.open(db_path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError:
            pass
        self.sizes = [0, 0]
        self.active = 0

    @staticmethod
    def _close(fds: list[int], names: list[str]) -> None:
        """Close the files; remove them when empty (every row committed), else leave them to recovery."""
        empty = all(os.fstat(fd).st_size == 0 for fd in fds)
        for fd in fds:
            os.close(fd)
        if empty:
            for name in names:
                Path(name).unlink(missing_ok=True)
        _LIVE_JOURNALS.difference_update(names)

    def append(self, line: bytes) -> int:
        """Write one line to the active segment (all of it, or nothing); returns the segment written."""
        seg, fd = self.active, self.fds[self.active]
        written = 0
        try:
            while written < len(line):
                written += os.write(fd, line[written:])
        except OSError:
            if written:  # a part-line would sit in the middle of the journal: cut it off again
                os.ftruncate(fd, self.sizes[seg])
            raise
        self.sizes[seg] += written
        return seg

    def rotate(self) -> int | None:
        """Make the other segment active; returns the one to truncate once the batch is committed, if any."""
        if not self.sizes[self.active]:
            return None
        old, self.active = self.active, 1 - self.active
        return old

    def truncate(self, seg: int) -> None:
        os.ftruncate(self.fds[seg], 0)
        self.sizes[seg] = 0

    def close(self) -> None:
        self._release()  # (also when the log is garbage collected without closing)


def recover_journal(wh: Warehouse) -> int:
    """Insert the journaled rows of a killed process that ``llm_calls`` lacks, then remove its journal files.

    Idempotent (rows already stored are skipped; a rerun after a crash mid-recovery inserts nothing twice). A
    torn last line (the process died writing it, so that call never returned) is skipped with a warning.
    Called by :class:`~warehouse.db.Warehouse` on every read-write open. Returns the rows inserted.
    """
    files = journal_files(wh.path)
    if not files:
        return 0
    records: dict[str, CallRecord] = {}
    for path in files:
        lines = path.read_bytes().split(b"\n")
        torn = lines.pop()  # after the last newline: empty unless the last write was cut short
        if torn:
            log.warning("%s: skipped a torn last line (%d bytes; its call never returned)", path, len(torn))
        for no, line in enumerate(lines, 1):
            try:
                record = _journal_record(line)
            except (ValueError, TypeError, KeyError) as exc:
                raise WarehouseError(
                    f"{path}:{no}: unreadable llm_calls journal line ({type(exc).__name__}: {exc}). Rows are only "
                    "ever appended whole, so the file is damaged: move it away from the warehouse to open it, "
                    "and keep it to restore its calls by hand."
                ) from exc
            records[record.call_id] = record
    stored = {r[0] for r in wh.execute("SELECT call_id FROM llm_calls WHERE call_id IN (SELECT unnest(?))",
                                       [list(records)])} if records else set()
    missing = [r for call_id, r in records.items() if call_id not in stored]
    insert_calls(wh, missing)
    for path in files:
        path.unlink(missing_ok=True)
    if records:  # (empty files are what a log that was never closed leaves)
        log.warning("recovered %d llm_calls row(s) from %d journal file(s) of %s (%d were stored already)",
                    len(missing), len(files), wh.path, len(stored))
    return len(missing)


# -- the writer -------------------------------------------------------------------------------------------------------
class CallLog:
    """Batched writer of ``llm_calls`` rows, one per warehouse (:func:`call_log`), shared by all LLM clients.

    A DuckDB insert costs ~4-6 ms CPU whatever its size up to hundreds of rows (a per-statement, per-column cost),
    so committing rows one call at a time made logging the bottleneck of concurrent calls
    (benchmarks/llm_throughput.py). One writer thread inserts whatever is queued in one statement, after
    gathering rows for up to ``linger_s`` (CPU per row falls ~5x), then the next batch, and ends when the queue
    is empty.

    - ``write(record)`` (durable, the default) appends the row as one JSON line to a journal file beside the
      warehouse and returns once it is on disk (concurrent writers share an fdatasync, ~3 ms): a call that
      returned survives a killed process or a power cut. The writer then inserts it with the others; once a
      batch is committed its journal lines are dropped (:class:`_Journal`), and opening the warehouse inserts
      the rows a killed process journaled but never inserted (:func:`recover_journal`).
    - ``write(record, wait=False)`` skips the journal and returns at once; the row is lost if the process dies
      before its batch is committed.

    Either way a row is in ``llm_calls`` within ~0.1 s, and at once after ``flush``: the readers below flush
    first, clients flush on ``close``, the warehouse on close (:func:`close_calls`), an exit hook at exit.
    A failed insert or journal write is raised to the next write or flush (journaled rows stay in the journal
    for the next open), never dropped.
    """

    def __init__(self, wh: Warehouse, linger_s: float = 0.05, max_batch: int = 256):
        self._wh = weakref.ref(wh)  # the writer thread holds the warehouse only while it has rows to write
        self.path = wh.path
        self.linger_s = linger_s
        self.max_batch = max_batch
        self._cond = threading.Condition()
        self._queue: list[tuple[CallRecord, bool]] = []  # (row, journaled)
        self._queued = 0  # rows ever queued
        self._done = 0  # rows ever taken by an insert (committed, or failed into self._error)
        self._waiters = 0  # flushes blocked on a commit: the writer does not linger while there are any
        self._journal: _Journal | None = None  # created by the first durable write
        self._journaled = 0  # lines ever appended to the journal
        self._synced = 0  # ... of which known to be on disk
        self._syncing = False  # a writer is in fdatasync for the others (group sync)
        self._dirty: set[int] = set()  # segments appended to since the last sync began
        self._closed = False
        self._error: CallLogError | None = None
        self._error_raised = False
        self._thread: threading.Thread | None = None
        self.batches = 0  # inserts made, for benchmarks and tests
        self.syncs = 0  # journal syncs made, for benchmarks and tests

    @property
    def journal_paths(self) -> list[Path]:
        """This log's journal files (none before its first durable write), for tests and tools."""
        journal = self._journal
        return list(journal.paths) if journal is not None else []

    def write(self, record: CallRecord, wait: bool = True) -> None:
        line = _journal_line(record) if wait else None  # serialized outside the lock
        with self._cond:
            self._raise_error()
            if self._closed:
                raise CallLogError(f"the warehouse {self.path} is closed; open it again to log calls")
            wh = self._wh()
            if wh is None:
                raise CallLogError(f"the warehouse {self.path} is gone; open it again to log calls")
            if line is not None:
                self._append(line)  # before queueing: a batch only ever holds rows whose lines are written
            self._queue.append((record, line is not None))
            self._queued += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, args=(wh,), name="llm-call-log", daemon=True)
                self._thread.start()
            self._cond.notify_all()
            if line is not None:
                self._sync(self._journaled)

    def flush(self) -> None:
        """Block until every row queued before this call is committed; raise if any insert failed."""
        with self._cond:
            self._wait_for(self._queued)

    def close(self, at_exit: bool = False) -> None:
        """Flush, then close the journal (removing its files: all rows are committed); later writes raise.

        ``at_exit``: an error already raised to someone is not raised again. After a failed insert the journal
        files stay for the next open to recover."""
        with self._cond:
            if self._closed:
                return
            self._closed = True  # no more rows: the wait below is for the last batch
            try:
                if not (at_exit and self._error is not None and self._error_raised):
                    self._wait_for(self._queued)
            finally:
                while self._syncing:
                    self._cond.wait()
                journal, self._journal = self._journal, None
                if journal is not None:
                    try:
                        for seg in self._dirty:  # rows whose insert failed are on disk before the files close
                            _fdatasync(journal.fds[seg])
                    finally:
                        self._dirty.clear()
                        self._synced = self._journaled  # writers still waiting to sync: committed or synced
                        journal.close()
                        self._cond.notify_all()

    def _append(self, line: bytes) -> None:
        """Write a journal line (lock held); a failure is kept and raised to every later writer too."""
        try:
            if self._journal is None:
                self._journal = _Journal(self.path)
            self._dirty.add(self._journal.append(line))
        except OSError as exc:
            self._error = CallLogError(
                f"could not write the llm_calls journal beside {self.path}: {type(exc).__name__}: {exc}. The "
                "call was made but is not logged; free disk space (or fix permissions), then rerun the question."
            )
            self._error.__cause__ = exc
            self._raise_error()
        self._journaled += 1

    def _sync(self, target: int) -> None:
        """Return once journal line ``target`` is on disk (lock held): one writer syncs for all who wait."""
        while self._synced < target:
            self._raise_error()
            if self._syncing:
                self._cond.wait()
                continue
            self._syncing = True
            upto, segments, self._dirty = self._journaled, self._dirty, set()
            fds = [self._journal.fds[seg] for seg in segments] if self._journal is not None else []
            self._cond.release()
            error: OSError | None = None
            try:
                for fd in fds:
                    _fdatasync(fd)
            except OSError as exc:
                error = exc
            finally:
                self._cond.acquire()
                self._syncing = False
                self._cond.notify_all()
            if error is not None:
                if self._error is None:
                    self._error = CallLogError(
                        f"could not sync the llm_calls journal beside {self.path}: {type(error).__name__}: "
                        f"{error}. Calls logged since may be lost on a crash; check the disk, then rerun."
                    )
                    self._error.__cause__ = error
                self._raise_error()
            self.syncs += 1
            self._synced = max(self._synced, upto)

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
        """Flush and close; raise only an error nobody has been told about (one already raised is not again)."""
        self.close(at_exit=True)

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
                    self._cond.wait(left)  # gather a bigger batch; a flush ends it
                batch, self._queue = self._queue, []
                # later lines go to the other segment; this one's are all in this batch or committed ones
                old = self._journal.rotate() if self._journal is not None and self._error is None else None
            error: CallLogError | None = None
            try:
                insert_calls(wh, [record for record, _ in batch])
            except BaseException as exc:  # kept, and raised to the next writer or flusher
                journaled = sum(j for _, j in batch)
                kept = (f"{journaled} of them are kept in its llm_calls journal and are inserted when it is next "
                        "opened; " if journaled else "")
                lost = (f"{len(batch) - journaled} were not journaled (durable_log=False): those calls were made "
                        "but are not logged, rerun the affected questions; " if journaled < len(batch) else "")
                error = CallLogError(
                    f"{len(batch)} llm_calls row(s) (calls {', '.join(r.call_id[:8] for r, _ in batch[:3])}...) "
                    f"could not be written to {self.path}: {type(exc).__name__}: {exc}. {kept}{lost}fix the "
                    "warehouse (disk space? closed?)."
                )
                error.__cause__ = exc
            with self._cond:
                if error is not None and self._error is None:
                    self._error = error
                if old is not None and self._error is None and self._journal is not None:
                    try:
                        self._journal.truncate(old)  # committed: its lines may go
                    except OSError as exc:  # harmless: the lines are dropped with the segment's next batch
                        log.warning("could not truncate the llm_calls journal of %s: %s", self.path, exc)
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


def close_calls(wh: Warehouse) -> None:
    """Flush and close the warehouse's call log (and remove its journal); called by ``Warehouse.close``."""
    with _LOGS_LOCK:
        log = _LOGS.get(wh)
    if log is not None:
        log.close()


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
    return wh.query_where(f"SELECT {', '.join(_COLUMNS)} FROM llm_calls",
                          {"run_id": run_id}, "created_at, call_group, attempt", optional={"question_id": question_id})
