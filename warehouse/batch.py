"""The per-question rows of a chunk of questions, written in one transaction with one statement per table.

DuckDB is an analytical store: a statement costs milliseconds however few rows it carries (benchmarks/throughput.py:
about 30 statements a question, ~100 ms of a 250 ms question, when each stage wrote its own rows). The offline
pipeline (``tasks.pipeline.process_questions``) keeps each question's rows (:class:`QuestionWrite`) and writes a
chunk at once: still idempotent per (run_id, question_id), since each table's rows of the chunk's questions are
replaced (answers per regime), and still resumable after a SIGKILL: a chunk lands whole or not at all, and a
question whose rows did not land is still 'loaded', so a resume does it again. The stage-by-stage writes of
``warehouse.detection``, ``warehouse.retrieval`` and ``warehouse.answers`` stay for runs whose calls cost money,
where each finished stage must be kept at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from warehouse.db import Warehouse, utcnow


@dataclass
class QuestionWrite:
    """What one question's walk produced. A table's field None leaves its rows as they are; a list (even empty)
    replaces them."""

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


def _replace(wh: Warehouse, table: str, run_id: str, qids: list[str], rows: list[dict[str, Any]]) -> None:
    if qids:
        wh.execute(f"DELETE FROM {table} WHERE run_id = ? AND list_contains(?, question_id)", [run_id, qids])
    wh.insert_rows(table, rows)


def write_chunk(wh: Warehouse, run_id: str, items: list[QuestionWrite]) -> None:
    """All the chunk's rows, all or nothing."""
    if not items:
        return
    now = utcnow()
    with wh.transaction():
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
            "question_id": pa.array([i.question_id for i in items], pa.string()),
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
