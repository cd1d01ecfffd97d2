"""The one writer of a question's rows: ``questions`` (status, error, detector plan), ``detector_hits``,
``candidates``, ``verdicts``, ``retrieval_results``, ``answers`` and the question's ``errors``.

A question's walk (``tasks.pipeline.walk_question``) computes its rows and hands them here, a stage at a time
(:class:`QuestionWrite`); :class:`QuestionSink` decides when they land, by policy:

- ``stage``: each stage's rows as the stage ends (a model over the network, one question at a time: a paid result
  is kept at once, and a regime's answer before the next regime's calls);
- ``chunk``: a question's rows once it is finished, a chunk of finished questions in one transaction (offline and
  in-flight runs). DuckDB is an analytical store: a statement costs milliseconds however few rows it carries
  (``benchmarks/throughput.py``: about 30 statements a question, ~100 ms of a 250 ms question, when each stage
  wrote its own rows). A chunk lands whole or not at all, and a question whose rows did not land is still
  'loaded', so a resume after a SIGKILL does it again.

Either way every write is idempotent per (run_id, question_id): each table's rows of the written questions are
replaced (answers per regime), so a rerun never duplicates a row.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa

from schemas.contracts import DETECTORS
from warehouse.db import Warehouse, utcnow
from warehouse.llm_log import call_log, flush_calls
from warehouse.questions import QUESTION_STATUSES, UnknownQuestionError
from warehouse.runs import record_error

Policy = Literal["stage", "chunk"]
# a chunk is written after this many finished questions or seconds, whichever comes first: large enough that a
# statement's fixed cost is spread thin, small enough that a SIGKILL costs seconds of offline work
CHUNK_QUESTIONS = 64
CHUNK_SECONDS = 5.0


@dataclass
class QuestionWrite:
    """Rows of one question: a stage's (handed to the sink as the stage ends) or a whole walk's (merged). A table's
    field None leaves its rows as they are; a list (even empty) replaces them."""

    question_id: str
    status: str
    error: str | None = None
    detectors: list[str] | None = None  # the detector plan and the rule that chose it
    detector_rule: str | None = None
    hits: list[dict[str, Any]] | None = None
    candidates: list[dict[str, Any]] | None = None
    verdicts: list[dict[str, Any]] | None = None
    retrieval: dict[str, Any] | None = None
    answers: list[dict[str, Any]] = field(default_factory=list)  # replaced per (question, regime)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (stage, message) rows for ``errors``

    def merge(self, later: QuestionWrite) -> None:
        """Fold a later stage's rows into these: its status and error, every table it carries, its answers (per
        regime) and errors added."""
        self.status, self.error = later.status, later.error
        for attr in ("detectors", "detector_rule", "hits", "candidates", "verdicts", "retrieval"):
            if getattr(later, attr) is not None:
                setattr(self, attr, getattr(later, attr))
        regimes = {a["regime"] for a in later.answers}
        self.answers = [a for a in self.answers if a["regime"] not in regimes] + list(later.answers)
        self.errors = self.errors + list(later.errors)


def _check(items: list[QuestionWrite]) -> None:
    for item in items:
        if item.status not in QUESTION_STATUSES:
            raise ValueError(f"question {item.question_id!r}: status {item.status!r} is not one of "
                             f"{QUESTION_STATUSES}")
        unknown = [d for d in item.detectors or [] if d not in DETECTORS]
        if unknown:
            raise ValueError(f"unknown detector(s) {unknown} for question {item.question_id!r}; known: "
                             f"{list(DETECTORS)}")
        if item.detectors is not None and not (item.detector_rule or "").strip():
            raise ValueError(f"question {item.question_id!r}: a detector plan needs the rule that chose it")


def _replace(wh: Warehouse, table: str, run_id: str, qids: list[str], rows: list[dict[str, Any]]) -> None:
    if qids:
        wh.execute(f"DELETE FROM {table} WHERE run_id = ? AND list_contains(?, question_id)", [run_id, qids])
    wh.insert_rows(table, rows)


def write_questions(wh: Warehouse, run_id: str, items: list[QuestionWrite]) -> None:
    """The rows of ``items`` in one transaction, one statement per table: all or nothing. Raises
    :class:`UnknownQuestionError` (writing nothing) when an item's question is not in the run."""
    if not items:
        return
    _check(items)
    now = utcnow()
    ids = [i.question_id for i in items]
    with wh.transaction():
        known = {r[0] for r in wh.execute("SELECT question_id FROM questions WHERE run_id = ? AND "
                                          "list_contains(?, question_id)", [run_id, ids])}
        missing = sorted(set(ids) - known)
        if missing:
            raise UnknownQuestionError(f"question(s) {missing} are not in run {run_id!r}; load their question "
                                       "set into this run first")
        for table, attr in (("detector_hits", "hits"), ("candidates", "candidates"), ("verdicts", "verdicts")):
            touched = [i for i in items if getattr(i, attr) is not None]
            _replace(wh, table, run_id, [i.question_id for i in touched],
                     [r for i in touched for r in getattr(i, attr)])
        touched = [i for i in items if i.retrieval is not None]
        _replace(wh, "retrieval_results", run_id, [i.question_id for i in touched], [i.retrieval for i in touched])
        answers = [a for i in items for a in i.answers]
        if answers:
            wh.execute("DELETE FROM answers WHERE run_id = ? AND list_contains(?, question_id || chr(31) || regime)",
                       [run_id, [f"{a['question_id']}\x1f{a['regime']}" for a in answers]])
            wh.insert_rows("answers", answers)
        wh.insert_rows("errors", [{"run_id": run_id, "stage": stage, "subject": i.question_id, "error": message,
                                   "created_at": now} for i in items for stage, message in i.errors])
        update = pa.table({
            "question_id": pa.array(ids, pa.string()),
            "status": pa.array([i.status for i in items], pa.string()),
            "error": pa.array([i.error for i in items], pa.string()),
            "planned": pa.array([i.detectors is not None for i in items], pa.bool_()),
            "detectors": pa.array([i.detectors for i in items], pa.list_(pa.string())),
            "detector_rule": pa.array([i.detector_rule for i in items], pa.string()),
        })
        with wh.registered("_arbiter_status", update):
            wh.execute(
                "UPDATE questions SET status = u.status, error = u.error, "
                "detectors = CASE WHEN u.planned THEN u.detectors ELSE questions.detectors END, "
                "detector_rule = CASE WHEN u.planned THEN u.detector_rule ELSE questions.detector_rule END "
                "FROM _arbiter_status u WHERE questions.run_id = ? AND questions.question_id = u.question_id",
                [run_id])


