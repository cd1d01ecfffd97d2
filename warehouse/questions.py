"""The ``questions`` table: parsed questions per run. Their status, error and detector plan are written with the
rest of a question's rows, by ``warehouse.sink``."""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from warehouse.db import Warehouse, WarehouseError, to_json

QUESTION_STATUSES = ("loaded", "detected", "arbitrated", "answered", "failed")
COLUMNS = (
    "question_id", "text", "docs", "answer", "gold_pages", "labels", "keywords_primary", "keywords_secondary",
    "answer_shape", "decomposition", "intent", "parser", "detectors", "detector_rule", "status", "error", "asked",
)
_REQUIRED = ("question_id", "text")
_LISTS = {"docs": pl.Utf8, "gold_pages": pl.Int32, "keywords_primary": pl.Utf8, "keywords_secondary": pl.Utf8,
          "detectors": pl.Utf8}
_SCHEMA = {"run_id": pl.Utf8, "question_set": pl.Utf8,
           **{c: pl.List(_LISTS[c]) if c in _LISTS else pl.Utf8 for c in COLUMNS}}


class UnknownQuestionError(WarehouseError):
    """Rows were handed in for a question that the run never loaded (``warehouse.sink``)."""


def _row(run_id: str, question_set: str, row: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(row) - set(COLUMNS))
    if unknown:
        raise ValueError(f"question row has unknown column(s) {unknown}; the questions table has {list(COLUMNS)}")
    missing = [c for c in _REQUIRED if not row.get(c)]
    if missing:
        raise ValueError(f"question row {row.get('question_id')!r} lacks {missing}; every row needs an id and text")
    status = row.get("status") or "loaded"
    if status not in QUESTION_STATUSES:
        raise ValueError(f"question {row['question_id']!r}: status {status!r} is not one of {QUESTION_STATUSES}")
    out: dict[str, Any] = {"run_id": run_id, "question_set": question_set}
    for col in COLUMNS:
        out[col] = row.get(col)
    out["status"] = status
    for col in ("labels", "asked"):  # JSON columns: text as given, else encoded
        value = row.get(col)
        out[col] = None if value is None else value if isinstance(value, str) else to_json(value)
    return out


def save_questions(wh: Warehouse, run_id: str, question_set: str, rows: list[dict[str, Any]]) -> int:
    """Write the rows of one question set; a rerun replaces the same (run_id, question_id) rows, all or nothing."""
    prepared = [_row(run_id, question_set, r) for r in rows]
    ids = [r["question_id"] for r in prepared]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"question set {question_set!r} has duplicate question ids {dupes}; ids must be unique")
    if not prepared:
        return 0
    with wh.transaction():
        wh.execute("DELETE FROM questions WHERE run_id = ? AND list_contains(?, question_id)", [run_id, ids])
        wh.insert_df("questions", pl.DataFrame(prepared, schema=_SCHEMA, orient="row"))
    return len(prepared)


def load_questions(wh: Warehouse, run_id: str, question_set: str | None = None) -> list[dict[str, Any]]:
    """Rows of a run (optionally one set) in the order they were saved; ``labels`` decoded to a dict."""
    rows = wh.query_where("SELECT * FROM questions", {"run_id": run_id}, "rowid",
                          optional={"question_set": question_set})
    for row in rows:
        row["labels"] = json.loads(row["labels"]) if row["labels"] is not None else {}
    return rows


def question_sets(wh: Warehouse, run_id: str) -> list[str]:
    """Names of the question sets a run loaded."""
    return [r[0] for r in wh.execute(
        "SELECT question_set FROM questions WHERE run_id = ? GROUP BY question_set ORDER BY min(rowid)", [run_id])]


def clear_question_errors(wh: Warehouse, run_id: str, file_subject: str) -> int:
    """Drop this run's earlier ``errors`` rows for one question file, so that a re-ingest does not duplicate them."""
    where = "WHERE run_id = ? AND stage = 'questions' AND (subject = ? OR starts_with(subject, ?))"
    params = [run_id, file_subject, file_subject + ":"]
    with wh.transaction():
        n = wh.scalar(f"SELECT count(*) FROM errors {where}", params)
        wh.execute(f"DELETE FROM errors {where}", params)
    return int(n or 0)