class QuestionSink:
    """Where a run's walks hand their rows: :meth:`stage` as each stage ends, :meth:`finished` once a question's
    walk is done; the policy says when they are written (module docstring). :meth:`stage` may be called from the
    walks' threads; :meth:`finished` and :meth:`flush` from the run's own thread, which does every chunk write."""

    def __init__(self, wh: Warehouse, run_id: str, policy: Policy, seconds: float | None = None):
        if policy not in ("stage", "chunk"):
            raise ValueError(f"unknown write policy {policy!r}; use 'stage' or 'chunk'")
        self.wh, self.run_id, self.policy = wh, run_id, policy
        self.seconds = CHUNK_SECONDS if seconds is None else seconds
        self.questions = CHUNK_QUESTIONS
        self.pending: list[QuestionWrite] = []
        self.started = time.monotonic()
        self._lock = threading.Lock()

    def stage(self, rows: QuestionWrite) -> None:
        """One stage's rows of one question: written now under the ``stage`` policy (else with the question)."""
        if self.policy == "stage":
            with self._lock:
                self._write([rows])

    def finished(self, question: QuestionWrite) -> None:
        """A finished question's merged rows: queued for its chunk under the ``chunk`` policy (already written
        stage by stage otherwise); the chunk is written once it holds CHUNK_QUESTIONS of them or is ``seconds``
        (CHUNK_SECONDS) old."""
        if self.policy != "chunk":
            return
        self.pending.append(question)
        if len(self.pending) >= self.questions or time.monotonic() - self.started >= self.seconds:
            self.flush()

    def flush(self) -> None:
        """Write the queued questions (the chunk policy's last, part-filled chunk too)."""
        if self.pending:
            self._write(self.pending)
        self.pending, self.started = [], time.monotonic()

    def _write(self, items: list[QuestionWrite]) -> None:
        """``items`` in one transaction; if that fails, question by question, and a question whose rows cannot be
        written is failed with the reason (in ``errors`` too). The calls' own rows are committed first, so that
        every call id an answer or a verdict names is in ``llm_calls`` when they land."""
        flush_calls(self.wh)
        try:
            write_questions(self.wh, self.run_id, items)
            return
        except Exception:  # noqa: BLE001 - retried one by one below, where the failing question is named
            pass
        for item in items:
            try:
                write_questions(self.wh, self.run_id, [item])
            except Exception as exc:
                message = f"write: {type(exc).__name__}: {exc}"
                if isinstance(exc, UnknownQuestionError):  # no questions row to fail: the run's errors say it
                    record_error(self.wh, self.run_id, "write", item.question_id, message)
                    continue
                write_questions(self.wh, self.run_id, [QuestionWrite(item.question_id, "failed", message,
                                                                     errors=[("write", message)])])

    @contextmanager
    def open(self) -> Iterator[QuestionSink]:
        """The sink for a block of walks: what is queued is written however the block ends (a SIGTERM too).
        Under the chunk policy the calls' rows are committed with their chunk (flushed by the write) rather than
        every 50 ms: one statement of a chunk's calls instead of one per call or two (measured with the fake
        server: the call log's inserts were 1.2 ms of CPU a question). Each call's row is still journaled first
        when durable_log is on."""
        log = call_log(self.wh)
        linger = log.linger_s
        if self.policy == "chunk":
            log.linger_s = 2 * self.seconds
        try:
            yield self
        finally:
            try:
                self.flush()
            finally:
                log.linger_s = linger
